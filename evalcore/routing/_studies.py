"""Studies built on the replay: the cost–quality curve over λ (:func:`lambda_sweep`) and the
item bootstrap (:func:`item_bootstrap`: routers replayed on resampled items, so an interval
covers the choice of items as well as of orderings). Re-exported by :mod:`evalcore.routing`."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from evalcore.errors import EvalcoreError
from evalcore.routing._algorithms import make_router
from evalcore.routing._matrix import OutcomeMatrix
from evalcore.routing._metrics import interval
from evalcore.routing._replay import cluster_session, parse_algorithms, replay
from evalcore.routing._result import ReplayResult


def lambda_sweep(
    outcomes: OutcomeMatrix,
    algorithms: str | Sequence[str] = "all",
    lambdas: Sequence[float] = (0.0, 0.1, 0.25, 0.5, 1.0, 2.0, 4.0),
    *,
    orderings: int = 20,
    seed: int = 0,
    features: np.ndarray | None = None,
    feature_dims: int = 64,
    embedder: str = "auto",
    params: Mapping[str, Mapping[str, Any]] | None = None,
    progress: bool | None = None,
    cluster: Any = None,
    cluster_wait_s: float = 60.0,
    price_range: tuple[float, float] | None = None,
    random_thresholds: int | None = 10,
) -> pd.DataFrame:
    """The cost–quality curve of each algorithm as λ varies (``progress``: a line per λ with
    the total and the time left; None = a bar on a terminal, lines elsewhere; ``cluster``: each
    replay's units on a Dask cluster, opened once, as in :func:`replay`).

    The ``random`` router ignores λ (one operating point); when it is swept, the cost-swept
    random router of RouteLLM is added as ``random_swept`` (:func:`random_router_sweep`: a
    uniform random score per query, thresholds at its quantiles, between the cheapest and the
    best arm), whose rows have ``lambda`` NaN and ``threshold`` the quantile level.

    Args:
        price_range: ``(c_min, c_max)`` of the reward's cost normalization (see :func:`replay`).
        random_thresholds: Bins of the ``random_swept`` threshold sweep (None or 0: no such rows).

    Returns:
        One row per algorithm × λ: ``algorithm, lambda, threshold, mean_quality, mean_cost``
        (per query), ``mean_reward``, ``strong_share`` (share of calls on the best-quality arm,
        the strong model of RouteLLM's curve; a duel counts ½ per arm), on two-arm matrices
        ``pgr`` (RouteLLM's PGR of the point, :func:`pgr`), and the interval columns of quality
        and cost over orderings.
    """
    from evalcore.routing._apgr import pgr, routellm_pair

    names = parse_algorithms(algorithms)
    arm_q, arm_c = outcomes.quality.mean(0), outcomes.cost.mean(0)
    weak, strong = routellm_pair(arm_q, arm_c)
    features = contextual_features(
        outcomes, names, features, params=params, feature_dims=feature_dims, embedder=embedder, seed=seed
    )
    rows = []
    from evalcore.routing._progress import bar as progress_bar

    with cluster_session(cluster, cluster_wait_s) as session:
        shown = progress_bar(len(lambdas), f"λ sweep ({orderings} orderings each)", unit="λ values", progress=progress)
        for lam in lambdas:
            res = replay(
                outcomes,
                names,
                orderings=orderings,
                seed=seed,
                lam=float(lam),
                features=features,
                params=params,
                progress=False,
                cluster=session,
                price_range=price_range,
            )
            shown.update()
            rows += _sweep_rows(res, float(lam), strong)
    shown.close()
    if "random" in names and random_thresholds:
        rows += _random_swept_rows(outcomes, weak, strong, orderings=orderings, seed=seed, bins=int(random_thresholds))
    cols = ["algorithm", "lambda", "threshold", "mean_quality", "mean_cost", "mean_reward", "strong_share"]
    frame = pd.DataFrame(rows)
    if outcomes.n_arms == 2:  # RouteLLM's PGR of each point (two models only)
        frame["pgr"] = pgr(
            frame["mean_quality"].to_numpy(float), weak_quality=arm_q[weak], strong_quality=arm_q[strong]
        )
        cols.append("pgr")
    return frame[cols + [c for c in frame.columns if c not in cols]]


def _sweep_rows(res: ReplayResult, lam: float, strong: int) -> list[dict[str, Any]]:
    """The sweep's rows of one replay at ``lam``: each router's operating point and intervals."""
    rows = []
    for name, tr in res.traces.items():
        q, c, r = tr.quality.mean(1), tr.cost.mean(1), tr.reward.mean(1)
        on_strong = (tr.arm == strong).astype(float)
        if tr.arm2 is not None:
            on_strong = 0.5 * on_strong + 0.5 * (tr.arm2 == strong)
        row = {
            "algorithm": name,
            "lambda": lam,
            "threshold": float("nan"),
            "mean_quality": float(q.mean()),
            "mean_cost": float(c.mean()),
            "mean_reward": float(r.mean()),
            "strong_share": float(on_strong.mean()),
        }
        for key, v in (("mean_quality", q), ("mean_cost", c)):
            row[f"{key}_ci_low"], row[f"{key}_ci_high"] = interval(v)
        rows.append(row)
    return rows


def _random_swept_rows(
    outcomes: OutcomeMatrix, weak: int, strong: int, *, orderings: int, seed: int, bins: int
) -> list[dict[str, Any]]:
    """The ``random_swept`` rows: RouteLLM's random router over its threshold sweep."""
    from evalcore.routing._apgr import random_router_sweep

    swept = random_router_sweep(
        outcomes.quality, outcomes.cost, weak=weak, strong=strong, orderings=orderings, seed=seed, num_results=bins
    )
    return [
        {
            "algorithm": "random_swept",
            "lambda": float("nan"),
            **{str(k): float(v) for k, v in rec.items()},
            "mean_reward": float("nan"),
        }
        for rec in swept.to_dict("records")
    ]


def contextual_features(
    outcomes: OutcomeMatrix,
    names: Sequence[str],
    features: np.ndarray | None,
    *,
    params: Mapping[str, Mapping[str, Any]] | None,
    feature_dims: int,
    embedder: str,
    seed: int,
) -> np.ndarray | None:
    """``features`` as float32, or the matrix's context features when none are given and a
    contextual router is among ``names`` (None when none is)."""
    if features is None and any(make_router(n, **dict((params or {}).get(n, {}))).contextual for n in names):
        features = outcomes.context(dims=feature_dims, embedder=embedder, seed=seed)
    return None if features is None else np.asarray(features, dtype=np.float32)


def bootstrap_inputs(
    outcomes: OutcomeMatrix,
    algorithms: str | Sequence[str],
    n_boot: int,
    features: np.ndarray | None,
    *,
    params: Mapping[str, Mapping[str, Any]] | None,
    feature_dims: int,
    embedder: str,
    seed: int,
) -> tuple[list[str], np.ndarray | None]:
    """What an item bootstrap checks and prepares first: ``n_boot`` an integer >= 2, the
    routers' names and the context features (see :func:`contextual_features`)."""
    if isinstance(n_boot, bool) or not isinstance(n_boot, (int, np.integer)) or n_boot < 2:
        raise EvalcoreError(f"n_boot must be an integer >= 2, got {n_boot!r}", field="n_boot")
    names = parse_algorithms(algorithms)
    feats = contextual_features(
        outcomes, names, features, params=params, feature_dims=feature_dims, embedder=embedder, seed=seed
    )
    return names, feats


def _resample_items(outcomes: OutcomeMatrix, idx: np.ndarray) -> OutcomeMatrix:
    """The matrix of the items ``idx`` (drawn with replacement; a repeated item gets a
    ``#k`` suffix so ids stay unique)."""
    seen: dict[int, int] = {}
    ids = []
    for i in idx:
        k = seen.get(int(i), 0)
        seen[int(i)] = k + 1
        ids.append(outcomes.item_ids[i] if k == 0 else f"{outcomes.item_ids[i]}#{k}")
    take = lambda a: np.asarray(a)[idx]  # noqa: E731
    return OutcomeMatrix(
        item_ids=ids,
        arms=list(outcomes.arms),
        quality=take(outcomes.quality),
        cost=take(outcomes.cost),
        latency=take(outcomes.latency),
        tokens=take(outcomes.tokens),
        error=take(outcomes.error),
        queries=None if outcomes.queries is None else [outcomes.queries[i] for i in idx],
        features=None if outcomes.features is None else outcomes.features[idx],
        feature_names=outcomes.feature_names,
        datasets=None if outcomes.datasets is None else [outcomes.datasets[i] for i in idx],
        source=outcomes.source,
    )


_BOOT_METRICS = ("mean_reward", "mean_quality", "mean_cost")


@dataclass
class ItemBootstrap:
    """Routers compared on resampled items: the comparison that generalizes beyond the items
    at hand.

    Each of the B replicates draws T items with replacement from the outcome matrix and
    replays every router over ``orderings`` fresh random orderings of that sample (orderings
    nested in items). A replicate's value of a router is its mean over those orderings, so the
    spread of the B values reflects both which items were sampled and the arrival order.
    Intervals are bootstrap percentiles; the pairwise p-value is the two-sided bootstrap
    p-value ``min(1, 2·min(P*(d ≤ 0), P*(d ≥ 0)))`` with the ``(1 + count) / (B + 1)``
    correction, corrected across pairs.

    Attributes:
        estimate: Algorithm → metric → value on the original items (mean over orderings).
        values: Algorithm → metric → (B,) replicate values.
        indices: The resampled item indices, (B, T).
        n_items: T.
        orderings: Orderings per replicate.
        lam: λ of the reward.
        confidence: Interval level.
    """

    estimate: dict[str, dict[str, float]]
    values: dict[str, dict[str, np.ndarray]]
    indices: np.ndarray
    n_items: int
    orderings: int
    lam: float
    confidence: float = 0.95

    @property
    def n_boot(self) -> int:
        return int(self.indices.shape[0])

    def _interval(self, v: np.ndarray) -> tuple[float, float]:
        a = (1 - self.confidence) / 2
        lo, hi = np.quantile(np.asarray(v, float), [a, 1 - a])
        return float(lo), float(hi)

    def summary(self) -> pd.DataFrame:
        """One row per algorithm: each metric on the original items with its item-bootstrap
        interval (``<metric>, <metric>_ci_low, <metric>_ci_high``)."""
        rows = []
        for name, est in self.estimate.items():
            row: dict[str, Any] = {"algorithm": name}
            for m in _BOOT_METRICS:
                lo, hi = self._interval(self.values[name][m])
                row.update({m: est[m], f"{m}_ci_low": lo, f"{m}_ci_high": hi})
            rows.append(row)
        return pd.DataFrame(rows)

    def compare(
        self,
        *,
        metric: str = "mean_reward",
        reference: str | None = None,
        correction: str = "holm",
        alpha: float = 0.05,
    ) -> pd.DataFrame:
        """Pairwise differences ``a − b`` of ``metric`` with item-bootstrap intervals and
        p-values corrected across the pairs.

        Args:
            metric: ``mean_reward``, ``mean_quality`` or ``mean_cost``.
            reference: Compare every algorithm with this one only (default: every pair).
            correction: ``holm``, ``bh`` or ``none``.
            alpha: Level of ``significant``.

        Returns:
            Columns ``a, b, difference, ci_low, ci_high, p_value, p_adjusted, significant,
            n_items, n_boot``.
        """
        from itertools import combinations

        from evalcore import stats

        if metric not in _BOOT_METRICS:
            raise EvalcoreError(f"unknown metric {metric!r}; use one of {', '.join(_BOOT_METRICS)}", field="metric")
        names = list(self.estimate)
        if reference is not None:
            if reference not in self.estimate:
                raise EvalcoreError(f"{reference!r} was not bootstrapped", field="reference")
            pairs = [(n, reference) for n in names if n != reference]
        else:
            pairs = list(combinations(names, 2))
        rows = []
        for a, b in pairs:
            d = self.values[a][metric] - self.values[b][metric]
            lo, hi = self._interval(d)
            below, above = int(np.sum(d <= 0)), int(np.sum(d >= 0))
            p = min(1.0, 2 * (1 + min(below, above)) / (d.size + 1))
            rows.append(
                {
                    "a": a,
                    "b": b,
                    "difference": self.estimate[a][metric] - self.estimate[b][metric],
                    "ci_low": lo,
                    "ci_high": hi,
                    "p_value": p,
                }
            )
        df = pd.DataFrame(rows, columns=["a", "b", "difference", "ci_low", "ci_high", "p_value"])
        df["p_adjusted"] = stats.adjust_p_values(df["p_value"].to_numpy(), correction) if len(df) else []
        df["significant"] = df["p_adjusted"] <= alpha  # as stats.compare: p ≤ α rejects
        df["n_items"], df["n_boot"] = self.n_items, self.n_boot
        return df


def item_bootstrap(
    outcomes: OutcomeMatrix,
    algorithms: str | Sequence[str] = "all",
    *,
    n_boot: int = 200,
    orderings: int = 20,
    seed: int = 0,
    lam: float = 0.0,
    features: np.ndarray | None = None,
    feature_dims: int = 64,
    embedder: str = "auto",
    params: Mapping[str, Mapping[str, Any]] | None = None,
    confidence: float = 0.95,
    progress: bool | None = None,
    base: ReplayResult | None = None,
    cluster: Any = None,
    cluster_wait_s: float = 60.0,
) -> ItemBootstrap:
    """Bootstrap over items with orderings nested: how the routers would compare on other
    items drawn like these (see :class:`ItemBootstrap`).

    Replicate ``b`` draws the item indices ``rng.integers(0, T, T)`` (``rng =
    default_rng([seed, 0xB007])``, so :attr:`ItemBootstrap.indices` can be checked by hand)
    and replays the routers over ``orderings`` orderings seeded ``seed + 1 + b``. Context
    features are computed once on the original items and resampled with them.

    Args:
        outcomes: The outcome matrix.
        algorithms: ``"all"`` or names.
        n_boot: Replicates B.
        orderings: Orderings per replicate (and for the estimate on the original items).
        seed: Seed.
        lam: λ of the reward.
        features: Context features (T, d) (default: computed when a contextual router runs).
        feature_dims: As for :func:`replay`.
        embedder: As for :func:`replay`.
        params: Router hyper-parameters.
        confidence: Interval level.
        progress: Progress over the replicates with the total and the time left: a tqdm bar
            on a terminal, plain lines elsewhere (None), nothing (False).
        base: The replay of these routers on the original items (:func:`replay` with the
            same λ) whose means are the estimate, so the bootstrap's point values are the
            replay's summary values (one number per router and metric in a report);
            default: a replay over ``orderings`` orderings.
        cluster: Each replay's units on a Dask cluster, opened once (see :func:`replay`); the
            result is the same as on this machine.
        cluster_wait_s: Seconds to wait for the cluster's first worker.

    Returns:
        The :class:`ItemBootstrap`.

    Raises:
        EvalcoreError: ``base`` replayed other items, another λ, another cost scale or not
            every router bootstrapped.
    """
    names, feats = bootstrap_inputs(
        outcomes, algorithms, n_boot, features, params=params, feature_dims=feature_dims, embedder=embedder, seed=seed
    )
    # every replicate scores the same objective: the cost normalization of the reward keeps
    # the original matrix's price range instead of each resample's own
    prices = (float(outcomes.cost.min()), float(outcomes.cost.max()))
    with cluster_session(cluster, cluster_wait_s) as session:
        run = _replayer(names, orderings=orderings, lam=lam, params=params, prices=prices, cluster=session)
        base = run(outcomes, feats, seed) if base is None else _checked_base(base, outcomes, names, lam, prices)
        idx = np.random.default_rng([seed, 0xB007]).integers(0, outcomes.n_items, size=(n_boot, outcomes.n_items))
        values = {n: {m: np.empty(n_boot) for m in _BOOT_METRICS} for n in names}
        label = f"item bootstrap ({orderings} orderings each)"
        for b, sub, sub_feats in resampled(outcomes, idx, feats, label=label, progress=progress):
            for n, vals in _trace_means(run(sub, sub_feats, seed + 1 + b)).items():
                for m, v in vals.items():
                    values[n][m][b] = v
    return ItemBootstrap(_trace_means(base), values, idx, outcomes.n_items, orderings, lam, confidence)


def _replayer(
    names: list[str],
    *,
    orderings: int,
    lam: float,
    params: Mapping[str, Mapping[str, Any]] | None,
    prices: tuple[float, float],
    cluster: Any,
) -> Callable[[OutcomeMatrix, np.ndarray | None, int], ReplayResult]:
    """``(matrix, features, seed) -> replay`` of the routers ``names`` with the bootstrap's settings
    (one thread: the replicates' replays are many and small)."""

    def run(matrix: OutcomeMatrix, features: np.ndarray | None, seed: int) -> ReplayResult:
        return replay(
            matrix,
            names,
            orderings=orderings,
            seed=seed,
            lam=lam,
            features=features,
            params=params,
            progress=False,
            workers=1,
            price_range=prices,
            cluster=cluster,
        )

    return run


def resampled(
    outcomes: OutcomeMatrix, idx: np.ndarray, feats: np.ndarray | None, *, label: str, progress: bool | None
) -> Iterator[tuple[int, OutcomeMatrix, np.ndarray | None]]:
    """``(b, matrix, features)`` of each item resample ``idx[b]``, with a progress bar over them."""
    from evalcore.routing._progress import bar as progress_bar

    shown = progress_bar(len(idx), label, unit="resamples", progress=progress)
    for b in range(len(idx)):
        yield b, _resample_items(outcomes, idx[b]), None if feats is None else feats[idx[b]]
        shown.update()
    shown.close()


def _trace_means(res: ReplayResult) -> dict[str, dict[str, float]]:
    """Router → its mean reward, quality and cost over the replay's orderings and items."""
    return {
        n: {
            "mean_reward": float(tr.reward.mean()),
            "mean_quality": float(tr.quality.mean()),
            "mean_cost": float(tr.cost.mean()),
        }
        for n, tr in res.traces.items()
    }


def _checked_base(
    base: ReplayResult, outcomes: OutcomeMatrix, names: list[str], lam: float, prices: tuple[float, float]
) -> ReplayResult:
    """``base`` restricted to the routers ``names``; refused unless it replayed these items and
    arms at this λ and price range, every router included."""
    problem = None
    if list(base.outcomes.item_ids) != list(outcomes.item_ids) or list(base.outcomes.arms) != list(outcomes.arms):
        problem = "replayed other items or arms"
    elif float(base.lam) != float(lam):
        problem = f"was replayed at λ = {base.lam:g}, not {float(lam):g}"
    elif base.price_range is not None and tuple(map(float, base.price_range)) != prices:
        problem = "normalized the cost on another price range"
    elif [n for n in names if n not in base.traces]:
        problem = "lacks " + ", ".join(n for n in names if n not in base.traces)
    if problem:
        raise EvalcoreError(f"the base replay {problem}", field="base")
    return ReplayResult(
        outcomes=base.outcomes,
        orders=base.orders,
        lam=base.lam,
        seed=base.seed,
        traces={n: base.traces[n] for n in names},
        oracle_reward=base.oracle_reward,
        best_fixed_reward=base.best_fixed_reward,
        best_fixed_arm=base.best_fixed_arm,
        price_range=base.price_range,
    )
