"""Many Nertz hands at once, stepped in the compiled engine: the batched twin of the PettingZoo env.

| part         | what                                                                              |
|--------------|-----------------------------------------------------------------------------------|
| games, seats | ``num_envs`` hands of ``num_players`` (2 to 8) players, all acting every tick     |
| observations | int8 ``[num_envs, num_players, obs_dim]``, each seat's egocentric view (R9)       |
| layout       | ``env.layout`` (``nertz_env.layout.ObservationLayout``) names the observation's parts |
| action masks | int8 ``[num_envs, num_players, num_actions]``, 1 = legal (R4); never empty        |
| actions      | int ``[num_envs, num_players]``, indices into ``env.catalogue`` (R10 names)       |
| rewards      | float32 ``[num_envs, num_players]``, per the ``reward`` option (R7)               |

Out-of-range actions raise, as in ``nertz_v0``; an illegal action in range is played as WAIT.

Episode end (R5): a call or a stall *terminates* the hand, ``max_cycles`` *truncates* it; both are
reported per game and seat, ``[num_envs, num_players]`` bool.

Timing options (R3): under ``turn_based`` every seat still sends an action each tick and the seats
off turn send WAIT (their masks allow nothing else); under ``move_ticks`` a seat whose move is in
the air sends WAIT until it lands. The observations then end with the timing section
(``env.layout.slices["on_turn"]``, ``["air_ticks"]``, ...).

Same-step reset: a hand that ends is dealt again at once from that game's own random stream, so
the observations and masks ``step`` returns for it are the first of the new hand, and its reward
is the last reward of the old one. What the finished hand left is in ``infos``:

- ``infos["episode"]``: ``"done"`` bool ``[num_envs]`` (the hands that ended this step), and for
  those rows ``"scores"`` int32 ``[num_envs, P]`` (R7), ``"length"`` int32 ``[num_envs]`` (ticks),
  ``"end_reason"`` int8 ``[num_envs]`` (index into ``nertz_env.engine.END_REASONS``: 1 call,
  2 stall, 3 max_cycles) and ``"callers"`` bool ``[num_envs, P]``;
- ``infos["final_observation"]``: int8 ``[num_envs, P, obs_dim]``, the last observation of the
  ended hand, valid on the rows where ``infos["episode"]["done"]``, and ``infos["final_state"]``:
  int8 ``[num_envs, layout.state_size]``, its whole table as ``states()`` gives it (a centralized
  critic's value of a hand cut off at ``max_cycles`` bootstraps from it), valid on the same rows;
- ``infos["illegal"]``: bool ``[num_envs, P]``, the action was illegal and was played as WAIT (with
  ``illegal_action_penalty`` subtracted from its reward); ``infos["collision"]``: lost a
  foundation race (R6).

Partners and matches (R8): ``infos["episode"]["team_scores"]`` int32 ``[num_envs, T]`` gives the
final score per team (partners summed; ``T = P`` without partners), and rewards follow the team
(see ``nertz_v0``). With ``episode="match"`` an episode is a whole match: the reset happens at the
end of the match, not of a hand. A hand that ends inside it is dealt again at once (the
observations returned are the new hand's) and reported in ``infos["hand"]``: ``"done"`` bool
``[num_envs]``, and for those rows ``"scores"``, ``"length"``, ``"end_reason"``, ``"callers"`` and
``"totals"`` (the match totals after that hand). The hand that ends the match is reported there
too. ``infos["episode"]`` then describes the match: ``"scores"`` are the final totals, ``"length"``
its ticks over all hands, ``"end_reason"`` and ``"callers"`` its last hand's, ``"hands"`` int32
``[num_envs]`` and ``"winners"`` bool ``[num_envs, P]``. A decided match terminates, one stopped
at ``max_hands`` is truncated.

Every array returned (observations, masks, rewards, flags and all of ``infos``) is preallocated
and written in place by the next ``step`` or ``reset``: copy what you keep.

Seeding: ``reset(seed)`` gives game ``i`` the stream ``engine.seed_streams(seed, num_envs)[i]``,
so game 0 plays the hand ``Game(config).reset(seed)`` plays, and game ``i`` the hand of a
``Game`` whose stream is set to that word. ``reset()`` without a seed deals every game a new hand
from where its stream stands, as ``Game.reset()`` does. ``reset(games=...)`` deals only some games
anew (a time limit of one game), leaving the others as they are. ``num_threads > 1`` steps the
games in parallel (numba ``prange``) with the same results.

Example:
    >>> env = NertzVectorEnv(num_envs=8, seed=0)
    >>> obs, masks = env.reset()
    >>> obs, masks, rewards, terminated, truncated, infos = env.step(env.sample_actions())
    >>> obs.shape == (8, 4, env.obs_dim) and masks.shape == (8, 4, env.num_actions)
    True
"""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING, Any, cast

import numba
import numpy as np
from gymnasium import spaces

from nertz_env import engine, interim
from nertz_env.actions import ActionCatalogue
from nertz_env.batch_args import games_of, out_array, read_only
from nertz_env.checks import check_int_actions, check_seed
from nertz_env.config import NertzConfig, is_int
from nertz_env.config_values import is_int_dtype
from nertz_env.layout import ObservationLayout
from nertz_env.options import RuleOptions, env_config
from nertz_env.options import illegal_action_penalty as check_penalty

if TYPE_CHECKING:
    from typing_extensions import Unpack

_SAMPLER = 0x5A3  # mixed into the seed of the sampler's streams, apart from the games' own


def _check_threads(num_threads: int | None) -> int:
    most = numba.config.NUMBA_NUM_THREADS
    if num_threads is None:
        return most
    if not is_int(num_threads) or not 1 <= num_threads <= most:
        raise ValueError(f"invalid num_threads={num_threads!r}: accepted None (all) or an integer from 1 to {most}")
    return int(num_threads)


def _run(serial, threaded, num_threads: int, *args) -> None:
    if num_threads == 1:
        serial(*args)
        return
    before = numba.get_num_threads()
    numba.set_num_threads(num_threads)
    try:
        threaded(*args)
    finally:
        numba.set_num_threads(before)


def sample_legal(
    masks: np.ndarray,
    rng: int | np.ndarray | np.random.Generator | None = None,
    out: np.ndarray | None = None,
    num_threads: int = 1,
) -> np.ndarray:
    """A uniformly random legal action for every mask of ``masks[..., N]`` (nonzero = legal in a
    bool or integer mask; a mask of another dtype, float among them, holds 0 or 1, and any other
    value, NaN or 0.5, is a ``ValueError``), drawn in compiled code; -1 where a mask allows nothing.

    ``rng`` is a seed (the same seed gives the same actions), a ``np.random.Generator`` (a seed is
    drawn from it), or a uint64 array of stream states from ``engine.seed_streams`` advanced in
    place: with ``G`` streams, stream ``g`` draws for the ``g``-th of ``G`` equal runs of masks
    (flattened in C order), so per-row streams give the same actions with any ``num_threads``.
    """
    m = np.asarray(masks)
    if m.dtype.kind not in "biuf":
        raise TypeError(f"masks must be bool, integer or float arrays (nonzero = legal), got dtype {m.dtype}")
    if m.dtype != np.bool_ and not is_int_dtype(m.dtype):  # NaN, a probability: no yes or no
        bad = ~np.isin(m, (0, 1))
        if bad.any():
            first = int(np.argmax(bad))
            value = m.reshape(-1)[first : first + 1].tolist()[0]
            raise ValueError(f"{m.dtype} masks must hold 0 or 1 (1 = legal), got {value!r} at index "
                             f"{tuple(map(int, np.unravel_index(first, m.shape)))}")  # fmt: skip
    return _sample_legal(engine, m, rng, out, num_threads)


def _sample_legal(kernels: Any, masks: np.ndarray, rng: Any, out: np.ndarray | None, num_threads: int) -> np.ndarray:
    """``sample_legal`` with the kernels of ``kernels`` (the engine, or its plain-Python twin)."""
    m = np.asarray(masks)
    if m.ndim < 1:
        raise ValueError("masks must have a last axis of actions, shaped [..., num_actions]")
    lead, n = m.shape[:-1], m.shape[-1]
    if n == 0:
        raise ValueError(f"masks shaped {m.shape} have no actions: each mask needs at least one action")
    if m.dtype == np.bool_:
        m = m.view(np.int8)
    elif m.dtype != np.int8:
        m = (m != 0).view(np.int8)
    rows = np.ascontiguousarray(m.reshape(-1, n))
    if isinstance(rng, np.ndarray):
        if rng.dtype != np.uint64 or not rng.flags.c_contiguous or not rng.flags.writeable:
            raise ValueError("rng as an array must be a writable contiguous uint64 array of stream states")
        streams = rng.reshape(-1)  # a view: the streams advance in place
        if streams.size == 0 or rows.shape[0] % streams.size:
            raise ValueError(f"{streams.size} streams cannot share {rows.shape[0]} masks equally")
        if not streams.all():  # xorshift stays at 0: every draw would be the first legal action
            raise ValueError(f"rng stream {int(np.argmin(streams))} is 0: stream states are nonzero words, as "
                             "engine.seed_streams gives them")
    else:
        if isinstance(rng, np.random.Generator):
            rng = int(rng.integers(2**63))
        rng = check_seed(rng, "rng must be a seed, a Generator or an array of streams; as a seed it")
        streams = kernels.seed_streams(rng, 1)
    result = np.empty(lead, np.int64) if out is None else out_array(out, lead, np.int64)
    if rows.shape[0]:
        _run(kernels.sample_legal_rows, kernels.sample_legal_rows_threaded, _check_threads(num_threads),
             rows, streams, result.reshape(-1))  # fmt: skip
    return result


class NertzVectorEnv:
    """``num_envs`` Nertz hands of ``num_players`` seats stepped together (see the module doc).

    Args:
        num_envs: hands played side by side.
        num_players: seats per hand (2 to 8; default 4).
        seed: the seed of the first ``reset`` when it is given none.
        num_threads: threads for stepping (``None``: numba's maximum); results do not depend on it.
        illegal_action_penalty: subtracted from the reward of an illegal action (played as WAIT).
        config: the rules as one ``NertzConfig`` (a task's ``tasks.get(name).config``, an agent's),
            in place of ``num_players`` and the rule options, as ``nertz_v0``'s envs take it.
        **rules: the ``NertzConfig`` options (R2 to R8), ``reward`` included, and ``preset`` (a rule
            set of ``nertz_env.config.PRESETS`` that the other options override).
    """

    def __init__(
        self,
        num_envs: int,
        num_players: int | None = None,
        seed: int | None = None,
        num_threads: int | None = 1,
        illegal_action_penalty: float = 0.0,
        config: NertzConfig | None = None,
        **rules: Unpack[RuleOptions],
    ):
        if not is_int(num_envs) or num_envs < 1:
            raise ValueError(f"invalid num_envs={num_envs!r}: accepted an integer >= 1")
        penalty = check_penalty(illegal_action_penalty)
        self.config = env_config(config, num_players, rules)
        self.catalogue = ActionCatalogue(self.config)
        self.layout = ObservationLayout(self.config)
        self.num_envs = int(num_envs)
        self.num_players = self.config.num_players
        self.num_agents = self.num_envs * self.num_players
        self.obs_dim = self.layout.size
        self.num_actions = len(self.catalogue)
        self.num_threads = _check_threads(num_threads)
        self.illegal_action_penalty = penalty
        self.single_observation_space = spaces.Box(0, self.layout.high, (self.obs_dim,), np.int8)
        self.single_action_space: spaces.Discrete = spaces.Discrete(self.num_actions)

        self.state = engine.new_state(self.num_envs, self.num_players, self.config.work_piles)
        self.buffers = engine.new_buffers(
            self.num_envs, self.num_players, self.obs_dim, self.num_actions, self.config.num_teams,
            self.layout.state_size,
        )
        self._cfg, self._table = self._read_only_arrays()
        self._speed = self.config.speed_weights
        self._plan = engine.mask_plan(self._table)
        self._actions = np.zeros((self.num_envs, self.num_players), np.int64)
        self._sampled = np.zeros((self.num_envs, self.num_players), np.int64)
        self._sampler = np.zeros(self.num_envs, np.uint64)
        self._seed = check_seed(seed)
        self._seeded = False
        self._engine = self._choose_engine()
        out = self.buffers
        self.infos: dict[str, Any] = {
            "episode": {
                "done": out.done,
                "scores": out.final_score,
                "length": out.final_length,
                "end_reason": out.final_reason,
                "callers": out.final_callers,
                "team_scores": out.final_team_score,
            },
            "final_observation": out.final_obs,
            "final_state": out.final_state,
            "illegal": out.illegal,
            "collision": out.collision,
        }
        if self.config.episode == "match":
            self.infos["episode"].update(hands=out.final_hands, winners=out.final_winners)
            self.infos["hand"] = {
                "done": out.hand_done,
                "scores": out.hand_score,
                "length": out.hand_length,
                "end_reason": out.hand_reason,
                "callers": out.hand_callers,
                "totals": out.hand_totals,
            }

    def _read_only_arrays(self) -> tuple[np.ndarray, np.ndarray]:
        """The packed options and the catalogue table, read-only as ``Game`` and the arena pass
        them: every form of the game then calls each compiled kernel with the same argument
        types (one compile, and the one a first start compiles ahead, ``engine.warm``)."""
        return self.config.packed, self.catalogue.table

    def _choose_engine(self) -> Any:
        """The compiled engine, or while a first start compiles its kernels in the background the
        plain-Python engine, until then (``nertz_env.interim``)."""
        kernel = engine.step_batch if self.num_threads == 1 else engine.step_batch_threaded
        args = (self.state, self._actions, self._cfg, self._table, self._speed, self._plan,
                self.illegal_action_penalty, self.buffers)  # fmt: skip
        warm = functools.partial(_first_step, self.config, self.num_threads)
        kind = "the threaded vector env's kernels" if self.num_threads > 1 else "the vector env's kernels"
        job = interim.background(kind, warm, lambda: engine.is_cached(kernel, args))
        return engine if job is None else interim.InterimEngine(job, self._go_compiled)

    def _go_compiled(self) -> None:
        self._engine = engine

    @property
    def compiled(self) -> bool:
        """Whether this env plays the compiled engine (False while a first start compiles it in
        the background and it plays in plain Python: ``nertz_env.interim``)."""
        return self._engine is engine or self._engine.check()

    def __getstate__(self) -> dict[str, Any]:
        state = self.__dict__.copy()
        del state["_engine"]  # a module: chosen again on unpickling
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        """Unpickled with the config's own read-only arrays (pickling drops the flag)."""
        self.__dict__.update(state)
        self._cfg, self._table = self._read_only_arrays()
        self._engine = self._choose_engine()

    # -- the loop --------------------------------------------------------------------------
    def reset(self, seed: int | None = None, games: Any = None) -> tuple[np.ndarray, np.ndarray]:
        """Deal a new hand in every game; returns ``(observations, action_masks)``.

        With ``games`` (a bool mask ``[num_envs]`` or game indices), only those games end the hand
        (or match) they were in and are dealt anew, as a hand that ends is; the others, their
        streams and their rows of every array are left as they were. A chosen game ``i`` deals
        from its own stream, or with ``seed`` the hand ``reset(seed)`` would deal it."""
        if games is not None:
            return self._reset_games(seed, games_of(games, self.num_envs))
        seed = self.seed_of_reset(seed)
        if seed is not None or not self._seeded:
            self._sow(seed, slice(None))
            self._seeded = True
        _run(self._engine.deal_batch, self._engine.deal_batch_threaded, self.num_threads,
             self.state, self._cfg, self._table, self._plan, self.buffers)  # fmt: skip
        return self.buffers.obs, self.buffers.masks

    def _reset_games(self, seed: int | None, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        if not self._seeded:
            raise RuntimeError("call reset() before reset(games=...): it deals again games already dealt")
        seed = check_seed(seed)
        if seed is not None:
            self._sow(seed, rows)
        if rows.size:
            self._engine.deal_games(self.state, rows, self._cfg, self._table, self._plan, self.buffers)
        return self.buffers.obs, self.buffers.masks

    def _sow(self, seed: int | None, rows: slice | np.ndarray) -> None:
        """Games ``rows`` get streams ``rows`` of ``seed`` (fresh entropy for None), the deal's and the sampler's."""
        entropy = cast(int, np.random.SeedSequence(seed).entropy)  # an int: the seed's, or fresh
        self.state.rng[rows] = engine.seed_streams(entropy, self.num_envs)[rows]
        self._sampler[rows] = engine.seed_streams([entropy, _SAMPLER], self.num_envs)[rows]

    def seed_of_reset(self, seed: int | None = None) -> int | None:
        """The seed ``reset(seed)`` deals from: ``seed``, else the constructor's at the first reset
        (None: the streams go on, or fresh entropy where no seed was ever given). The doors with
        opponents reseed them from it, so that a seed given to the constructor and one given to
        the first ``reset`` play the same episode."""
        seed = check_seed(seed)
        return self._seed if seed is None and not self._seeded else seed

    def step(
        self, actions: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray, dict[str, Any]]:
        """One tick of every game: ``actions[g, p]`` is seat ``p``'s action in game ``g`` (a flat
        ``[num_envs * num_players]`` array is read game by game, as ``reshape`` reads it).

        Returns ``(observations, action_masks, rewards, terminations, truncations, infos)``, all
        written in place (see the module doc for ``infos`` and the same-step reset).
        """
        if not self._seeded:
            raise RuntimeError("call reset() before step()")
        a = np.asarray(actions)
        if a.shape != self._actions.shape and a.size == self._actions.size and a.ndim == 1:
            a = a.reshape(self._actions.shape)
        if a.shape != self._actions.shape or not (is_int_dtype(a.dtype) or a.size == 0):
            raise ValueError(
                f"actions must be integers shaped (num_envs, num_players) = {self._actions.shape}, "
                f"got {a.dtype} {a.shape}"
            )
        check_int_actions(a, self.num_actions, "NertzVectorEnv.step")  # as nertz_v0: out of range raises
        np.copyto(self._actions, a, casting="unsafe")
        _run(self._engine.step_batch, self._engine.step_batch_threaded, self.num_threads,
             self.state, self._actions, self._cfg, self._table, self._speed, self._plan,
             self.illegal_action_penalty, self.buffers)  # fmt: skip
        out = self.buffers
        return out.obs, out.masks, out.rewards, out.terminated, out.truncated, self.infos

    def sample_actions(self, out: np.ndarray | None = None) -> np.ndarray:
        """A uniformly random legal action for every seat, int64 ``[num_envs, num_players]``,
        drawn in compiled code from each game's own sampler stream (seeded by ``reset``).
        Without ``out`` the result is a preallocated array rewritten by the next call."""
        if not self._seeded:
            raise RuntimeError("call reset() before sample_actions()")
        result = self._sampled if out is None else out
        return _sample_legal(self._engine, self.buffers.masks, self._sampler, result, self.num_threads)

    # -- inspection ------------------------------------------------------------------------
    @property
    def observations(self) -> np.ndarray:
        return self.buffers.obs

    @property
    def action_masks(self) -> np.ndarray:
        return self.buffers.masks

    def states(self, out: np.ndarray | None = None) -> np.ndarray:
        """The whole table of every game as int8 ``[num_envs, layout.state_size]``, hidden cards
        included (``nertz_v0``'s ``state()``, for centralized critics), built in compiled code. A
        game whose hand ended in the last step shows its new deal. Without ``out``, a new array."""
        shape = (self.num_envs, self.layout.state_size)
        result = np.empty(shape, np.int8) if out is None else out_array(out, shape, np.int8)
        self._engine.state_vectors(self.state, self._cfg, result)
        return result

    @property
    def scores(self) -> np.ndarray:
        """The running R7 score of every seat of the hands in play (a live, read-only view)."""
        return read_only(self.state.score)

    @property
    def totals(self) -> np.ndarray:
        """The match totals of every seat (R8, ``episode="match"``; a live, read-only view)."""
        return read_only(self.state.match_seats[:, engine.MS_TOTAL])

    @property
    def ticks(self) -> np.ndarray:
        """Ticks played in each game's current hand (a live, read-only view)."""
        return read_only(self.state.tick)

    def close(self) -> None:
        pass

    def __repr__(self) -> str:
        return (
            f"NertzVectorEnv(num_envs={self.num_envs}, num_players={self.num_players}, num_threads={self.num_threads})"
        )


def _first_step(config: NertzConfig, num_threads: int) -> None:
    """A deal and a step of one game of ``config``: ``nertz_env.interim`` compiles the vector env's
    kernels so."""
    env = NertzVectorEnv(1, num_threads=num_threads, **config.to_dict())
    env.reset(seed=0)
    env.step(env.sample_actions())
