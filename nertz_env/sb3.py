"""Stable-Baselines3 adapter: every learning seat of every game is one single-agent env.

``NertzSB3VecEnv`` is a ``stable_baselines3.common.vec_env.VecEnv`` over ``NertzVectorEnv``. It
flattens (game, seat) pairs, game-major (env ``i`` is game ``i // L``, the ``i % L``-th learning
seat, ``L`` learning seats per game), so one policy plays every learning seat (self-play). Seats
given to ``opponents`` are played by fixed agents and are not exposed to SB3.

==================  ========================================================================
observation space   ``Box(0, layout.high, (obs_dim,), int8)``: the seat's egocentric view (R9)
action space        ``Discrete(num_actions)``: the R10 catalogue
action masks        ``env_method("action_masks")`` / ``action_masks()``, bool ``[num_envs, N]``,
                    which is what sb3-contrib's ``MaskablePPO`` asks for
episode end         every seat of a game ends together (R5); the game is dealt again at once
==================  ========================================================================

On the step where a hand ends, ``infos[i]`` holds, as SB3's own VecEnvs and ``Monitor`` do,
``"terminal_observation"`` (the seat's last observation), ``"TimeLimit.truncated"`` (the hand
reached ``max_cycles``) and ``"episode": {"r": return, "l": ticks, "t": seconds}``, plus
``"score"`` (R7) and ``"end_reason"``. The observations returned stay valid until the step after
the next one (two buffers take turns); copy them to keep them longer.

Example:
    >>> from sb3_contrib import MaskablePPO
    >>> env = NertzSB3VecEnv(num_games=8, opponents={1: agents.make("random"), ...})  # doctest: +SKIP
    >>> MaskablePPO("MlpPolicy", env, n_steps=64).learn(10_000)  # doctest: +SKIP
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
from gymnasium import spaces

from nertz_env import engine
from nertz_env.checks import check_int_actions, check_seed
from nertz_env.gym_vector import check_opponent_actions, opponent_groups, reseed_opponents
from nertz_env.options import illegal_action_penalty as check_penalty
from nertz_env.options import observation_dtype as observation_dtype_of
from nertz_env.vector import NertzVectorEnv

try:
    from stable_baselines3.common.vec_env import VecEnv
except ImportError as e:  # pragma: no cover - the training extra is optional
    raise ModuleNotFoundError("nertz_env.sb3 needs stable-baselines3: pip install 'nertz-env[training]'") from e

class NertzSB3VecEnv(VecEnv):
    """Nertz for SB3: ``num_games`` games, the seats not in ``opponents`` learning (see module doc).

    Args:
        num_games: games played side by side; SB3 sees ``num_games * L`` envs.
        opponents: ``{seat: agent}`` for the seats fixed agents play, each either callable as
            ``f(observations[n, D], action_masks[n, N]) -> actions[n]`` or an object with
            ``act_batch`` of that shape (``agents.make(...)``). Seats sharing one agent object are
            asked together, in one call.
        **vector_options: ``NertzVectorEnv`` options: ``num_players``, ``seed``, ``num_threads``,
            ``illegal_action_penalty`` and the rule options, or ``config`` (a ``NertzConfig``) in
            place of ``num_players`` and the rule options; ``observation_dtype`` only as ``"int8"``
            (SB3's policies cast observations to float32 themselves).

    ``seed()`` (as SB3's ``set_random_seed`` calls it) seeds the next ``reset`` of the whole table
    with its first seed: game ``g`` then plays on stream ``g`` of it (see ``nertz_env.vector``).
    """

    render_mode = None

    def __init__(self, num_games: int = 8, opponents: Mapping[int, Any] | None = None, **vector_options: Any):
        if "num_envs" in vector_options:  # SB3's own name for what this env derives from num_games
            raise ValueError(f"invalid num_envs={vector_options['num_envs']!r}: NertzSB3VecEnv takes num_games, the "
                             "games played side by side; SB3's num_envs is num_games x the learning seats")  # fmt: skip
        dtype = vector_options.pop("observation_dtype", "int8")
        if observation_dtype_of(dtype) is not np.int8:
            raise ValueError(f"invalid observation_dtype={dtype!r}: NertzSB3VecEnv gives int8 observations (accepted "
                             "'int8'); SB3's policies cast them to float32 themselves")  # fmt: skip
        self.vector = NertzVectorEnv(num_games, **vector_options)
        v = self.vector
        players = v.num_players
        self._opponents = opponent_groups(opponents, v.config)  # one call per agent object, all its seats
        taken = {int(s) for _, _, seats in self._opponents for s in seats}
        self.learning_seats = np.array([p for p in range(players) if p not in taken], np.int64)
        if len(self.learning_seats) == 0:
            raise ValueError("every seat is given to an opponent: leave at least one seat to learn")
        self._dealt = False

        n_learn = len(self.learning_seats)
        rows = np.arange(v.num_envs)[:, None] * players + self.learning_seats[None, :]
        self._rows = rows.reshape(-1)  # flat (game, seat) row of each SB3 env
        self._games = np.repeat(np.arange(v.num_envs), n_learn)
        self._obs = np.zeros((2, len(self._rows), v.obs_dim), np.int8)  # two buffers take turns
        self._turn = 0
        self._actions = np.zeros((v.num_envs, players), np.int64)
        self._returns = np.zeros(len(self._rows), np.float64)
        self._start_time = time.time()
        self._touched: np.ndarray = np.zeros(0, np.int64)
        self._infos: list[dict[str, Any]] = [{} for _ in range(len(self._rows))]
        observation_space = spaces.Box(0, v.layout.high, (v.obs_dim,), np.int8)
        super().__init__(len(self._rows), observation_space, spaces.Discrete(v.num_actions))

    # -- VecEnv ----------------------------------------------------------------------------
    def reset(self) -> np.ndarray:
        seed = self.vector.seed_of_reset(next((s for s in self._seeds if s is not None), None))
        if seed is not None:
            reseed_opponents(self._opponents, seed)
        self.vector.reset(seed=seed)
        self._dealt = True
        self._reset_seeds()
        self._reset_options()
        self._returns[:] = 0
        self._touched = np.arange(len(self._rows))
        self._clear_infos()
        return self._observations()

    def seed(self, seed: int | None = None) -> Sequence[None | int]:
        """Seed the next ``reset`` (checked here: SB3's own ``seed`` adds ``True`` or ``"3"`` to ints)."""
        return super().seed(check_seed(seed))

    def set_options(self, options: list[dict] | dict | None = None) -> None:
        """Nertz deals take no reset options: only ``None`` or empty dicts (SB3 would keep others unused)."""
        given = options if isinstance(options, list) else [options]
        if not all(o is None or (isinstance(o, Mapping) and not o) for o in given):
            raise ValueError(f"NertzSB3VecEnv.reset takes no options (None or {{}}), got {options!r}")
        super().set_options(None)

    def step_async(self, actions: np.ndarray) -> None:
        a = np.asarray(actions)
        if a.shape not in ((self.num_envs,), (self.num_envs, 1)):  # one per sub-env, as SB3's policies give them
            raise ValueError(f"expected {self.num_envs} actions (one per learning seat), shaped ({self.num_envs},) or "
                             f"({self.num_envs}, 1), got shape {a.shape}")  # fmt: skip
        a = a.reshape(-1)
        v = self.vector
        check_int_actions(a, v.num_actions, "NertzSB3VecEnv.step")  # a float or bool is not cast
        if not self._dealt:
            raise RuntimeError("call reset() before step()")
        self._actions[:, self.learning_seats] = a.reshape(v.num_envs, -1)
        obs, masks = v.observations, v.action_masks
        for _, policy, seats in self._opponents:  # they see the table the learners saw (R3)
            o = obs[:, seats].reshape(-1, v.obs_dim)
            m = masks[:, seats].reshape(-1, v.num_actions)
            chosen = check_opponent_actions(policy(o, m), o.shape[0], seats, v.num_actions)
            self._actions[:, seats] = chosen.reshape(v.num_envs, len(seats))

    def step_wait(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, list[dict[str, Any]]]:
        v = self.vector
        _, _, rewards, terminated, truncated, infos = v.step(self._actions)
        reward = rewards.reshape(-1)[self._rows]  # a copy: SB3 adds bootstrap values into it
        self._returns += reward
        done = v.infos["episode"]["done"][self._games]
        self._clear_infos()
        ended = np.flatnonzero(done)
        if len(ended):
            final_obs = infos["final_observation"].reshape(-1, v.obs_dim)
            episode = infos["episode"]
            elapsed = round(time.time() - self._start_time, 6)
            for i in ended:
                g, row = self._games[i], self._rows[i]
                seat = row - g * v.num_players
                self._infos[i] = {
                    "terminal_observation": final_obs[row].copy(),
                    "TimeLimit.truncated": bool(truncated[g, seat] and not terminated[g, seat]),
                    "episode": {"r": float(self._returns[i]), "l": int(episode["length"][g]), "t": elapsed},
                    "score": int(episode["scores"][g, seat]),
                    "end_reason": engine.END_REASONS[int(episode["end_reason"][g])],
                }
            self._returns[ended] = 0
        self._touched = ended
        return self._observations(), reward.astype(np.float32, copy=False), done, list(self._infos)

    def close(self) -> None:
        self.vector.close()

    def get_attr(self, attr_name: str, indices: Any = None) -> list[Any]:
        """Each sub-env's ``attr_name``: this VecEnv's own, or else the game table's public one
        (``NertzVectorEnv``'s ``config``, ``illegal_action_penalty``, ...), which every sub-env shares."""
        public = not attr_name.startswith("_")
        owner = self if hasattr(self, attr_name) or not public else self.vector
        value = getattr(owner, attr_name)  # AttributeError when neither has it, as has_attr expects
        return [value for _ in self._get_indices(indices)]

    def set_attr(self, attr_name: str, value: Any, indices: Any = None) -> None:
        """Only ``illegal_action_penalty`` can change, and on every sub-env at once (one table plays
        them all); the rules and the spaces are fixed when the env is built."""
        if attr_name != "illegal_action_penalty":
            raise AttributeError(f"NertzSB3VecEnv.set_attr cannot set {attr_name!r}: only 'illegal_action_penalty' "
                                 "can change (build a new env for other rules or options)")  # fmt: skip
        if sorted(set(self._get_indices(indices))) != list(range(self.num_envs)):
            raise ValueError(f"NertzSB3VecEnv.set_attr sets every sub-env together (one table plays them all): "
                             f"give indices=None, got {indices!r}")  # fmt: skip
        self.vector.illegal_action_penalty = check_penalty(value)

    def env_method(self, method_name: str, *method_args: Any, indices: Any = None, **method_kwargs: Any) -> list[Any]:
        if method_name == "action_masks":
            masks = self.action_masks()
            return [masks[i] for i in self._get_indices(indices)]
        result = getattr(self, method_name)(*method_args, **method_kwargs)
        return [result for _ in self._get_indices(indices)]

    def env_is_wrapped(self, wrapper_class: type, indices: Any = None) -> list[bool]:
        return [False for _ in self._get_indices(indices)]

    # -- masks and observations ------------------------------------------------------------
    def action_masks(self) -> np.ndarray:
        """bool ``[num_envs, num_actions]``: the legal actions of every learning seat now (R4)."""
        v = self.vector
        return v.action_masks.reshape(-1, v.num_actions).view(np.bool_)[self._rows]

    def _observations(self) -> np.ndarray:
        v = self.vector
        self._turn ^= 1
        out = self._obs[self._turn]
        np.take(v.observations.reshape(-1, v.obs_dim), self._rows, axis=0, out=out)
        return out

    def _clear_infos(self) -> None:
        for i in self._touched:  # new dicts: SB3 may keep the old ones
            self._infos[i] = {}

    @property
    def learning_rows(self) -> np.ndarray:
        """The flat ``game * num_players + seat`` row of each SB3 env."""
        return self._rows
