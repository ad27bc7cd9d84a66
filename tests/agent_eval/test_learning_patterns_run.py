"""Learning's ``patterns`` test runs the tools it credits (issue 30, item 2): each repeat is right
only when the evaluator re-ran every step's registered tool and got the step's result, and every
tool added in the session must pass a run on held-out inputs of its step's kind. Tools that
return None next to answers from the key once scored 1.0."""

from __future__ import annotations

from evalcore.agent_eval import AgentCaseGenerator, AgentEvalConfig, HonestAgent, OracleAgent
from evalcore.agent_eval._cases.kinds import SYNTHESIZED_KINDS
from evalcore.agent_eval._categories import evaluate_learning
from evalcore.agent_eval._config import AgentEvalData
from evalcore.agent_eval._gaming import NoneTools

CASES = AgentCaseGenerator(seed=0).generate()
DEP = [c for c in CASES if "dependent" in c.tags and any(s.tool in SYNTHESIZED_KINDS for s in c.steps)]
CFG = AgentEvalConfig(seed=0, learning_kinds=0, pattern_repeats=2)


def _patterns(agent) -> object:  # noqa: ANN001
    res = evaluate_learning(agent, AgentEvalData(DEP[:1]), CFG)
    return {t.name: t for t in res.tests}["patterns"]


def test_tools_returning_none_earn_no_pattern_credit() -> None:
    assert DEP, "the generator makes dependent requests that need a built tool"
    t = _patterns(NoneTools(CASES))
    assert t.score == 0.0
    # the trace was re-run: the None tool did not give the step's result
    assert not any(all(run) for run in t.details["executed"])


def test_honest_tools_are_run_on_held_out_inputs_and_credited() -> None:
    for cls in (OracleAgent, HonestAgent):
        t = _patterns(cls(CASES))
        assert t.score == 1.0, t.error
        assert t.details["added_in_session"] and all(t.details["executed"][0])
        held = t.details["held_out"]
        # every tool of the sequence is run, those present at the reset too (issue 37)
        assert set(t.details["added_in_session"]) < set(held) == set(t.details["step_tools"][0])
        assert all(c["passed"] for c in held.values())
        assert all(len(c["calls"]) == 1 + CFG.n_held_out for c in held.values())


def test_a_tool_right_on_the_request_but_wrong_on_held_out_inputs_earns_nothing() -> None:
    """A tool that reproduces the request's step (a table of it) but computes nothing else."""
    case = DEP[0]
    synth = next(s for s in case.steps if s.tool in SYNTHESIZED_KINDS)

    class TableStep(OracleAgent):
        def _answer(self, c, value, step_values):  # noqa: ANN001, ANN202
            resp = super()._answer(c, value, step_values)
            step = next((st for st in resp.steps if st.tool == synth.tool), None)
            if step is not None:
                params = ", ".join(f"{k}: object" for k in step.args)
                key = tuple(step.args.values())
                with self._lock:
                    self._tools[synth.tool] = (
                        f'def {synth.tool}({params}) -> object:\n    """Look it up."""\n'
                        f"    table = {{{key!r}: {step.result!r}}}\n"
                        f"    return table.get(({', '.join(step.args)},))\n",
                        "",
                    )
            return resp

    t = _patterns(TableStep(CASES))
    assert t.score == 0.0
    # the re-run of its step passes (the table holds it), the run on held-out inputs does not
    assert not any(all(run) for run in t.details["executed"])
