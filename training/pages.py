"""The generated parts of the documentation pages. Each lies between a ``<!-- NAME:start -->`` and
a ``<!-- NAME:end -->`` line of its page, and its regenerator rewrites that part only
(``training.bench_table``: the benchmark's results; ``training.learning_results``: the table of
learned players)."""

from __future__ import annotations


def markers(name: str) -> tuple[str, str]:
    """The start and end lines of the part ``name``."""
    return f"<!-- {name}:start -->", f"<!-- {name}:end -->"


def with_part(text: str, start: str, end: str, part: str) -> str:
    """``text`` with what lies between its ``start`` and ``end`` lines replaced by ``part``; a
    ValueError where ``text`` lacks either (nothing after a missing end is dropped)."""
    head, found_start, rest = text.partition(start)
    _, found_end, tail = rest.partition(end)
    if not (found_start and found_end):
        raise ValueError(f"no {start} ... {end} lines")
    return f"{head}{start}\n{part}\n{end}{tail}"
