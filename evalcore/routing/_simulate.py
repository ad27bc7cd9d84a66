"""Simulated outcome matrices with a known structure (for tests, benchmarks and examples)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from evalcore.routing._matrix import OutcomeMatrix


def simulate_outcomes(
    n_items: int = 1319,
    arm_quality: Sequence[float] = (0.35, 0.55, 0.75, 0.65),
    arm_cost: Sequence[float] = (1.0, 2.0, 8.0, 4.0),
    *,
    binary: bool = True,
    n_features: int = 8,
    error_rate: float = 0.0,
    seed: int = 0,
) -> OutcomeMatrix:
    """Outcomes whose best arm is known and does not depend on the query.

    Quality of arm k on each item is ``Bernoulli(arm_quality[k])`` (or that mean plus uniform
    noise clipped to [0, 1] when ``binary`` is False); cost is ``arm_cost[k]`` times a
    log-normal factor (σ = 0.1); latency is proportional to cost; the features are standard
    normal and carry no information.

    Args:
        n_items: T.
        arm_quality: Mean quality of each arm.
        arm_cost: Typical cost of each arm.
        binary: 0/1 qualities.
        n_features: Columns of the (uninformative) feature matrix.
        error_rate: Share of calls flagged as failed.
        seed: Seed.

    Returns:
        The matrix (arms named ``arm0``, ``arm1``, …).
    """
    rng = np.random.default_rng(seed)
    p = np.asarray(arm_quality, dtype=float)
    k = p.size
    if binary:
        quality = (rng.random((n_items, k)) < p).astype(float)
    else:
        quality = np.clip(p + rng.uniform(-0.3, 0.3, (n_items, k)), 0, 1)
    cost = np.asarray(arm_cost, dtype=float) * rng.lognormal(0, 0.1, (n_items, k))
    error = rng.random((n_items, k)) < error_rate
    return OutcomeMatrix(
        item_ids=[f"sim/{i}" for i in range(n_items)],
        arms=[f"arm{j}" for j in range(k)],
        quality=quality,
        cost=cost,
        latency=0.5 * cost,
        tokens=np.round(100 * cost),
        error=error,
        features=rng.standard_normal((n_items, n_features)),
        feature_names=[f"f{j}" for j in range(n_features)],
        source="simulated",
    )


def simulate_contextual(
    n_items: int = 1319,
    n_arms: int = 3,
    *,
    n_features: int = 6,
    sharpness: float = 3.0,
    arm_cost: Sequence[float] | None = None,
    binary: bool = True,
    seed: int = 0,
) -> OutcomeMatrix:
    """Outcomes whose best arm depends on the query's features.

    Features ``x ~ N(0, I)``; arm k has a unit weight vector ``w_k`` (the first ``n_arms``
    directions of a random rotation, so they are orthogonal) and quality probability
    ``sigmoid(sharpness · w_k·x)``. Every arm has the same mean quality (½) over items, so no
    fixed arm is better than another, yet the best arm per query is predictable from ``x``.

    Args:
        n_items: T.
        n_arms: K (≤ n_features).
        n_features: Feature dimensions.
        sharpness: How strongly the features decide quality.
        arm_cost: Cost per arm (default all 1).
        binary: 0/1 qualities (else the probabilities themselves).
        seed: Seed.

    Returns:
        The matrix, features in ``features``.
    """
    rng = np.random.default_rng(seed)
    if n_arms > n_features:
        raise ValueError("n_arms must be <= n_features")
    x = rng.standard_normal((n_items, n_features))
    q, _ = np.linalg.qr(rng.standard_normal((n_features, n_features)))
    w = q[:, :n_arms].T  # (K, d), orthonormal rows
    prob = 1.0 / (1.0 + np.exp(-sharpness * x @ w.T))
    quality = (rng.random(prob.shape) < prob).astype(float) if binary else prob
    cost = np.tile(np.ones(n_arms) if arm_cost is None else np.asarray(arm_cost, float), (n_items, 1))
    return OutcomeMatrix(
        item_ids=[f"ctx/{i}" for i in range(n_items)],
        arms=[f"arm{j}" for j in range(n_arms)],
        quality=quality,
        cost=cost,
        latency=cost.copy(),
        tokens=100 * cost,
        error=np.zeros_like(quality, dtype=bool),
        features=x,
        feature_names=[f"f{j}" for j in range(n_features)],
        source="simulated-contextual",
    )
