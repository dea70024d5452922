"""The README's throughput tables, regenerated from a ``nertz bench --json`` report.

``python -m nertz_env.benchmarks.tables benchmarks/results/throughput.json`` prints the main table
(every env's agent-steps per second, and each Nertz env's ratio to each peer) and the doors table
(the TorchRL and Gymnasium doors beside the envs they wrap), in the README's words.
``tests/test_benchmark_tables.py`` holds the README to the stored report, so its figures are
regenerated, never retyped.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from nertz_env.cli_checks import Parser

PEER_COLUMNS = {"leduc": "leduc", "texas": "texas", "hearts": "hearts", "crazy8": "crazy_eights"}

# The report's row names (patterns) and the README's words for them; {b} is the batch size.
PARALLEL = r"nertz_v0 parallel API, 4 players"
TORCHRL_WRAPPER = r"TorchRL PettingZooWrapper\(nertz_v0\)"
GYM_SYNC = r"Gymnasium SyncVectorEnv\(NertzSingle\) x8"
OPENSPIEL = r"OpenSpiel python_nertz, 4 players"
OPTIONAL_DOORS = {OPENSPIEL}  # left out of the table where not measured (reports before 2026-12-03, no open_spiel)
LABELS = (
    (PARALLEL, "`nertz_v0`, PettingZoo parallel API, 4 players"),
    (r"NertzVectorEnv B=(?P<b>\d+), obs\+masks", "`NertzVectorEnv` B={b}"),
    (r"NertzVectorEnv B=(?P<b>\d+), (?P<t>\d+) threads", "`NertzVectorEnv` B={b}, `num_threads={t}` (both cores)"),
    (r"engine alone \(step only\) B=(?P<b>\d+)", "engine alone (step and redeal), B={b}"),
    (r"PettingZoo (?P<name>\w+) \(AEC\)", "PettingZoo `{name}` (AEC)"),
    (r"OpenSpiel hearts \(C\+\+, 4 players\)", "OpenSpiel `hearts` (C++, 4 players, information-state tensor)"),
    (r"OpenSpiel crazy_eights \(C\+\+, 4 players\)", "OpenSpiel `crazy_eights` (C++, 4 players, observation tensor)"),
)
DOORS = (  # (report row, README words, the row it is compared with; rows as patterns)
    (TORCHRL_WRAPPER, "TorchRL `PettingZooWrapper(nertz_v0.parallel_env())`", None),
    (r"NertzTorchRLEnv B=\d+ \(TorchRL EnvBase\)",
     "`NertzTorchRLEnv` (TorchRL `EnvBase`), float32 observations and `state`", TORCHRL_WRAPPER),
    (r"NertzTorchRLEnv B=\d+, int8, no state", "`NertzTorchRLEnv`, int8 observations, no `state`",
     TORCHRL_WRAPPER),
    (GYM_SYNC,
     "Gymnasium `SyncVectorEnv` of 8 `NertzSingle-v0` (three `random` opponents each)", None),
    (r"NertzGymVectorEnv B=\d+ \(Gymnasium VectorEnv\)", "`NertzGymVectorEnv` (Gymnasium `VectorEnv`, self-play)",
     GYM_SYNC),
    (OPENSPIEL, "OpenSpiel `python_nertz` (one game in Python, observation tensors), against the parallel API",
     PARALLEL),
)  # fmt: skip


def _rate(row: dict[str, Any]) -> float:
    return float(row["agent_steps_per_s"])


def _ratio(x: float) -> str:
    """A door's ratio to the env it wraps: whole numbers from 100 up."""
    return f"{x:,.0f}" if x >= 100 else f"{x:,.1f}"


def _label(name: str) -> str:
    for pattern, words in LABELS:
        match = re.fullmatch(pattern, name)
        if match:
            return words.format(**match.groupdict())
    raise ValueError(f"no README words for the report row {name!r}; add it to benchmarks.tables.LABELS")


def main_table(report: dict[str, Any]) -> str:
    """The main table: every measured row but the doors, Nertz rows with their ratio to each peer."""
    rows = [r for r in report["results"] if "agent_steps_per_s" in r and not _door(r["name"])]
    peers = [r for r in rows if r["group"] == "peer"]
    head = "| environment | agent-steps/s |" + "".join(f" × {PEER_COLUMNS[p['short']]} |" for p in peers)
    lines = [head, "|---|---|" + "---|" * len(peers)]
    first_vector = True
    for r in rows:
        label = _label(r["name"])
        if first_vector and label.startswith("`NertzVectorEnv` B=") and "threads" not in label:
            label, first_vector = label + ", observations + masks", False
        cells = "".join(f" {_rate(r) / _rate(p):,.1f} |" if r["group"] != "peer" else " |" for p in peers)
        lines.append(f"| {label} | {_rate(r):,.0f} |{cells}")
    return "\n".join(lines)


def _door(name: str) -> bool:
    return any(re.fullmatch(pattern, name) for pattern, _, _ in DOORS)


def _measured(report: dict[str, Any], pattern: str) -> dict[str, Any] | None:
    for r in report["results"]:
        if "agent_steps_per_s" in r and re.fullmatch(pattern, r["name"]):
            return r
    return None


def _find(report: dict[str, Any], pattern: str) -> dict[str, Any]:
    row = _measured(report, pattern)
    if row is None:
        raise ValueError(f"the report has no measured row {pattern!r}")
    return row


def doors_table(report: dict[str, Any], batch: int = 1024) -> str:
    """The doors table: each door's rate, with its ratio to the env it wraps; then the parallel API
    and the vector env of the same run, for reference."""
    lines = ["| environment | agent-steps/s |", "|---|---|"]
    for pattern, words, against in DOORS:
        if pattern in OPTIONAL_DOORS and _measured(report, pattern) is None:
            continue
        rate = _rate(_find(report, pattern))
        ratio = f" ({_ratio(rate / _rate(_find(report, against)))}×)" if against else ""
        lines.append(f"| {words} | {rate:,.0f}{ratio} |")
    parallel = _rate(_find(report, PARALLEL))
    vector = _rate(_find(report, rf"NertzVectorEnv B={batch}, obs\+masks"))
    label = f"`nertz_v0` parallel API / `NertzVectorEnv` B={batch}, for reference"
    lines.append(f"| {label} | {parallel:,.0f} / {vector:,.0f} |")
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    ap = Parser(prog="python -m nertz_env.benchmarks.tables", description=__doc__.split("\n\n")[0])
    ap.add_argument("report", type=Path, help="a JSON report of `nertz bench --json`")
    args = ap.parse_args(argv)
    try:
        report = json.loads(args.report.read_text())
    except (OSError, ValueError) as e:
        ap.error(f"cannot read the report {str(args.report)!r}: {e}")
    print(main_table(report))
    print()
    print(doors_table(report))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
