"""Rule options (R2 to R7): the defaults play the standard game, and every bad value raises a
ValueError that names the option and what it accepts."""

from __future__ import annotations

import copyreg
import json
import pickle
import re

import numpy as np
import pytest

from nertz_env.config import NertzConfig

BAD_VALUES = [
    ("num_players", 1, "an integer from 2 to 8"),
    ("num_players", 9, "an integer from 2 to 8"),
    ("num_players", 2.0, "an integer from 2 to 8"),
    ("num_players", "4", "an integer from 2 to 8"),
    ("num_players", True, "an integer from 2 to 8"),
    ("work_piles", 3, "an integer from 4 to 6"),
    ("work_piles", 7, "an integer from 4 to 6"),
    ("work_piles", None, "an integer from 4 to 6"),
    ("nertz_pile_size", 0, "an integer from 1 to 48"),
    ("nertz_pile_size", 49, "an integer from 1 to 48"),
    ("nertz_pile_size", 13.0, "an integer from 1 to 48"),
    ("stock_draw", 2, "3 or 1"),
    ("stock_draw", 0, "3 or 1"),
    ("stock_draw", "3", "3 or 1"),
    ("nertz_to_work", 1, "True or False"),
    ("nertz_to_work", "no", "True or False"),
    ("slide_under", None, "True or False"),
    ("auto_call", 0, "True or False"),
    ("fill_empty_from", "waste", "'any', 'nertz' or 'nertz_or_waste'"),
    ("fill_empty_from", None, "'any', 'nertz' or 'nertz_or_waste'"),
    ("block_moves", "all", "'any', 'whole' or 'none'"),
    ("block_moves", None, "'any', 'whole' or 'none'"),
    ("aces_to_work", "no", "True or False"),
    ("match_end", "lowest", "'highest', 'caller', 'spread' or 'exceed'"),
    ("match_end", 1, "'highest', 'caller', 'spread' or 'exceed'"),
    ("collision", "first", "'random' or 'seat'"),
    ("collision", "SEAT", "'random' or 'seat'"),
    ("speed", (1.0, 2.0, 3.0), "None or 4 positive numbers, one per player"),
    ("speed", (1.0, 0.0, 1.0, 1.0), "None or 4 positive numbers, one per player"),
    ("speed", (1.0, -1.0, 1.0, 1.0), "None or 4 positive numbers, one per player"),
    ("speed", (1.0, float("nan"), 1.0, 1.0), "None or 4 positive numbers, one per player"),
    ("speed", (1.0, float("inf"), 1.0, 1.0), "None or 4 positive numbers, one per player"),
    ("speed", "fast", "None or 4 positive numbers, one per player"),
    ("speed", 2.0, "None or 4 positive numbers, one per player"),
    ("speed", "1234", "None or 4 positive numbers, one per player"),  # was (1.0, 2.0, 3.0, 4.0)
    ("speed", {1.0: 9, 2.0: 9, 3.0: 9, 4.0: 9}, "as a list, tuple or 1-D array (not a str, a dict or bools)"),
    ("speed", (True,) * 4, "None or 4 positive numbers, one per player"),  # was (1.0,) * 4
    ("speed", np.ones((1, 4)), "None or 4 positive numbers, one per player"),
    ("fill_empty_from", np.array(["any"]), "'any', 'nertz' or 'nertz_or_waste' (given a ndarray, not a str)"),
    ("block_moves", ["any"], "'any', 'whole' or 'none' (given a list, not a str)"),
    ("stall_ticks", np.array(["auto"]), "'auto' or an integer >= 1"),  # was packed as "auto"
    ("reward", np.array(["dense"]), "'dense', 'sparse', 'relative' or 'lead'"),
    ("episode", np.array(["match"]), "'hand' or 'match'"),
    ("nertz_penalty", -1, "an integer >= 0"),
    ("nertz_penalty", 1.5, "an integer >= 0"),
    ("call_bonus", -10, "an integer >= 0"),
    ("call_bonus", False, "an integer >= 0"),
    ("stall_ticks", 0, "'auto' or an integer >= 1"),
    ("stall_ticks", "never", "'auto' or an integer >= 1"),
    ("stall_ticks", 2.5, "'auto' or an integer >= 1"),
    ("max_stall_rotations", -1, "None or an integer >= 0"),
    ("max_stall_rotations", "3", "None or an integer >= 0"),
    ("hands", 0, "None or an integer from 1 to 127"),
    ("hands", 128, "None or an integer from 1 to 127"),
    ("hands", 2**63, "None or an integer from 1 to 127"),  # a hypothesis find: once an OverflowError
    ("max_cycles", 0, "an integer >= 1"),
    ("max_cycles", 100.0, "an integer >= 1"),
    ("reward", "shaped", "'dense', 'sparse', 'relative' or 'lead'"),
]


@pytest.mark.parametrize(("option", "value", "accepted"), BAD_VALUES)
def test_a_bad_value_names_the_option_the_value_and_what_is_accepted(option, value, accepted):
    with pytest.raises(ValueError) as info:
        NertzConfig(**{option: value})
    message = str(info.value)
    assert option in message
    assert repr(value) in message or option == "speed"
    assert accepted in message


def test_nertz_pile_size_bound_follows_work_piles():
    """R2: the Nertz pile and the work piles come out of one 52-card deck."""
    assert NertzConfig(work_piles=6, nertz_pile_size=46).nertz_pile_size == 46
    with pytest.raises(ValueError, match="nertz_pile_size.*from 1 to 46"):
        NertzConfig(work_piles=6, nertz_pile_size=47)


def test_speed_needs_collision_random():
    """R6: speed weights only the random draw."""
    with pytest.raises(ValueError, match=re.escape("speed") + ".*collision='random'"):
        NertzConfig(num_players=2, collision="seat", speed=(1.0, 2.0))
    assert NertzConfig(num_players=2, speed=[1, 2]).speed == (1.0, 2.0)
    assert NertzConfig(num_players=2, speed=np.array([1, 2.5], np.float32)).speed == (1.0, 2.5)  # a 1-D array


def test_replace_and_preset_name_a_bad_name_and_the_accepted_ones():
    with pytest.raises(ValueError, match="unknown option\\(s\\) foo; known options: aces_to_work, .*work_piles"):
        NertzConfig().replace(foo=1)  # was dataclasses' TypeError
    with pytest.raises(ValueError, match="unknown option\\(s\\) _packed"):
        NertzConfig().replace(_packed=1)
    with pytest.raises(ValueError, match=re.escape("invalid preset=['x']: accepted 'standard', 'snerts'")):
        NertzConfig.from_kwargs(preset=["x"])  # was TypeError: unhashable type
    assert NertzConfig().replace(stock_draw=1).stock_draw == 1


class _Pickled:
    """Pickles as a NertzConfig whose state is ``state``: what another version of the class wrote."""

    def __init__(self, state):
        self.state = state

    def __reduce__(self):
        return copyreg._reconstructor, (NertzConfig, object, None), self.state


def test_unpickling_refuses_an_unknown_or_missing_field():
    state = NertzConfig(num_players=2).__getstate__()
    assert pickle.loads(pickle.dumps(_Pickled(state))) == NertzConfig(num_players=2)
    with pytest.raises(ValueError, match="cannot unpickle a NertzConfig with unknown field\\(s\\) jokers: the pickled "
                       "options must be exactly num_players, "):  # fmt: skip
        pickle.loads(pickle.dumps(_Pickled({**state, "jokers": 2})))  # was set as a stray attribute
    del state["match_end"]
    with pytest.raises(ValueError, match="missing field\\(s\\) match_end"):
        pickle.loads(pickle.dumps(_Pickled(state)))  # was silently the class default


def test_replace_validates_too():
    with pytest.raises(ValueError, match="num_players"):
        NertzConfig().replace(num_players=9)


@pytest.mark.parametrize(
    ("items", "message"),
    [
        (["stock_draw=1", "stock_draw=3"], "rule option stock_draw is given twice (stock_draw=1, stock_draw=3)"),
        (["preset=nerds", " preset = standard"], "rule option preset is given twice"),
        (["=3"], "rule option '=3' has no name; rule options are key=value"),
        (["stock_draw"], "rule options are key=value, got 'stock_draw'"),
    ],
)
def test_command_line_rule_options_refuse_a_repeated_or_nameless_key(items, message):
    """``--rules`` read whole: a key given twice would silently keep the last value."""
    from nertz_env.options import parse_rule_options

    with pytest.raises(ValueError, match=re.escape(message)):
        parse_rule_options(items)
    assert parse_rule_options([" stock_draw = 1", "speed=1,2"]) == {"stock_draw": 1, "speed": (1, 2)}


@pytest.mark.parametrize("name", ["colour", "num_player", "jokers"])
def test_an_unknown_option_name_raises(name):
    with pytest.raises(ValueError) as info:
        NertzConfig.from_kwargs(num_players=2, **{name: 1})
    assert name in str(info.value) and "num_players" in str(info.value)  # lists the known ones
    with pytest.raises(TypeError, match=name):
        NertzConfig(**{name: 1})


def test_defaults_play_the_standard_game():
    """R2 to R7 defaults: 13-card Nertz pile, 4 work piles, draw 3, Nertz to work, any card fills a
    space, slide-under, calling is a choice, random races, penalty 2, no bonus, 2000 ticks."""
    c = NertzConfig()
    assert (c.num_players, c.nertz_pile_size, c.work_piles, c.stock_draw) == (4, 13, 4, 3)
    assert (c.nertz_to_work, c.fill_empty_from, c.slide_under, c.auto_call) == (True, "any", True, False)
    assert (c.collision, c.speed, c.nertz_penalty, c.call_bonus) == ("random", None, 2, 0)
    assert (c.stall_ticks, c.max_cycles) == ("auto", 2000)
    assert (c.block_moves, c.aces_to_work, c.match_end) == ("any", True, "highest")  # R4.3, R8


def test_match_end_other_than_highest_plays_to_the_target_not_a_number_of_hands():
    """R8: ``hands=N`` ends a match by its count, so a match end that reads the target needs hands=None."""
    with pytest.raises(ValueError, match=re.escape("match_end='caller'") + ".*hands=3.*hands=None"):
        NertzConfig.from_kwargs(preset="snerts", episode="match", hands=3)
    assert NertzConfig.from_kwargs(preset="snerts", episode="match", hands=3, match_end="highest").hands == 3


def test_a_match_cap_keeps_every_total_the_observation_can_hold_also_with_builds():
    """R8 totals are observed exactly up to +-12799; R4.8 builds let a Nertz pile grow past its
    deal to all 52 places, so the worst hand loses nertz_penalty x 52 points, not x 13."""
    NertzConfig(episode="match", nertz_penalty=9)  # 100 hands x 9 x 13 = 11700: held
    with pytest.raises(ValueError, match=r"max_hands=100.*largest match total the observation holds"):
        NertzConfig(episode="match", nertz_penalty=3, nertz_builds=True)  # 100 x 3 x 52 = 15600
    assert NertzConfig(episode="match", nertz_penalty=3, nertz_builds=True, max_hands=82).max_hands == 82
    assert NertzConfig.from_kwargs(preset="nerts", episode="match").nertz_builds  # 100 x 2 x 52 = 10400


@pytest.mark.parametrize(("stock_draw", "given", "rotations"), [(3, None, 3), (1, None, 1), (3, 0, 0), (1, 5, 5)])
def test_r5_max_stall_rotations_default_depends_on_stock_draw(stock_draw, given, rotations):
    assert NertzConfig(stock_draw=stock_draw, max_stall_rotations=given).stall_rotations == rotations


def test_numpy_integers_are_accepted_and_a_config_survives_pickle():
    c = NertzConfig(num_players=np.int64(3), work_piles=np.int32(5), collision="random", speed=(1, 2, 3))
    assert c.num_players == 3
    again = pickle.loads(pickle.dumps(c))
    assert again == c and np.array_equal(again.packed, c.packed)
    assert NertzConfig.from_kwargs(**c.to_dict()) == c
    # kept as Python ints: a config writes to JSON, and int8 arithmetic cannot wrap (1000 * int8 48)
    small = NertzConfig(nertz_pile_size=np.int8(48), nertz_penalty=np.uint16(1000), max_cycles=np.int64(9))
    assert all(type(getattr(small, k)) is int for k in ("nertz_pile_size", "nertz_penalty", "max_cycles"))
    assert json.loads(json.dumps(small.to_dict()))["nertz_pile_size"] == 48
    assert small.nertz_penalty * small.nertz_pile_size == 48000


def test_numpy_bools_are_kept_as_python_bools_so_a_config_writes_to_json():
    """``NertzConfig(turn_based=np.bool_(True))`` kept the numpy bool: ``json.dumps(config.to_dict())``
    and a recording's ``to_json()`` failed ("Object of type bool is not JSON serializable")."""
    from nertz_env.game import Game
    from nertz_env.replay import start_recording

    flags = ("nertz_to_work", "slide_under", "auto_call", "turn_based", "nertz_builds", "partners", "aces_to_work")
    config = NertzConfig(**dict.fromkeys(flags, np.bool_(True)))
    assert all(type(getattr(config, k)) is bool and getattr(config, k) for k in flags)
    assert json.loads(json.dumps(config.to_dict()))["turn_based"] is True
    assert config == NertzConfig(**dict.fromkeys(flags, True)) and repr(config).count("=True") == len(flags)
    off = NertzConfig(turn_based=np.bool_(False), slide_under=np.False_)
    assert off.turn_based is False and off.slide_under is False
    game = Game(off)
    game.reset(seed=0)
    assert json.loads(start_recording(game).to_json())["config"]["turn_based"] is False


def test_r3_move_ticks_given_as_pairs_takes_each_kind_once():
    """``move_ticks=[("draw", 2), ("draw", 3)]`` was accepted, the last pair silently winning."""
    with pytest.raises(ValueError, match=re.escape("invalid move_ticks=[('draw', 2), ('draw', 3)]: accepted None, "
                                                   "an integer from 1 to 64, or a mapping")) as info:
        NertzConfig(move_ticks=[("draw", 2), ("draw", 3)])
    assert str(info.value).endswith("(kind(s) given twice: draw; give each kind once)")
    with pytest.raises(ValueError, match=re.escape("given twice: call, draw;")):
        NertzConfig(move_ticks=(("call", 2), ("draw", 2), ("call", 2), ("draw", 2)))
    timed = NertzConfig(move_ticks=[("draw", 2), ("call", 3)])
    assert timed.move_ticks[:2] == (("draw", 2), ("call", 3))
    assert NertzConfig(move_ticks=timed.move_ticks) == timed == NertzConfig(move_ticks={"call": 3, "draw": 2})
