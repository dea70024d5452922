"""Command lines from dataclasses: every field is a flag, and its ``help`` metadata is the text
``--help`` prints (the CleanRL ``Args`` style, without a parser dependency)."""

from __future__ import annotations

import argparse
import dataclasses
import json
import typing
from collections.abc import Sequence
from typing import Any, TypeVar

T = TypeVar("T")


def arg(default: Any, help: str, **kwargs: Any) -> Any:  # noqa: A002 - mirrors argparse
    """A dataclass field with its ``--help`` text."""
    if isinstance(default, (list, dict)):
        return dataclasses.field(default_factory=lambda: type(default)(default), metadata={"help": help, **kwargs})
    return dataclasses.field(default=default, metadata={"help": help, **kwargs})


def _bool(text: str) -> bool:
    if text.lower() in ("1", "true", "yes", "on"):
        return True
    if text.lower() in ("0", "false", "no", "off"):
        return False
    raise argparse.ArgumentTypeError(f"expected true or false, got {text!r}")


def parse(cls: type[T], argv: Sequence[str] | None = None, description: str | None = None) -> T:
    """Parse ``argv`` into ``cls``; unknown flags and bad values exit with argparse's message."""
    parser = argparse.ArgumentParser(
        description=description or cls.__doc__, formatter_class=argparse.ArgumentDefaultsHelpFormatter
    )
    hints = typing.get_type_hints(cls)
    for f in dataclasses.fields(cls):
        hint = hints[f.name]
        default = f.default if f.default is not dataclasses.MISSING else f.default_factory()
        flag = "--" + f.name.replace("_", "-")
        help_text = f.metadata.get("help", "")
        origin = typing.get_origin(hint)
        if hint is bool:
            parser.add_argument(flag, type=_bool, default=default, metavar="BOOL", help=help_text)
        elif origin in (list, tuple):
            (item,) = {a for a in typing.get_args(hint) if a is not Ellipsis}
            parser.add_argument(flag, type=item, nargs="*", default=default, help=help_text)
        else:
            kind = next((a for a in typing.get_args(hint) if a is not type(None)), hint)
            parser.add_argument(flag, type=kind, default=default, help=help_text, choices=f.metadata.get("choices"))
    ns = parser.parse_args(argv)
    values = vars(ns)
    for f in dataclasses.fields(cls):
        if typing.get_origin(hints[f.name]) is tuple:
            values[f.name] = tuple(values[f.name])
    return cls(**values)


def to_json(args: Any) -> str:
    return json.dumps(dataclasses.asdict(args), indent=2, default=str)
