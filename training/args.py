"""Command lines from dataclasses: every field is a flag, and its ``help`` metadata is the text
``--help`` prints (the CleanRL ``Args`` style, without a parser dependency)."""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import json
import math
import sys
import typing
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any, ClassVar, Protocol, TypeVar

from nertz_env.cli_checks import Parser, ascii_number
from nertz_env.config import NertzConfig
from nertz_env.options import parse_rule_options


class _Dataclass(Protocol):
    __dataclass_fields__: ClassVar[dict[str, dataclasses.Field[Any]]]


T = TypeVar("T", bound=_Dataclass)  # a dataclass of flags


def arg(default: Any, help: str, **kwargs: Any) -> Any:  # noqa: A002 - mirrors argparse
    """A dataclass field with its ``--help`` text."""
    if isinstance(default, (list, dict)):
        return dataclasses.field(default_factory=lambda: type(default)(default), metadata={"help": help, **kwargs})
    return dataclasses.field(default=default, metadata={"help": help, **kwargs})


_PROG: list[str] = []  # the command's name while ``named`` runs it (``nertz train selfplay``)


def prog() -> str:
    """The name a trainer's errors and ``--help`` give the command: ``nertz train ...`` inside
    ``named``, else the script's (``train_selfplay.py``)."""
    return _PROG[-1] if _PROG else Path(sys.argv[0]).name


@contextlib.contextmanager
def named(name: str) -> Iterator[None]:
    """Run a trainer's ``main`` as the command ``name`` (its errors begin ``name: error:``)."""
    _PROG.append(name)
    try:
        yield
    finally:
        _PROG.pop()


@contextlib.contextmanager
def flag_errors(as_command: bool = True) -> Iterator[None]:
    """A run's set-up, where a ``ValueError`` is the user's input (a flag out of range, an agent
    spec, a checkpoint that does not fit). ``as_command`` (the command line): reported as argparse
    reports a bad flag (``cli_checks.Parser``: ``prog: error: message`` on stderr, exit status 2),
    not as a traceback; else raised as it is (a call from Python). A file a flag names that is not
    there (``FileNotFoundError``: a policy, a checkpoint) is the user's input too."""
    try:
        yield
    except (ValueError, FileNotFoundError) as err:
        if not as_command:
            raise
        Parser(prog=prog()).error(str(err))


# The numbers the PPO trainers share, each with the values it accepts (``check_numbers``).
NUMBER_RANGES: dict[str, tuple[typing.Callable[[float], bool], str]] = {
    "learning_rate": (lambda v: v > 0, "a finite number > 0"),
    "gamma": (lambda v: 0 < v <= 1, "a number in (0, 1]"),
    "gae_lambda": (lambda v: 0 <= v <= 1, "a number in [0, 1]"),
    "clip_coef": (lambda v: v > 0, "a finite number > 0"),
    "clip": (lambda v: v > 0, "a finite number > 0"),
    "ent_coef": (lambda v: v >= 0, "a finite number >= 0"),
    "vf_coef": (lambda v: v >= 0, "a finite number >= 0"),
    "bc_coef": (lambda v: v >= 0, "a finite number >= 0"),
    "max_grad_norm": (lambda v: v > 0, "a finite number > 0"),
    "target_kl": (lambda v: v >= 0, "a finite number >= 0 (0: never stop early)"),
}


def check_counts(args: Any, names: Sequence[str], minimum: int) -> None:
    """Each field of ``args`` in ``names`` is an integer >= ``minimum``, or a ``ValueError`` names
    the flag, the value given and the values accepted."""
    for name in names:
        if getattr(args, name) < minimum:
            raise ValueError(f"--{name.replace('_', '-')} {getattr(args, name)}: accepted an integer >= {minimum}")


def check_numbers(args: Any) -> None:
    """Each field of ``args`` named in ``NUMBER_RANGES`` is finite and in its range, or a
    ``ValueError`` names the flag, the value given and the values accepted."""
    for name, (accepts, accepted) in NUMBER_RANGES.items():
        value = getattr(args, name, None)
        if value is not None and not (math.isfinite(value) and accepts(value)):
            raise ValueError(f"--{name.replace('_', '-')} {value}: accepted {accepted}")


def rules_config(num_players: int, reward: str, rules: Sequence[str]) -> NertzConfig:
    """A trainer's games: ``NertzConfig`` from its ``--num-players``, ``--reward`` and ``--rules
    KEY=VALUE ...``. An item without ``=``, an unknown option, an option its own flag sets or a
    value the config refuses is a ``ValueError`` that names ``--rules`` (and, from the config, the
    options or values accepted)."""
    NertzConfig.from_kwargs(num_players=num_players, reward=reward)  # their own flags' errors first
    try:
        options = parse_rule_options(rules)
        for key in ("num_players", "reward"):
            if key in options:
                raise ValueError(f"{key} is set by --{key.replace('_', '-')}, not --rules")
        return NertzConfig.from_kwargs(num_players=num_players, reward=reward, **options)
    except ValueError as err:
        raise ValueError(f"--rules {' '.join(rules)}: {err}") from None


# What the trainers' seeds and sizes may be: numpy's and SB3's global seed is 32 bits, and wider
# layers or more games than these fail in torch or numpy (or exhaust memory) as a traceback.
MOST_SEED, MOST_ENVS, MOST_WIDTH = 2**32 - 1, 65536, 4096


def check_seed_and_sizes(args: Any, widths: Sequence[str]) -> None:
    """``--seed``, ``--num-envs`` and the layer widths ``widths`` (an int or a tuple each) in range,
    or a ``ValueError`` naming the flag, the value given and the values accepted."""
    if not 0 <= args.seed <= MOST_SEED:
        raise ValueError(f"--seed {args.seed}: accepted an integer from 0 to {MOST_SEED}")
    if not 1 <= args.num_envs <= MOST_ENVS:
        raise ValueError(f"--num-envs {args.num_envs}: accepted an integer from 1 to {MOST_ENVS}")
    for name in widths:
        value = getattr(args, name)
        if not all(1 <= v <= MOST_WIDTH for v in (value if isinstance(value, tuple) else (value,))):
            raise ValueError(f"--{name.replace('_', '-')} {value}: accepted integers from 1 to {MOST_WIDTH}")


def make_run_dir(run_dir: Path) -> None:
    """Make the run directory, or a ``ValueError`` naming it (under a file, not writable, ...)."""
    try:
        run_dir.mkdir(parents=True, exist_ok=True)
    except OSError as err:
        raise ValueError(f"cannot make the run directory {run_dir}: {err.strerror or err}") from None


def _bool(text: str) -> bool:
    if text.lower() in ("1", "true", "yes", "on"):
        return True
    if text.lower() in ("0", "false", "no", "off"):
        return False
    raise argparse.ArgumentTypeError(f"expected true or false, got {text!r}")


def parse(cls: type[T], argv: Sequence[str] | None = None, description: str | None = None) -> T:
    """Parse ``argv`` into ``cls``; an unknown flag or a bad value exits with one line (status 2)."""
    return parse_given(cls, argv, description)[0]


def parse_given(
    cls: type[T], argv: Sequence[str] | None = None, description: str | None = None
) -> tuple[T, set[str]]:
    """``parse``, and the names of the fields the command line gave explicitly."""
    values = _parser(cls, description).parse_args(argv)  # first: its --help gives every flag's default
    given = set(vars(_parser(cls, description, argparse.SUPPRESS).parse_args(argv)))
    return _build(cls, values), given


def resume_args(
    cls: type[T], saved: dict[str, Any], args: T, given: set[str], may_change: set[str], per_call: set[str]
) -> T:
    """The saved run's arguments, which are authoritative on resume: a flag given now that
    disagrees with them is an error naming it. The flags of ``may_change`` take the new value when
    given (else the saved one); those of ``per_call`` belong to this invocation alone."""
    hints = typing.get_type_hints(cls)
    unknown = sorted(set(saved) - set(hints))
    if unknown:
        raise ValueError(f"the checkpoint's arguments name unknown flags {unknown}: it is from another trainer")
    values = {}
    for f in dataclasses.fields(cls):
        old = saved.get(f.name, getattr(args, f.name))
        if typing.get_origin(hints[f.name]) is tuple:
            old = tuple(old)
        new = getattr(args, f.name)
        if f.name in per_call:
            values[f.name] = new
            continue
        if f.name in may_change:
            values[f.name] = new if f.name in given else old
            continue
        if f.name in given and new != old:
            flag = "--" + f.name.replace("_", "-")
            raise ValueError(
                f"{flag} {_show(new)} conflicts with the resumed run's {flag} {_show(old)}: a resumed run keeps "
                f"its saved configuration (flags that may change on resume: "
                f"{', '.join('--' + n.replace('_', '-') for n in sorted(may_change | per_call))})"
            )
        values[f.name] = old
    return cls(**values)


def _show(value: Any) -> str:
    return " ".join(map(str, value)) if isinstance(value, tuple) else str(value)


def _parser(cls: type, description: str | None, default: Any = None) -> Parser:
    """The flags of ``cls``; a bad one is one line and exit code 2 (``cli_checks.Parser``), as the
    other commands report it, not argparse's usage dump. A flag given twice takes the last value
    (``last_wins``: ``open_trainer`` puts its own flags first), a list flag given twice is refused."""
    parser = Parser(
        prog=prog(),
        last_wins=True,
        description=description or cls.__doc__,
        formatter_class=argparse.ArgumentDefaultsHelpFormatter,
        argument_default=default,
    )
    hints = typing.get_type_hints(cls)
    for f in dataclasses.fields(cls):
        hint = hints[f.name]
        default = f.default_factory() if f.default_factory is not dataclasses.MISSING else f.default  # one of the two
        if argument_default := parser.argument_default:
            default = argument_default
        flag = "--" + f.name.replace("_", "-")
        help_text = f.metadata.get("help", "")
        origin = typing.get_origin(hint)
        if hint is bool:
            parser.add_argument(flag, type=_bool, default=default, metavar="BOOL", help=help_text)
        elif origin in (list, tuple):
            (item,) = {a for a in typing.get_args(hint) if a is not Ellipsis}
            item = ascii_number(item) if item in (int, float) else item
            choices = f.metadata.get("choices")
            parser.add_argument(flag, type=item, nargs="*", default=default, help=help_text, choices=choices)
        else:
            kind = next((a for a in typing.get_args(hint) if a is not type(None)), hint)
            kind = ascii_number(kind) if kind in (int, float) else kind
            parser.add_argument(flag, type=kind, default=default, help=help_text, choices=f.metadata.get("choices"))
    return parser


def _build(cls: type[T], ns: argparse.Namespace) -> T:
    hints = typing.get_type_hints(cls)
    values = vars(ns)
    for f in dataclasses.fields(cls):
        if typing.get_origin(hints[f.name]) is tuple:
            values[f.name] = tuple(values[f.name])
    return cls(**values)


def to_json(args: Any) -> str:
    return json.dumps(dataclasses.asdict(args), indent=2, default=str)
