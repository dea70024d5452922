"""Every public boundary checks its input before compiled code runs: saved tables (R1 card
conservation, ranges, the config they belong to), observations and masks handed to agents (the
observation space of R9 and the shape of a real table), vector-env and ``Game`` actions (the R10
catalogue, as ``nertz_v0`` requires), seeds and bounded rule options. Each case here crashed the
interpreter or was silently read as something else before. The fuzz test (``test_fuzz.py``)
throws random garbage at the same boundaries in a subprocess."""

from __future__ import annotations

import re

import numpy as np
import pytest
from conftest import needs_torch, played
from hypothesis import given, settings
from hypothesis import strategies as st

from nertz_env import NertzConfig, agents, nertz_v0
from nertz_env.game import Game
from nertz_env.vector import NertzVectorEnv

CONFIGS = [
    {},
    {"nertz_builds": True, "num_players": 3},
    {"episode": "match", "target_score": 30},
    {"move_ticks": {"draw": 2, "foundation": 3}},
    {"partners": True},
    {"turn_based": True, "num_players": 2},
    {"preset": "snerts"},
    {"work_piles": 6, "call_bonus": 10, "nertz_penalty": 3},
]


@pytest.mark.parametrize("options", CONFIGS, ids=lambda o: ",".join(o) or "standard")
def test_every_table_of_real_play_restores(options):
    """The checks accept every table that play produces (R1..R8 invariants hold in play)."""
    config = NertzConfig.from_kwargs(**options)
    game, twin = played(config, 0), Game(config)
    rng = np.random.default_rng(1)
    for _ in range(600):
        game.step([rng.choice(np.flatnonzero(game.masks[p])) for p in range(config.num_players)])
        state = game.get_state()
        twin.set_state(state)
        twin._checked.clear()  # the full check, not the digest of a table it handed out
        twin.set_state(state)
        assert (twin.obs == game.obs).all() and (twin.masks == game.masks).all()
        if game.ended:
            game.reset()


def test_a_saved_table_with_a_counter_out_of_range_is_refused():
    env = nertz_v0.parallel_env()
    env.reset(seed=0)
    st = env.unwrapped.get_state()
    st["table"].n_foundations[...] = 30000  # crashed the interpreter in the next step
    with pytest.raises(ValueError, match="n_foundations is 30000"):
        env.unwrapped.set_state(st)


@pytest.mark.parametrize(
    "field, index, value, match",
    [
        ("nertz_len", (0, 1), 60, "nertz_len"),
        ("work_len", (0, 0, 2), -1, "work_len"),
        ("stock", (0, 0, 0), 52, "card code 52"),
        ("foundation_len", (0, 15), 3, "foundations with lengths"),
        ("score", (0, 2), 99, "score"),
        ("on_foundations", (0, 0), 5, "on_foundations"),
        ("tick", (0,), -4, "tick is -4"),
        ("ended", (0,), 9, "ended is 9"),
        ("air", (0, 0, 0), 5, "air ticks"),
        ("rotations", (0,), 4, "rotations is 4"),  # R5: the next stall ended the hand
        ("stall_cycle", (0,), -5, "stall_cycle is -5"),  # R5: a stall rotation every tick
        ("since_progress", (0,), 10**6, "since_progress is 1000000"),
        ("rng", (0,), 0, "rng is 0"),  # xorshift's fixed point: every later shuffle the same
        ("called", (0, 1), True, "player 1 called but the hand runs"),  # R5: a call ends the hand
        ("ended", (0,), 3, "tick is 40 but the hand ended by max_cycles"),
        ("ended", (0,), 2, "ended by a stall after"),
        ("tick", (0,), 2000, "tick is 2000 but the hand runs"),
    ],
)
def test_each_broken_invariant_is_named(field, index, value, match):
    game = played(NertzConfig(), 40)
    state = game.get_state()
    getattr(state, field)[index] = value
    with pytest.raises(ValueError, match=match):
        game.set_state(state)


def _relay(state, player: int, piles: list[list[int]], waste: list[int]) -> None:
    """Lay ``player``'s stock, waste and work cards again: ``piles`` as work piles (bottom first),
    ``waste`` as the waste and the rest as the stock (R1 conservation holds)."""
    s, p = state, player
    free = [*s.stock[0, p, : s.stock_len[0, p]], *s.waste[0, p, : s.waste_len[0, p]]]
    free += [c for j in range(s.work.shape[2]) for c in s.work[0, p, j, : s.work_len[0, p, j]]]
    rest = [int(c) for c in free if c not in {*waste, *(c for pile in piles for c in pile)}]
    assert len(rest) + len(waste) + sum(map(len, piles)) == len(free)
    s.work[0, p], s.work_len[0, p] = 0, [len(pile) for pile in piles]
    for j, pile in enumerate(piles):
        s.work[0, p, j, : len(pile)] = pile
    s.waste[0, p], s.waste_len[0, p] = 0, len(waste)
    s.waste[0, p, : len(waste)] = waste
    s.stock[0, p], s.stock_len[0, p] = 0, len(rest)
    s.stock[0, p, : len(rest)] = rest


def test_a_work_pile_that_is_not_a_run_is_refused():
    """R4.3: the masks count on runs. A 13-card pile under a black 5 took a red 4 from the waste
    as its 14th card, written over the bottom of the next pile (past the array for the last one)."""
    game = Game(NertzConfig())
    game.reset(seed=0)
    state = game.get_state()
    free = {int(c) for c in state.stock[0, 0, : state.stock_len[0, 0]]} | {int(c) for c in state.work[0, 0, :, 0]}
    five = min(c for c in free if c % 13 == 4 and c // 13 in (0, 3))  # a black 5
    four = min(c for c in free if c % 13 == 3 and c // 13 in (1, 2))  # a red 4, which builds on it (R4.3)
    pile = sorted(free - {five, four})[:12] + [five]
    _relay(state, 0, [pile, [], [], []], [four])
    with pytest.raises(ValueError, match=r"player 0's work pile 0 is not a run .*R4\.3"):
        game.set_state(state)
    state = game.get_state()
    _relay(state, 0, [[25, 11, 23], [], [], []], [])  # KD QC JD: a run, accepted
    game.set_state(state)


@settings(max_examples=60, deadline=None, derandomize=True, database=None)
@given(st.permutations(range(20)), st.lists(st.integers(0, 4), min_size=4, max_size=4))
def test_a_table_restores_exactly_when_its_work_piles_are_runs(order, lengths):
    """Property (R4.3): cards from a player's stock laid into work piles restore iff each pile is
    built down by one rank in alternating colours."""
    game = played(NertzConfig(), 0)
    state = game.get_state()
    cards = [int(state.stock[0, 2, i]) for i in order]
    piles = [cards[sum(lengths[:j]) : sum(lengths[: j + 1])] for j in range(4)]
    _relay(state, 2, piles, [])
    red = lambda c: c // 13 in (1, 2)  # noqa: E731
    runs = all(b % 13 == a % 13 - 1 and red(a) != red(b) for pile in piles for a, b in zip(pile, pile[1:]))
    if runs:
        game.set_state(state)
    else:
        with pytest.raises(ValueError, match="is not a run"):
            game.set_state(state)


def test_array_subclasses_cannot_hide_a_value_from_the_checks():
    """A masked value skipped the range checks and reached the compiled engine."""
    game = played(NertzConfig(), 5)
    state = game.get_state()
    hidden = np.ma.masked_array(state.nertz_len.copy(), mask=True)
    hidden.data[0, 1] = 60
    with pytest.raises(ValueError, match="nertz_len is a MaskedArray"):
        game.set_state(state._replace(nertz_len=hidden))


def test_a_card_in_two_piles_breaks_conservation():
    game = played(NertzConfig(), 10)
    state = game.get_state()
    state.stock[0, 0, 0] = state.nertz[0, 0, 0]  # R1: every card lies in exactly one pile
    with pytest.raises(ValueError, match="appears 2 times"):
        game.set_state(state)


@pytest.mark.parametrize("other", [{"nertz_builds": True}, {"episode": "match"}, {"call_bonus": 5}])
def test_a_state_of_another_config_is_refused_naming_the_option(other):
    src = nertz_v0.parallel_env(**other)
    src.reset(seed=0)
    dst = nertz_v0.parallel_env()
    dst.reset(seed=0)
    with pytest.raises(ValueError, match=next(iter(other))):
        dst.unwrapped.set_state(src.unwrapped.get_state())


def test_a_foreign_card_built_on_a_nertz_pile_does_not_pass_as_a_standard_table():
    """R4.8 builds leave another player's card in a Nertz pile: without the option the holder
    would own two cards of one code (R1)."""
    config = NertzConfig(nertz_builds=True, num_players=2)
    game = played(config, 0)
    rng = np.random.default_rng(0)
    built = False
    for _ in range(3000):
        names = [game.catalogue.names[a] for a in range(len(game.catalogue))]
        acts = []
        for p in range(2):
            legal = np.flatnonzero(game.masks[p])
            builds = [a for a in legal if ">nertz@" in names[a]]
            acts.append(builds[0] if builds else rng.choice(legal))
        game.step(acts)
        st = game.get_state()
        if (st.nertz_owner[0, 0, : st.nertz_len[0, 0]] != 0).any():
            built = True
            break
        if game.ended:
            game.reset()
    assert built
    with pytest.raises(ValueError, match="appears"):
        Game(NertzConfig(num_players=2)).set_state(st)


@pytest.mark.parametrize("agents_value", [["bogus"], "player_0", ["player_0"]])
def test_set_state_checks_the_agents(agents_value):
    env = nertz_v0.parallel_env()
    env.reset(seed=0)
    st = env.unwrapped.get_state()
    st["agents"] = agents_value
    with pytest.raises(ValueError, match="agents must be"):
        env.unwrapped.set_state(st)
    st["agents"] = env.possible_agents
    env.unwrapped.set_state(st)  # the right list is accepted


POLICIES = [pytest.param(name, marks=needs_torch) for name in ("ppo", "ppo-league", "ppo-search")]


@pytest.mark.parametrize("name", ["random", "passive", "greedy", "heuristic", *POLICIES])
def test_agents_refuse_observations_outside_the_space(name):
    agent = agents.make(name)
    mask = np.zeros(181, np.int8)
    mask[0] = 1
    with pytest.raises(ValueError, match="outside the observation space"):
        agent.act({"observation": np.full(1631, 127, np.int8), "action_mask": mask})
    rng = np.random.default_rng(0)
    obs = rng.integers(-128, 128, (8, 1631)).astype(np.int8)  # heuristic and ppo segfaulted on these
    with pytest.raises(ValueError, match="observation"):
        agent.act_batch(obs, np.tile(mask, (8, 1)))


def test_agents_refuse_tables_no_game_can_show():
    """Inside the space but not a table: a work pile that is not a run (R4.3), two tops, a waste
    numbered past its count, or a mask allowing a move whose card is not there."""
    env = NertzVectorEnv(4, seed=2)
    obs, masks = env.reset()
    dealt, dealt_masks = obs.reshape(16, -1).copy(), masks.reshape(16, -1).copy()  # every waste still empty
    for _ in range(30):
        obs, masks, *_ = env.step(env.sample_actions())
    lay = env.layout
    o, m = obs.reshape(16, -1).copy(), masks.reshape(16, -1).copy()
    greedy = agents.make("greedy")
    greedy.act_batch(o, m)
    cases = []
    bad = o.copy()
    bad[0, lay.slices["self.work1"]] = 1  # 52 cards in one pile: read past a 13-card pile before
    cases.append((bad, m, "work1 is not a work pile"))
    bad = o.copy()
    bad[3, lay.slices["opp2.nertz_top"]] = 1
    cases.append((bad, m, "more than one card"))
    bad = o.copy()
    bad[1, lay.slices["own_waste_order"].start] = 52
    cases.append((bad, m, "waste"))
    bad_mask = dealt_masks.copy()
    bad_mask[2, env.catalogue.index("waste>foundation")] = 1
    cases.append((dealt, bad_mask, "allows action 4 but its observation has no card to move"))
    for name in ("greedy", "heuristic"):
        for bad_obs, bad_masks, match in cases:
            with pytest.raises(ValueError, match=match):
                agents.make(name).act_batch(bad_obs, bad_masks)
    with pytest.raises(ValueError, match="masks hold 0 or 1"):
        greedy.act_batch(o, m * 2)
    # An env built with observation_dtype="float32" gives floats: whole numbers play as the int8 rows do.
    assert (greedy.act_batch(o.astype(np.float32), m.astype(np.float32)) == greedy.act_batch(o, m)).all()
    for value, match in ((0.5, r"observations at \(0, 0\) is 0.5"), (np.nan, "nan: accepted whole numbers")):
        bad = o.astype(np.float32)
        bad[0, 0] = value
        with pytest.raises(ValueError, match=match):
            greedy.act_batch(bad, m)
    with pytest.raises(TypeError, match="arrays of whole numbers"):
        greedy.act_batch(o.astype(np.complex64), m)
    with pytest.raises(ValueError, match="outside the observation space"):
        greedy.act_batch(o.astype(np.int64) + 256, m)  # not cast silently back into range


def test_vector_env_actions_follow_the_rules_of_nertz_v0():
    env = NertzVectorEnv(3, seed=0)
    env.reset()
    for bad in (181, -1, 10**6):
        actions = np.zeros((3, 4), np.int64)
        actions[1, 2] = bad
        with pytest.raises(ValueError, match=f"action {bad} at \\(1, 2\\) is out of range"):
            env.step(actions)
    with pytest.raises(ValueError, match="integers"):
        env.step(np.full((3, 4), 0.5))
    env.step(np.zeros((3, 4), np.int64))  # in range is still fine


def test_vector_env_arguments_and_sample_legal_seeds_are_checked():
    from nertz_env.vector import sample_legal

    for bad in (True, np.bool_(True)):
        with pytest.raises(ValueError, match="num_envs"):
            NertzVectorEnv(bad)  # was one game
        with pytest.raises(ValueError, match="num_threads"):
            NertzVectorEnv(2, num_threads=bad)
    for bad in ("x", None, [1.0], True, np.nan, 1e300, -1001):  # 1e300: float32 rewards of inf
        for make in (lambda p: NertzVectorEnv(2, illegal_action_penalty=p),
                     lambda p: nertz_v0.parallel_env(num_players=2, illegal_action_penalty=p)):  # fmt: skip
            with pytest.raises(ValueError, match="invalid illegal_action_penalty=.*: accepted a number from -1000 to"):
                make(bad)
    assert nertz_v0.parallel_env(num_players=2, illegal_action_penalty=-1000).illegal_action_penalty == -1000.0
    assert NertzVectorEnv(2, illegal_action_penalty=np.float32(0.5)).illegal_action_penalty == 0.5
    masks = np.ones((2, 3), bool)
    for seed in (True, -1, 0.5, "a"):
        with pytest.raises((TypeError, ValueError), match="rng must be"):
            sample_legal(masks, seed)  # True drew as seed 1
    with pytest.raises(ValueError, match="rng stream 1 is 0: stream states are nonzero"):
        sample_legal(masks, np.array([7, 0], np.uint64))  # would always draw the first legal action
    with pytest.raises(ValueError, match="at least one action"):
        sample_legal(np.ones((2, 0), bool), 0)  # a reshape error
    for bad in (np.nan, 0.5, 2.0, -1.0, np.inf):
        odd = np.ones((2, 3))
        odd[1, 2] = bad
        with pytest.raises(ValueError, match=re.escape(f"float64 masks must hold 0 or 1 (1 = legal), got {bad!r} at "
                                                       "index (1, 2)")):  # fmt: skip
            sample_legal(odd, 0)  # NaN was legal
    assert (sample_legal(np.array([[0.0, 1.0, 0.0]]), 0) == 1).all()
    env = NertzVectorEnv(2, num_players=2, seed=0)
    env.reset()
    for call, shape in ((lambda out: sample_legal(masks, 0, out=out), "int64 array shaped (2,)"),
                        (lambda out: env.sample_actions(out=out), "int64 array shaped (2, 2)"),
                        (env.states, f"int8 array shaped (2, {env.layout.state_size})")):  # fmt: skip
        with pytest.raises(ValueError, match=re.escape(f"out must be a contiguous {shape} (a writable numpy array), "
                                                       "got list")):  # fmt: skip
            call([0, 0])  # was an AttributeError on list.shape
    frozen = np.zeros((2, 2), np.int64)
    frozen.setflags(write=False)
    with pytest.raises(ValueError, match="got read-only int64 array shaped \\(2, 2\\)"):
        env.sample_actions(out=frozen)


def test_game_inputs():
    game = Game(NertzConfig())
    with pytest.raises(RuntimeError, match="before step"):
        game.step([0, 0, 0, 0])  # played an all-zero table before
    game.reset(seed=0)
    with pytest.raises(TypeError, match="integers"):
        game.step([1.7, 0, 0, 0])  # was truncated to 1
    with pytest.raises(ValueError, match="one action per seat"):
        game.step([0, 0, 0])
    with pytest.raises(ValueError, match="out of range"):
        game.step([0, 0, 0, 181])


@pytest.mark.parametrize("seed", [True, 1.5, -1, "1", np.float64(2.0)])
def test_seeds_must_be_non_negative_integers(seed):
    for reset in (Game(NertzConfig()).reset, nertz_v0.parallel_env().reset, NertzVectorEnv(2).reset):
        with pytest.raises((TypeError, ValueError), match="seed"):
            reset(seed=seed)
    with pytest.raises((TypeError, ValueError), match="seed"):
        agents.make("random", seed=seed)
    with pytest.raises((TypeError, ValueError), match="seed"):
        NertzVectorEnv(2, seed=seed)


def test_reset_options_must_be_a_mapping():
    with pytest.raises(TypeError, match="reset options must be a dict"):
        nertz_v0.parallel_env().reset(seed=0, options=1)


@pytest.mark.parametrize(
    "option, value",
    [("nertz_penalty", 200_000_000), ("call_bonus", 10**9), ("max_cycles", 2**31), ("stall_ticks", 2**40),
     ("max_stall_rotations", 2**31), ("target_score", 2**63), ("nertz_penalty", 1001)],
)
def test_options_that_could_overflow_a_score_are_refused(option, value):
    with pytest.raises(ValueError, match=option):
        NertzConfig(**{option: value})


def test_the_largest_penalty_and_bonus_keep_exact_scores():
    """At the bounds an R7 score is exact: -1000 per Nertz card, +1000 for a call."""
    config = NertzConfig(nertz_penalty=1000, call_bonus=1000, num_players=2)
    game = Game(config)
    game.reset(seed=3)
    assert list(game.scores) == [-13000, -13000]
    state = game.get_state()
    snap = game.snapshot()
    assert snap["scores"] == [-1000 * len(p["nertz"]) for p in snap["players"]]
    game.set_state(state)
