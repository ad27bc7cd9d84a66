"""Client overhead and throughput of evalcore's OpenAI-compatible client, side by side with peers.

Against the fast local fake endpoint (evalcore.models.FakeChatServer, no faults) it times:

* per-call latency, sequential: raw ``httpx`` POST (the floor), the ``openai`` SDK's
  ``chat.completions.create`` (max_retries=0), and evalcore's ``OpenAICompatibleModel.acomplete``
  (retries, timeout, semaphore, usage and cost included); overhead = latency - raw floor;
* throughput (calls/s) at concurrency 1, 4, 16 and 64 with a simulated model time per call.

Figures are printed, not asserted. Run: ``.venv/bin/python benchmarks/bench_client.py``.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import time

import httpx
import openai

from evalcore.models import FakeChatServer, GenerationParams, OpenAICompatibleModel

PARAMS = GenerationParams(max_tokens=16)


def _msgs(i: int) -> list[dict[str, str]]:
    return [{"role": "user", "content": f"question {i}"}]


async def _interleaved(calls: dict, n: int) -> dict[str, float]:
    """Median latency of each call, measured round-robin so load drift hits all alike."""
    for call in calls.values():
        for i in range(10):  # warm the connection pools
            await call(i)
    samples: dict[str, list[float]] = {name: [] for name in calls}
    for i in range(n):
        for name, call in calls.items():
            t = time.perf_counter()
            await call(i)
            samples[name].append(time.perf_counter() - t)
    return {name: statistics.median(v) for name, v in samples.items()}


async def _throughput(call, n: int, concurrency: int) -> float:
    sem = asyncio.Semaphore(concurrency)

    async def one(i: int) -> None:
        async with sem:
            await call(i)

    await asyncio.gather(*(one(i) for i in range(min(concurrency, 8))))  # warm up
    t = time.perf_counter()
    await asyncio.gather(*(one(i) for i in range(n)))
    return n / (time.perf_counter() - t)


async def latency_figures(url: str, n: int) -> dict[str, float]:
    body = {"model": "fake", "max_tokens": 16, "temperature": 0.0}
    async with httpx.AsyncClient(base_url=url, timeout=30) as raw:

        async def raw_call(i: int) -> None:
            r = await raw.post("/chat/completions", json={**body, "messages": _msgs(i)})
            r.json()

        sdk = openai.AsyncOpenAI(api_key="x", base_url=url, max_retries=0, timeout=30)

        async def sdk_call(i: int) -> None:
            await sdk.chat.completions.create(model="fake", messages=_msgs(i), max_tokens=16, temperature=0.0)

        ours = OpenAICompatibleModel("fake", base_url=url, concurrency=64, timeout=30)

        async def our_call(i: int) -> None:
            c = await ours.acomplete(_msgs(i), PARAMS)
            assert c.ok, c.error

        out = await _interleaved({"raw httpx": raw_call, "openai SDK": sdk_call, "evalcore": our_call}, n)
        await sdk.close()
    return out


async def throughput_figures(url: str, n: int) -> dict[int, dict[str, float]]:
    sdk = openai.AsyncOpenAI(api_key="x", base_url=url, max_retries=0, timeout=60)

    async def sdk_call(i: int) -> None:
        await sdk.chat.completions.create(model="fake", messages=_msgs(i), max_tokens=16, temperature=0.0)

    out: dict[int, dict[str, float]] = {}
    for c in (1, 4, 16, 64):
        ours = OpenAICompatibleModel("fake", base_url=url, concurrency=c, timeout=60)

        async def our_call(i: int, m: OpenAICompatibleModel = ours) -> None:
            comp = await m.acomplete(_msgs(i), PARAMS)
            assert comp.ok, comp.error

        calls = max(n // 4, 20) if c == 1 else n
        out[c] = {
            "openai SDK": await _throughput(sdk_call, calls, c),
            "evalcore": await _throughput(our_call, calls, c),
        }
    await sdk.close()
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--calls", type=int, default=300, help="calls per measurement")
    ap.add_argument(
        "--model-latency", type=float, default=0.02, help="simulated model seconds per call in the throughput test"
    )
    args = ap.parse_args()
    with FakeChatServer() as fast:
        lat = asyncio.run(latency_figures(fast.url, args.calls))
    floor = lat["raw httpx"]
    print(f"per-call latency against a local fake endpoint (median of {args.calls}, sequential, interleaved)")
    for name, v in lat.items():
        extra = "" if name == "raw httpx" else f"   overhead {1000 * (v - floor):6.2f} ms"
        print(f"  {name:<11} {1000 * v:7.2f} ms{extra}")
    print(f"  ratio evalcore / openai SDK: {lat['evalcore'] / lat['openai SDK']:.2f}")
    with FakeChatServer(latency_s=args.model_latency) as slow:
        thr = asyncio.run(throughput_figures(slow.url, args.calls))
    print(
        f"throughput with {1000 * args.model_latency:.0f} ms simulated model time per call "
        f"(calls/s; ideal = concurrency / {args.model_latency:g})"
    )
    print(f"  {'concurrency':>11} {'openai SDK':>11} {'evalcore':>9} {'ratio':>6} {'ideal':>7}")
    for c, row in thr.items():
        print(
            f"  {c:>11} {row['openai SDK']:>11.1f} {row['evalcore']:>9.1f} "
            f"{row['evalcore'] / row['openai SDK']:>6.2f} {c / args.model_latency:>7.0f}"
        )


if __name__ == "__main__":
    main()
