"""Nertz (Nerts, Pounce, Racing Demon): every player races, in the same ticks, to empty a Nertz
pile onto shared foundations. The rules are RULES.md (R1 to R10).

| Import             | `from nertz_env import nertz_v0`                                 |
|--------------------|------------------------------------------------------------------|
| Actions            | Discrete, one fixed catalogue per config (181 for 4 work piles)   |
| Parallel API       | Yes (native); AEC through `nertz_v0.env()` (turn-based: see below) |
| Agents             | `agents = ['player_0', ..., 'player_{n-1}']`, 2 to 8             |
| Action shape       | (1,)                                                             |
| Action values      | 0 .. num_actions - 1                                             |
| Observation shape  | `{"observation": (D,) int8, "action_mask": (num_actions,) int8}`  |
| State shape        | (S,) int8: the whole table, hidden cards included                |

## Observation
Egocentric (R9): the viewer's own block first, then the other players in seat order after the
viewer. Each block marks, per card of that player's deck, the Nertz top, each work pile's cards,
the waste top and the cards on foundations, then the Nertz, stock and waste counts and whether the
player called. Then the viewer's memory of their own waste (and stock, once turned through), then
the foundation tops and the stall counters. Nothing hidden is encoded: no Nertz card below the
top, no opponent's stock or waste below the top. `env.unwrapped.observation_layout.slices` names
every part (see `nertz_env.layout`). With `nertz_builds` (R4.8) a card built onto a player's
Nertz pile shows by its card code in that player's block, wherever it goes next (its owner is not
encoded; `snapshot()` lists it).

## Legal Actions Mask
`observation["action_mask"][a] == 1` iff action `a` is legal now (R4), computed on the table at the
start of the tick (R3). WAIT is always legal, so the mask is never all zeros.

## Action Space
Named as in R10: `wait`, `draw`, `call`, `nertz>foundation`, `waste>foundation`,
`work{i}>foundation`, `nertz>work{j}`, `waste>work{j}`, `nertz>under{j}`, `waste>under{j}` (when
`slide_under`), `work{i}>work{j}:{n}`, and with `nertz_builds` (R4.8) `{source}>nertz@{k}` for
every single-card source (`nertz`, `waste`, `work{i}`) and every seat offset `k = 1 .. n-1` of the
target (1 = the next seat), after the standard rows. `env.unwrapped.action_names` lists them and
`env.unwrapped.action_index(name)` maps back.

## Rewards
Option `reward`: `"dense"` (each tick, the change of the player's R7 running score, so a hand's
rewards sum to its final score minus the score at the deal), `"sparse"` (the R7 score at the end),
`"relative"` (dense minus the mean of the opponents'), `"lead"` (each tick, the change of the
player's score minus the best opponent's: a hand's rewards sum to its final margin over the leader,
since all scores are equal at the deal). `illegal_action_penalty` (-1000 to 1000) is subtracted
when an illegal action was played as WAIT.

## Timing options (R3)
`turn_based=True`: players act one at a time in seat order, seat 0 first (seat `tick % P` is on
turn); off turn only WAIT is legal (the mask shows WAIT alone; anything else is illegal, played
as WAIT, or raises under `strict`). The parallel API still takes every agent's action each tick
(off-turn agents pass WAIT); `nertz_v0.env(turn_based=True)` is the true turn-based AEC env of
`nertz_env.turn_based`, whose `agent_selection` is the player on turn; without it,
`nertz_v0.env()` collects every agent's action in turn and plays the tick at the last one
(`nertz_env.simultaneous`), checking each action at the step that gives it. `move_ticks={"foundation":
3, ...}`: a move of `d` ticks is judged when it is made, is in the air for `d - 1` more ticks (its
player may only WAIT) and resolves, racing by R6, in the last of them; its reward comes then.
The observation gains a timing section (`on_turn`, `air_ticks`, `air_kind`, `air_card`) only
under these options.
With `partners=True` (R8: teams of two seated opposite, seats `p` and `p + P/2`) every player is
paid their team's figure: dense and sparse follow the team score (both partners' summed), relative
is the team's change minus the mean of the other teams', lead that of the team's score minus the best
other team's. With `episode="match"` the rewards follow
the match: dense is the change of the totals plus the running score of the hand in play (so a
match's rewards sum to its final total minus the score at the first deal, as a hand's do), sparse
pays the final totals when the match ends, relative is dense minus the opponents' mean, lead the
change of the running total's margin over the best opponent's.

## Starting State and Episode End
Each player deals from their own shuffled deck (R2), or from R10 fixed decks passed as
`reset(options={"decks": [...]})`. The hand ends at the end of the tick in which someone calls
(terminated, `end_reason` 1, `"call"`), when the stall rule gives up (terminated, 2, `"stall"`,
R5), or after `max_cycles` ticks (truncated, 3, `"max_cycles"`). All agents end together.

With `episode="match"` (R8) an episode is a whole match: hands are played until a total reaches
`target_score` (or `hands=N` are played); the highest total wins, a tie goes to the higher score in
the last hand, and if still tied another hand is played (everyone plays it, only the tied can win).
`match_end` changes that as the source texts do: `"caller"` (Snerts: a caller who reached the
target wins), `"spread"` (German Nerts: also ends when highest minus lowest total reaches the
target), `"exceed"` (Nerds: a total must go above the target).
The step in which a hand ends returns the next hand's first observation (dealt from the env's own
seeded stream) with the finished hand in the infos (`hand_over`, `hand_score`, `total`, ...).
The decided match terminates; a match still undecided after `max_hands` hands is truncated.
`max_cycles` bounds each hand's ticks (the hand just ends); `end_reason` is the last hand's, and
`terminated` (decided) or `truncated` (capped) tells how the match ended. The observation gains
the `match.*` section (exact totals), and with partners a `partner` section.

Presets: `parallel_env(preset="snerts", **overrides)` starts from a named rule set of
`nertz_env.config.PRESETS` (`standard`, `snerts`, `nerds`, `nerts`, `pounce`, `racing_demon`,
`family`).

## Infos
One flat dict of numbers per agent, the same keys at `reset` and at every step (`score`,
`collision`, `won_race`, `illegal_action`, `called`, `end_reason` as a code into `END_REASONS`,
`final_score`, and the R8 figures): see `nertz_env.infos`. `env.unwrapped.outcome()` gives the
ended episode by name, `env.unwrapped.last_hand()` a match's last hand.

## Arguments
`num_players`, every rule option of `nertz_env.NertzConfig` (or `config=NertzConfig(...)`),
`preset` (a rule set the other options override), `render_mode` (`"ansi"`, `"human"` or
`"rgb_array"`), `record` (keep a `Recording` of each hand in `env.unwrapped.recording`, for
`nertz_env.replay.save_replay`; `set_state` then restores only a table `get_state` saved in the
recorded episode, cutting the recording back to it), `strict` (raise on an illegal action, not WAIT),
`illegal_action_penalty`, `observation_dtype` (`"int8"`, or `"float32"` for the observation and
`state()`), `info_action_mask` (True: also put each agent's mask in `infos[agent]["action_mask"]`;
`"only"`: there only, as a list of 0/1, the observation being the bare vector, as AgileRL wants).

## Version History
* v0: first release.

Examples:
    >>> from nertz_env import nertz_v0
    >>> env = nertz_v0.parallel_env(num_players=4)
    >>> obs, infos = env.reset(seed=7)
    >>> actions = {a: env.action_space(a).sample(obs[a]["action_mask"]) for a in env.agents}
    >>> obs, rewards, terminations, truncations, infos = env.step(actions)
"""

from __future__ import annotations

import sys
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Literal

import gymnasium
import numpy as np
from gymnasium import spaces
from pettingzoo import ParallelEnv
from pettingzoo.utils.wrappers import OrderEnforcingWrapper

from nertz_env import infos as _infos
from nertz_env import options as _options
from nertz_env.checks import check_agent, check_agent_actions
from nertz_env.config import NertzConfig
from nertz_env.game import Game, check_reset_options
from nertz_env.infos import END_REASONS
from nertz_env.options import ObservationDtype, RuleOptions
from nertz_env.render import render_rgb, render_text
from nertz_env.replay import Recording, mark, rewind, start_recording
from nertz_env.simultaneous import NertzSimultaneousEnv
from nertz_env.turn_based import NertzTurnBasedEnv

if TYPE_CHECKING:
    from typing_extensions import Unpack

__all__ = ["END_REASONS", "NertzParallelEnv", "env", "parallel_env", "raw_env"]


class NertzParallelEnv(ParallelEnv):
    """The PettingZoo parallel Nertz environment; see the module docstring."""

    metadata: dict[str, Any] = {"name": "nertz_v0", "render_modes": ["ansi", "human", "rgb_array"],
                                "is_parallelizable": True, "render_fps": 2}  # fmt: skip

    def __init__(
        self,
        num_players: int | None = None,
        render_mode: Literal["ansi", "human", "rgb_array"] | None = None,
        strict: bool = False,
        illegal_action_penalty: float = 0.0,
        record: bool = False,
        config: NertzConfig | None = None,
        observation_dtype: ObservationDtype = "int8",
        info_action_mask: bool | Literal["only"] = False,
        **rules: Unpack[RuleOptions],
    ):
        config = _options.env_config(config, num_players, rules)
        modes = self.metadata["render_modes"]  # a mode is named by a string, not an array equal to one
        if render_mode is not None and (not isinstance(render_mode, str) or render_mode not in modes):
            raise ValueError(f"invalid render_mode={render_mode!r}: accepted None, 'ansi', 'human' or 'rgb_array'")
        penalty = _options.illegal_action_penalty(illegal_action_penalty)
        self.info_action_mask = _options.info_action_mask(info_action_mask)
        self.config = config
        self.render_mode = render_mode
        self.strict = _options.flag("strict", strict)
        self.illegal_action_penalty = penalty
        self.observation_dtype = _options.observation_dtype(observation_dtype)
        self.game = Game(config, illegal_action_penalty=self.illegal_action_penalty)
        self.record = _options.flag("record", record)
        self.recording: Recording | None = None
        self.observation_layout = self.game.layout
        self.possible_agents = [f"player_{i}" for i in range(config.num_players)]
        self.agents: list[str] = []
        self._seat = {a: i for i, a in enumerate(self.possible_agents)}
        n = len(self.game.catalogue)
        lay, dt = self.observation_layout, self.observation_dtype
        dtype: Any = dt  # gymnasium's Box overloads (their stubs differ by release) take one dtype, not a union
        box = spaces.Box(0, lay.high.astype(dt), (lay.size,), dtype)
        mask = spaces.Box(0, 1, (n,), np.int8)
        space = box if self.info_action_mask == "only" else spaces.Dict({"observation": box, "action_mask": mask})
        self.observation_spaces = dict.fromkeys(self.possible_agents, space)
        self.action_spaces: dict[str, spaces.Discrete] = {a: spaces.Discrete(n) for a in self.possible_agents}
        self.state_space = spaces.Box(0, lay.state_high.astype(dt), (lay.state_size,), dtype)
        self._actions = self.game.actions  # the game's own row: game.play() plays it
        self._dealt = False

    # -- spaces and names ---------------------------------------------------------------------
    def observation_space(self, agent: str) -> spaces.Dict | spaces.Box:  # a Box with info_action_mask='only'
        return self.observation_spaces[self._check_agent(agent)]

    def action_space(self, agent: str) -> spaces.Discrete:
        return self.action_spaces[self._check_agent(agent)]

    @property
    def action_names(self) -> tuple[str, ...]:
        return self.game.catalogue.names

    def action_index(self, name: str) -> int:
        return self.game.catalogue.index(name)

    def action_name(self, index: int) -> str:
        return self.game.catalogue.name(index)

    def _check_agent(self, agent: Any) -> str:
        try:
            return check_agent(agent, self._seat)
        except TypeError:  # unhashable ([1], an array): no agent's name
            raise KeyError(f"unknown agent {agent!r}; agents are {', '.join(self._seat)}") from None

    # -- the loop -----------------------------------------------------------------------------
    def reset(self, seed: int | None = None, options: Mapping[str, Any] | None = None):
        if options is not None and not isinstance(options, Mapping):
            raise TypeError(f"reset options must be a dict such as {{'decks': [...]}} or None, got {options!r}")
        options = dict(options or {})
        check_reset_options(options)
        self.game.reset(seed=seed, decks=_options.reset_decks(options.get("decks")))
        if seed is not None:  # action_space(a).sample() then repeats with the deal
            for i, agent in enumerate(self.possible_agents):
                self.action_spaces[agent].seed(int(np.random.SeedSequence([seed, i]).generate_state(1)[0]))
        self._dealt = True
        self.agents = self.possible_agents[:]
        if self.record:
            self.recording = start_recording(self.game)
        obs = self._observations()
        infos = self._infos(after_step=False)
        if self.render_mode == "human":
            self.render()
        return obs, infos

    def step(self, actions: Mapping[str, Any]):
        agents = self.agents  # every seat in seat order while the hand runs, none once it ended
        if not agents:
            if not self._dealt:
                raise RuntimeError("step() called before reset(); call reset() to deal the first hand")
            raise RuntimeError("step() called after the hand ended; call reset() to deal a new hand")
        chosen = check_agent_actions(actions, agents, self._seat, len(self.game.catalogue))
        row = self._actions
        for i, a in enumerate(chosen):
            row[i] = a  # the i-th agent is seat i
        if self.strict:
            self._check_legal(chosen)
        g = self.game
        g.play()  # each action checked above
        if self.recording is not None:
            self.recording.actions.append([self.action_names[a] for a in self._actions])

        obs = self._observations()
        infos = self._infos(after_step=True)
        rewards = dict(zip(agents, g.rewards.tolist()))  # the penalty of an illegal action included
        if g.ended:
            terminations = dict.fromkeys(agents, g.terminated)
            truncations = dict.fromkeys(agents, g.truncated)
            self.agents = []
        else:  # a running episode is neither terminated nor truncated
            terminations = dict.fromkeys(agents, False)
            truncations = terminations.copy()
        if self.render_mode == "human":
            self.render()
        return obs, rewards, terminations, truncations, infos

    def _check_legal(self, chosen: list[int]) -> None:
        """Under ``strict``, an error naming the first illegal action of ``chosen`` (one per seat)."""
        for i, a in enumerate(chosen):
            self._check_legal_one(i, a)

    def _check_legal_one(self, seat: int, action: int) -> None:
        """An error naming ``action`` (in range) if it is illegal for ``seat`` on this tick's table."""
        if not self.game.masks[seat, action]:
            raise ValueError(f"illegal action for {self.possible_agents[seat]}: {self.action_names[action]!r} "
                             f"({action}): {self.game.why_illegal(seat, action)}")  # fmt: skip

    def _infos(self, after_step: bool) -> dict[str, dict[str, Any]]:
        """Every agent's info: the same numeric keys at reset and every step (``nertz_env.infos``)."""
        masks = self.game.masks if self.info_action_mask else None
        return _infos.infos(self.game, self.agents, after_step, masks, self.info_action_mask == "only")

    def outcome(self) -> dict[str, Any] | None:
        """The ended episode by name (``end_reason``, ``final_scores``, ``callers``, and the R8
        partners' and match's results; see ``nertz_env.infos.outcome``), or None while it runs."""
        return _infos.outcome(self.game, self.possible_agents)

    def last_hand(self) -> dict[str, Any] | None:
        """In a match (R8), the hand that ended last by name (``nertz_env.infos.last_hand``)."""
        return _infos.last_hand(self.game, self.possible_agents)

    def _observations(self) -> dict[str, Any]:
        g, dtype = self.game, self.observation_dtype
        obs = g.obs.copy() if dtype is np.int8 else g.obs.astype(dtype)
        if self.info_action_mask == "only":
            return {a: obs[i] for i, a in enumerate(self.agents)}
        masks = g.masks.copy()
        return {a: {"observation": obs[i], "action_mask": masks[i]} for i, a in enumerate(self.agents)}

    # -- inspection ---------------------------------------------------------------------------
    def state(self) -> np.ndarray:
        """The whole table as one vector, hidden cards included (``state_space``; int8, or float32
        under ``observation_dtype="float32"``)."""
        state = self.game.state_vector()
        return state if self.observation_dtype is np.int8 else state.astype(self.observation_dtype)

    def snapshot(self) -> dict[str, Any]:
        """The table as a JSON-ready dict in R10 notation (every pile bottom to top)."""
        return self.game.snapshot()

    def get_state(self) -> dict[str, Any]:
        """A cheap copy of the table and the env's bookkeeping, for ``set_state``."""
        return {"table": mark(self.recording, self.game.get_state()), "agents": [*self.agents], "config": self.config}

    def set_state(self, state: Mapping[str, Any]) -> None:
        """Restore ``get_state()`` of an env with the same config; anything else is refused, naming
        what differs (the table is checked by ``nertz_env.checks.check_table``). Under ``record``, only
        a table this env saved in the recorded episode, whose ticks after it the recording drops (``replay.rewind``)."""
        if not isinstance(state, Mapping) or set(state) != {"table", "agents", "config"}:
            raise ValueError("set_state takes the dict get_state() returns: keys 'table', 'agents' and 'config'")
        if not isinstance(state["config"], NertzConfig):
            got = type(state["config"]).__name__
            raise ValueError(f"set_state: state['config'] must be the NertzConfig get_state() saved, got a {got}")
        if state["config"] != self.config:
            mine, theirs = self.config.to_dict(), state["config"].to_dict()
            diff = sorted(k for k in mine if mine[k] != theirs[k])
            raise ValueError(f"set_state: the state was saved under other rules ({', '.join(diff)}"
                             f" differ); restore it into an env of the same config")
        table = state["table"]
        self.game.check_state(table)
        agents = list(state["agents"]) if isinstance(state["agents"], (list, tuple)) else None
        expected = [] if table.ended[0] else self.possible_agents
        if agents != expected:
            raise ValueError(f"set_state: agents must be {expected} for this table, got {state['agents']!r}")
        if self.record:
            rewind(self.recording, table)
        self.game.set_state(table)
        self.agents = agents

    def render(self) -> str | None:
        if self.render_mode is None:
            gymnasium.logger.warn("render() called without a render_mode; pass render_mode='ansi' or 'human'")
            return None
        if self.render_mode == "ansi":
            return render_text(self.snapshot(), names=self.possible_agents)
        if self.render_mode == "rgb_array":
            st = self.game.state
            events = {"collision": st.collision[0].tolist(), "won_race": st.won_race[0].tolist()}
            return render_rgb(self.snapshot(), events, names=self.possible_agents)
        print(render_text(self.snapshot(), color=sys.stdout.isatty(), names=self.possible_agents))
        return None

    def close(self) -> None:
        pass


def parallel_env(
    *,
    num_players: int | None = None,
    render_mode: Literal["ansi", "human", "rgb_array"] | None = None,
    strict: bool = False,
    illegal_action_penalty: float = 0.0,
    record: bool = False,
    config: NertzConfig | None = None,
    observation_dtype: ObservationDtype = "int8",
    info_action_mask: bool | Literal["only"] = False,
    **rules: Unpack[RuleOptions],
) -> NertzParallelEnv:
    """The parallel form (native): every player acts in every tick (R3). Options: see the module
    docstring; ``rules`` are ``NertzConfig``'s (``nertz_env.options.RuleOptions``)."""
    return NertzParallelEnv(
        num_players, render_mode, strict, illegal_action_penalty, record, config, observation_dtype, info_action_mask,
        **rules,
    )  # fmt: skip


def raw_env(
    *,
    num_players: int | None = None,
    render_mode: Literal["ansi", "human", "rgb_array"] | None = None,
    strict: bool = False,
    illegal_action_penalty: float = 0.0,
    record: bool = False,
    config: NertzConfig | None = None,
    observation_dtype: ObservationDtype = "int8",
    info_action_mask: bool | Literal["only"] = False,
    **rules: Unpack[RuleOptions],
):
    """The AEC form without the order-enforcing wrapper (turn-based with ``turn_based=True``)."""
    parallel = NertzParallelEnv(
        num_players, render_mode, strict, illegal_action_penalty, record, config, observation_dtype, info_action_mask,
        **rules,
    )  # fmt: skip
    if parallel.config.turn_based:
        return NertzTurnBasedEnv(parallel)
    return NertzSimultaneousEnv(parallel)


def env(
    *,
    num_players: int | None = None,
    render_mode: Literal["ansi", "human", "rgb_array"] | None = None,
    strict: bool = False,
    illegal_action_penalty: float = 0.0,
    record: bool = False,
    config: NertzConfig | None = None,
    observation_dtype: ObservationDtype = "int8",
    info_action_mask: bool | Literal["only"] = False,
    **rules: Unpack[RuleOptions],
):
    """The AEC form. In simultaneous play agents act one after another and the tick resolves when
    the last has acted; with ``turn_based=True`` it is the true turn-based env
    (``nertz_env.turn_based``): ``agent_selection`` is the player on turn and each step is a tick."""
    return OrderEnforcingWrapper(raw_env(
        num_players=num_players, render_mode=render_mode, strict=strict, illegal_action_penalty=illegal_action_penalty,
        record=record, config=config, observation_dtype=observation_dtype, info_action_mask=info_action_mask, **rules,
    ))  # fmt: skip
