"""Tokens per second of the embedded SmolLM2 model: in process and through the local server.

In process: ``LocalModel.complete`` (llama-cpp-python in this process). Through the server:
``evalcore serve-local``'s llama-cpp-python OpenAI server, called by evalcore's
OpenAI-compatible client. Same prompts, greedy, same ``max_tokens``; generation tokens per
second of wall time (prompt processing included, model load excluded). Printed, not asserted.
The two paths do not generate the same text: llama-cpp-python's server applies its default
``repeat_penalty=1.1`` (an OpenAI request cannot say otherwise), in process it is 1.0; so token
counts may differ and tokens per second is the fair comparison, not wall time per prompt.

Run: ``.venv/bin/python benchmarks/bench_local_model.py [--prompts 4] [--max-tokens 64]``.
"""

from __future__ import annotations

import argparse
import time

from evalcore.models import GenerationParams, LocalModel, LocalServer, from_spec

PROMPTS = [
    "Explain in two sentences why the sky is blue.",
    "Write a short Python function that reverses a string.",
    "List three uses of a paperclip.",
    "What is 17 times 3? Show your steps.",
    "Describe a cat to someone who has never seen one.",
    "Give two tips for writing clear emails.",
]


def _measure(model, prompts: list[str], params: GenerationParams) -> tuple[float, int, float]:
    model.complete([{"role": "user", "content": "Hello"}], GenerationParams(max_tokens=4))  # warm
    tokens = 0
    start = time.perf_counter()
    for p in prompts:
        comp = model.complete([{"role": "user", "content": p}], params)
        assert comp.ok, comp.error
        tokens += comp.usage.completion_tokens
    wall = time.perf_counter() - start
    return tokens / wall, tokens, wall


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--prompts", type=int, default=4)
    ap.add_argument("--max-tokens", type=int, default=64)
    args = ap.parse_args()
    prompts = (PROMPTS * 4)[: args.prompts]
    params = GenerationParams(max_tokens=args.max_tokens, temperature=0.0, seed=0)

    local = LocalModel()
    t = time.perf_counter()
    local.load()
    load_s = time.perf_counter() - t
    in_proc = _measure(local, prompts, params)

    with LocalServer() as server:
        client = from_spec(server.spec, timeout=600)
        served = _measure(client, prompts, params)

    print(
        f"embedded SmolLM2-135M-Instruct ({local.model_path.name}), {len(prompts)} prompts, "
        f"max_tokens={args.max_tokens}, greedy; model load {load_s:.2f} s"
    )
    print(f"  {'path':<28} {'tokens':>7} {'wall s':>8} {'tok/s':>7}")
    for name, (tps, tokens, wall) in (("in process (llama-cpp)", in_proc), ("through serve-local (HTTP)", served)):
        print(f"  {name:<28} {tokens:>7} {wall:>8.2f} {tps:>7.1f}")
    print(f"  ratio server / in process: {served[0] / in_proc[0]:.2f}")


if __name__ == "__main__":
    main()
