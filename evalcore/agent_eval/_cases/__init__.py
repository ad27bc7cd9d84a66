"""The seeded agent test cases, one module per part:

* :mod:`.kinds` -- the kinds of request (starter and synthesized), their inputs, the evaluator's
  own solver, held-out inputs and canonical phrasing (shared by every maker and the evaluator);
* :mod:`.records` -- :class:`AgentCase`, :class:`ExpectedStep` and the cases file;
* :mod:`.starter`, :mod:`.synthesized` -- single-tool requests (the ``simple`` and ``medium``
  cases);
* :mod:`.multi_step` -- multi-step requests (the ``complex`` cases);
* :mod:`.edge` -- invalid, ambiguous and boundary requests (the ``edge`` cases);
* :mod:`.generator` -- :class:`AgentCaseGenerator`, which draws them from a seed.

Public names are re-exported by :mod:`evalcore.agent_eval`.
"""
