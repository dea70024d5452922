"""Many hands at once: agents seated at a batch of tables stepped together by the compiled engine.

A *hand* names its fixed deal (R10, one 52-card deck per seat), which agent sits in each seat and
the seed of its own random stream (the R6 races): replaying it with
``Game.reset(seed=hand.seed, decks=hand.decks)`` and the same agents gives the same table. Hands
come from *streams*: generators that yield a hand, are sent its result and yield the next one (a
match to 100 is one stream, R8; a single hand is a stream of one). The arena keeps ``batch_size``
tables busy, asks every agent once per tick for all the seats it holds, and refills a table from
the next stream as soon as its hand ends.
"""

from __future__ import annotations

from collections.abc import Callable, Generator, Iterable, Sequence
from dataclasses import dataclass

import numpy as np

from nertz_env import engine
from nertz_env.actions import ActionCatalogue
from nertz_env.agents.base import Agent, mix_keys
from nertz_env.config import NertzConfig
from nertz_env.layout import ObservationLayout


@dataclass(frozen=True)
class MatchSoFar:
    """Where a match stands before one of its hands (R8), for the observation's match section
    under ``episode="match"``: per seat the totals and whether they may still win."""

    totals: tuple[int, ...]
    hands_played: int
    contenders: tuple[bool, ...]
    state: int  # engine.MATCH_PLAYING or MATCH_TIE_BREAK


@dataclass(frozen=True)
class Hand:
    """One hand to play: ``seats[s]`` is the index (in the arena's agent list) of seat ``s``'s agent."""

    key: tuple[int, ...]
    decks: np.ndarray  # int8 [P, 52], card codes in R10 deal order
    seats: tuple[int, ...]
    seed: int
    match: MatchSoFar | None = None


@dataclass(frozen=True)
class HandResult:
    """What a hand left on the table, per seat (R7 scores, R6 races) and overall (R5 end)."""

    hand: Hand
    scores: tuple[int, ...]
    on_foundations: tuple[int, ...]
    nertz_left: tuple[int, ...]
    called: tuple[bool, ...]
    races_won: tuple[int, ...]
    races_lost: tuple[int, ...]
    ticks: int
    end_reason: str


Stream = Generator[Hand, HandResult, None]


def single(hand: Hand) -> Stream:
    """A stream of one hand."""
    yield hand


def hand_stream_seed(*words: int) -> int:
    """A 63-bit seed for a hand's random stream, a pure function of ``words``."""
    return int(np.random.SeedSequence(list(words)).generate_state(1, np.uint64)[0] >> np.uint64(1))


class Arena:
    """``batch_size`` tables of one config, each seat played by one of ``agents``."""

    def __init__(self, config: NertzConfig, agents: Sequence[Agent], batch_size: int = 2048):
        for a in agents:
            if a.config != config:
                raise ValueError(f"agent {a!r} was built for {a.config}, not the arena's {config}")
        self.config = config
        self.agents = list(agents)
        for agent in self.agents:
            agent.interim = False  # thousands of hands: compiled kernels from the first (nertz_env.interim)
        self.batch_size = int(batch_size)
        self.catalogue = ActionCatalogue(config)
        self.layout = ObservationLayout(config)
        self._cfg = config.packed
        self._table = self.catalogue.table
        self._speed = config.speed_weights
        self._plan = engine.mask_plan(self._table)

    def play(
        self,
        streams: Iterable[Stream],
        on_result: Callable[[HandResult], None] | None = None,
    ) -> list[HandResult]:
        """Play every hand of every stream; results in the order hands ended."""
        p, b_max = self.config.num_players, self.batch_size
        d, n = self.layout.size, len(self.catalogue)
        state = engine.new_state(b_max, p, self.config.work_piles)
        obs = np.zeros((b_max, p, d), np.int8)
        masks = np.zeros((b_max, p, n), np.int8)
        rewards = np.zeros((b_max, p), np.float32)  # the composer's; the arena keeps the hands' scores
        prev_score = np.zeros((b_max, p), np.int32)
        actions = np.zeros((b_max, p), np.int64)
        won, lost, illegal = (np.zeros((b_max, p), np.int32) for _ in range(3))  # R6 races, illegal actions
        seat_agent = np.full((b_max, p), -1, np.int64)
        hand_seed = np.zeros(b_max, np.uint64)  # names each decision with its seat and tick (act_batch keys)
        active = np.zeros(b_max, np.bool_)
        hands: list[Hand | None] = [None] * b_max
        owner: list[Stream | None] = [None] * b_max
        pending = iter(streams)
        results: list[HandResult] = []

        def start(b: int, hand: Hand) -> None:
            self._deal(state, b, hand, obs, masks)
            won[b], lost[b], illegal[b] = 0, 0, 0
            seat_agent[b] = hand.seats
            hand_seed[b] = hand.seed % 2**64
            hands[b] = hand
            active[b] = True

        def refill(b: int, result: HandResult | None) -> None:
            stream = owner[b]
            while True:
                try:
                    if stream is not None:
                        hand = stream.send(result) if result is not None else next(stream)
                        owner[b] = stream
                        start(b, hand)
                        return
                except StopIteration:
                    pass
                result = None
                stream = next(pending, None)
                if stream is None:
                    owner[b], hands[b], active[b] = None, None, False
                    seat_agent[b] = -1
                    return

        for b in range(b_max):
            refill(b, None)
        obs_rows, mask_rows, act_rows = obs.reshape(-1, d), masks.reshape(-1, n), actions.reshape(-1)
        seat_of_row = np.tile(np.arange(p, dtype=np.uint64), b_max)
        while active.any():
            # A decision's key is its hand, seat and tick: an agent's draws never depend on which
            # tables share the batch, so results do not depend on batch_size.
            keys = mix_keys(np.repeat(hand_seed, p), seat_of_row, np.repeat(state.tick.astype(np.uint64), p))
            self._act(seat_agent.reshape(-1), obs_rows, mask_rows, act_rows, keys)
            tables = np.flatnonzero(active)
            # One tick of every live table (R3), each a single hand: the streams make matches (R8).
            engine.step_games(state, tables, actions, self._cfg, self._table, self._speed, self._plan, obs, masks,
                              rewards, prev_score)  # fmt: skip
            won[tables] += state.won_race[tables]  # R6 races won and lost
            lost[tables] += state.collision[tables]
            illegal[tables] += state.illegal[tables]
            if illegal[tables].any():
                b, s = np.argwhere(illegal[tables] > 0)[0]
                raise RuntimeError(f"agent {self.agents[seat_agent[tables[b], s]]!r} played an illegal action")
            for b in tables[state.ended[tables] != 0]:
                result = self._result(state, b, hands[b], won[b], lost[b])
                results.append(result)
                if on_result is not None:
                    on_result(result)
                refill(int(b), result)
        return results

    def _deal(self, state: engine.State, b: int, hand: Hand, obs: np.ndarray, masks: np.ndarray) -> None:
        """Table ``b`` starts ``hand``: its stream, the match so far (R8) and its R10 decks."""
        p = self.config.num_players
        if len(hand.seats) != p or np.shape(hand.decks) != (p, 52):
            raise ValueError(f"hand {hand.key} does not fit a table of {p} players")
        state.rng[b] = engine.seed_streams(hand.seed, 1)[0]  # as Game.reset(seed=hand.seed)
        engine.start_match(state, b, self._cfg)
        if hand.match is not None:  # R8: what the observation's match section shows
            state.match_seats[b, engine.MS_TOTAL] = hand.match.totals
            state.match_info[b, engine.MI_HANDS] = hand.match.hands_played
            state.match_seats[b, engine.MS_CONTENDER] = hand.match.contenders
            state.match_info[b, engine.MI_STATE] = hand.match.state
        decks = np.ascontiguousarray(hand.decks, dtype=np.int8)
        engine.deal_game(state, b, decks, self._cfg, self._table, self._plan, obs[b], masks[b])

    def _act(self, seat_agents: np.ndarray, obs_rows: np.ndarray, mask_rows: np.ndarray, act_rows: np.ndarray,
             keys: np.ndarray) -> None:
        """Each agent chooses, in one batch, for every seat it holds (``seat_agents``: -1 = empty),
        each decision drawing from its own ``keys`` row. The rows are the engine's own, so the
        agents skip ``act_batch``'s scan of their contents."""
        for k, agent in enumerate(self.agents):
            rows = np.flatnonzero(seat_agents == k)
            if rows.size:
                act_rows[rows] = agent._act_engine_rows(obs_rows[rows], mask_rows[rows], keys[rows])

    def _result(self, state: engine.State, b: int, hand: Hand, won: np.ndarray, lost: np.ndarray) -> HandResult:
        ints = lambda a: tuple(int(x) for x in a)  # noqa: E731
        reason = engine.END_REASONS[int(state.ended[b])]
        assert reason is not None  # the hand ended (state.ended != 0)
        return HandResult(
            hand=hand,
            scores=ints(state.score[b]),
            on_foundations=ints(state.on_foundations[b]),
            nertz_left=ints(state.nertz_len[b]),
            called=tuple(bool(x) for x in state.called[b]),
            races_won=ints(won),
            races_lost=ints(lost),
            ticks=int(state.tick[b]),
            end_reason=reason,
        )
