"""The result of a counterfactual replay: each router's traces over the same orderings
(:class:`AlgorithmTrace`) and the metrics derived from them (:class:`ReplayResult`: regret,
convergence, per-ordering tables, the summary with intervals, the design fingerprint)."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from evalcore.errors import EvalcoreError
from evalcore.routing._matrix import OutcomeMatrix
from evalcore.routing._metrics import convergence_point, interval
from evalcore.routing._reward import compute_rewards


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
            row.update(_convergence_columns(po["convergence_point"].to_numpy(), confidence))
            row["mean_reward"] = float(po["mean_reward"].mean())
            row.update(_savings_columns(po["total_cost"].to_numpy(), float(np.mean(ref_cost)), confidence))
            row.update(
                {
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


def _convergence_columns(cp: np.ndarray, confidence: float) -> dict[str, float]:
    """``convergence_point`` (median over orderings, one that never converges counted as
    never: NaN when more than half did not), its ``confidence`` range and ``converged_share``."""
    cp_inf = np.where(np.isnan(cp), np.inf, cp)
    centre = float(np.quantile(cp_inf, 0.5, method="lower"))
    with np.errstate(invalid="ignore"):  # inf − inf while interpolating
        lo, hi = (float(v) for v in np.quantile(cp_inf, [(1 - confidence) / 2, (1 + confidence) / 2], method="lower"))
    fin = lambda v: v if math.isfinite(v) else float("nan")  # noqa: E731
    return {
        "convergence_point": fin(centre),
        "convergence_point_ci_low": fin(lo),
        "convergence_point_ci_high": fin(hi),
        "converged_share": float(np.isfinite(cp).mean()),
    }


def _savings_columns(total_cost: np.ndarray, ref_total: float, confidence: float) -> dict[str, float]:
    """``cost_savings_vs_always_best`` of a router's per-ordering total costs and its range.

    Savings are taken against the reference's *mean* total cost ``ref_total``: a fixed
    denominator, so the mean over orderings is 1 − (router's mean total cost)/(reference's),
    negative only when the router costs more in total (a ratio per ordering against a
    reference whose own cost changes with the ordering was not: random showed −0.83 while
    costing less than always_best). NaN when the reference costs nothing.
    """
    if ref_total > 0:
        sav = 1.0 - total_cost / ref_total
        saving = 1.0 - float(np.mean(total_cost)) / ref_total
    else:
        sav = np.full(total_cost.shape[0], np.nan)
        saving = float("nan")
    lo, hi = interval(sav, confidence)
    return {
        "cost_savings_vs_always_best": saving,
        "cost_savings_vs_always_best_ci_low": lo,
        "cost_savings_vs_always_best_ci_high": hi,
    }
