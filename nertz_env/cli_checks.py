"""Argument checks shared by the ``nertz`` commands: every value is checked before any work
starts, and a user's mistake is one line on stderr with exit code 2, never a traceback.

    nertz eval: error: argument --hands: expected an integer from 1 to 1000000, got '0'
"""

from __future__ import annotations

import argparse
import importlib.util
import os
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, NoReturn

from nertz_env.checks import check_seed
from nertz_env.config import NertzConfig
from nertz_env.options import ascii_float, ascii_int, parse_rule_options

# What a plain ``pip install nertz-env`` lacks, by import name: the extra that brings it.
EXTRAS = {"torch": "training", "stable_baselines3": "training", "sb3_contrib": "training", "PIL": "render",
          "ray": "rllib"}  # fmt: skip
# The most deals (or matches) one command plays, and the most tables stepped together: past them a
# run overflows an index or exhausts memory (every hand's record is kept).
MOST_DEALS, MOST_BATCH = 1_000_000, 65536
SEATS_FROM = "--agents and --players (a table seats --players K, else one per --agents name; more names make a pool)"
# Errors of the user's making that the commands report in one line: bad values, missing files,
# missing extras.
USER_ERRORS = (ValueError, FileNotFoundError, IsADirectoryError, NotADirectoryError, PermissionError, ImportError)


class _StoreOnce(argparse._StoreAction):
    """argparse's ``store``, except that an option given twice is an error: argparse would keep the
    last value (``--hands 2 --hands 3``) or list (``--rules a=1 --rules b=2``) and silently drop the
    first. A parser made with ``last_wins=True`` (the trainers', whose tools put their own flags
    before the user's and take the last) refuses only a list given twice."""

    def __call__(self, parser, namespace, values, option_string=None) -> None:
        seen = getattr(parser, "_given", None)
        listed = self.nargs in ("*", "+")
        if seen is not None and self.option_strings and (listed or not getattr(parser, "last_wins", False)):
            if self.dest in seen:
                how = f"list would replace the first): give all its values after one {option_string}" if listed else (
                    "value would replace the first): give it once")
                raise argparse.ArgumentError(self, f"given twice (the second {how}")
            seen.add(self.dest)
        super().__call__(parser, namespace, values, option_string)


class DefaultsHelp(argparse.HelpFormatter):
    """``--help`` gives an option's default where it has one worth saying (not None, False or an
    empty list) and its text does not already say it."""

    def _get_help_string(self, action: argparse.Action) -> str | None:
        text = action.help or ""
        default = action.default
        empty = default is None or default is False or default is argparse.SUPPRESS or default in ([], ())
        if not action.option_strings or empty or "default" in text.lower():
            return action.help
        return f"{text} (default: %(default)s)"


class Parser(argparse.ArgumentParser):
    """``argparse`` whose errors are one line, ``PROG: error: MESSAGE``, with exit code 2, and
    where an option may be given once (``_StoreOnce``; with ``last_wins``, a list option once).
    ``--help`` gives the defaults (``DefaultsHelp``)."""

    def __init__(self, *args: Any, last_wins: bool = False, **kwargs: Any) -> None:
        kwargs.setdefault("formatter_class", DefaultsHelp)
        super().__init__(*args, **kwargs)
        self.last_wins = last_wins
        self.register("action", None, _StoreOnce)
        self.register("action", "store", _StoreOnce)

    def parse_known_args(self, args=None, namespace=None):
        self._given: set[str] = set()
        return super().parse_known_args(args, namespace)

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: error: {message}\n")


def _got(text: str) -> str:
    """``text`` as an error quotes it, with a word on how numbers are written when it has other
    scripts' digits or underscores (``'５'``, ``'1_0'``), which Python's ``int`` would have read."""
    if text.isascii() and "_" not in text:
        return repr(text)
    return f"{text!r} (numbers are written in ASCII digits 0-9, without '_')"


def at_least(minimum: int, most: int | None = None):
    """An argparse type: an integer in ASCII digits (``options.ascii_int``) >= ``minimum`` (and <=
    ``most`` when given: a count past it would overflow or exhaust memory as a traceback, not a message)."""
    accepted = f"an integer >= {minimum}" if most is None else f"an integer from {minimum} to {most}"

    def parse(text: str) -> int:
        try:
            value = ascii_int(text)
        except ValueError:
            value = None
        if value is None or value < minimum or (most is not None and value > most):
            raise argparse.ArgumentTypeError(f"expected {accepted}, got {_got(text)}")
        return value

    parse.__name__ = accepted
    return parse


def ascii_number(cast: type[int] | type[float]) -> Callable[[str], int | float]:
    """``int`` or ``float`` as an argparse type that reads ASCII digits only (``ascii_int``,
    ``ascii_float``: not ``'３'`` or ``'1_0'``); named as the builtin, so that a bad value still
    reads ``invalid int value: 'x'``."""
    read = {int: ascii_int, float: ascii_float}[cast]

    def parse(text: str) -> int | float:
        return read(text)

    parse.__name__ = cast.__name__
    return parse


def integer(text: str) -> int:
    """An argparse type: an integer in ASCII digits, whose range the command checks where it uses it
    (``--target-score`` and ``--max-match-hands``: by ``NertzConfig``'s own rules for them)."""
    try:
        return ascii_int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected an integer, got {_got(text)}") from None


def seed_number(text: str) -> int:
    """An argparse type: a seed as the library takes one (``checks.check_seed``), an integer from 0
    to 2**128 - 1 in ASCII digits."""
    try:
        return check_seed(ascii_int(text), allow_none=False)
    except (TypeError, ValueError):
        raise argparse.ArgumentTypeError(f"expected an integer from 0 to 2**128 - 1, got {_got(text)}") from None


def number_from(minimum: float, inclusive: bool = True, most: float | None = None):
    """An argparse type: a finite number in ASCII digits (``options.ascii_float``) >= ``minimum``
    (> ``minimum`` when not ``inclusive``; <= ``most`` when given)."""
    accepted = f"a number {'>=' if inclusive else '>'} {minimum}"
    accepted = accepted if most is None else f"a number from {minimum} to {most}"

    def parse(text: str) -> float:
        try:
            value = ascii_float(text)
        except ValueError:
            value = float("nan")
        too_big = value == float("inf") or (most is not None and value > most)
        if not (value >= minimum if inclusive else value > minimum) or too_big:
            raise argparse.ArgumentTypeError(f"expected {accepted}, got {_got(text)}")
        return value

    parse.__name__ = "number"
    return parse


def output_file(*suffixes: str):
    """An argparse type: a path whose folder exists and is writable (and, when ``suffixes`` are
    given, that ends in one of them), so a long run never fails at its last step."""

    def parse(text: str) -> Path:
        path = Path(text)
        if suffixes and path.suffix.lower() not in suffixes:
            raise argparse.ArgumentTypeError(f"{text!r} must end in {' or '.join(suffixes)}")
        folder = path.parent if str(path.parent) else Path(".")
        if not folder.is_dir():
            raise argparse.ArgumentTypeError(f"the folder {str(folder)!r} of {text!r} does not exist")
        if path.is_dir():
            raise argparse.ArgumentTypeError(f"{text!r} is a folder, not a file")
        if not os.access(folder, os.W_OK):
            raise argparse.ArgumentTypeError(f"the folder {str(folder)!r} of {text!r} is not writable")
        return path

    parse.__name__ = "output file"
    return parse


def rule_config(parser: Parser, items: Sequence[str], forbid: dict[str, str] | None = None, derived: str = "",
                **base: Any) -> NertzConfig:  # fmt: skip
    """``--rules KEY=VALUE ...`` as a ``NertzConfig`` (its own validator judges every value), on
    top of ``base``; an option in ``forbid`` is one the command sets itself (the value says how).
    ``derived`` names the flags ``base`` comes from, in the error a value of it gets."""
    try:
        rules = parse_rule_options(items)
    except ValueError as e:
        parser.error(f"argument --rules: {e}")
    for key, how in (forbid or {}).items():
        if key in rules:
            parser.error(f"argument --rules: {key} is not a rule option here; {how}")
    try:
        NertzConfig.from_kwargs(**base)
    except ValueError as e:  # a value the command derives from its own flags, e.g. --players
        parser.error(f"{derived}: {e}" if derived else str(e))
    try:
        return NertzConfig.from_kwargs(**{**base, **rules})
    except ValueError as e:
        parser.error(f"argument --rules: {e}")


def require(parser: Parser, *modules: str, what: str) -> None:
    """Stop with a one-line hint naming the extra to install when a module ``what`` needs is absent."""
    for module in modules:
        if importlib.util.find_spec(module) is None:
            hint = f"pip install 'nertz-env[{EXTRAS[module]}]'"
            if module == "torch":
                hint += " (CPU-only machines: install torch from https://download.pytorch.org/whl/cpu first)"
            parser.error(f"{what} needs {module}, which is not installed: {hint}")


def json_kind(value: Any) -> str:
    """The name of a value read from a JSON file, for errors: ``null``, or its Python type's name."""
    return "null" if value is None else type(value).__name__
