"""The keyword options every Nertz env takes, typed for IDEs and type checkers (PEP 692).

``RuleOptions`` lists the rule options of ``NertzConfig`` (R2 to R8) and ``preset``; the env
constructors take them as ``**rules: Unpack[RuleOptions]``, so an editor completes and checks
each one. ``NertzConfig.from_kwargs`` validates them at run time (a bad value raises a
``ValueError`` naming the option, the value and what is accepted).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Literal, TypedDict

import numpy as np

__all__ = [
    "ObservationDtype", "RuleOptions", "illegal_action_penalty", "observation_dtype", "parse_rule_options",
    "parse_value",
]  # fmt: skip

ObservationDtype = Literal["int8", "float32"] | type[np.int8] | type[np.float32]


class RuleOptions(TypedDict, total=False):
    """The rule options of ``nertz_env.NertzConfig`` (see its docstring and RULES.md)."""

    preset: Literal["standard", "snerts", "nerds", "nerts", "pounce", "racing_demon", "family"]
    num_players: int
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
    (the same values, for models whose weights are float32)."""
    for dtype in (np.int8, np.float32):
        if value is dtype or value == np.dtype(dtype).name or (isinstance(value, np.dtype) and value == dtype):
            return dtype
    raise ValueError(f"invalid observation_dtype={value!r}: accepted 'int8' (default) or 'float32'")


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


def parse_value(text: str) -> Any:
    """A command-line value: int, float, true/false, none, else the string itself."""
    low = text.lower()
    if low in ("true", "false"):
        return low == "true"
    if low == "none":
        return None
    for cast in (int, float):
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
