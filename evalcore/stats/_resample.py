"""Vectorized resampling engines: bootstrap means and sign-flip permutations.

Both engines draw in chunks so that memory stays bounded (about ``_CHUNK_ELEMENTS`` random
numbers a chunk) while each chunk is a single vectorized numpy operation; chunks run on a few
threads, each chunk with its own generator spawned from the caller's, so results depend only
on the seed.

Sources: Efron, B. (1979), "Bootstrap methods: another look at the jackknife", *Annals of
Statistics* 7(1), 1–26 (the bootstrap, percentile interval); Efron, B. (1987), "Better bootstrap
confidence intervals", *JASA* 82(397), 171–185 (BCa), computed as in Efron, B. and Tibshirani, R.
(1993), *An Introduction to the Bootstrap*, §14.3; Fisher, R. A. (1935), *The Design of
Experiments* (the permutation distribution of sign flips).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor

import numpy as np
from scipy.special import ndtr, ndtri

#: Random draws per chunk: int32 indices + float64 gathered values ≈ 12 bytes each → ~3 MB,
#: small enough to stay in cache (larger chunks are slower, and much slower on a busy machine).
_CHUNK_ELEMENTS = 250_000
#: With at most this many distinct values (and at least 20 items per distinct value),
#: resampled means are drawn through a multinomial over the distinct values, which is exactly
#: equivalent to resampling items and much faster (one binomial draw costs about as much as
#: gathering 20 items).
_FEW_DISTINCT = 64
#: Threads used for chunked resampling (results do not depend on it).
_WORKERS = max(1, min(4, len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)))


def bootstrap_means(x: np.ndarray, n_resamples: int, rng: np.random.Generator) -> np.ndarray:
    """Means of ``n_resamples`` bootstrap resamples (n draws with replacement) of ``x``.

    For data with few distinct values (binary scores, differences of binary scores) the count
    of each distinct value in a resample is drawn from Multinomial(n, c_j / n), which has exactly
    the distribution of index resampling. Otherwise indices are drawn in chunks with
    ``rng.integers`` and gathered with fancy indexing.

    Args:
        x: 1-D float array (n ≥ 1).
        n_resamples: Number of resamples B.
        rng: Random generator.

    Returns:
        Array of B resample means.
    """
    n = x.size
    values, counts = np.unique(x, return_counts=True)
    if values.size <= _FEW_DISTINCT and 20 * values.size <= n:
        draws = rng.multinomial(n, counts / n, size=n_resamples)
        return (draws @ values) / n
    out = np.empty(n_resamples, dtype=np.float64)
    dtype = np.int32 if n < np.iinfo(np.int32).max else np.int64

    def work(start: int, stop: int, gen: np.random.Generator) -> None:
        idx = gen.integers(0, n, size=(stop - start, n), dtype=dtype)
        out[start:stop] = x[idx].sum(axis=1)

    _run_chunks(n_resamples, n, rng, work)
    out /= n
    return out


def _run_chunks(
    n_resamples: int,
    n: int,
    rng: np.random.Generator,
    work: Callable[[int, int, np.random.Generator], None],
) -> None:
    """Run ``work(start, stop, generator)`` over fixed chunks of the resamples.

    Chunk boundaries depend only on ``n_resamples`` and ``n``, and chunk i always draws from the
    i-th child generator spawned from ``rng``, so the result is the same whatever the number of
    threads. Chunks run on a small thread pool (numpy releases the GIL while drawing and
    gathering).
    """
    chunk = max(1, min(n_resamples, _CHUNK_ELEMENTS // max(n, 1)))
    bounds = [(s, min(s + chunk, n_resamples)) for s in range(0, n_resamples, chunk)]
    gens = rng.spawn(len(bounds))
    workers = min(len(bounds), _WORKERS)
    if workers <= 1:
        for (start, stop), gen in zip(bounds, gens):
            work(start, stop, gen)
        return
    with ThreadPoolExecutor(max_workers=workers) as pool:
        futures = [pool.submit(work, start, stop, gen) for (start, stop), gen in zip(bounds, gens)]
        for fut in futures:
            fut.result()


def sign_flip_sums(d: np.ndarray, n_resamples: int, rng: np.random.Generator) -> np.ndarray:
    """Sums ``Σ s_i d_i`` for ``n_resamples`` random sign vectors ``s ∈ {−1, +1}^n``.

    Random bits come packed (8 per random byte) and are unpacked in chunks; with b_i ∈ {0, 1}
    and s_i = 2 b_i − 1 the sum is ``2 (b · d) − Σ d``.
    """
    n = d.size
    total = float(d.sum())
    out = np.empty(n_resamples, dtype=np.float64)
    n_bytes = (n + 7) // 8

    def work(start: int, stop: int, gen: np.random.Generator) -> None:
        packed = gen.integers(0, 256, size=(stop - start, n_bytes), dtype=np.uint8)
        bits = np.unpackbits(packed, axis=1, count=n)
        out[start:stop] = 2.0 * (bits.astype(np.float64) @ d) - total

    _run_chunks(n_resamples, n, rng, work)
    return out


def all_sign_flip_sums(d: np.ndarray) -> np.ndarray:
    """Sums ``Σ s_i d_i`` for all 2^n sign vectors (exact permutation distribution)."""
    n = d.size
    codes = np.arange(2**n, dtype=np.uint32)[:, None]
    bits = ((codes >> np.arange(n, dtype=np.uint32)) & 1).astype(np.float64)
    return 2.0 * (bits @ d) - float(d.sum())


def percentile_interval(theta_b: np.ndarray, confidence: float) -> tuple[float, float]:
    """Percentile bootstrap interval (Efron 1979): the α/2 and 1 − α/2 quantiles (linear
    interpolation)."""
    alpha = 1.0 - confidence
    lo, hi = np.quantile(theta_b, [alpha / 2.0, 1.0 - alpha / 2.0])
    return float(lo), float(hi)


def bca_interval_mean(x: np.ndarray, theta_b: np.ndarray, confidence: float) -> tuple[float, float]:
    """Bias-corrected and accelerated (BCa) interval for the mean (Efron 1987; Efron &
    Tibshirani 1993, §14.3).

    z0 = Φ⁻¹(#{θ*_b < θ̂} + #{θ*_b ≤ θ̂}) / (2B)) (ties count half, as in scipy);
    a = Σ (θ̄_(·) − θ_(i))³ / (6 [Σ (θ̄_(·) − θ_(i))²]^{3/2}) from the jackknife means
    θ_(i) = (Σx − x_i)/(n − 1); the interval is the quantiles
    Φ(z0 + (z0 + z_α)/(1 − a (z0 + z_α))) of the bootstrap distribution, α ∈ {α/2, 1 − α/2}.
    Degenerate cases (constant data, n = 1) give the point interval (θ̂, θ̂).
    """
    n = x.size
    theta = float(x.mean())
    if n < 2 or np.ptp(x) == 0.0:
        return theta, theta
    pct = (np.count_nonzero(theta_b < theta) + np.count_nonzero(theta_b <= theta)) / (2.0 * theta_b.size)
    z0 = float(ndtri(pct))
    jack = (x.sum() - x) / (n - 1)
    u = jack.mean() - jack
    den = float(np.sum(u**2)) ** 1.5
    a_hat = float(np.sum(u**3)) / (6.0 * den) if den > 0 else 0.0
    alpha = 1.0 - confidence
    probs = []
    for z_alpha in (float(ndtri(alpha / 2.0)), float(ndtri(1.0 - alpha / 2.0))):
        num = z0 + z_alpha
        probs.append(float(ndtr(z0 + num / (1.0 - a_hat * num))))
    if not all(np.isfinite(probs)):
        return percentile_interval(theta_b, confidence)
    lo, hi = np.quantile(theta_b, probs)
    return float(lo), float(hi)
