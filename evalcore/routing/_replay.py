"""Counterfactual replay of routers over an outcome matrix, vectorized across orderings.

The T queries of the outcome matrix arrive in R random orderings (one seeded permutation per
ordering, the same permutations for every algorithm so comparisons are paired). At each step
every router picks an arm for each ordering's query and only that arm's recorded outcome is
revealed to it; no model is called. All R orderings advance together (numpy over the R axis).
"""

from __future__ import annotations

import contextlib
import os
import time
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from evalcore._executor import Executor, LocalExecutor, as_executor
from evalcore.errors import EvalcoreError
from evalcore.routing._algorithms import ALGORITHMS, ReplayEnv, Router, make_router
from evalcore.routing._matrix import OutcomeMatrix
from evalcore.routing._result import AlgorithmTrace, ReplayResult
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
def cluster_session(cluster: Any, wait_s: float = 60.0) -> Iterator[Executor | None]:
    """An executor opened once for several replays: ``cluster`` is an executor, or a cluster name
    or client that evalcore's ``cluster`` executor entry point turns into one; None: none (this
    machine, nothing of Dask imported)."""
    executor = as_executor(None, cluster, wait_s=wait_s)
    if executor is None:
        yield None
        return
    with executor.session() as opened:
        yield opened


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
    executor: Executor | None = None,
) -> ReplayResult:
    """Replay routers over ``outcomes`` in R random orderings.

    Args:
        outcomes: The outcome matrix (T items × K arms).
        algorithms: ``"all"``, ``"a,b"`` or a list of names from ``ALGORITHMS``.
        orderings: R, the number of random orderings (seeded; shared by all algorithms).
        seed: Seed of the orderings and of each algorithm's generator.
        lam: λ in ``reward = quality − λ · normalized cost``.
        features: Context features (T, d); default: ``outcomes.context(dims=feature_dims)``, computed only when a
            contextual algorithm is replayed.
        feature_dims: At most this many feature dimensions.
        embedder: ``"auto"``, ``"minilm"`` or ``"tfidf"`` for query features.
        params: Algorithm name → hyper-parameters, e.g. ``{"ucb1": {"c": 1.0}}``.
        progress: Show progress over the routers (blocks of orderings): a tqdm bar on a terminal, lines with the
            total and the time left elsewhere (None), nothing (False).
        workers: Threads replaying algorithms side by side (default: the CPU count); results do not depend on it
            (each algorithm has its own seeded generator).
        chunk: Orderings per block for the linear (contextual) routers; default: as many as keep their matrices
            within ~2 MiB. Each block has its own seeded generator, so results depend on the block size (not on
            ``workers``).
        price_range: ``(c_min, c_max)`` of the cost normalization in the reward (default: the smallest and largest
            cost of ``outcomes``); the item bootstrap passes the original matrix's so every replicate scores the
            same objective.
        cluster: A convenience for ``executor``: a scheduler address, a scheduler file, ``local:N``, a
            ``distributed.Client`` or an executor (docs/cluster.md).
        cluster_wait_s: Seconds to wait for the cluster's first worker.
        executor: Where the units (one router over a block of orderings) run: a remote executor runs
            ``_replay_block`` with the environment shared once; a local one (the default, ``workers`` threads) runs
            them here. The result is the same either way.

    Returns:
        A :class:`ReplayResult`.

    Raises:
        EvalcoreError: fewer than two arms or two items (nothing to route or to learn), an unknown algorithm or
            parameter, or Beta Thompson sampling on non-binary rewards (naming the first such item and arm).
    """
    executor = as_executor(executor, cluster, wait_s=cluster_wait_s)  # local:0 and the like: now
    _check_size(outcomes)
    names = parse_algorithms(algorithms)
    params = dict(params or {})
    routers = _make_routers(names, params)
    features = _context(outcomes, routers, features, dims=feature_dims, embedder=embedder, seed=seed)
    price_range = _prices(outcomes, price_range)
    rewards = compute_rewards(outcomes.quality, outcomes.cost, outcomes.error, lam=lam, price_range=price_range)
    _check_beta(routers, rewards, outcomes, lam)
    orders = make_orderings(outcomes.n_items, orderings, seed)
    env = ReplayEnv(rewards=rewards, cost=outcomes.cost, orders=orders, features=features)
    units = _run_units(env, routers, params, seed, executor=executor, workers=workers, chunk=chunk, progress=progress)
    best_arm = int(np.argmax(rewards.mean(0)))
    return ReplayResult(
        outcomes=outcomes,
        orders=orders,
        lam=lam,
        seed=seed,
        traces=_traces(outcomes, rewards, orders, units, routers),
        oracle_reward=rewards.max(1)[orders],
        best_fixed_reward=rewards[:, best_arm][orders],
        best_fixed_arm=best_arm,
        price_range=price_range,
    )


def _check_size(outcomes: OutcomeMatrix) -> None:
    """Refuse a matrix with fewer than two arms or two items (nothing to route or to learn)."""
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


def _make_routers(names: list[str], params: Mapping[str, Mapping[str, Any]]) -> dict[str, Router]:
    """A fresh router per name with its hyper-parameters; parameters for an unknown algorithm are refused."""
    for key in params:
        if key not in ALGORITHMS:
            raise EvalcoreError(f"parameters given for unknown algorithm {key!r}", field="params")
    return {n: make_router(n, **dict(params.get(n, {}))) for n in names}


def _prices(outcomes: OutcomeMatrix, price_range: tuple[float, float] | None) -> tuple[float, float]:
    """``price_range`` as floats; default: the smallest and largest cost of ``outcomes``."""
    if price_range is None:
        price_range = (float(outcomes.cost.min()), float(outcomes.cost.max()))
    return (float(price_range[0]), float(price_range[1]))


def _context(
    outcomes: OutcomeMatrix,
    routers: Mapping[str, Router],
    features: np.ndarray | None,
    *,
    dims: int,
    embedder: str,
    seed: int,
) -> np.ndarray | None:
    """The context features as float32 (T, d): ``features``, else the matrix's own when a
    contextual router is replayed; None when none is needed or given."""
    if features is None and any(r.contextual for r in routers.values()):
        features = outcomes.context(dims=dims, embedder=embedder, seed=seed)
    if features is not None:
        features = np.asarray(features, dtype=np.float32)
        if features.ndim != 2 or features.shape[0] != outcomes.n_items:
            raise EvalcoreError("features must have one row per item", field="features")
    return features


def _check_beta(routers: Mapping[str, Router], rewards: np.ndarray, outcomes: OutcomeMatrix, lam: float) -> None:
    """Refuse Beta Thompson sampling on rewards that are not all 0 or 1 (naming the first such cell)."""
    binary = (rewards == 0) | (rewards == 1)
    for name, router in routers.items():
        if getattr(router, "kind", None) == "beta" and not binary.all():
            i, k = np.argwhere(~binary)[0]
            raise EvalcoreError(
                f"{name} with kind='beta' needs rewards in {{0, 1}}, but item "
                f"{outcomes.item_ids[i]!r} on arm {outcomes.arms[k]!r} has reward "
                f"{rewards[i, k]:g} (quality {outcomes.quality[i, k]:g}, λ = {lam:g}); use "
                "kind='gaussian', or binary quality with λ = 0",
                path=outcomes.source or None,
                field="quality",
            )


@dataclass
class _Units:
    """What the replay's units gave, per router: the arms chosen (R, T), the duel's second arms,
    the seconds spent and the parameters its whole replay resolved (e.g. Thompson's posterior)."""

    arms: dict[str, np.ndarray]
    arms2: dict[str, np.ndarray] = field(default_factory=dict)
    seconds: dict[str, float] = field(default_factory=dict)
    resolved: dict[str, dict[str, Any]] = field(default_factory=dict)


def _unit_tasks(env: ReplayEnv, routers: Mapping[str, Router], chunk: int | None) -> list[tuple[str, int, int]]:
    """The units of work: each router over a block of orderings (all R, or for the linear
    routers blocks whose matrices fit the CPU cache)."""
    R, K = env.orders.shape[0], env.n_arms
    tasks: list[tuple[str, int, int]] = []
    for name, router in routers.items():
        size = R
        if router.contextual and env.features is not None:
            # linear routers keep (R, K, D, D) matrices: replaying the orderings in blocks
            # whose matrices fit the CPU cache (~2 MiB) is faster than one memory-bound pass
            d = env.features.shape[1] + 1
            size = chunk or max(1, min(R, (2 << 20) // (4 * K * d * d)))
        tasks += [(name, lo, min(R, lo + size)) for lo in range(0, R, size)]
    return tasks


def _run_units(
    env: ReplayEnv,
    routers: Mapping[str, Router],
    params: Mapping[str, Mapping[str, Any]],
    seed: int,
    *,
    executor: Executor | None,
    workers: int | None,
    chunk: int | None,
    progress: bool | None,
) -> _Units:
    """Run every router's units (see :func:`replay`'s ``executor``) and gather their arms."""
    from evalcore.routing._progress import bar as progress_bar

    assert env.rewards is not None  # the replay's own environment holds the rewards
    R, T = env.orders.shape
    r_seq = env.rewards[env.orders]  # (R, T, K)
    tasks = _unit_tasks(env, routers, chunk)
    got = _Units(arms={n: np.empty((R, T), dtype=np.int16) for n in routers}, seconds=dict.fromkeys(routers, 0.0))

    def keep(
        task: tuple[str, int, int], a: np.ndarray, a2: np.ndarray | None, took: float, used: dict[str, Any] | None
    ) -> None:
        name, lo, hi = task
        got.arms[name][lo:hi] = a
        if a2 is not None:
            got.arms2.setdefault(name, np.empty_like(got.arms[name]))[lo:hi] = a2
        got.seconds[name] += took
        if used is not None:
            got.resolved[name] = used

    def one(task: tuple[str, int, int]) -> None:
        keep(task, *_replay_block(task, env, params, seed, routers[task[0]], r_seq[task[1] : task[2]]))

    n_workers = min(len(tasks), workers if workers is not None else (os.cpu_count() or 1))
    bar = progress_bar(len(tasks), f"routing replay ({R} orderings)", unit="router blocks", progress=progress)
    # the slow contextual routers are started first
    order = sorted(tasks, key=lambda tk: not routers[tk[0]].contextual)
    if executor is not None and executor.remote:  # the environment sent once, each unit a task
        for n, unit in executor.stream(_replay_block, order, shared=env, args=(params, seed)):
            keep(order[n], *unit)
            bar.update()
    else:
        # numpy releases the GIL in the heavy array operations, so routers (and blocks of
        # orderings) replay in parallel threads (one worker: in order, in this thread)
        here = executor if executor is not None else LocalExecutor(max(1, n_workers))
        for _ in here.stream(lambda task, _shared: one(task), order if n_workers > 1 else tasks):
            bar.update()
    bar.close()
    return got


def _traces(
    outcomes: OutcomeMatrix, rewards: np.ndarray, orders: np.ndarray, units: _Units, routers: Mapping[str, Router]
) -> dict[str, AlgorithmTrace]:
    """Each router's trace from the arms it chose: quality, cost and reward per ordering × step."""
    q_seq, c_seq, r_seq = outcomes.quality[orders], outcomes.cost[orders], rewards[orders]
    # what a call costs in reward terms: quality − reward (λ·normalized cost, λ for a failure)
    penalty = outcomes.quality - rewards
    done: dict[str, AlgorithmTrace] = {}
    for name, router in routers.items():
        arm, arm2 = units.arms[name], units.arms2.get(name)
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
            seconds=units.seconds[name],
            params=units.resolved[name] if name in units.resolved else router.params(),
        )
    return done
