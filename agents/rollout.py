"""``rollout``: determinised Monte-Carlo search with a learned policy and value (a learned search).

At each decision the agent takes the ``candidates`` legal moves its policy (by default the shipped
search-free ``ppo-league``) rates highest, deals ``samples`` tables consistent with what it sees
(``agents.determinise``: the hidden cards drawn at random), and plays each candidate on each table:
the candidate in the first tick, then every seat, itself and the opponents, as the policy plays
(greedy), for ``horizon`` ticks or to the end of the hand if that comes first. A play-out's outcome
is the agent's R7 score minus the mean of the others': the final scores where the hand ended, else
the running scores plus the policy's critic, which estimates the rest of the hand in that same
measure (``ppo-league`` was trained on the ``relative`` reward). Every candidate meets the same
tables and the same R6 race draws (common random numbers), so the paired difference of two
candidates is measured on each table. It plays the candidate with the best mean outcome if that
beats the policy's own first choice by ``margin`` standard errors of their paired difference, else
the policy's choice; a row with one legal move plays it without a search.

The rules are the engine's throughout: tables are stepped by ``engine.step_batch``, legality is its
masks, and the policy scores engine-written observations. What is learned: the policy that picks
the candidates and plays every seat of the play-outs (itself and its model of the opponents), and
the critic that values where a play-out stops. A decision costs ``candidates * samples`` play-outs
of at most ``horizon`` ticks, one policy forward pass per seat and tick of each; ``chunk`` rows are
searched together (one batch of tables, the same results for any ``chunk``).

>>> agent = agents.make("rollout")   # candidates=3, samples=16, horizon=8, margin=1.0   # doctest: +SKIP
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, cast

import numpy as np

from nertz_env import engine
from nertz_env.actions import ACTION_WAIT
from nertz_env.agents import make, register
from nertz_env.agents.base import Agent, mix_keys
from nertz_env.agents.determinise import Determiniser
from nertz_env.config import NertzConfig, is_int
from nertz_env.options import ascii_float

if TYPE_CHECKING:
    from nertz_env.agents.policy import PolicyAgent

MOST_TABLES = 1 << 18  # candidates x samples x chunk: the play-out tables one chunk holds in memory


def _count(name: str, value: Any, low: int, high: int) -> int:
    if isinstance(value, str) and value.isascii() and value.isdigit():  # ASCII digits: not '３' or '٣'
        value = int(value)
    if not is_int(value) or not low <= value <= high:
        raise ValueError(f"rollout: invalid {name}={value!r}; accepted an integer from {low} to {high}")
    return int(value)


class RolloutAgent(Agent):
    """Plays the candidate move whose determinised play-outs by ``policy`` end best (module doc).

    Args:
        policy: a trained ``.pt`` policy, by name (``ppo-league``, ``ppo``), by file (``PATH.pt``)
            or as a ``PolicyAgent``; it ranks the candidates and plays every seat of the play-outs.
        candidates: legal moves searched per decision, the policy's most likely first.
        samples: determinised tables per candidate.
        horizon: ticks played out before the critic values the rest of the hand.
        margin: standard errors by which a candidate must beat the policy's choice (0: the best mean).
        chunk: decisions searched in one batch of tables (memory, not results).
    """

    name = "rollout"

    def __init__(self, config: NertzConfig | None = None, seed: int = 0, policy: str | Agent = "ppo-league",
                 candidates: Any = 3, samples: Any = 16, horizon: Any = 8, margin: Any = 1.0,
                 chunk: Any = 64):  # fmt: skip
        super().__init__(config=config, seed=seed)
        self.candidates = _count("candidates", candidates, 1, 64)
        self.samples = _count("samples", samples, 1, 1024)
        self.horizon = _count("horizon", horizon, 1, 100_000)
        self.chunk = _count("chunk", chunk, 1, 1 << 16)
        tables = self.candidates * self.samples * self.chunk  # determinised tables held at once
        if tables > MOST_TABLES:
            raise ValueError(f"rollout: candidates x samples x chunk = {tables:,} tables at once; accepted at most "
                             f"{MOST_TABLES:,} (lower chunk, the decisions searched together)")  # fmt: skip
        try:
            read = ascii_float if isinstance(margin, str) else float  # ASCII digits: not '３' or '1_0'
            self.margin = read(margin) if not isinstance(margin, bool) else -1.0
        except (TypeError, ValueError):
            self.margin = -1.0
        if not np.isfinite(self.margin) or self.margin < 0:
            raise ValueError(f"rollout: invalid margin={margin!r}; accepted a finite number >= 0")
        if isinstance(policy, str) and policy.endswith(".pt"):
            policy = make("policy", seed=seed, config=self.config, path=policy)
        self.policy = cast("PolicyAgent",  # one of a .pt file, checked below: its scores are read
                           make(policy, seed=seed, config=self.config) if isinstance(policy, str) else policy)
        if not hasattr(self.policy, "scores") or getattr(self.policy, "_net", None) is None:
            raise ValueError(f"rollout: policy={policy!r} is not a trained .pt policy; accepted 'ppo-league', "
                             "'ppo', a path ending in .pt or a PolicyAgent of one")  # fmt: skip
        if self.policy.config != self.config:  # its compiled features read rows laid out by its own rules
            raise ValueError(f"rollout: the policy {policy!r} plays {self.policy.config}, the search "
                             f"{self.config}: build the policy with the search's config")  # fmt: skip
        self.determiniser = Determiniser(self.config)
        self._plan = engine.mask_plan(self.catalogue.table)
        self._decisions = 0

    def reseed(self, seed: int) -> None:
        """As ``Agent.reseed``; the count that keys seedless decisions starts again too (the
        play-out policy is read for its scores only, which draw nothing)."""
        super().reseed(seed)
        self._decisions = 0

    def chance_state(self) -> dict[str, Any]:
        """As ``Agent.chance_state``, with the count that keys seedless decisions."""
        return {**super().chance_state(), "decisions": self._decisions}

    def set_chance_state(self, state: Mapping[str, Any]) -> None:
        super().set_chance_state(state)
        self._decisions = int(state["decisions"])

    def _choose(self, obs: np.ndarray, masks: np.ndarray, out: np.ndarray) -> None:
        keys = self._keys if self._keys is not None else np.arange(self._decisions, self._decisions + len(obs))
        self._decisions += len(obs)
        logits, rows, cands, outcomes = self._search(obs, masks, np.asarray(keys, np.uint64))
        out[:] = np.where(masks != 0, logits, -np.inf).argmax(axis=1)
        for i, cand, outcome in zip(rows, cands, outcomes):
            out[i] = cand[self._pick(outcome)]

    def search(self, obs: np.ndarray, masks: np.ndarray, keys: np.ndarray):
        """What a decision computes, before its choice: ``(logits, rows, candidates, outcomes)``, the
        policy's logits ``[n, N]``, the rows with more than one legal move, and for each of those its
        candidates (the policy's most likely first) and their outcomes ``[samples, candidates]`` on
        the determinised tables of the row's decision key (``keys``, uint64 ``[n]``). ``_pick``
        chooses from the outcomes; ``training.search_labels`` keeps them as labels. The rows are
        checked as ``act_batch`` checks them."""
        obs, masks = self.checked_rows(obs, masks)
        keys = np.asarray(keys)
        if keys.dtype != np.uint64 or keys.shape != (obs.shape[0],):
            raise ValueError(f"keys must be uint64 shaped ({obs.shape[0]},), one per row; got {keys.dtype} "
                             f"{keys.shape}")  # fmt: skip
        return self._search(obs, masks, keys)

    def _search(self, obs: np.ndarray, masks: np.ndarray, keys: np.ndarray):
        logits = self.policy._scores(obs, masks)[0].numpy()
        legal = masks != 0
        n_legal = legal.sum(axis=1)
        rows = np.flatnonzero(n_legal > 1)
        all_cands, all_outcomes = [], []
        for start in range(0, len(rows), self.chunk):
            part = rows[start : start + self.chunk]
            cands = [np.argsort(-np.where(legal[i], logits[i], -np.inf), kind="stable")[: min(self.candidates,
                     n_legal[i])] for i in part]  # fmt: skip
            all_outcomes += self._play_out(obs[part], cands, keys[part])
            all_cands += cands
        return logits, rows, all_cands, all_outcomes

    def _pick(self, outcome: np.ndarray) -> int:
        """The candidate to play from its outcomes ``[samples, candidates]``: the best mean, if it
        beats the policy's first choice by ``margin`` standard errors of their paired difference."""
        mean = outcome.mean(axis=0)
        best = int(np.argmax(mean))
        if best == 0 or self.margin == 0:
            return best
        diff = outcome[:, best] - outcome[:, 0]
        spread = diff.std(ddof=1) / np.sqrt(len(diff)) if len(diff) > 1 else 0.0
        return best if diff.mean() > self.margin * spread else 0

    def _play_out(self, obs: np.ndarray, cands: list[np.ndarray], keys: np.ndarray) -> list[np.ndarray]:
        """Per row, the outcome of each candidate ``[samples, candidates]`` on each determinised table."""
        cfg, p, r = self.config, self.config.num_players, self.samples
        n_games = sum(len(c) for c in cands) * r
        state = engine.new_state(n_games, p, cfg.work_piles)
        out = engine.new_buffers(n_games, p, obs.shape[1], len(self.catalogue))
        first = np.empty(n_games, np.int64)
        g = 0
        for i, cand in enumerate(cands):
            for k in range(r):
                rng = np.random.default_rng(int(mix_keys(np.uint64(self.seed % 2**64), keys[i], np.uint64(k))))
                self.determiniser.fill(state, g, obs[i], rng)
                for field in state:  # the same table for every candidate (common random numbers)
                    field[g + 1 : g + len(cand)] = field[g]
                first[g : g + len(cand)] = cand
                g += len(cand)
        outcome = self._run(state, out, first)
        values, g = [], 0
        for cand in cands:
            values.append(outcome[g : g + len(cand) * r].reshape(r, len(cand)))
            g += len(cand) * r
        return values

    def _run(self, state: engine.State, out: engine.Buffers, first: np.ndarray) -> np.ndarray:
        """Play every table out from its first move for seat 0; seat 0's outcome per table: its R7
        score minus the others' mean at the hand's end, or at the horizon that difference of the
        running scores plus the policy's value of the rest of the hand."""
        cfg, table, speed = self.config.packed, self.catalogue.table, self.config.speed_weights
        engine.observe_batch(state, cfg, table, self._plan, out.obs, out.masks)
        n_games, p = state.score.shape
        outcome = np.zeros(n_games, np.float64)
        active = np.ones(n_games, bool)
        actions = np.full((n_games, p), ACTION_WAIT, np.int64)
        for t in range(self.horizon + 1):
            live = np.flatnonzero(active)
            if live.size == 0:
                break
            if t == self.horizon:
                _, value = self.policy._scores(out.obs[live, 0], out.masks[live, 0])
                running = state.score[live].astype(np.float64)
                outcome[live] = running[:, 0] - running[:, 1:].mean(axis=1) + value.numpy()
                break
            rows_obs = out.obs[live].reshape(-1, out.obs.shape[2])
            rows_masks = out.masks[live].reshape(-1, out.masks.shape[2])
            logits, _ = self.policy._scores(rows_obs, rows_masks)
            actions[:] = ACTION_WAIT
            actions[live] = logits.argmax(-1).numpy().reshape(-1, p)
            if t == 0:
                actions[:, 0] = first
            engine.step_batch(state, actions, cfg, table, speed, self._plan, 0.0, out)
            ended = active & out.done
            final = out.final_score[ended].astype(np.float64)
            outcome[ended] = final[:, 0] - final[:, 1:].mean(axis=1)
            active &= ~out.done
        return outcome


register("rollout", RolloutAgent, overwrite=True)
