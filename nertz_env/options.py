"""The keyword options every Nertz env takes, typed for IDEs and type checkers (PEP 692).

``RuleOptions`` lists the rule options of ``NertzConfig`` (R2 to R8) and ``preset``, all but
``num_players``, which every env constructor names as a parameter of its own (PEP 692 forbids a
keyword in both); the constructors take them as ``**rules: Unpack[RuleOptions]``, so an editor
completes and checks each one. ``NertzConfig.from_kwargs`` validates them at run time (a bad
value raises a ``ValueError`` naming the option, the value and what is accepted).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Literal, TypedDict

import numpy as np

from nertz_env.config import NertzConfig

__all__ = [
    "INPUT_RULES", "OTHER_RULES", "PLAY_RULES", "ObservationDtype", "RuleOptions", "ascii_float", "ascii_int",
    "env_config", "flag", "illegal_action_penalty", "info_action_mask", "observation_dtype", "parse_rule_options",
    "parse_value", "reset_decks", "rules_that_differ",
]  # fmt: skip

# NertzConfig's options in three groups (tests/test_agent_doors.py checks that they hold every option
# once). The rules a network's input sizes depend on:
INPUT_RULES = ("num_players", "work_piles", "slide_under")
# The rules that change how a hand plays or scores but not the inputs' sizes:
PLAY_RULES = ("nertz_pile_size", "stock_draw", "nertz_to_work", "block_moves", "aces_to_work", "fill_empty_from",
              "auto_call", "collision", "speed", "nertz_penalty", "call_bonus", "turn_based", "nertz_builds",
              "partners", "move_ticks", "episode")  # fmt: skip
# The rest: the learner's reward and when a hand or match is cut, not a hand's play.
OTHER_RULES = ("stall_ticks", "max_stall_rotations", "max_cycles", "reward", "target_score", "hands", "max_hands",
               "match_end")  # fmt: skip


def rules_that_differ(a: NertzConfig, b: NertzConfig, names: tuple[str, ...]) -> tuple[str, ...]:
    """The options of ``names`` (such as ``INPUT_RULES + PLAY_RULES``) on which ``a`` and ``b`` differ."""
    return tuple(k for k in names if getattr(a, k) != getattr(b, k))


ObservationDtype = Literal["int8", "float32"] | type[np.int8] | type[np.float32]


class RuleOptions(TypedDict, total=False):
    """The rule options of ``nertz_env.NertzConfig`` (see its docstring and RULES.md) but
    ``num_players``, a parameter of each constructor itself."""

    preset: Literal["standard", "snerts", "nerds", "nerts", "pounce", "racing_demon", "family"]
    nertz_pile_size: int
    work_piles: int
    stock_draw: Literal[1, 3]
    nertz_to_work: bool
    block_moves: Literal["any", "whole", "none"]
    aces_to_work: bool
    fill_empty_from: Literal["any", "nertz", "nertz_or_waste"]
    slide_under: bool
    auto_call: bool
    collision: Literal["random", "seat"]
    speed: Sequence[float] | None
    nertz_penalty: int
    call_bonus: int
    stall_ticks: int | Literal["auto"]
    max_stall_rotations: int | None
    max_cycles: int
    reward: Literal["dense", "sparse", "relative", "lead"]
    turn_based: bool
    nertz_builds: bool
    partners: bool
    move_ticks: int | Mapping[str, int] | None
    episode: Literal["hand", "match"]
    target_score: int
    hands: int | None
    max_hands: int
    match_end: Literal["highest", "caller", "spread", "exceed"]


def observation_dtype(value: object) -> type[np.int8] | type[np.float32]:
    """``observation_dtype`` as a numpy type: int8 (the default, exact and compact) or float32
    (the same values, for models whose weights are float32), named by a string, the numpy type or
    its ``np.dtype``; an array that only compares equal to a name (``np.array(['int8'])``) is refused,
    naming its type, as ``config_values.check_choice`` refuses one for a rule option."""
    for dtype in (np.int8, np.float32):
        named = isinstance(value, str) and value == np.dtype(dtype).name
        if value is dtype or named or (isinstance(value, np.dtype) and value == dtype):
            return dtype
    plain = value is None or isinstance(value, (str, type, np.dtype))
    kind = "" if plain else f" (given a {type(value).__name__}, not a str)"
    raise ValueError(f"invalid observation_dtype={value!r}: accepted 'int8' (default) or 'float32'{kind}")


MOST_PENALTY = 1000.0  # as nertz_penalty and call_bonus (R7): rewards stay far inside float32


def illegal_action_penalty(value: object) -> float:
    """The env option ``illegal_action_penalty``: a number from -1000 to 1000 (not a bool), else a
    ``ValueError`` naming the value and what is accepted."""
    number = (int, float, np.integer, np.floating)
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, number) or not abs(value) <= MOST_PENALTY:
        raise ValueError(
            f"invalid illegal_action_penalty={value!r}: accepted a number from {-MOST_PENALTY:g} to {MOST_PENALTY:g}"
        )
    return float(value)


def env_config(config: Any, num_players: Any, rules: Mapping[str, Any]) -> NertzConfig:
    """An env's rules: ``config`` (a ``NertzConfig``) or the config of ``num_players`` and the rule
    options ``rules``, not both; a ``config`` of another type (a dict among them) is a ``TypeError``."""
    if config is None:
        return NertzConfig.from_kwargs(**rules, **({} if num_players is None else {"num_players": num_players}))
    if not isinstance(config, NertzConfig):
        raise TypeError(f"invalid config={config!r}: accepted None or a NertzConfig, such as NertzConfig("
                        f"num_players=2), not a {type(config).__name__} (or give the rule options as keywords)")
    if rules or (num_players is not None and num_players != config.num_players):
        raise ValueError("pass either config=NertzConfig(...) or rule options, not both")
    return config


def flag(name: str, value: object) -> bool:
    """An env option that is on or off (``strict``, ``record``): a bool (numpy's too), else a
    ``ValueError``; a truthy ``'no'`` or ``1.0`` is no answer."""
    if not isinstance(value, (bool, np.bool_)):
        raise ValueError(f"invalid {name}={value!r}: accepted True or False")
    return bool(value)


def info_action_mask(value: object) -> bool | Literal["only"]:
    """The env option ``info_action_mask``: False, True or ``"only"`` (not 1.0 or 0)."""
    if isinstance(value, str) and value == "only":
        return "only"
    if not isinstance(value, (bool, np.bool_)):
        raise ValueError(f"invalid info_action_mask={value!r}: accepted False, True or 'only'")
    return bool(value)


def reset_decks(decks: Any) -> Any:
    """The reset option ``decks`` (R10) as ``Game.reset`` reads it: a 2-D array (of card codes or
    names, one row per player) becomes its list of rows; an array of another shape is a ``ValueError``."""
    if not isinstance(decks, np.ndarray):
        return decks
    if decks.ndim != 2:
        raise ValueError(f"decks as an array must be 2-D, one row of 52 cards per player (R10), got shape "
                         f"{decks.shape}; or give a list of decks")  # fmt: skip
    return list(decks)


def ascii_int(text: str) -> int:
    """``int(text)`` of a decimal integer written in ASCII (``[+-]?[0-9]+``, blanks around it
    allowed), else a ``ValueError``: Python's ``int`` also reads other scripts' digits (``'３'``,
    ``'٣'``) and underscores (``'1_0'`` is 10), which no command line or spec means as a number."""
    if not isinstance(text, str) or not text.isascii() or "_" in text:
        raise ValueError(f"not an integer in ASCII digits: {text!r}")
    return int(text)


def ascii_float(text: str) -> float:
    """``float(text)`` of a number written in ASCII (``0.5``, ``1e-3``, ``-2``; ``inf`` and ``nan``
    as Python writes them), else a ``ValueError``: no other scripts' digits, no underscores."""
    if not isinstance(text, str) or not text.isascii() or "_" in text:
        raise ValueError(f"not a number in ASCII digits: {text!r}")
    return float(text)


def parse_value(text: str) -> Any:
    """A command-line value: int, float (each in ASCII digits, ``ascii_int``, ``ascii_float``),
    true/false, none, else the string itself (``'３'`` and ``'1_0'`` stay strings, which the option's
    own check refuses by name)."""
    low = text.lower()
    if low in ("true", "false"):
        return low == "true"
    if low == "none":
        return None
    for cast in (ascii_int, ascii_float):
        try:
            return cast(text)
        except ValueError:
            pass
    return text


def parse_rule_options(items: Any) -> dict[str, Any]:
    """``["stock_draw=1", "speed=1,2"]`` -> NertzConfig options (comma lists become tuples). An
    item without ``=`` or without a name, and a key given twice (the last would silently win), are
    ``ValueError``s naming the items."""
    out: dict[str, Any] = {}
    given: dict[str, str] = {}
    for item in items:
        key, eq, value = item.partition("=")
        key, value = key.strip(), value.strip()
        if not eq:
            raise ValueError(f"rule options are key=value, got {item!r}")
        if not key:
            raise ValueError(f"rule option {item!r} has no name; rule options are key=value")
        if key in given:
            raise ValueError(f"rule option {key} is given twice ({given[key]}, {item.strip()}): give it once")
        given[key] = item.strip()
        out[key] = tuple(parse_value(v) for v in value.split(",")) if "," in value else parse_value(value)
    return out
