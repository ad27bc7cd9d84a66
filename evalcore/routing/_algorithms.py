"""The eleven routers, vectorized across replay orderings.

Every router keeps its state as arrays with a leading orderings axis R (counts ``(R, K)``,
LinUCB's inverse design matrices ``(R, K, D, D)``, …) so one Python step advances all R
independent replays at once. A router sees, at step ``t``, the item index of each ordering's
current query (``items``, shape (R,)) and its context features ``x`` (R, d); it returns the
chosen arm of each ordering (the dueling bandit returns two) and then learns from the revealed
reward(s) only. Ties between arms are broken uniformly at random with the router's seeded
generator, never by arm order (:func:`random_argmax`).
"""

from __future__ import annotations

import math
from abc import ABC, abstractmethod
from collections.abc import Callable
from typing import Any

import numpy as np

from evalcore.errors import EvalcoreError
from evalcore.routing._env import ReplayEnv as ReplayEnv


def random_argmax(scores: np.ndarray, rng: np.random.Generator, *, atol: float = 1e-12) -> np.ndarray:
    """Row-wise argmax with ties broken uniformly at random.

    Args:
        scores: Array (R, K); ``inf`` is allowed (untried arms).
        rng: Seeded generator.
        atol: Scores within ``atol`` of the row maximum count as tied.

    Returns:
        Integer array (R,) of chosen columns.
    """
    s = np.asarray(scores, dtype=float)
    top = s.max(axis=1, keepdims=True)
    tied = (s >= top - atol) | (s == top)
    u = rng.random(s.shape)
    u[~tied] = -1.0
    return u.argmax(axis=1)


class Router(ABC):
    """Base class: ``reset`` → (``select`` → ``update``) per step.

    Attributes:
        name: Registry name.
        contextual: Whether ``select`` needs the context features.
        duel: Whether ``select`` returns two arms (a duel) instead of one.
        full_information: Whether the replay gives it the whole outcome matrix (only the
            oracle and the calibrated/priced baselines); every other router is reset with
            :meth:`ReplayEnv.learner_view` and learns only from the rewards revealed to it.
    """

    name = "router"
    contextual = False
    duel = False
    full_information = False

    def reset(self, env: ReplayEnv, rng: np.random.Generator) -> None:
        """Start R fresh replays."""
        self.env = env
        self.rng = rng
        self.R, self.K = env.n_orderings, env.n_arms
        self.rows = np.arange(self.R)

    @abstractmethod
    def select(self, t: int, items: np.ndarray, x: np.ndarray | None) -> Any:
        """Arm(s) to call at step ``t`` for each ordering."""

    def update(self, t: int, items: np.ndarray, x: np.ndarray | None, arms: Any, rewards: Any) -> None:
        """Learn from the revealed reward(s) of the chosen arm(s).

        The default learns nothing (routers that do not learn, such as the random and fixed ones,
        keep it); learning routers override it.
        """
        return None

    def params(self) -> dict[str, Any]:
        """Hyper-parameters (for reports)."""
        return {}


class RandomRouter(Router):
    """Uniformly random arm per query."""

    name = "random"

    def select(self, t: int, items: np.ndarray, x: np.ndarray | None) -> np.ndarray:
        return self.rng.integers(0, self.K, size=self.R)


class AlwaysBest(Router):
    """The arm with the best mean reward on a calibration split, then always that arm.

    The calibration split is the first ``ceil(calibration_fraction · T)`` queries of each
    ordering, on which every arm's outcome is inspected offline (not charged); the arm with the
    highest mean reward there is used for every query. The calibration queries are not removed
    from the evaluation: they stay in the replayed sequence and are scored like every other step
    (for every algorithm, so all routers are measured on the same T queries), which gives this
    baseline an in-sample look at ``calibration_fraction`` of the queries it is scored on. With
    ``calibration_fraction = 1`` it is the best fixed arm in hindsight.

    Args:
        calibration_fraction: Share of queries in the calibration split (0, 1].
    """

    name = "always_best"
    full_information = True

    def __init__(self, calibration_fraction: float = 0.1) -> None:
        if not 0 < calibration_fraction <= 1:
            raise EvalcoreError("calibration_fraction must be in (0, 1]", field="calibration_fraction")
        self.calibration_fraction = calibration_fraction

    def reset(self, env: ReplayEnv, rng: np.random.Generator) -> None:
        super().reset(env, rng)
        assert env.rewards is not None  # full information: reset with the outcome matrix
        n_cal = max(1, math.ceil(self.calibration_fraction * env.n_steps))
        means = env.rewards[env.orders[:, :n_cal]].mean(axis=1)
        self.arm = random_argmax(means, rng)

    def select(self, t: int, items: np.ndarray, x: np.ndarray | None) -> np.ndarray:
        return self.arm

    def params(self) -> dict[str, Any]:
        return {"calibration_fraction": self.calibration_fraction}


class AlwaysCheapest(Router):
    """The arm with the lowest mean cost (the arms' prices are known in advance)."""

    name = "always_cheapest"
    full_information = True

    def reset(self, env: ReplayEnv, rng: np.random.Generator) -> None:
        super().reset(env, rng)
        assert env.cost is not None  # full information: reset with the outcome matrix
        mean_cost = env.cost.mean(axis=0)
        self.arm = random_argmax(np.tile(-mean_cost, (self.R, 1)), rng)

    def select(self, t: int, items: np.ndarray, x: np.ndarray | None) -> np.ndarray:
        return self.arm


class Oracle(Router):
    """Per query, the cheapest of the arms with the highest reward (full hindsight; regret 0 by
    definition). At λ = 0 that is the cheapest correct arm, as the oracle of RouterBench (Hu et
    al. 2024) and RouteLLM (Ong et al. 2024); arms tied in reward and cost are drawn at random."""

    name = "oracle"
    full_information = True

    def select(self, t: int, items: np.ndarray, x: np.ndarray | None) -> np.ndarray:
        rewards, cost = self.env.rewards, self.env.cost
        assert rewards is not None and cost is not None  # reset with the outcome matrix
        r = np.asarray(rewards[items], dtype=float)
        best = r >= r.max(axis=1, keepdims=True) - 1e-12
        # among the best, the cheapest: −cost where best, −inf elsewhere
        return random_argmax(np.where(best, -np.asarray(cost[items], dtype=float), -np.inf), self.rng)


class _Counting(Router):
    """Running per-arm counts and reward sums, (R, K)."""

    def reset(self, env: ReplayEnv, rng: np.random.Generator) -> None:
        super().reset(env, rng)
        self.n = np.zeros((self.R, self.K))
        self.s = np.zeros((self.R, self.K))

    def update(self, t: int, items: np.ndarray, x: np.ndarray | None, arms: Any, rewards: Any) -> None:
        self.n[self.rows, arms] += 1.0
        self.s[self.rows, arms] += rewards

    def means(self) -> np.ndarray:
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.where(self.n > 0, self.s / np.maximum(self.n, 1), np.inf)


class EpsilonGreedy(_Counting):
    """Explore a random arm with probability ``ε_t = ε / (1 + decay · t)``, else exploit the
    best empirical mean (untried arms first).

    Args:
        epsilon: Initial exploration probability.
        decay: Decay rate (0 = constant ε).
    """

    name = "epsilon_greedy"

    def __init__(self, epsilon: float = 0.1, decay: float = 0.0) -> None:
        if not 0 <= epsilon <= 1 or decay < 0:
            raise EvalcoreError("epsilon must be in [0, 1] and decay >= 0", field="epsilon")
        self.epsilon, self.decay = epsilon, decay

    def select(self, t: int, items: np.ndarray, x: np.ndarray | None) -> np.ndarray:
        eps = self.epsilon / (1.0 + self.decay * t)
        greedy = random_argmax(self.means(), self.rng)
        explore = self.rng.random(self.R) < eps
        return np.where(explore, self.rng.integers(0, self.K, size=self.R), greedy)

    def params(self) -> dict[str, Any]:
        return {"epsilon": self.epsilon, "decay": self.decay}


class UCB1(_Counting):
    """UCB1: ``mean_k + c · sqrt(ln t / n_k)``, untried arms first (Auer et al. 2002; c = √2
    is the original bound for rewards in [0, 1]).

    Args:
        c: Exploration weight.
    """

    name = "ucb1"

    def __init__(self, c: float = math.sqrt(2.0)) -> None:
        if c < 0:
            raise EvalcoreError("c must be >= 0", field="c")
        self.c = c

    def scores(self, t: int) -> np.ndarray:
        with np.errstate(invalid="ignore", divide="ignore"):
            bonus = self.c * np.sqrt(np.log(max(t, 1)) / self.n)
            return np.where(self.n > 0, self.s / np.maximum(self.n, 1) + bonus, np.inf)

    def select(self, t: int, items: np.ndarray, x: np.ndarray | None) -> np.ndarray:
        return random_argmax(self.scores(t), self.rng)

    def params(self) -> dict[str, Any]:
        return {"c": self.c}


class ThompsonSampling(_Counting):
    """Thompson sampling: Beta–Bernoulli when every reward is 0 or 1, Gaussian otherwise.

    Beta: arm k's posterior is ``Beta(a₀ + wins, b₀ + losses)``. Gaussian: prior
    ``N(0, prior_sd²)``, known noise ``sigma``; posterior precision ``1/prior_sd² + n/σ²``,
    mean ``(Σr/σ²) / precision``. Each step samples every arm's posterior and plays the max.

    Args:
        kind: ``"auto"``, ``"beta"`` or ``"gaussian"``.
        prior: Beta prior ``(a₀, b₀)``.
        sigma: Reward noise standard deviation (Gaussian).
        prior_sd: Prior standard deviation of an arm's mean reward (Gaussian).
    """

    name = "thompson_sampling"

    def __init__(
        self, kind: str = "auto", prior: tuple[float, float] = (1.0, 1.0), sigma: float = 0.5, prior_sd: float = 1.0
    ) -> None:
        if kind not in ("auto", "beta", "gaussian"):
            raise EvalcoreError("kind must be auto, beta or gaussian", field="kind")
        if sigma <= 0 or prior_sd <= 0 or min(prior) <= 0:
            raise EvalcoreError("sigma, prior_sd and the Beta prior must be > 0", field="sigma")
        self.kind, self.prior, self.sigma, self.prior_sd = kind, tuple(prior), sigma, prior_sd

    def reset(self, env: ReplayEnv, rng: np.random.Generator) -> None:
        super().reset(env, rng)
        binary = bool(env.binary_rewards)  # a flag: the learner never sees the rewards
        self.mode = ("beta" if binary else "gaussian") if self.kind == "auto" else self.kind
        if self.mode == "beta" and not binary:
            raise EvalcoreError(
                "Beta-Bernoulli Thompson sampling needs rewards in {0, 1} "
                "(use kind='gaussian' or lambda=0 with binary quality)",
                field="kind",
            )

    def select(self, t: int, items: np.ndarray, x: np.ndarray | None) -> np.ndarray:
        if self.mode == "beta":
            a = self.prior[0] + self.s
            b = self.prior[1] + self.n - self.s
            return random_argmax(self.rng.beta(a, b), self.rng)
        prec = 1.0 / self.prior_sd**2 + self.n / self.sigma**2
        mean = (self.s / self.sigma**2) / prec
        draw = mean + self.rng.standard_normal((self.R, self.K)) / np.sqrt(prec)
        return random_argmax(draw, self.rng)

    def params(self) -> dict[str, Any]:
        out: dict[str, Any] = {"kind": self.kind, "sigma": self.sigma, "prior_sd": self.prior_sd}
        if getattr(self, "mode", None):
            out["posterior"] = self.mode  # the one used: beta or gaussian
        return out


class _Linear(Router):
    """Per-arm ridge regression on ``[1, x]`` (intercept), inverse design matrices kept by
    Sherman–Morrison updates: ``A⁻¹ ← A⁻¹ − (A⁻¹x)(A⁻¹x)ᵀ / (1 + xᵀA⁻¹x)``."""

    contextual = True

    def __init__(self, reg: float = 1.0, dtype: Any = np.float32) -> None:
        if reg <= 0:
            raise EvalcoreError("reg must be > 0", field="reg")
        self.reg = reg
        self.dtype = dtype

    def reset(self, env: ReplayEnv, rng: np.random.Generator) -> None:
        super().reset(env, rng)
        if env.features is None:
            raise EvalcoreError(f"{self.name} needs context features", field="features")
        d = env.features.shape[1] + 1
        self.D = d
        self.A_inv = np.zeros((self.R, self.K, d, d), dtype=self.dtype)
        self.A_inv[..., np.arange(d), np.arange(d)] = 1.0 / self.reg
        self.b = np.zeros((self.R, self.K, d), dtype=self.dtype)
        # preallocated work buffers: a fresh multi-megabyte array per step costs page faults
        self._block = np.empty((self.R, d, d), dtype=self.dtype)
        self._outer = np.empty((self.R, d, d), dtype=self.dtype)
        self._v: np.ndarray | None = None
        self._s: np.ndarray | None = None

    def _aug(self, x: np.ndarray | None) -> np.ndarray:
        assert x is not None  # a contextual router always gets features (reset refuses a replay without)
        return np.concatenate([np.ones((x.shape[0], 1), dtype=self.dtype), x.astype(self.dtype, copy=False)], axis=1)

    def _project(self, xa: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Return ``A⁻¹x`` (R, K, D), ``xᵀA⁻¹x`` (R, K) and the ridge prediction (R, K)."""
        # one batched (K·D × D) matrix–vector product per ordering (faster than einsum)
        v = np.matmul(self.A_inv.reshape(self.R, self.K * self.D, self.D), xa[:, :, None]).reshape(
            self.R, self.K, self.D
        )
        s = np.einsum("rki,ri->rk", v, xa)
        pred = np.einsum("rki,rki->rk", self.b, v)
        self._v, self._s = v, s
        return v, s, pred

    def update(self, t: int, items: np.ndarray, x: np.ndarray | None, arms: Any, rewards: Any) -> None:
        xa = self._aug(x)
        rows = self.rows
        flat = self.A_inv.reshape(self.R * self.K, self.D, self.D)
        idx = rows * self.K + np.asarray(arms)
        block = np.take(flat, idx, axis=0, out=self._block)  # the chosen arms' matrices
        if self._v is not None and self._s is not None:
            va, sa = self._v[rows, arms], self._s[rows, arms]
        else:
            va = np.einsum("rij,rj->ri", block, xa)
            sa = np.einsum("ri,ri->r", va, xa)
        vs = va / np.sqrt(1.0 + np.maximum(sa, 0.0))[:, None]
        block -= np.einsum("ri,rj->rij", vs, vs, out=self._outer)
        flat[idx] = block
        self.b[rows, arms] += np.asarray(rewards, dtype=self.dtype)[:, None] * xa
        self._v = self._s = None

    def theta(self) -> np.ndarray:
        """Ridge coefficients ``A⁻¹b`` (R, K, D)."""
        return np.einsum("rkij,rkj->rki", self.A_inv, self.b)


class LinUCB(_Linear):
    """Disjoint LinUCB with an intercept (Li et al. 2010):
    ``θ_k·x + α · sqrt(xᵀA_k⁻¹x)``, ``A_k = reg·I + Σ xxᵀ``, ``θ_k = A_k⁻¹ b_k``.

    Args:
        alpha: Exploration weight α.
        reg: Ridge regularization (prior precision).
    """

    name = "linucb"

    def __init__(self, alpha: float = 1.0, reg: float = 1.0, dtype: Any = np.float32) -> None:
        super().__init__(reg=reg, dtype=dtype)
        if alpha < 0:
            raise EvalcoreError("alpha must be >= 0", field="alpha")
        self.alpha = alpha

    def select(self, t: int, items: np.ndarray, x: np.ndarray | None) -> np.ndarray:
        _, s, pred = self._project(self._aug(x))
        return random_argmax(pred + self.alpha * np.sqrt(np.maximum(s, 0)), self.rng)

    def params(self) -> dict[str, Any]:
        return {"alpha": self.alpha, "reg": self.reg}


class ContextualThompson(_Linear):
    """Thompson sampling with Bayesian linear regression per arm (Agrawal & Goyal 2013).

    Prior ``θ_k ~ N(0, σ²/reg · I)``, Gaussian noise with variance ``σ²`` (``noise_variance``):
    the posterior is ``N(A_k⁻¹b_k, σ² A_k⁻¹)``. For the current context only ``x·θ_k`` matters,
    and its posterior is ``N(x·A_k⁻¹b_k, σ² xᵀA_k⁻¹x)``; sampling that scalar per arm draws
    exactly the value ``x·θ̃_k`` of a full posterior sample ``θ̃_k``.

    Args:
        noise_variance: σ², the reward noise variance.
        reg: Prior precision (ridge).
    """

    name = "contextual_thompson"

    def __init__(self, noise_variance: float = 0.25, reg: float = 1.0, dtype: Any = np.float32) -> None:
        super().__init__(reg=reg, dtype=dtype)
        if noise_variance <= 0:
            raise EvalcoreError("noise_variance must be > 0", field="noise_variance")
        self.noise_variance = noise_variance

    def select(self, t: int, items: np.ndarray, x: np.ndarray | None) -> np.ndarray:
        _, s, pred = self._project(self._aug(x))
        sd = np.sqrt(self.noise_variance * np.maximum(s, 0))
        return random_argmax(pred + sd * self.rng.standard_normal(pred.shape), self.rng)

    def params(self) -> dict[str, Any]:
        return {"noise_variance": self.noise_variance, "reg": self.reg}


class DuelingBandit(Router):
    """Relative UCB (RUCB, Zoghi et al. 2014): real duels between two arms on one query.

    Wins ``W[i, j]`` count how often arm i beat arm j on the same query (higher reward wins;
    a tie gives each ½). With ``N = W + Wᵀ``, ``U = W/N + sqrt(α ln t / N)`` (1 where
    ``N = 0``; ½ on the diagonal). The champion ``c`` is drawn uniformly from the arms whose
    ``U[c, j] ≥ ½`` for every j (any arm when none is), the challenger is
    ``d = argmax_j U[j, c]``. When ``d ≠ c`` both arms answer the query (both outcomes are
    revealed, both costs are charged, the credited quality is their mean, the usual dueling
    regret, and the credited reward is that mean quality less *both* calls' cost terms
    ``λ·c̃``, so a duel pays at λ > 0 for the second call it makes); when ``d = c`` the
    champion answers alone.

    Args:
        alpha: Exploration weight (> ½ for the RUCB guarantee).
    """

    name = "dueling_bandit"
    duel = True

    def __init__(self, alpha: float = 0.51) -> None:
        if alpha <= 0:
            raise EvalcoreError("alpha must be > 0", field="alpha")
        self.alpha = alpha

    def reset(self, env: ReplayEnv, rng: np.random.Generator) -> None:
        super().reset(env, rng)
        self.W = np.zeros((self.R, self.K, self.K))

    def ucb(self, t: int) -> np.ndarray:
        n = self.W + self.W.transpose(0, 2, 1)
        with np.errstate(invalid="ignore", divide="ignore"):
            u = np.where(
                n > 0,
                self.W / np.maximum(n, 1e-300) + np.sqrt(self.alpha * math.log(max(t, 1)) / np.maximum(n, 1e-300)),
                1.0,
            )
        idx = np.arange(self.K)
        u[:, idx, idx] = 0.5
        return u

    def select(self, t: int, items: np.ndarray, x: np.ndarray | None) -> tuple[np.ndarray, np.ndarray]:
        u = self.ucb(t)
        cand = np.all(u >= 0.5, axis=2)
        none = ~cand.any(axis=1)
        cand[none] = True
        c = random_argmax(np.where(cand, 0.0, -np.inf), self.rng)
        col = u[self.rows, :, c]  # U[j, c] for every j, (R, K)
        d = random_argmax(col, self.rng)
        return c, d

    def update(self, t: int, items: np.ndarray, x: np.ndarray | None, arms: Any, rewards: Any) -> None:
        c, d = arms
        rc, rd = rewards
        duel = c != d
        win_c = np.where(rc > rd, 1.0, np.where(rc == rd, 0.5, 0.0)) * duel
        win_d = np.where(rd > rc, 1.0, np.where(rc == rd, 0.5, 0.0)) * duel
        self.W[self.rows, c, d] += win_c
        self.W[self.rows, d, c] += win_d

    def params(self) -> dict[str, Any]:
        return {"alpha": self.alpha}


class Hybrid(Router):
    """UCB1 for the first ``switch_after`` queries, LinUCB afterwards; LinUCB learns from
    every query from the start, so it takes over warm.

    Args:
        switch_after: Number of queries routed by UCB1.
        c: UCB1 exploration weight.
        alpha: LinUCB exploration weight.
        reg: LinUCB ridge regularization.
    """

    name = "hybrid"
    contextual = True

    def __init__(
        self, switch_after: int = 100, c: float = math.sqrt(2.0), alpha: float = 1.0, reg: float = 1.0
    ) -> None:
        if switch_after < 0:
            raise EvalcoreError("switch_after must be >= 0", field="switch_after")
        self.switch_after = int(switch_after)
        self.ucb = UCB1(c=c)
        self.lin = LinUCB(alpha=alpha, reg=reg)

    def reset(self, env: ReplayEnv, rng: np.random.Generator) -> None:
        super().reset(env, rng)
        self.ucb.reset(env, rng)
        self.lin.reset(env, rng)

    def select(self, t: int, items: np.ndarray, x: np.ndarray | None) -> np.ndarray:
        if t < self.switch_after:
            return self.ucb.select(t, items, x)
        return self.lin.select(t, items, x)

    def update(self, t: int, items: np.ndarray, x: np.ndarray | None, arms: Any, rewards: Any) -> None:
        self.ucb.update(t, items, x, arms, rewards)
        self.lin.update(t, items, x, arms, rewards)

    def params(self) -> dict[str, Any]:
        return {"switch_after": self.switch_after, "c": self.ucb.c, "alpha": self.lin.alpha}


ROUTERS: dict[str, Callable[..., Router]] = {
    "random": RandomRouter,
    "always_best": AlwaysBest,
    "always_cheapest": AlwaysCheapest,
    "oracle": Oracle,
    "epsilon_greedy": EpsilonGreedy,
    "ucb1": UCB1,
    "thompson_sampling": ThompsonSampling,
    "linucb": LinUCB,
    "contextual_thompson": ContextualThompson,
    "dueling_bandit": DuelingBandit,
    "hybrid": Hybrid,
}
"""Registry name → router class (the eleven algorithms)."""

ALGORITHMS: tuple[str, ...] = tuple(ROUTERS)


def make_router(name: str, **params: Any) -> Router:
    """Instantiate a router by registry name with hyper-parameters.

    Raises:
        EvalcoreError: unknown name or parameter.
    """
    if name not in ROUTERS:
        raise EvalcoreError(f"unknown algorithm {name!r}; choose from {', '.join(ALGORITHMS)}", field="algorithms")
    try:
        return ROUTERS[name](**params)
    except TypeError as exc:
        raise EvalcoreError(f"bad parameters for {name}: {exc}", field=name) from exc
