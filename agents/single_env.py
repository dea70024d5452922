"""One seat of Nertz as a single-agent Gymnasium env, the other seats played by fixed agents.

Registered as ``nertz_env/NertzSingle-v0``::

    env = gymnasium.make("nertz_env/NertzSingle-v0", opponents=["greedy", "heuristic", "greedy"])
    envs = gymnasium.make_vec("nertz_env/NertzSingle-v0", num_envs=64, opponents=["greedy"] * 3)

``make_vec`` builds ``make_vector``'s ``nertz_env.gym_vector.NertzGymVectorEnv``: the learner at
seat 0 (or a fixed ``seat=k``) of every game, all games stepped by the compiled engine at once.

The observation is the learner's egocentric int8 vector (R9, the same as ``nertz_v0``'s
``"observation"``); ``action_masks()`` returns its legal actions (R4), which is what sb3-contrib's
MaskablePPO reads. Each tick the opponents choose on the same table as the learner and all
actions resolve together (R3). The learner's seat is drawn from the env's generator at each reset
(``seat="random"``) or fixed. Rewards follow the ``reward`` option for the learner's seat.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import gymnasium
import numpy as np
from gymnasium import spaces

from nertz_env.checks import check_one_action, check_seed
from nertz_env.config import NertzConfig, is_int
from nertz_env.game import Game, check_reset_options
from nertz_env.gym_vector import NertzGymVectorEnv, check_opponent_actions, check_opponent_rules, reseed_opponent
from nertz_env.infos import infos, outcome
from nertz_env.options import ObservationDtype, env_config, reset_decks
from nertz_env.options import illegal_action_penalty as checked_penalty
from nertz_env.options import observation_dtype as observation_dtype_of
from nertz_env.render import render_rgb, render_text


class NertzSingleAgentEnv(gymnasium.Env):
    metadata = {"render_modes": ["ansi", "rgb_array"], "render_fps": 2}
    action_space: spaces.Discrete

    def __init__(
        self,
        opponents: Sequence[Any] = ("greedy", "greedy", "greedy"),
        seat: int | str = "random",
        render_mode: str | None = None,
        illegal_action_penalty: float = 0.0,
        config: NertzConfig | None = None,
        observation_dtype: ObservationDtype = "int8",
        **rules: Any,
    ):
        check_opponent_list(opponents)
        self.config = opponents_config(opponents, config, rules)
        random_seat = isinstance(seat, str) and seat == "random"  # not an array equal to 'random'
        if not random_seat and (not is_int(seat) or not 0 <= seat < self.config.num_players):
            raise ValueError(f"invalid seat={seat!r}: accepted 'random' or 0..{self.config.num_players - 1}")
        modes = self.metadata["render_modes"]  # a mode is named by a string, not an array equal to one
        if render_mode is not None and (not isinstance(render_mode, str) or render_mode not in modes):
            raise ValueError(f"invalid render_mode={render_mode!r}: accepted None, 'ansi' or 'rgb_array'")
        self.illegal_action_penalty = checked_penalty(illegal_action_penalty)
        self._dtype = observation_dtype_of(observation_dtype)
        self.game = Game(self.config, illegal_action_penalty=self.illegal_action_penalty)
        self.opponents = [self._agent(o, k) for k, o in enumerate(opponents)]
        self.seat_option = seat if random_seat else int(seat)
        self.seat = 0
        self.render_mode = render_mode
        lay = self.game.layout
        self.observation_space = spaces.Box(0, lay.high.astype(self._dtype), (lay.size,), self._dtype)
        self.action_space = spaces.Discrete(len(self.game.catalogue))
        self._actions = np.zeros(self.config.num_players, np.int64)

    def _agent(self, spec: Any, k: int):
        if hasattr(spec, "act_batch"):
            check_opponent_rules(spec, self.config, f"opponents[{k}]")
            return spec
        from nertz_env import agents

        return agents.make_spec(str(spec), seed=k, config=self.config)

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None):
        if options is not None and not isinstance(options, Mapping):
            raise TypeError(f"reset options must be a dict such as {{'decks': [...]}} or None, got {options!r}")
        seed = check_seed(seed)  # one rule at every door (Gymnasium's own takes True as 1)
        check_reset_options(options or {})
        decks = reset_decks((options or {}).get("decks"))  # a 2-D array too, as nertz_v0 takes it
        if decks is not None:
            self.game.parse_decks(decks)  # refused before the env's generator or an opponent changes
        super().reset(seed=seed)
        if seed is not None:  # the opponents' chance restarts with the deal (Gymnasium's reset contract)
            for k, agent in enumerate(self.opponents):
                reseed_opponent(agent, seed, k)
        if seed is not None or not self.game.seeded:
            # The game's stream is drawn from the env's generator, so one seed fixes both.
            self.game.reset(seed=int(self.np_random.integers(2**63)), decks=decks)
        else:
            self.game.reset(decks=decks)
        p = self.config.num_players
        self.seat = int(self.np_random.integers(p)) if self.seat_option == "random" else int(self.seat_option)
        return self.game.obs[self.seat].astype(self._dtype), self._info(after_step=False)

    def action_masks(self) -> np.ndarray:
        return self.game.masks[self.seat].astype(bool)

    def step(self, action: Any):
        if not self.game.seeded:
            raise RuntimeError("step() called before reset(); call reset() to deal the first hand")
        a = check_one_action(action, "the learner", int(self.action_space.n))
        g = self.game
        others = [s for s in range(self.config.num_players) if s != self.seat]
        for s, agent in zip(others, self.opponents):
            chosen = agent.act_batch(g.obs[s : s + 1], g.masks[s : s + 1])
            self._actions[s] = check_opponent_actions(chosen, 1, [s], int(self.action_space.n))[0]
        self._actions[self.seat] = a
        g.step(self._actions)
        reward = float(g.rewards[self.seat])  # the penalty of an illegal action included
        return g.obs[self.seat].astype(self._dtype), reward, g.terminated, g.truncated, self._info(after_step=True)

    def _info(self, after_step: bool) -> dict[str, Any]:
        """The learner's ``nertz_v0`` info (the same numeric keys at reset and every step, see
        ``nertz_env.infos``) and its ``seat``."""
        agents = [f"player_{p}" for p in range(self.config.num_players)]
        info = infos(self.game, agents, after_step)[agents[self.seat]]
        info["seat"] = self.seat
        return info

    def outcome(self) -> dict[str, Any] | None:
        """The ended hand (or match) by name, as ``nertz_v0``'s ``outcome()``; None while it runs."""
        return outcome(self.game, [f"player_{p}" for p in range(self.config.num_players)])

    def render(self):
        if self.render_mode == "ansi":
            return render_text(self.game.snapshot())
        if self.render_mode == "rgb_array":
            st = self.game.state
            events = {"collision": st.collision[0].tolist(), "won_race": st.won_race[0].tolist()}
            return render_rgb(self.game.snapshot(), events)
        return None


def make_vector(
    num_envs: int = 8,
    opponents: Sequence[Any] = ("greedy", "greedy", "greedy"),
    seed: int | None = None,
    **options: Any,
) -> NertzGymVectorEnv:
    """``num_envs`` games, the learner at ``seat`` (0 unless given) of each and ``opponents`` (agent
    names or specs as ``nertz_env.agents.make_spec`` reads them, or agent objects) at the other
    seats in order (the vector entry point of ``nertz_env/NertzSingle-v0``). Seats with the same
    name share one agent, asked once for all its seats. ``options``: ``NertzGymVectorEnv``'s (rule
    options, ``observation_dtype``...), and the single env's ``seat`` (a fixed seat: every game of a
    batch seats the learner alike) and ``render_mode`` (``None``: the batch does not render)."""
    from nertz_env import agents

    check_opponent_list(opponents)
    env_only = ("observation_dtype", "num_threads", "illegal_action_penalty")
    env_options = {k: v for k, v in options.items() if k in env_only}
    rules = {k: v for k, v in options.items() if k not in (*env_only, "config", "seat", "render_mode")}
    config = opponents_config(opponents, options.get("config"), rules)
    learner = vector_seat(options.get("seat", 0), options.get("render_mode"), config.num_players)
    by_name: dict[str, Any] = {}
    seats: dict[int, Any] = {}
    others = [s for s in range(config.num_players) if s != learner]
    for k, (seat, spec) in enumerate(zip(others, opponents), start=1):
        if hasattr(spec, "act_batch"):
            seats[seat] = spec  # NertzGymVectorEnv checks its rules
        else:
            seats[seat] = by_name.setdefault(str(spec), agents.make_spec(str(spec), seed=k, config=config))
    return NertzGymVectorEnv(num_envs, seats, seed=seed, config=config, **env_options)


def vector_seat(seat: Any, render_mode: Any, num_players: int) -> int:
    """The learner's seat in ``make_vector``'s games: a fixed seat, as the single env takes it
    (``"random"``, a seat drawn at each reset, is the single env's alone), and no rendering."""
    if render_mode is not None:
        raise ValueError(
            f"invalid render_mode={render_mode!r}: make_vec's batched env does not render (accepted "
            "None); gymnasium.make builds the single env, which renders 'ansi' or 'rgb_array'"
        )
    if not is_int(seat) or not 0 <= seat < num_players:
        raise ValueError(
            f"invalid seat={seat!r}: make_vec's games seat the learner alike, accepted "
            f"0..{num_players - 1} (seat='random', drawn at each reset, is the single env's: gymnasium.make)"
        )
    return int(seat)


def opponents_config(opponents: Sequence[Any], config: NertzConfig | None, rules: dict[str, Any]) -> NertzConfig:
    """The rules of a single-seat env: ``config`` or the rule options ``rules``, not both (as
    ``nertz_v0``'s envs take them), with a seat for each opponent and the learner's."""
    config = env_config(config, None, rules if config is not None else {"num_players": len(opponents) + 1, **rules})
    if len(opponents) != config.num_players - 1:
        raise ValueError(f"{config.num_players} players need {config.num_players - 1} opponents, got {len(opponents)}")
    return config


def check_opponent_list(opponents: Any) -> None:
    """The opponents of the single-seat envs: a list or tuple of agent names, specs or objects,
    one per other seat (a lone name such as ``"greedy"`` would be read letter by letter)."""
    if not isinstance(opponents, (list, tuple)):
        raise TypeError(f"opponents must be a list of agents, one per other seat, such as ['greedy', 'greedy', "
                        f"'greedy'], got {opponents!r}")
