"""Counterfactual replay of routers over an outcome matrix, vectorized across orderings.

The T queries of the outcome matrix arrive in R random orderings (one seeded permutation per
ordering, the same permutations for every algorithm so comparisons are paired). At each step
every router picks an arm for each ordering's query and only that arm's recorded outcome is
revealed to it; no model is called. All R orderings advance together (numpy over the R axis).
"""

from __future__ import annotations

import contextlib
import math
import os
import time
from collections.abc import Iterator, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from evalcore.errors import EvalcoreError
from evalcore.routing._algorithms import ALGORITHMS, ReplayEnv, Router, make_router
from evalcore.routing._matrix import OutcomeMatrix
from evalcore.routing._metrics import convergence_point, interval
from evalcore.routing._reward import compute_rewards


def parse_algorithms(spec: str | Sequence[str]) -> list[str]:
    """``"all"`` or ``"a,b"`` (or a list) → validated algorithm names."""
    if isinstance(spec, str):
        names = list(ALGORITHMS) if spec.strip() == "all" else [s.strip() for s in spec.split(",") if s.strip()]
    else:
        names = list(spec)
    if not names:
        raise EvalcoreError("no algorithm given", field="algorithms")
    for n in names:
        if n not in ALGORITHMS:
            raise EvalcoreError(f"unknown algorithm {n!r}; choose from {', '.join(ALGORITHMS)}", field="algorithms")
    return list(dict.fromkeys(names))


def make_orderings(n_items: int, orderings: int, seed: int) -> np.ndarray:
    """R seeded random permutations of the item indices, shape (R, T)."""
    if isinstance(orderings, bool) or not isinstance(orderings, (int, np.integer)):
        raise EvalcoreError(f"orderings must be an integer, got {orderings!r}", field="orderings")
    if orderings < 1:
        raise EvalcoreError("orderings must be >= 1", field="orderings")
    rng = np.random.default_rng([seed, 0x0D0E])
    return np.argsort(rng.random((orderings, n_items)), axis=1).astype(np.int64)


@dataclass
class AlgorithmTrace:
    """What one algorithm did in every ordering, arrays (R, T).

    Attributes:
        arm: The (champion) arm chosen at each step.
        arm2: The dueling challenger (equal to ``arm`` when no duel), or None.
        quality: Credited quality of each step.
        cost: Cost charged at each step.
        reward: Credited reward of each step.
        seconds: Wall-clock seconds the replay of this algorithm took (alongside others
            when replayed in parallel threads).
        params: Hyper-parameters.
    """

    arm: np.ndarray
    arm2: np.ndarray | None
    quality: np.ndarray
    cost: np.ndarray
    reward: np.ndarray
    seconds: float
    params: dict[str, Any] = field(default_factory=dict)


def _run_router(
    router: Router, env: ReplayEnv, rng: np.random.Generator, r_seq: np.ndarray
) -> tuple[np.ndarray, np.ndarray | None]:
    R, T = env.orders.shape
    # a learner is reset with the environment less the outcome matrix: what it learns comes
    # only from the chosen arm's reward passed to ``update`` below
    router.reset(env if router.full_information else env.learner_view(), rng)
    arm = np.empty((R, T), dtype=np.int16)
    arm2 = np.empty((R, T), dtype=np.int16) if router.duel else None
    rows = np.arange(R)
    feats = env.features
    for t in range(T):
        items = env.orders[:, t]
        x = feats[items] if (router.contextual and feats is not None) else None
        choice = router.select(t, items, x)
        rt = r_seq[:, t, :]
        if router.duel:
            c, d = choice
            assert arm2 is not None  # allocated for a duelling router
            arm[:, t], arm2[:, t] = c, d
            router.update(t, items, x, (c, d), (rt[rows, c], rt[rows, d]))
        else:
            c = np.broadcast_to(np.asarray(choice), (R,))
            arm[:, t] = c
            router.update(t, items, x, c, rt[rows, c])
    return arm, arm2


@contextlib.contextmanager
def cluster_session(cluster: Any, wait_s: float = 60.0) -> Iterator[Any]:
    """An open cluster session for several replays (None: none, and nothing of Dask imported)."""
    if cluster is None:
        yield None
        return
    from evalcore.cluster import open_cluster

    with open_cluster(cluster, wait_s=wait_s) as session:
        yield session


def _replay_block(
    task: tuple[str, int, int],
    env: ReplayEnv,
    params: Mapping[str, Mapping[str, Any]],
    seed: int,
    router: Router | None = None,
    r_seq: np.ndarray | None = None,
) -> tuple[np.ndarray, np.ndarray | None, float, dict[str, Any] | None]:
    """The replay's unit of work (a thread here, or a Dask task): one router over orderings
    ``lo:hi`` of ``env``, with the generator seeded for that unit; (arms, duel arms, seconds,
    the router's parameters after its reset when the unit is every ordering, else None)."""
    name, lo, hi = task
    t0 = time.perf_counter()
    idx = ALGORITHMS.index(name) + 1
    whole = lo == 0 and hi == env.n_orderings
    rng = np.random.default_rng([seed, idx] if whole else [seed, idx, lo])
    if router is None or not whole:
        router = make_router(name, **dict(params.get(name, {})))
    sub = (
        env if whole else ReplayEnv(rewards=env.rewards, cost=env.cost, orders=env.orders[lo:hi], features=env.features)
    )
    if r_seq is None:
        assert sub.rewards is not None  # the replay's own environment holds the rewards
        r_seq = sub.rewards[sub.orders]
    arm, arm2 = _run_router(router, sub, rng, r_seq)
    return arm, arm2, time.perf_counter() - t0, router.params() if whole else None


def replay(
    outcomes: OutcomeMatrix,
    algorithms: str | Sequence[str] = "all",
    *,
    orderings: int = 200,
    seed: int = 0,
    lam: float = 0.0,
    features: np.ndarray | None = None,
    feature_dims: int = 64,
    embedder: str = "auto",
    params: Mapping[str, Mapping[str, Any]] | None = None,
    progress: bool | None = None,
    workers: int | None = None,
    chunk: int | None = None,
    price_range: tuple[float, float] | None = None,
    cluster: Any = None,
    cluster_wait_s: float = 60.0,
) -> ReplayResult:
    """Replay routers over ``outcomes`` in R random orderings.

    Args:
        outcomes: The outcome matrix (T items × K arms).
        algorithms: ``"all"``, ``"a,b"`` or a list of names from ``ALGORITHMS``.
        orderings: R, the number of random orderings (seeded; shared by all algorithms).
        seed: Seed of the orderings and of each algorithm's generator.
        lam: λ in ``reward = quality − λ · normalized cost``.
        features: Context features (T, d); default: ``outcomes.context(dims=feature_dims)``,
            computed only when a contextual algorithm is replayed.
        feature_dims: At most this many feature dimensions.
        embedder: ``"auto"``, ``"minilm"`` or ``"tfidf"`` for query features.
        params: Algorithm name → hyper-parameters, e.g. ``{"ucb1": {"c": 1.0}}``.
        progress: Show progress over the routers (blocks of orderings): a tqdm bar on a
            terminal, lines with the total and the time left elsewhere (None), nothing (False).
        workers: Threads replaying algorithms side by side (default: the CPU count); results
            do not depend on it (each algorithm has its own seeded generator).
        chunk: Orderings per block for the linear (contextual) routers; default: as many as
            keep their matrices within ~2 MiB. Each block has its own seeded generator, so
            results depend on the block size (not on ``workers``).
        price_range: ``(c_min, c_max)`` of the cost normalization in the reward (default: the
            smallest and largest cost of ``outcomes``); the item bootstrap passes the original
            matrix's so every replicate scores the same objective.
        cluster: Replay the units (one router over a block of orderings) as Dask tasks on a
            cluster: a scheduler address, a scheduler file, ``local:N``, a ``distributed.Client``
            or an open ``ClusterSession`` (docs/cluster.md); the result is the same as here.
            None: this machine only (nothing of Dask is imported).
        cluster_wait_s: Seconds to wait for the cluster's first worker.

    Returns:
        A :class:`ReplayResult`.

    Raises:
        EvalcoreError: fewer than two arms or two items (nothing to route or to learn), an
            unknown algorithm or parameter, or Beta Thompson sampling on non-binary rewards
            (naming the first such item and arm).
    """
    if isinstance(cluster, str):  # local:0, a missing scheduler file: refused before any work
        from evalcore.cluster import parse_cluster

        parse_cluster(cluster)
    where = outcomes.source or None
    if outcomes.n_arms < 2:
        raise EvalcoreError(
            f"routing needs at least two arms to choose between; the outcome matrix has one ({outcomes.arms[0]!r})",
            path=where,
            field="arm",
        )
    if outcomes.n_items < 2:
        raise EvalcoreError(
            f"routing needs at least two items (queries) to learn over; the "
            f"outcome matrix has one ({outcomes.item_ids[0]!r})",
            path=where,
            field="item_id",
        )
    names = parse_algorithms(algorithms)
    params = dict(params or {})
    for key in params:
        if key not in ALGORITHMS:
            raise EvalcoreError(f"parameters given for unknown algorithm {key!r}", field="params")
    routers = {n: make_router(n, **dict(params.get(n, {}))) for n in names}
    if features is None and any(r.contextual for r in routers.values()):
        features = outcomes.context(dims=feature_dims, embedder=embedder, seed=seed)
    if features is not None:
        features = np.asarray(features, dtype=np.float32)
        if features.ndim != 2 or features.shape[0] != outcomes.n_items:
            raise EvalcoreError("features must have one row per item", field="features")
    if price_range is None:
        price_range = (float(outcomes.cost.min()), float(outcomes.cost.max()))
    price_range = (float(price_range[0]), float(price_range[1]))
    rewards = compute_rewards(outcomes.quality, outcomes.cost, outcomes.error, lam=lam, price_range=price_range)
    binary = (rewards == 0) | (rewards == 1)
    for name, router in routers.items():
        if getattr(router, "kind", None) == "beta" and not binary.all():
            i, k = np.argwhere(~binary)[0]
            raise EvalcoreError(
                f"{name} with kind='beta' needs rewards in {{0, 1}}, but item "
                f"{outcomes.item_ids[i]!r} on arm {outcomes.arms[k]!r} has reward "
                f"{rewards[i, k]:g} (quality {outcomes.quality[i, k]:g}, λ = {lam:g}); use "
                "kind='gaussian', or binary quality with λ = 0",
                path=where,
                field="quality",
            )
    # what a call costs in reward terms: quality − reward (λ·normalized cost, λ for a failure)
    penalty = outcomes.quality - rewards
    orders = make_orderings(outcomes.n_items, orderings, seed)
    env = ReplayEnv(rewards=rewards, cost=outcomes.cost, orders=orders, features=features)
    r_seq = rewards[orders]  # (R, T, K)
    q_seq = outcomes.quality[orders]
    c_seq = outcomes.cost[orders]
    from evalcore.routing._progress import bar as progress_bar

    R, K = orders.shape[0], outcomes.n_arms
    tasks: list[tuple[str, int, int]] = []
    for name in names:
        size = R
        if routers[name].contextual and features is not None:
            # linear routers keep (R, K, D, D) matrices: replaying the orderings in blocks
            # whose matrices fit the CPU cache (~2 MiB) is faster than one memory-bound pass
            d = features.shape[1] + 1
            size = chunk or max(1, min(R, (2 << 20) // (4 * K * d * d)))
        tasks += [(name, lo, min(R, lo + size)) for lo in range(0, R, size)]
    arms = {n: np.empty((R, outcomes.n_items), dtype=np.int16) for n in names}
    arms2: dict[str, np.ndarray] = {}
    seconds = dict.fromkeys(names, 0.0)
    # a router's parameters as its whole replay resolved them (e.g. Thompson's posterior)
    resolved: dict[str, dict[str, Any]] = {}

    def keep(
        task: tuple[str, int, int], a: np.ndarray, a2: np.ndarray | None, took: float, used: dict[str, Any] | None
    ) -> None:
        name, lo, hi = task
        arms[name][lo:hi] = a
        if a2 is not None:
            arms2.setdefault(name, np.empty_like(arms[name]))[lo:hi] = a2
        seconds[name] += took
        if used is not None:
            resolved[name] = used

    def one(task: tuple[str, int, int]) -> None:
        keep(task, *_replay_block(task, env, params, seed, routers[task[0]], r_seq[task[1] : task[2]]))

    n_workers = min(len(tasks), workers if workers is not None else (os.cpu_count() or 1))
    bar = progress_bar(len(tasks), f"routing replay ({R} orderings)", unit="router blocks", progress=progress)
    if cluster is not None:
        from evalcore.cluster import run_blocks_on_cluster

        order = sorted(tasks, key=lambda tk: not routers[tk[0]].contextual)
        units = run_blocks_on_cluster(
            _replay_block, order, env, args=(params, seed), cluster=cluster, wait_s=cluster_wait_s, on_done=bar.update
        )
        for task, unit in zip(order, units):
            keep(task, *unit)
    elif n_workers <= 1:
        for task in tasks:
            one(task)
            bar.update()
    else:
        # numpy releases the GIL in the heavy array operations, so routers (and blocks of
        # orderings) replay in parallel threads; the slow contextual ones are started first
        order = sorted(tasks, key=lambda tk: not routers[tk[0]].contextual)
        with ThreadPoolExecutor(max_workers=n_workers) as pool:
            for fut in as_completed([pool.submit(one, tk) for tk in order]):
                fut.result()
                bar.update()
    bar.close()
    done: dict[str, AlgorithmTrace] = {}
    for name in names:
        arm, arm2 = arms[name], arms2.get(name)
        ai = arm[..., None].astype(np.int64)
        q = np.take_along_axis(q_seq, ai, 2)[..., 0]
        c = np.take_along_axis(c_seq, ai, 2)[..., 0]
        r = np.take_along_axis(r_seq, ai, 2)[..., 0]
        if arm2 is not None:
            # a duel: both arms answer, the credited quality is their mean and both calls
            # are paid for, in the cost column and in the reward (each call's λ·normalized
            # cost is subtracted, as it would be for two single calls)
            bi = arm2[..., None].astype(np.int64)
            duel = arm2 != arm
            p_seq = penalty[orders]
            pa = np.take_along_axis(p_seq, ai, 2)[..., 0]
            pb = np.take_along_axis(p_seq, bi, 2)[..., 0]
            q = (q + np.take_along_axis(q_seq, bi, 2)[..., 0]) / 2
            r = q - pa - np.where(duel, pb, 0.0)
            c = c + np.where(duel, np.take_along_axis(c_seq, bi, 2)[..., 0], 0.0)
        done[name] = AlgorithmTrace(
            arm=arm,
            arm2=arm2,
            quality=q,
            cost=c,
            reward=r,
            seconds=seconds[name],
            params=resolved[name] if name in resolved else routers[name].params(),
        )
    traces = {name: done[name] for name in names}
    best_arm = int(np.argmax(rewards.mean(0)))
    return ReplayResult(
        outcomes=outcomes,
        orders=orders,
        lam=lam,
        seed=seed,
        traces=traces,
        oracle_reward=rewards.max(1)[orders],
        best_fixed_reward=rewards[:, best_arm][orders],
        best_fixed_arm=best_arm,
        price_range=price_range,
    )


@dataclass
class ReplayResult:
    """Traces of every algorithm over the same R orderings, and the metrics derived from them.

    Attributes:
        outcomes: The outcome matrix replayed.
        orders: Item index per ordering and step (R, T).
        lam: λ of the reward.
        seed: Seed used.
        traces: Algorithm name → :class:`AlgorithmTrace`.
        oracle_reward: Best reward available at each step (R, T).
        best_fixed_reward: Reward of the best fixed arm in hindsight (highest mean reward over
            all items) at each step (R, T).
        best_fixed_arm: Index of that arm.
        price_range: ``(c_min, c_max)`` of the cost normalization in the reward (None: the
            matrix's own range).
    """

    outcomes: OutcomeMatrix
    orders: np.ndarray
    lam: float
    seed: int
    traces: dict[str, AlgorithmTrace]
    oracle_reward: np.ndarray
    best_fixed_reward: np.ndarray
    best_fixed_arm: int
    price_range: tuple[float, float] | None = None

    @property
    def algorithms(self) -> list[str]:
        """Algorithm names in replay order."""
        return list(self.traces)

    def _trace(self, name: str) -> AlgorithmTrace:
        """The trace of ``name``; an algorithm that was not replayed is an EvalcoreError."""
        if name not in self.traces:
            raise EvalcoreError(f"{name!r} was not replayed (replayed: {', '.join(self.traces)})", field="algorithm")
        return self.traces[name]

    @property
    def n_orderings(self) -> int:
        return int(self.orders.shape[0])

    @property
    def n_steps(self) -> int:
        return int(self.orders.shape[1])

    def regret_curves(self, name: str, against: str = "oracle") -> np.ndarray:
        """Cumulative regret (R, T): ``Σ_{s≤t} (r*_s − r_s)`` where ``r*`` is the oracle's
        reward (``against="oracle"``) or the best fixed arm's (``"best_fixed"``)."""
        if against not in ("oracle", "best_fixed"):
            raise EvalcoreError("against must be 'oracle' or 'best_fixed'", field="against")
        ref = self.oracle_reward if against == "oracle" else self.best_fixed_reward
        return np.cumsum(ref - self._trace(name).reward, axis=1)

    def expected_regret_curves(self, name: str) -> np.ndarray:
        """Cumulative pseudo-regret against the best fixed arm (R, T):
        ``Σ_{s≤t} (μ* − μ_{a_s})`` with ``μ_k`` arm k's mean reward over all items and
        ``μ* = max_k μ_k`` (a duel counts the mean quality of its two arms less both calls'
        cost terms, as its realized reward does). Free of the item-level noise of the realized
        regret, it is the quantity bandit regret bounds speak of."""
        o = self.outcomes
        rw = compute_rewards(o.quality, o.cost, o.error, lam=self.lam, price_range=self.price_range)
        mu, mq = rw.mean(0), o.quality.mean(0)
        mp = mq - mu  # mean cost term of each arm
        tr = self._trace(name)
        if tr.arm2 is None:
            got = mu[tr.arm]
        else:
            got = (mq[tr.arm] + mq[tr.arm2]) / 2 - mp[tr.arm] - np.where(tr.arm2 != tr.arm, mp[tr.arm2], 0.0)
        return np.cumsum(mu.max() - got, axis=1)

    def convergence_points(self, name: str, *, threshold: float = 0.9, window: int | None = None) -> np.ndarray:
        """Per-ordering convergence point of ``name`` (see :func:`convergence_point`)."""
        return convergence_point(self._trace(name).arm, threshold=threshold, window=window)

    def per_ordering(self, name: str, *, threshold: float = 0.9, window: int | None = None) -> pd.DataFrame:
        """One row per ordering: mean quality, total cost, mean reward, final regrets,
        convergence point (NaN = not converged)."""
        tr = self._trace(name)
        return pd.DataFrame(
            {
                "ordering": np.arange(self.n_orderings),
                "mean_quality": tr.quality.mean(1),
                "total_cost": tr.cost.sum(1),
                "mean_reward": tr.reward.mean(1),
                "regret_vs_oracle": (self.oracle_reward - tr.reward).sum(1),
                "regret_vs_best_fixed": (self.best_fixed_reward - tr.reward).sum(1),
                "convergence_point": self.convergence_points(name, threshold=threshold, window=window),
            }
        )

    def per_ordering_table(self) -> pd.DataFrame:
        """Every router's per-ordering values, long format (``per_ordering.csv``): ``algorithm,
        ordering, mean_quality, total_cost, mean_reward, regret_vs_oracle,
        regret_vs_best_fixed``: what ``evalcore compare`` pairs across two routing results."""
        frames = []
        for name in self.algorithms:
            po = self.per_ordering(name).drop(columns=["convergence_point"])
            po.insert(0, "algorithm", name)
            frames.append(po)
        return pd.concat(frames, ignore_index=True)

    def design(self) -> dict[str, Any]:
        """What was replayed (``routing.json``): λ, seed, R, T, arms, routers, the cost scale
        and fingerprints of the item ids and of the orderings (SHA-256), so two routing
        results can be checked to be paired over the same items and orderings."""
        import hashlib
        import json

        ids = json.dumps([str(i) for i in self.outcomes.item_ids]).encode("utf-8")
        return {
            "kind": "evalcore routing result",
            "lambda": float(self.lam),
            "seed": int(self.seed),
            "n_orderings": self.n_orderings,
            "n_items": self.n_steps,
            "arms": list(self.outcomes.arms),
            "algorithms": self.algorithms,
            "params": {n: tr.params for n, tr in self.traces.items()},
            "price_range": None if self.price_range is None else list(self.price_range),
            "items_sha256": hashlib.sha256(ids).hexdigest(),
            "orderings_sha256": hashlib.sha256(np.ascontiguousarray(self.orders, dtype=np.int64).tobytes()).hexdigest(),
            "source": self.outcomes.source or None,
        }

    def summary(
        self,
        *,
        confidence: float = 0.95,
        threshold: float = 0.9,
        window: int | None = None,
        reference: str = "always_best",
    ) -> pd.DataFrame:
        """One row per algorithm with means and intervals over orderings.

        Columns: ``algorithm, n_orderings`` (R, the number of per-ordering values each
        interval is taken over), ``n_items`` (T), ``mean_quality, total_cost, regret_vs_oracle,
        regret_vs_best_fixed, convergence_point`` each with ``_ci_low``/``_ci_high`` (the
        central ``confidence`` range of the per-ordering values: how the result varies with
        the arrival order and the algorithm's own randomness), ``mean_reward``,
        ``converged_share`` (orderings that converged), ``cost_savings_vs_always_best``
        (``1 − total cost / always_best's total cost``, both totals averaged over the
        orderings, so it is negative only when the router costs more; its interval is the
        spread over orderings of ``1 − total cost in the ordering / always_best's mean total
        cost``; NaN when always_best costs nothing) and ``quality_vs_always_best``
        (difference in mean quality), and ``seconds``. Every column is defined once in
        :data:`evalcore.routing.COLUMN_DEFINITIONS`. At λ = 0 ``mean_reward`` equals
        ``mean_quality`` (a failed call has quality 0 and reward −λ = 0).
        The convergence point's centre is the median over orderings, with non-converged
        orderings counted as never converging (NaN when more than half did not converge).
        ``reference`` names the algorithm savings are measured against; when it was not
        replayed, the best fixed arm in hindsight stands in.
        """
        rows = []
        if reference in self.traces:
            ref_cost = self.traces[reference].cost.sum(1)
            ref_q = self.traces[reference].quality.mean(1)
        else:
            arm = self.best_fixed_arm
            ref_cost = self.outcomes.cost[:, arm][self.orders].sum(1)
            ref_q = self.outcomes.quality[:, arm][self.orders].mean(1)
        for name in self.algorithms:
            po = self.per_ordering(name, threshold=threshold, window=window)
            row: dict[str, Any] = {"algorithm": name, "n_orderings": self.n_orderings, "n_items": self.n_steps}
            for col in ("mean_quality", "total_cost", "regret_vs_oracle", "regret_vs_best_fixed"):
                vals = po[col].to_numpy()
                lo, hi = interval(vals, confidence)
                row.update({col: float(vals.mean()), f"{col}_ci_low": lo, f"{col}_ci_high": hi})
            cp = po["convergence_point"].to_numpy()
            cp_inf = np.where(np.isnan(cp), np.inf, cp)
            centre = float(np.quantile(cp_inf, 0.5, method="lower"))
            with np.errstate(invalid="ignore"):  # inf − inf while interpolating
                lo, hi = (
                    float(v) for v in np.quantile(cp_inf, [(1 - confidence) / 2, (1 + confidence) / 2], method="lower")
                )
            fin = lambda v: v if math.isfinite(v) else float("nan")  # noqa: E731
            row.update(
                {
                    "convergence_point": fin(centre),
                    "convergence_point_ci_low": fin(lo),
                    "convergence_point_ci_high": fin(hi),
                    "converged_share": float(np.isfinite(cp).mean()),
                }
            )
            row["mean_reward"] = float(po["mean_reward"].mean())
            # savings against the reference's *mean* total cost: a fixed denominator, so the
            # mean over orderings is 1 − (router's mean total cost)/(reference's), negative
            # only when the router costs more in total (a ratio per ordering against a
            # reference whose own cost changes with the ordering was not: random showed
            # −0.83 while costing less than always_best)
            ref_total = float(np.mean(ref_cost))
            if ref_total > 0:
                sav = 1.0 - po["total_cost"].to_numpy() / ref_total
                saving = 1.0 - float(np.mean(po["total_cost"].to_numpy())) / ref_total
            else:
                sav = np.full(self.n_orderings, np.nan)
                saving = float("nan")
            lo, hi = interval(sav, confidence)
            row.update(
                {
                    "cost_savings_vs_always_best": saving,
                    "cost_savings_vs_always_best_ci_low": lo,
                    "cost_savings_vs_always_best_ci_high": hi,
                    "quality_vs_always_best": float((po["mean_quality"] - ref_q).mean()),
                    "seconds": self.traces[name].seconds,
                }
            )
            rows.append(row)
        return pd.DataFrame(rows)

    def curves(self, *, confidence: float = 0.95, every: int = 1) -> pd.DataFrame:
        """Per-step curves, long format: one row per algorithm × step with the mean and the
        ``confidence`` band over orderings of cumulative regret against the oracle and against
        the best fixed arm, cumulative cost and running mean quality.

        Args:
            confidence: Width of the band.
            every: Keep every n-th step (and the last).
        """
        steps = np.arange(self.n_steps)
        keep = np.unique(np.r_[steps[:: max(every, 1)], self.n_steps - 1])
        lo_q, hi_q = (1 - confidence) / 2, (1 + confidence) / 2
        frames = []
        denom = np.arange(1, self.n_steps + 1)
        for name in self.algorithms:
            tr = self.traces[name]
            series = {
                "regret_vs_oracle": self.regret_curves(name, "oracle"),
                "regret_vs_best_fixed": self.regret_curves(name, "best_fixed"),
                "cumulative_cost": np.cumsum(tr.cost, axis=1),
                "running_quality": np.cumsum(tr.quality, axis=1) / denom,
            }
            df = pd.DataFrame({"algorithm": name, "step": keep + 1})
            for key, arr in series.items():
                a = arr[:, keep]
                df[key] = a.mean(0)
                q = np.quantile(a, [lo_q, hi_q], axis=0)
                df[f"{key}_low"], df[f"{key}_high"] = q[0], q[1]
            frames.append(df)
        return pd.concat(frames, ignore_index=True)

    def selection_share(self, *, window: int | None = None, every: int = 1) -> pd.DataFrame:
        """Share of each arm among the selections at each step, averaged over orderings and
        smoothed by a trailing window (default ``max(10, T // 50)``); a duel counts ½ for each
        of its two arms. Long format: ``algorithm, step, arm, share``."""
        T, K = self.n_steps, self.outcomes.n_arms
        w = window or max(10, T // 50)
        keep = np.unique(np.r_[np.arange(T)[:: max(every, 1)], T - 1])
        frames = []
        for name in self.algorithms:
            tr = self.traces[name]
            share = np.zeros((T, K))
            for k in range(K):
                ind = (tr.arm == k).astype(float)
                if tr.arm2 is not None:
                    ind = 0.5 * ind + 0.5 * (tr.arm2 == k)
                share[:, k] = ind.mean(0)
            cs = np.cumsum(np.vstack([np.zeros((1, K)), share]), axis=0)
            lo = np.maximum(np.arange(1, T + 1) - w, 0)
            smooth = (cs[1:] - cs[lo]) / (np.arange(1, T + 1) - lo)[:, None]
            for k, arm in enumerate(self.outcomes.arms):
                frames.append(pd.DataFrame({"algorithm": name, "step": keep + 1, "arm": arm, "share": smooth[keep, k]}))
        return pd.concat(frames, ignore_index=True)

    def points(self) -> pd.DataFrame:
        """Mean cost per query and mean quality of every algorithm and every fixed arm, with
        ``pareto`` marking the non-dominated points (see :func:`pareto_frontier`)."""
        from evalcore.routing._metrics import pareto_frontier

        rows = [
            {
                "name": n,
                "kind": "algorithm",
                "mean_cost": float(tr.cost.mean()),
                "mean_quality": float(tr.quality.mean()),
            }
            for n, tr in self.traces.items()
        ]
        tab = self.outcomes.arm_table(self.lam)
        rows += [
            {"name": a, "kind": "arm", "mean_cost": float(c), "mean_quality": float(q)}
            for a, c, q in zip(tab["arm"], tab["mean_cost"], tab["mean_quality"])
        ]
        df = pd.DataFrame(rows)
        df["pareto"] = pareto_frontier(df["mean_cost"].to_numpy(), df["mean_quality"].to_numpy())
        return df

    def compare(
        self, *, metric: str = "mean_reward", test: str = "paired_t", correction: str = "holm", alpha: float = 0.05
    ) -> pd.DataFrame:
        """Every pair of algorithms compared on the same orderings.

        Per ordering, each algorithm's ``metric`` (a column of :meth:`per_ordering`:
        ``mean_quality``, ``total_cost``, ``mean_reward``, ``regret_vs_oracle`` or
        ``regret_vs_best_fixed``) forms a paired sample over the R orderings; see
        :func:`evalcore.routing.pairwise_comparisons`.
        """
        from evalcore.routing._metrics import pairwise_comparisons

        columns = ("mean_quality", "total_cost", "mean_reward", "regret_vs_oracle", "regret_vs_best_fixed")
        if metric not in columns:
            raise EvalcoreError(f"unknown metric {metric!r}; use one of {', '.join(columns)}", field="metric")
        values = {n: self.per_ordering(n)[metric].to_numpy() for n in self.algorithms}
        return pairwise_comparisons(values, test=test, correction=correction, alpha=alpha)
