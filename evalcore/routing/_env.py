"""The replay environment a router learns in: the logged rewards, costs and arrival orders
(re-exported by :mod:`evalcore.routing._algorithms`)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from evalcore.errors import EvalcoreError


@dataclass
class ReplayEnv:
    """What a replay gives a router.

    A learning router gets only :meth:`learner_view`: the arrival orders, the context
    features, the number of arms and whether rewards are binary, never the outcome matrix;
    the rewards it learns from are the ones the replay reveals in ``update`` (the chosen
    arm's only). The full-information baselines (``Router.full_information``: oracle,
    always_best's calibration split, always_cheapest's prices) get the whole environment.

    Attributes:
        rewards: Reward of every item × arm, (T, K); None in a learner's view.
        cost: Cost of every item × arm, (T, K); None in a learner's view.
        orders: Item index at each step of each ordering, (R, T).
        features: Context features (T, d) or None.
        arm_count: K in a learner's view (otherwise read off ``rewards``).
        reward_binary: In a learner's view, whether every reward is 0 or 1 (otherwise read
            off ``rewards``; see :attr:`binary_rewards`).
    """

    rewards: np.ndarray | None
    cost: np.ndarray | None
    orders: np.ndarray
    features: np.ndarray | None = None
    arm_count: int | None = None
    reward_binary: bool | None = None

    def __post_init__(self) -> None:
        if self.rewards is None and (self.arm_count is None or self.reward_binary is None):
            raise EvalcoreError(
                "a replay environment without rewards needs arm_count and reward_binary", field="arm_count"
            )

    @property
    def binary_rewards(self) -> bool:
        """Whether every reward is 0 or 1 (what Thompson sampling's ``kind="auto"`` needs)."""
        if self.rewards is None:
            return bool(self.reward_binary)
        r = np.asarray(self.rewards)
        return bool(np.all((r == 0) | (r == 1)))

    @property
    def n_orderings(self) -> int:
        return int(self.orders.shape[0])

    @property
    def n_steps(self) -> int:
        return int(self.orders.shape[1])

    @property
    def n_arms(self) -> int:
        if self.rewards is None:
            assert self.arm_count is not None  # __post_init__ requires it without rewards
            return int(self.arm_count)
        return int(np.shape(self.rewards)[1])

    def learner_view(self) -> ReplayEnv:
        """The environment without the outcome matrix (no rewards, no costs), with read-only
        copies of the orders and features: what a learning router is given."""

        def frozen(a: np.ndarray) -> np.ndarray:
            a = np.array(a, copy=True)
            a.setflags(write=False)
            return a

        return ReplayEnv(
            rewards=None,
            cost=None,
            orders=frozen(self.orders),
            features=None if self.features is None else frozen(self.features),
            arm_count=self.n_arms,
            reward_binary=self.binary_rewards,
        )
