"""Client throughput and pacing of evalcore's OpenAI-compatible client, side by side with peers.

1. Throughput (calls/s) at concurrency 1, 16, 64 and 256 against a fake endpoint answering in
   ``--model-latency`` seconds (20 ms), served from another process (so that the server does not
   share the client's interpreter lock): evalcore's client (aiohttp transport, the default),
   evalcore's client on the ``openai`` SDK (``transport="openai"``, the client before issue 41),
   the ``openai`` SDK's ``chat.completions.create`` on its default httpx transport and on its
   aiohttp transport (``DefaultAioHttpClient``), and raw ``httpx`` and raw ``aiohttp`` POSTs
   (no retries, no parsing beyond ``json``). Rounds are interleaved so load drift hits all alike.
2. A rate-limited run: ``--n`` requests against a fake endpoint that enforces ``--rpm`` over a
   sliding window of ``--window`` seconds (429 with ``Retry-After`` and ``x-ratelimit-*``
   headers): evalcore paced to ``--rpm`` vs a fixed-concurrency client (evalcore with pacing and
   adaptive concurrency off, retrying 429s after ``Retry-After``); wall time against the floor
   ``n / rpm`` and the share of requests answered 429.

Figures are printed with the load average, not asserted. Run:
``.venv/bin/python benchmarks/bench_client.py`` (about 2 minutes with the defaults).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import subprocess
import sys
import time
from collections.abc import Awaitable, Callable

import aiohttp
import httpx
import openai

from evalcore.models import FakeChatServer, GenerationParams, OpenAICompatibleModel, RetryPolicy
from evalcore.models._fakeserver import RateLimits

PARAMS = GenerationParams(max_tokens=16)
Call = Callable[[int], Awaitable[None]]


def _msgs(i: int) -> list[dict[str, str]]:
    return [{"role": "user", "content": f"question {i}"}]


def _load() -> str:
    one, five, fifteen = os.getloadavg()
    return f"load average {one:.1f} {five:.1f} {fifteen:.1f} ({os.cpu_count() or 0} CPUs)"


def _wrap(m: OpenAICompatibleModel) -> Call:
    async def call(i: int) -> None:
        comp = await m.acomplete(_msgs(i), PARAMS)
        assert comp.ok, comp.error

    return call


class _ServerProcess:
    """A FakeChatServer in a child process; its URL read from the child's first line."""

    def __init__(self, latency_s: float) -> None:
        code = (
            "import sys; from evalcore.models import FakeChatServer; "
            f"s = FakeChatServer(latency_s={latency_s!r}).start(); print(s.url, flush=True); sys.stdin.read()"
        )
        self.proc = subprocess.Popen(
            [sys.executable, "-c", code], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
        )
        assert self.proc.stdout is not None
        self.url = self.proc.stdout.readline().strip()

    def close(self) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        self.proc.wait(timeout=10)


async def _throughput(call: Call, n: int, concurrency: int) -> float:
    sem = asyncio.Semaphore(concurrency)

    async def one(i: int) -> None:
        async with sem:
            await call(i)

    await asyncio.gather(*(one(i) for i in range(min(concurrency, 32))))  # warm the pool
    t = time.perf_counter()
    await asyncio.gather(*(one(i) for i in range(n)))
    return n / (time.perf_counter() - t)


async def throughput_figures(url: str, n: int, levels: list[int], rounds: int) -> dict[int, dict[str, float]]:
    body = {"model": "fake", "max_tokens": 16, "temperature": 0.0}
    big = max(levels)
    raw_httpx = httpx.AsyncClient(base_url=url, timeout=60, limits=httpx.Limits(max_connections=big))
    raw_aio = aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=big))
    sdk = openai.AsyncOpenAI(api_key="x", base_url=url, max_retries=0, timeout=60)
    sdk_aio = openai.AsyncOpenAI(
        api_key="x", base_url=url, max_retries=0, timeout=60, http_client=openai.DefaultAioHttpClient()
    )

    async def httpx_call(i: int) -> None:
        r = await raw_httpx.post("/chat/completions", json={**body, "messages": _msgs(i)})
        r.json()

    async def aiohttp_call(i: int) -> None:
        async with raw_aio.post(url + "/chat/completions", json={**body, "messages": _msgs(i)}) as r:
            await r.json()

    async def sdk_call(i: int) -> None:
        await sdk.chat.completions.create(model="fake", messages=_msgs(i), max_tokens=16, temperature=0.0)

    async def sdk_aio_call(i: int) -> None:
        await sdk_aio.chat.completions.create(model="fake", messages=_msgs(i), max_tokens=16, temperature=0.0)

    out: dict[int, dict[str, list[float]]] = {}
    for c in levels:
        ours = OpenAICompatibleModel("fake", base_url=url, concurrency=c, timeout=60)
        before = OpenAICompatibleModel("fake", base_url=url, concurrency=c, timeout=60, transport="openai")

        calls: dict[str, Call] = {
            "evalcore": _wrap(ours),
            "evalcore (SDK, before)": _wrap(before),
            "openai SDK": sdk_call,
            "SDK + aiohttp": sdk_aio_call,
            "raw httpx": httpx_call,
            "raw aiohttp": aiohttp_call,
        }
        per = max(n // 8, 40) if c == 1 else n
        samples: dict[str, list[float]] = {k: [] for k in calls}
        for _ in range(rounds):
            for name, call in calls.items():
                samples[name].append(await _throughput(call, per, c))
        out[c] = samples
    await raw_httpx.aclose()
    await raw_aio.close()
    await sdk.close()
    await sdk_aio.close()
    return {c: {k: statistics.median(v) for k, v in row.items()} for c, row in out.items()}


async def _rate_run(model: OpenAICompatibleModel, n: int) -> tuple[float, int]:
    t = time.perf_counter()
    comps = await asyncio.gather(*(model.acomplete(_msgs(i), PARAMS) for i in range(n)))
    return time.perf_counter() - t, sum(1 for c in comps if not c.ok)


def rate_figures(n: int, rpm: float, window_s: float, concurrency: int, latency: float) -> dict[str, dict[str, float]]:
    out: dict[str, dict[str, float]] = {}
    retry = RetryPolicy(max_retries=50, max_retry_after=60)
    for name, paced in (("evalcore paced", True), ("fixed concurrency", False)):
        limits = RateLimits(rpm=rpm, window_s=window_s)
        with FakeChatServer(limits=limits, latency_s=latency, latency_sigma=0.3) as srv:
            model = OpenAICompatibleModel(
                "fake",
                base_url=srv.url,
                concurrency=concurrency,
                retry=retry,
                requests_per_minute=rpm if paced else None,
                adaptive=paced,
            )
            wall, failed = asyncio.run(_rate_run(model, n))
            counts = dict(srv.counts)
        out[name] = {
            "wall_s": wall,
            "ratio": wall / (60.0 * n / rpm),
            "failed": failed,
            "requests": counts["requests"],
            "n_429": counts.get("limited", 0),
            "share_429": counts.get("limited", 0) / counts["requests"],
            "concurrency_min": model.rate_stats()["concurrency_min"],
        }
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument("--calls", type=int, default=600, help="calls per throughput measurement")
    ap.add_argument("--rounds", type=int, default=3, help="interleaved rounds per throughput figure (median)")
    ap.add_argument("--levels", default="1,16,64,256", help="concurrency levels")
    ap.add_argument("--model-latency", type=float, default=0.02, help="simulated model seconds per call")
    ap.add_argument("--n", type=int, default=300, help="requests of the rate-limited run")
    ap.add_argument("--rpm", type=float, default=600, help="the rate-limited server's requests per minute")
    ap.add_argument("--window", type=float, default=10.0, help="seconds of the server's sliding window")
    ap.add_argument("--skip-throughput", action="store_true")
    ap.add_argument("--skip-rate", action="store_true")
    args = ap.parse_args()
    if not args.skip_throughput:
        levels = [int(x) for x in args.levels.split(",")]
        print(f"throughput, {1000 * args.model_latency:.0f} ms replies from another process; {_load()}")
        server = _ServerProcess(args.model_latency)
        try:
            thr = asyncio.run(throughput_figures(server.url, args.calls, levels, args.rounds))
        finally:
            server.close()
        names = list(next(iter(thr.values())))
        print(f"  calls/s (median of {args.rounds} interleaved rounds); ideal = concurrency / latency")
        print("  " + f"{'conc':>5}" + "".join(f"{k:>24}" for k in names) + f"{'ideal':>8}")
        for c, row in thr.items():
            print("  " + f"{c:>5}" + "".join(f"{row[k]:>24.1f}" for k in names) + f"{c / args.model_latency:>8.0f}")
        for c, row in thr.items():
            print(
                f"  c={c}: evalcore / before {row['evalcore'] / row['evalcore (SDK, before)']:.2f}x, "
                f"/ openai SDK {row['evalcore'] / row['openai SDK']:.2f}x, "
                f"/ SDK + aiohttp {row['evalcore'] / row['SDK + aiohttp']:.2f}x"
            )
        print(f"  after: {_load()}")
    if not args.skip_rate:
        floor = 60.0 * args.n / args.rpm
        print(
            f"rate-limited run: {args.n} requests, server limit {args.rpm:g} rpm over a {args.window:g} s "
            f"sliding window, {1000 * args.model_latency:.0f} ms lognormal replies, concurrency 64; "
            f"floor n / rpm = {floor:.1f} s; {_load()}"
        )
        rate = rate_figures(args.n, args.rpm, args.window, 64, args.model_latency)
        for name, r in rate.items():
            print(
                f"  {name:<18} wall {r['wall_s']:6.1f} s  ratio {r['ratio']:.3f}  failed {r['failed']:.0f}  "
                f"requests {r['requests']:.0f}  429s {r['n_429']:.0f} ({100 * r['share_429']:.1f}%)  "
                f"concurrency min {r['concurrency_min']:.0f}"
            )
        print(f"  after: {_load()}")


if __name__ == "__main__":
    main()
