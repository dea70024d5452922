"""The move features of ``agents.features`` on exact tables (R10 fixed deals), and their
agreement with the engine's mask and with the ``heuristic``'s own choice."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest
from conftest import make_deck, new_game, play

from nertz_env import agents
from nertz_env.agents import features as F
from nertz_env.config import NertzConfig
from nertz_env.vector import NertzVectorEnv

CONFIG = NertzConfig(num_players=2, nertz_pile_size=3, collision="seat", stall_ticks=10_000)
ME = make_deck(["KD", "5C", "AH"], ["9S", "8H", "2H", "QC"])  # AH on top of the Nertz pile
RIVAL = make_deck(["KS", "QS", "2H"], ["TS", "9C", "8S", "7S"])  # the rival's own 2H shows


def features_of(game, player=0):
    obs, masks = game.obs[player : player + 1], game.masks[player : player + 1]
    rows, acts, feats = F.ActionFeatures(game.config)(obs, masks)
    return {game.catalogue.names[a]: f for a, f in zip(acts, feats)}


def played_rows(seed: int, ticks: int) -> tuple[np.ndarray, np.ndarray]:
    """Observation and mask rows of 8 games (16 players) after ``ticks`` of random legal play."""
    env = NertzVectorEnv(8, seed=seed, **CONFIG.to_dict())
    obs, masks = env.reset()
    for _ in range(ticks):
        obs, masks, *_ = env.step(env.sample_actions())
    return obs.reshape(16, -1), masks.reshape(16, -1)


def test_pairs_are_exactly_the_legal_moves_row_major():
    o, m = played_rows(seed=3, ticks=30)
    rows, acts, feats = F.ActionFeatures(CONFIG)(o, m)
    expect_rows, expect_acts = np.nonzero(m)
    assert (rows == expect_rows).all() and (acts == expect_acts).all()
    assert feats.shape == (len(rows), F.N_FEATURES) and np.isfinite(feats).all()


def test_r4_2_the_nertz_ace_to_a_foundation():
    game = new_game(CONFIG, [ME, RIVAL])
    f = features_of(game)
    assert set(f) == {"wait", "draw", "nertz>foundation", "work1>work0:1"}
    ace = f["nertz>foundation"]
    assert ace[F.F_TO_FOUNDATION] == ace[F.F_FROM_NERTZ] == ace[F.F_ACE] == ace[F.F_FOUNDATION_READY] == 1
    assert ace[F.F_RANK] == pytest.approx(1 / 13) and ace[F.F_NERTZ_LEFT] == pytest.approx(3 / 13)
    assert ace[F.F_REVEALS_NERTZ] == 1 and ace[F.F_LAST_NERTZ] == 0 and ace[F.F_RACE] == 0
    assert ace[F.F_LOOKAHEAD_GAP] == 0 and ace[F.F_LOOKAHEAD] > 0  # the heuristic's own pick
    assert f["wait"][F.F_WAIT] == 1 and f["wait"][F.F_LOOKAHEAD] == 0


def test_r4_3_a_work_card_onto_another_pile():
    game = new_game(CONFIG, [ME, RIVAL])
    move = features_of(game)["work1>work0:1"]  # 8H onto 9S
    assert move[F.F_TO_WORK] == move[F.F_FROM_WORK] == move[F.F_EMPTIES_SOURCE] == 1
    assert move[F.F_RANK] == pytest.approx(8 / 13) and move[F.F_BLOCK] == pytest.approx(1 / 13)
    assert move[F.F_DST_HEIGHT] == pytest.approx(1 / 13)
    assert move[F.F_INTO_SPACE] == move[F.F_EXPOSES] == move[F.F_FOUNDATION_READY] == 0


def test_r6_a_race_for_the_same_foundation_slot():
    game = new_game(CONFIG, [ME, RIVAL])
    play(game, "nertz>foundation", "wait")  # AH up; the rival's 2H could take the same slot
    f = features_of(game)
    two = f["work2>foundation"]
    assert two[F.F_TWO] == two[F.F_FOUNDATION_READY] == two[F.F_EMPTIES_SOURCE] == 1
    assert two[F.F_RACE] == pytest.approx(1 / 3)
    assert two[F.F_NERTZ_LEFT] == pytest.approx(2 / 13)


@pytest.mark.parametrize("depth", [1, 2, 3])
def test_the_lookahead_features_rank_the_heuristic_choice_first(depth):
    env = NertzVectorEnv(16, seed=5)
    obs, masks = env.reset()
    heuristic = agents.make("heuristic", depth=depth)
    for _ in range(40):
        obs, masks, *_ = env.step(env.sample_actions())
    o, m = obs.reshape(64, -1), masks.reshape(64, -1)
    chosen = heuristic.act_batch(o, m)
    rows, acts, feats = F.ActionFeatures(env.config, lookahead=True if depth == 2 else depth)(o, m)
    for r in range(64):
        mine = feats[(rows == r) & (acts == chosen[r])][0]
        if chosen[r] == 2:  # CALL
            assert mine[F.F_SHOULD_CALL] == 1
        else:
            assert mine[F.F_LOOKAHEAD_GAP] == 0


def test_without_lookahead_only_the_lookahead_columns_are_zero():
    o, m = played_rows(seed=5, ticks=20)
    _, _, full = F.ActionFeatures(CONFIG)(o, m)
    _, _, bare = F.ActionFeatures(CONFIG, lookahead=False)(o, m)
    cols = list(F.LOOKAHEAD_COLUMNS)
    assert (bare[:, cols] == 0).all() and np.abs(full[:, cols]).sum() > 0
    rest = [c for c in range(F.N_FEATURES) if c not in cols]
    assert (bare[:, rest] == full[:, rest]).all()


def test_lookahead_settings_are_depths_and_bad_ones_are_refused():
    assert F.ActionFeatures(CONFIG).depth == 2 and F.ActionFeatures(CONFIG, lookahead=False).depth == 0
    assert F.ActionFeatures(CONFIG, lookahead=3).depth == 3 and F.ActionFeatures(CONFIG, lookahead=4).depth == 4
    for bad in (5, -1, 2.5, "deep"):
        said = f"invalid lookahead={bad!r}: accepted a bool or a depth from 0 to 4"
        with pytest.raises(ValueError, match=re.escape(said)):
            F.ActionFeatures(CONFIG, lookahead=bad)


@pytest.mark.parametrize("depth", [1, 2, 3])
def test_the_features_search_gives_the_heuristics_own_choice(depth):
    """The trainer labels cloning targets from ``with_choice`` when the teacher is the same search."""
    features = F.ActionFeatures(CONFIG, lookahead=depth)
    heuristic = agents.make("heuristic", config=CONFIG, depth=depth)
    assert features.plays_as(heuristic)
    for seed, ticks in ((1, 5), (2, 30), (3, 60)):
        o, m = played_rows(seed=seed, ticks=ticks)
        *_, choice = features.with_choice(o, m)
        assert (choice == heuristic.act_batch(o, m)).all()


def test_only_the_same_search_counts_as_the_features_choice():
    features = F.ActionFeatures(CONFIG, lookahead=3)
    assert not features.plays_as(agents.make("heuristic", config=CONFIG))  # depth 2
    assert not features.plays_as(agents.make("heuristic", config=CONFIG, depth=3, race=1.0))
    assert not features.plays_as(agents.make("greedy", config=CONFIG))
    assert not F.ActionFeatures(CONFIG, lookahead=False).plays_as(agents.make("heuristic", config=CONFIG))
    o, m = played_rows(seed=4, ticks=10)
    assert (F.ActionFeatures(CONFIG, lookahead=False).with_choice(o, m)[3] == -1).all()


def test_the_feature_groups_cover_every_column_exactly_once():
    columns = [c for group in F.FEATURE_GROUPS.values() for c in group]
    assert sorted(columns) == list(range(F.N_RACE_FEATURES))
    assert F.FEATURE_GROUPS["cycle"] == F.CYCLE_COLUMNS == tuple(range(F.N_FEATURES, F.N_CYCLE_FEATURES))
    assert F.FEATURE_GROUPS["race"] == F.RACE_COLUMNS == tuple(range(F.N_FOLLOW_FEATURES, F.N_RACE_FEATURES))
    opponents = tuple(range(F.N_CYCLE_FEATURES, F.N_OPPONENT_FEATURES))
    assert F.FEATURE_GROUPS["opponents"] == F.OPPONENT_COLUMNS == opponents
    assert F.FEATURE_GROUPS["lookahead"] == F.LOOKAHEAD_COLUMNS
    assert F.feature_columns(["card", "kind"]) == (F.F_WAIT, F.F_DRAW, F.F_CALL, F.F_TO_FOUNDATION, F.F_TO_WORK,
                                                   F.F_UNDER, F.F_RANK, F.F_ACE, F.F_TWO, F.F_KING)  # fmt: skip
    assert F.feature_columns("shape") == F.feature_columns(["shape", "shape"]) == F.FEATURE_GROUPS["shape"]
    assert F.feature_columns([]) == ()


def test_the_training_page_names_every_feature_group_in_order():
    page = (Path(__file__).resolve().parent.parent / "docs" / "training.md").read_text()
    section = page.split("## Feature ablations", 1)[1].split("\n## ", 1)[0]
    listed = section.split("FEATURE_GROUPS`:", 1)[1].split(", each column", 1)[0]
    assert [name.strip(" `\n") for name in listed.split(",")] == [*F.FEATURE_GROUPS]


def test_an_unknown_feature_group_is_refused_naming_the_known_ones():
    known = (
        "accepted kind, source, card, shape, foundation, exposes, nertz, lookahead, table, cycle, opponents, identity, "
        "follow, race"
    )
    with pytest.raises(ValueError, match=f"unknown feature group 'cards': {known}$"):
        F.feature_columns(["card", "cards"])
    with pytest.raises(ValueError, match=f"unknown feature group 'Card': {known}$"):
        F.ActionFeatures(CONFIG, lookahead=False, drop_features=("Card",))


def test_dropping_a_group_zeroes_exactly_its_columns_and_keeps_the_search_choice():
    o, m = played_rows(seed=6, ticks=25)
    rows, acts, full, choice = F.ActionFeatures(CONFIG, lookahead=3).with_choice(o, m)
    ablated = F.ActionFeatures(CONFIG, lookahead=3, drop_features=("card", "lookahead"))
    assert ablated.drop_features == ("card", "lookahead")
    rows2, acts2, feats, choice2 = ablated.with_choice(o, m)
    dropped = list(F.feature_columns(["card", "lookahead"]))
    kept = [c for c in range(F.N_FEATURES) if c not in dropped]
    assert (rows2 == rows).all() and (acts2 == acts).all() and (choice2 == choice).all()
    assert (feats[:, dropped] == 0).all() and np.abs(full[:, dropped]).sum() > 0
    assert (feats[:, kept] == full[:, kept]).all()


def test_the_features_check_their_rows_before_compiled_code_reads_them():
    """A mask wider than the catalogue read past it (a segfault); a float observation of 300 was
    cast to int8 and read as 44; an observation no table shows reached the kernels (``cycle``:
    numba's own slice error). Each is refused by name, as an agent's ``act_batch`` refuses it."""
    o, m = played_rows(seed=3, ticks=30)
    features = F.ActionFeatures(CONFIG, lookahead=False)
    wide = np.zeros((1, 5000), np.int8)
    wide[0, ::7] = 1
    with pytest.raises(ValueError, match="ActionFeatures was built for observations of size .* and 181 actions"):
        features(o[:1], wide)
    with pytest.raises(ValueError, match=r"index \d+ \(self.nertz_top\) is 300, outside the observation space"):
        features(np.full_like(o[:1], 300, dtype=np.float32), m[:1])
    with pytest.raises(ValueError, match=r"observations at \(0, 0\) is 0.5"):
        features(o[:1] + np.float32(0.5), m[:1])
    bad = o[:1].copy()
    bad[0, features._check.layout.slices["self.nertz_count"]] += 1  # 53 cards of one deck
    for cycle in (False, True):
        with pytest.raises(ValueError, match="self's piles hold 53 cards"):
            F.ActionFeatures(CONFIG, lookahead=False, cycle=cycle).with_choice(bad, m[:1])
    with pytest.raises(ValueError, match="masks hold 0 or 1"):
        features(o, m * 2)
    rows, acts, feats = features(o.astype(np.float32), m.astype(np.float32))  # whole floats read as the int8 rows
    np.testing.assert_array_equal(feats, features(o, m)[2])
