"""The batched engine as a Gymnasium ``VectorEnv``: one seat per sub-env, the other seats played by
fixed agents or, left out of ``opponents``, by the learner's own policy (self-play with shared
parameters). One compiled call steps every game; no Python runs per game.

    >>> env = NertzGymVectorEnv(num_games=64, opponents={1: bot, 2: bot, 3: bot})   # doctest: +SKIP
    >>> obs, infos = env.reset(seed=0)
    >>> actions = nertz_env.vector.sample_legal(infos["action_mask"], rng=0)
    >>> obs, rewards, terminations, truncations, infos = env.step(actions)

``gymnasium.make_vec("nertz_env/NertzSingle-v0", num_envs=64, opponents=["greedy"] * 3)`` builds
it with opponents named as in ``nertz_env.agents`` (its ``vector_entry_point``).

==================  ========================================================================
sub-envs            ``num_games * L``, game-major (sub-env ``i`` is game ``i // L``, its
                    ``i % L``-th learning seat; ``L`` = seats not in ``opponents``)
observation         ``Box(0, high, (D,), int8)`` (R9), or float32 with ``observation_dtype``
action              ``Discrete(N)``, the R10 catalogue
action masks        ``infos["action_mask"]`` int8 ``[num_envs, N]`` (Gymnasium's ``Discrete.sample``
                    takes it) and ``action_masks()``, bool (sb3-contrib's MaskablePPO reads it) (R4)
infos               the single-seat env's ``score``, ``illegal_action``, ``end_reason`` and
                    ``seat``, batched, each with its ``_key`` (all True), of the hand in play
autoreset           ``SAME_STEP``: a game whose hand ended is dealt again in the same step; the
                    ended hand's last observation is ``infos["final_obs"]`` on the rows where
                    ``infos["_final_obs"]``, with ``infos["final_score"]`` (R7) there, and
                    ``infos["final_info"]`` its ``final_score``, ``end_reason`` (R5),
                    ``illegal_action`` and ``seat``, as ``SyncVectorEnv`` gathers them;
                    Gymnasium's observation wrappers refuse ``SAME_STEP``: they need
                    ``make_vec(..., vectorization_mode="sync")``
==================  ========================================================================

Rewards follow the ``reward`` option (R7); every seat of a game ends together (R5: a call or a
stall terminates, ``max_cycles`` truncates). Opponents see the same table as the learners and all
actions of a tick resolve together (R3).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

import numpy as np
from gymnasium import spaces
from gymnasium.vector import AutoresetMode, VectorEnv

from nertz_env.checks import check_int_actions
from nertz_env.config import NertzConfig, is_int
from nertz_env.options import INPUT_RULES, PLAY_RULES, ObservationDtype, RuleOptions, rules_that_differ
from nertz_env.options import observation_dtype as observation_dtype_of
from nertz_env.vector import NertzVectorEnv

if TYPE_CHECKING:
    from typing_extensions import Unpack

__all__ = ["NertzGymVectorEnv", "Opponent"]

Opponent = Callable[[np.ndarray, np.ndarray], np.ndarray]
_OPPONENT_STREAM = 0x4F50  # keeps the opponents' seeds apart from the deal's streams
_ACTION_SPACE_STREAM = 0  # keeps action_space's samples apart from np_random's (seeded with the seed itself)


def as_policy(opponent: Any, seat: int) -> Opponent:
    """An agent with ``act_batch(observations, action_masks)`` or a callable of the same shape."""
    if hasattr(opponent, "act_batch"):
        return opponent.act_batch
    if callable(opponent):
        return opponent
    raise TypeError(
        f"opponent of seat {seat} must be callable(obs[n, D], masks[n, N]) -> actions[n] or have act_batch, "
        f"got {opponent!r} (an agent by name: nertz_env.agents.make('greedy', config=...))"
    )


def check_opponent_rules(opponent: Any, config: NertzConfig, where: str) -> None:
    """An agent built for other rules of play (its ``config`` differs in ``INPUT_RULES`` or
    ``PLAY_RULES``) reads another observation layout or judges by other rules: refused (``where``:
    the opponent, for the message). The reward and when a hand is cut (``OTHER_RULES``) do not
    steer its play. A plain callable is not checked."""
    rules = getattr(opponent, "config", None)
    if not isinstance(rules, NertzConfig):
        return
    differ = rules_that_differ(rules, config, INPUT_RULES + PLAY_RULES)
    if differ:
        named = ", ".join(f"{k}={getattr(rules, k)!r} (the env's {getattr(config, k)!r})" for k in differ)
        raise ValueError(
            f"{where} ({type(opponent).__name__}) was built for other rules: {named}; build it with the "
            "env's config, e.g. nertz_env.agents.make('greedy', config=env.config)"
        )


def opponent_groups(opponents: Mapping[int, Any] | None, config: NertzConfig) -> list[tuple[Any, Opponent, np.ndarray]]:
    """``opponents`` (``{seat: agent}``) checked against ``config``'s seats and rules, grouped by
    agent object: ``(the object, the call that chooses, its seats)``, so that an agent playing
    several seats is asked once for all."""
    if opponents is None:
        return []
    if not isinstance(opponents, Mapping):
        raise TypeError(f"opponents must be a dict {{seat: agent}} such as {{1: agent, 2: agent}}, got {opponents!r} "
                        "(a list of names is what gymnasium.make_vec('nertz_env/NertzSingle-v0', opponents=...) takes)")
    groups: dict[int, tuple[Any, Opponent, list[int]]] = {}
    players = config.num_players
    seated = sorted(((check_opponent_seat(seat, players), opp) for seat, opp in opponents.items()), key=lambda t: t[0])
    for seat, opponent in seated:
        check_opponent_rules(opponent, config, f"opponent of seat {seat}")
        groups.setdefault(id(opponent), (opponent, as_policy(opponent, seat), []))[2].append(seat)
    return [(agent, policy, np.array(seats, np.int64)) for agent, policy, seats in groups.values()]


def reseed_opponents(groups: list[tuple[Any, Opponent, np.ndarray]], seed: int) -> None:
    """Restart the chance of every agent of ``groups`` that has ``reseed`` (the project's agents)
    from ``seed`` and the agent's first seat, so that a seeded reset replays the episode with
    random opponents too (Gymnasium's ``reset`` contract). A plain callable keeps its own chance."""
    for agent, _, seats in groups:
        reseed_opponent(agent, seed, int(seats[0]))


def reseed_opponent(agent: Any, seed: int, seat: int) -> None:
    """``agent.reseed(opponent_seed(seed, seat))`` where the agent has ``reseed``; else nothing."""
    reseed = getattr(agent, "reseed", None)
    if callable(reseed):
        reseed(opponent_seed(seed, seat))


def opponent_seed(seed: int, seat: int) -> int:
    """The seed an opponent at ``seat`` restarts from when its env is reset with ``seed``."""
    return int(np.random.SeedSequence([seed, _OPPONENT_STREAM, seat]).generate_state(1, np.uint64)[0])


def check_opponent_seat(seat: Any, players: int) -> int:
    """A seat of ``opponents`` (the batched doors): an integer ``0 .. players - 1``, not a bool."""
    if not is_int(seat) or not 0 <= seat < players:
        raise ValueError(f"opponent seat {seat!r} is not a seat of a {players}-player game (0..{players - 1})")
    return int(seat)


def check_opponent_actions(chosen: Any, count: int, seats: Any, n: int) -> np.ndarray:
    """The ``count`` actions an opponent returned for ``seats``, integers ``0 .. n - 1``, flat: a
    float or bool would otherwise be cast into the int64 action array."""
    a = np.asarray(chosen).reshape(-1)
    if a.shape[0] != count:
        raise ValueError(f"an opponent returned {a.shape[0]} actions for {count} seats")
    check_int_actions(a, n, f"the opponent of seat(s) {[int(s) for s in seats]}")
    return a


class NertzGymVectorEnv(VectorEnv):
    """Nertz games as a Gymnasium ``VectorEnv`` of learning seats (see the module docstring).

    Args:
        num_games: games stepped together.
        opponents: ``{seat: agent}`` for the seats fixed agents play, each an object with
            ``act_batch(observations[n, D], action_masks[n, N]) -> actions[n]`` or such a callable;
            seats sharing one agent object are asked together. Every other seat is a sub-env.
        observation_dtype: ``"int8"`` (default) or ``"float32"``.
        num_players: seats per game (2 to 8; default 4).
        seed: the seed of the first ``reset`` when it is given none.
        num_threads: threads for stepping (``None``: numba's maximum); results do not depend on it.
        illegal_action_penalty: subtracted from the reward of an illegal action (played as WAIT).
        config: the rules as one ``NertzConfig``, in place of ``num_players`` and the rule options.
        **rules: the ``NertzConfig`` options and ``preset``, as ``NertzVectorEnv`` takes them.
    """

    autoreset_mode = AutoresetMode.SAME_STEP  # an attribute as SyncVectorEnv's (TorchRL's GymWrapper reads it)
    metadata = {"autoreset_mode": autoreset_mode}
    render_mode = None

    def __init__(
        self,
        num_games: int = 8,
        opponents: Mapping[int, Any] | None = None,
        *,
        num_players: int | None = None,
        seed: int | None = None,
        observation_dtype: ObservationDtype = "int8",
        num_threads: int | None = 1,
        illegal_action_penalty: float = 0.0,
        config: NertzConfig | None = None,
        **rules: Unpack[RuleOptions],
    ):
        self.vector = v = NertzVectorEnv(num_games, num_players, seed, num_threads, illegal_action_penalty, config,
                                         **rules)  # fmt: skip
        self._dtype = observation_dtype_of(observation_dtype)
        self._opponents = opponent_groups(opponents, v.config)
        taken = {int(s) for _, _, seats in self._opponents for s in seats}
        self.learning_seats = np.array([p for p in range(v.num_players) if p not in taken], np.int64)
        if len(self.learning_seats) == 0:
            raise ValueError("every seat is given to an opponent: leave at least one seat to learn")
        self._dealt = False

        self._rows = (np.arange(v.num_envs)[:, None] * v.num_players + self.learning_seats[None, :]).reshape(-1)
        self._games = self._rows // v.num_players
        self._actions = np.zeros((v.num_envs, v.num_players), np.int64)
        self.num_envs = len(self._rows)
        self.single_observation_space = spaces.Box(0, v.layout.high.astype(self._dtype), (v.obs_dim,), self._dtype)
        self.single_action_space = spaces.Discrete(v.num_actions)
        self.observation_space = spaces.Box(
            0, np.tile(v.layout.high.astype(self._dtype), (self.num_envs, 1)), (self.num_envs, v.obs_dim), self._dtype
        )
        self.action_space = spaces.MultiDiscrete(np.full(self.num_envs, v.num_actions))

    # -- VectorEnv -------------------------------------------------------------------------
    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None):
        """Deal every game (from ``seed``: game ``g`` on stream ``g`` of it, see ``nertz_env.vector``)."""
        if options is not None and (not isinstance(options, Mapping) or options):
            raise ValueError(f"NertzGymVectorEnv.reset takes no options (None or {{}}), got {options!r}")
        seed = self.vector.seed_of_reset(seed)  # checked before the action space takes it; else the constructor's
        super().reset(seed=seed)  # np_random and np_random_seed, as every VectorEnv keeps them
        if seed is not None:
            self.action_space.seed(int(np.random.SeedSequence([seed, _ACTION_SPACE_STREAM]).generate_state(1)[0]))
            reseed_opponents(self._opponents, seed)
        self.vector.reset(seed=seed)
        self._dealt = True
        return self._observations(), self._infos(np.zeros(self.num_envs, bool))

    def step(self, actions: Any):
        v = self.vector
        a = np.asarray(actions)
        if a.shape != (self.num_envs,):
            raise ValueError(f"actions must be integers shaped ({self.num_envs},), got {a.dtype} {a.shape}")
        check_int_actions(a, v.num_actions, "NertzGymVectorEnv.step")
        if not self._dealt:
            raise RuntimeError("call reset() before step()")
        self._actions[:, self.learning_seats] = a.reshape(v.num_envs, -1)
        for _, policy, seats in self._opponents:  # they see the table the learners saw (R3)
            chosen = policy(v.observations[:, seats].reshape(-1, v.obs_dim),
                            v.action_masks[:, seats].reshape(-1, v.num_actions))  # fmt: skip
            chosen = check_opponent_actions(chosen, v.num_envs * len(seats), seats, v.num_actions)
            self._actions[:, seats] = chosen.reshape(v.num_envs, len(seats))
        _, _, rewards, terminated, truncated, vinfos = v.step(self._actions)
        flat = lambda x: x.reshape(-1)[self._rows]
        ended = vinfos["episode"]["done"][self._games]
        illegal = flat(vinfos["illegal"])
        infos = self._infos(illegal & ~ended)  # an ended row's hand in play is the new deal, as SyncVectorEnv's
        if ended.any():  # the rows that did not end read 0, as SyncVectorEnv's fresh arrays do
            final = vinfos["final_observation"].reshape(-1, v.obs_dim)[self._rows].astype(self._dtype)
            final[~ended] = 0
            infos.update(final_obs=final, _final_obs=ended.copy())
            infos.update(final_score=np.where(ended, flat(vinfos["episode"]["scores"]), 0), _final_score=ended.copy())
            # as Gymnasium's SyncVectorEnv gathers the ended sub-envs' last infos (SAME_STEP)
            reason = np.where(ended, vinfos["episode"]["end_reason"][self._games], 0).astype(np.int8)
            final_info = {"final_score": infos["final_score"], "end_reason": reason, "illegal_action": illegal & ended,
                          "seat": np.where(ended, infos["seat"], 0)}  # fmt: skip
            final_info.update({f"_{key}": ended.copy() for key in list(final_info)})
            infos.update(final_info=final_info, _final_info=ended.copy())
        return self._observations(), flat(rewards), flat(terminated), flat(truncated), infos

    def _infos(self, illegal: np.ndarray) -> dict[str, Any]:
        """The infos of the hands in play, the single-seat env's keys batched, each with its ``_key``
        (all True): ``action_mask`` int8 (as ``Discrete.sample(mask=...)`` takes it), ``score``
        (R7), ``illegal_action`` (``illegal``), ``end_reason`` (0: the hand in play runs) and ``seat``."""
        v = self.vector
        infos: dict[str, Any] = {
            "action_mask": v.action_masks.reshape(-1, v.num_actions)[self._rows],
            "score": v.scores.reshape(-1)[self._rows].astype(np.int64),
            "illegal_action": illegal,
            "end_reason": np.zeros(self.num_envs, np.int64),
            "seat": self._rows % v.num_players,
        }
        infos.update({f"_{key}": np.ones(self.num_envs, bool) for key in list(infos)})
        return infos

    def action_masks(self) -> np.ndarray:
        """bool ``[num_envs, num_actions]``: every learning seat's legal actions now (R4)."""
        v = self.vector
        return v.action_masks.reshape(-1, v.num_actions).view(np.bool_)[self._rows]

    def _observations(self) -> np.ndarray:
        v = self.vector
        return v.observations.reshape(-1, v.obs_dim)[self._rows].astype(self._dtype, copy=False)

    def close_extras(self, **kwargs: Any) -> None:
        vector = getattr(self, "vector", None)  # None when the constructor refused its arguments
        if vector is not None:
            vector.close()
