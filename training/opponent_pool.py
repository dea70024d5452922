"""The opponent pool of ``train_selfplay``: scripted agents and frozen snapshots of the policy,
one drawn for each mixed game at each deal, and the learner's recent results against each.

Members are numbered scripted first (in ``--scripted`` order), then the snapshots, oldest first.
Two ways to draw (``--pool-sampling``):

- ``uniform``: every member alike (the draws of every run before the flag).
- ``pfsp``: prioritised fictitious self-play (Vinyals et al. 2019, AlphaStar's "hard" weighting):
  member ``i`` with probability proportional to ``(1 - w_i) ** power``, where ``w_i`` is the
  learner's recent win share in the hands it played at seat 0 against ``i`` (the other seats all
  ``i``; a tie splits the win, R7). ``w_i`` is a moving average with rate ``--pfsp-rate`` per
  hand, starting at the even share (``1 / teams``); a snapshot starts afresh when it enters.

Both record the results, so a uniform run's ``win_shares`` show what ``pfsp`` would weigh.

A game holds its member's index from one deal to the next. When a snapshot enters a full pool the
oldest leaves and the later ones move down one place, so a hand then under way against snapshot
``i`` is played on by the snapshot now at ``i`` (one newer) and recorded against it. Every stored
run trained so; keeping the member itself would change their draws.
"""

from __future__ import annotations

import copy
import re
from typing import Any

import numpy as np

from nertz_env import agents
from nertz_env.agents._scorer import MoveScorer
from nertz_env.config import NertzConfig
from nertz_env.training.arena import hand_stream_seed  # a 63-bit seed from words, as the arena's hands
from nertz_env.training.pair_policy import draw, sample_pairs
from nertz_env.training.snapshots import StackedSnapshots
from nertz_env.training.stats import win_shares

SAMPLINGS = ("uniform", "pfsp")
# Words that give each scripted member and the teacher a stream of its own: seeded ``seed`` they all
# drew the pool's own numbers (``default_rng(seed)``), two ``random`` members the very same moves.
_MEMBER, _TEACHER = 0x4D454D, 0x544541


def member_seed(seed: int, k: int) -> int:
    """The seed of scripted member ``k`` of a run of ``seed``."""
    return hand_stream_seed(seed, _MEMBER, k)


def teacher_seed(seed: int) -> int:
    """The seed of the teacher of a run of ``seed``."""
    return hand_stream_seed(seed, _TEACHER)


class Opponents:
    """The pool: scripted agents and frozen snapshots of the policy, drawn per game at each deal."""

    def __init__(self, args: Any, config: NertzConfig, rng: np.random.Generator):
        self.specs = list(args.scripted)
        self.scripted = [agents.make_spec(spec, seed=member_seed(args.seed, k), config=config)
                         for k, spec in enumerate(args.scripted)]  # fmt: skip
        self.snapshots: list[MoveScorer] = []
        self.pool_size, self.rng, self.sampler = args.pool_size, rng, args.sampler
        self.sampling = getattr(args, "pool_sampling", "uniform")
        if self.sampling not in SAMPLINGS:
            raise ValueError(f"--pool-sampling {self.sampling}: accepted {', '.join(SAMPLINGS)}")
        self.power, self.rate = getattr(args, "pfsp_power", 2.0), getattr(args, "pfsp_rate", 0.02)
        self.even = 1.0 / config.num_teams
        self.win_shares = np.full(len(self.scripted), self.even)  # the learner's, against each member
        self._stacked: StackedSnapshots | None = None  # of the snapshots it was built from

    def __len__(self) -> int:
        return len(self.scripted) + len(self.snapshots)

    def add(self, net: MoveScorer) -> None:
        self.snapshots.append(copy.deepcopy(net).eval())
        del self.snapshots[: -self.pool_size]
        kept: np.ndarray | list[float]
        kept = self.win_shares[len(self.scripted) :][-(self.pool_size - 1) :] if self.pool_size > 1 else []
        self.win_shares = np.concatenate([self.win_shares[: len(self.scripted)], kept, [self.even]])

    def weights(self) -> np.ndarray:
        """Each member's chance of the next draw."""
        if self.sampling == "uniform":
            return np.full(len(self), 1.0 / len(self))
        hardness = np.clip(1.0 - self.win_shares, 0.0, 1.0) ** self.power
        total = hardness.sum()
        return hardness / total if total > 0 else np.full(len(self), 1.0 / len(self))

    def draw(self, n: int) -> np.ndarray:
        if self.sampling == "uniform":
            return self.rng.integers(len(self), size=n)  # the draws of runs before --pool-sampling
        return self.rng.choice(len(self), size=n, p=self.weights())

    def record(self, members: np.ndarray, team_scores: np.ndarray) -> None:
        """The hands just ended: ``members[k]`` played every seat but the learner's seat 0 in the hand
        whose final team scores are ``team_scores[k]``; moves each one's win share towards the
        learner's share of that hand's win, hand by hand in order."""
        for member, scores in zip(members.tolist(), team_scores.tolist(), strict=True):
            share = win_shares(scores)[0]  # seat 0 is in team 0 (R8)
            self.win_shares[member] += self.rate * (share - self.win_shares[member])

    def summary(self) -> dict[str, float]:
        """TensorBoard's ``pool/`` scalars: the learner's win share against each scripted member
        (``win_share/{i}_{spec}``) and the snapshots' mean, and the snapshots' share of the draws."""
        n = len(self.scripted)
        out = {f"win_share/{i}_{re.sub(r'[^0-9A-Za-z]+', '_', spec)}": float(self.win_shares[i])
               for i, spec in enumerate(self.specs)}  # fmt: skip
        if self.snapshots:
            out["win_share/snapshots_mean"] = float(self.win_shares[n:].mean())
            out["draw_share/snapshots"] = float(self.weights()[n:].sum())
        return out

    def act_games(self, opponent: np.ndarray, obs: np.ndarray, masks: np.ndarray, device) -> np.ndarray:
        """``[games, seats]``: the moves of the pool's seats, game ``g`` played by ``opponent[g]``
        (``obs`` and ``masks`` ``[games, seats, ...]``). With the ``pairs`` sampler every snapshot
        plays in one pass (``StackedSnapshots``); with ``catalogue``, or snapshots that read
        afterstates, one call per opponent, in order (``catalogue``: the draws of runs before ``pairs``)."""
        games, seats = opponent.shape[0], obs.shape[1]
        out = np.empty((games, seats), np.int64)
        stackable = self.sampler == "pairs" and all(map(StackedSnapshots.stacks, self.snapshots))
        together = (opponent >= len(self.scripted)) & stackable  # the snapshots' games
        for who in np.unique(opponent[~together]):
            held = opponent == who
            acts = self.act(int(who), obs[held].reshape(-1, obs.shape[-1]), masks[held].reshape(-1, masks.shape[-1]),
                            device)  # fmt: skip
            out[held] = acts.reshape(-1, seats)
        if together.any():
            if self._stacked is None or self._stacked.nets != self.snapshots:
                self._stacked = StackedSnapshots(self.snapshots)
            o, m = obs[together].reshape(-1, obs.shape[-1]), masks[together].reshape(-1, masks.shape[-1])
            rows, acts, feats = self._stacked.features(o, m)
            who = np.repeat(opponent[together] - len(self.scripted), seats)
            pair = sample_pairs(self._stacked.pair_scores(o, who, rows, acts, feats), rows, len(o))
            out[together] = acts[pair].reshape(-1, seats)
        return out

    def act(self, who: int, obs: np.ndarray, masks: np.ndarray, device) -> np.ndarray:
        if who < len(self.scripted):
            return self.scripted[who].act_batch(obs, masks)
        snapshot = self.snapshots[who - len(self.scripted)]
        rows, acts, feats = snapshot.features(obs, masks)
        return draw(snapshot, self.sampler, obs, rows, acts, feats, device, learner=False)[0]
