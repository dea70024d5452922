"""Is a trained policy at a local optimum of the evaluation's own measure, move group by move group?

PPO trains a policy for its reward (``relative`` points) in its league; the aim measures its win
share against three ``heuristic:depth=3``. This screen shifts every legal move's logit by an offset
that depends only on the move's group (R4: ``wait``, ``draw``, ``call``, and ``SOURCE>DESTINATION``
such as ``waste>work`` or ``nertz>foundation``, whatever the pile numbers), so the player chooses
a group more (a positive offset) or less often, and evaluates each shifted player on duplicate
deals, paired deal by deal with the unshifted one (``training.compare_reports``). A gain would be
a direction PPO left; none, in every direction, says the policy sits at a local optimum of the
aim's measure along each group, not only of its reward. The offsets play as a fixed shift of the
policy's greedy choice: no search, the same forward pass.

    python -m nertz_env.training.move_offsets --policy agents/policies/ppo.pt --hands 1000 --seed 3001 \\
        --offsets draw=-0.3 draw=0.3 call=-3 "wait=1,draw=-1" --json offsets.json

Screen on deals of a seed kept apart from the evaluation's (2032, 2041), or the screen chooses on
the deals it reports.
"""

from __future__ import annotations

import argparse
import json
import math
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import torch

from nertz_env.actions import ActionCatalogue
from nertz_env.agents.policy import PolicyAgent
from nertz_env.cli_checks import USER_ERRORS, Parser, at_least, output_file
from nertz_env.config import MOVE_KINDS, NertzConfig
from nertz_env.engine.constants import NERTZ, T_KIND, T_SOURCE, TO_FOUNDATION, WASTE
from nertz_env.options import ascii_float
from nertz_env.training.compare_reports import compare
from nertz_env.training.evaluate import evaluate

KINDS = ("wait", *MOVE_KINDS)  # by the engine's kind code: wait, draw, call, then the card moves' destinations
SOURCES = {NERTZ: "nertz", WASTE: "waste"}  # any other source is a work pile
MOVE_GROUPS = KINDS[:TO_FOUNDATION] + tuple(
    f"{s}>{d}" for s in (*SOURCES.values(), "work") for d in KINDS[TO_FOUNDATION:]
)  # R4.1-R4.8
OPPONENTS = ("heuristic:depth=3",) * 3


def move_groups(catalogue: ActionCatalogue) -> list[str]:
    """The group of each catalogue action, in catalogue order: its kind, and for a card move its
    source pile and destination kind without their numbers (``work2>work0:3`` is ``work>work``)."""
    groups = []
    for kind, source in catalogue.table[:, [T_KIND, T_SOURCE]]:
        if kind < TO_FOUNDATION:  # wait, draw, call: the first three groups
            groups.append(KINDS[kind])
        else:
            groups.append(f"{SOURCES.get(int(source), 'work')}>{KINDS[kind]}")
    return groups


def check_offsets(offsets: Mapping[str, float]) -> dict[str, float]:
    """The offsets as ``{group: float}``, or a ValueError naming the bad entry and what is accepted."""
    if not isinstance(offsets, Mapping):
        raise ValueError(f"invalid offsets {offsets!r}: accepted a mapping of move group to a number")
    checked = {}
    for group, value in offsets.items():
        if group not in MOVE_GROUPS:
            raise ValueError(f"unknown move group {group!r}: accepted {', '.join(MOVE_GROUPS)}")
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
            raise ValueError(f"invalid offset {group}={value!r}: accepted a finite number")
        checked[group] = float(value)
    return checked


class OffsetPolicy(PolicyAgent):
    """A ``.pt`` policy whose legal moves' logits are shifted by their group's offset."""

    name = "offset-policy"

    def __init__(self, path, offsets: Mapping[str, float], config: NertzConfig | None = None, seed: int = 0,
                 greedy: bool = True):  # fmt: skip
        self.move_offsets = check_offsets(offsets)
        super().__init__(path, config=config, seed=seed, greedy=greedy)
        if self._net is None:
            raise ValueError(f"{path}: move offsets shift a .pt policy's logits; accepted a train_selfplay.py policy")
        groups = move_groups(ActionCatalogue(self.config))
        shift = np.array([self.move_offsets.get(g, 0.0) for g in groups], dtype=np.float32)
        self._shift = torch.from_numpy(shift)

    def __repr__(self) -> str:  # the report's spec of this player
        shift = ",".join(f"{g}={v:g}" for g, v in self.move_offsets.items())
        return f"offset-policy(path={self.path}, offsets={shift or 'none'})"

    def _scores(self, obs: np.ndarray, masks: np.ndarray):
        logits, values = super()._scores(obs, masks)
        legal = torch.from_numpy(np.asarray(masks) != 0)
        return logits + torch.where(legal, self._shift, 0.0), values  # a shift never lifts an illegal move


def parse_offsets(text: str) -> dict[str, float]:
    """``"draw=-0.3,call=3"`` as ``{"draw": -0.3, "call": 3.0}`` (the CLI's form of one shifted player)."""
    offsets = {}
    for item in text.split(","):
        group, sep, value = item.partition("=")
        if not sep:
            raise ValueError(f"invalid offsets {text!r}: accepted GROUP=NUMBER[,GROUP=NUMBER...]")
        if group.strip() in offsets:  # the last would silently win
            raise ValueError(f"invalid offsets {text!r}: {group.strip()} is given twice; give each group once")
        try:
            offsets[group.strip()] = ascii_float(value)
        except ValueError:
            raise ValueError(f"invalid offset {item!r}: {value!r} is not a number") from None
    return check_offsets(offsets)


def screen(policy: str, offsets: Sequence[Mapping[str, float]], hands: int = 1000, seed: int = 3001,
           opponents: Sequence[str] = OPPONENTS, reports: Path | None = None) -> dict[str, Any]:  # fmt: skip
    """The unshifted policy's win share and, for each offsets mapping, the shifted player's win
    share, calls and ``compare``'s paired differences with the unshifted one on the same deals.
    With ``reports`` (a folder), also each harness report there, as ``nertz eval --out`` writes
    it: ``unshifted.json``, then ``shifted_1.json``, ... in the order of ``offsets``."""
    checked = [check_offsets(o) for o in offsets]
    config = NertzConfig(num_players=1 + len(opponents))

    def play(shift: Mapping[str, float]) -> dict[str, Any]:
        player = OffsetPolicy(policy, shift, config=config)
        return evaluate([player, *opponents], hands=hands, seed=seed, config=config, progress=False)

    def keep(report: dict[str, Any], name: str) -> None:
        if reports is not None:
            (reports / f"{name}.json").write_text(json.dumps(report, default=float))

    base = play({})
    keep(base, "unshifted")
    rows = []
    for i, shift in enumerate(checked, 1):
        report = play(shift)
        keep(report, f"shifted_{i}")
        paired, me = compare(base, report), report["summary"][0]
        rows.append({"offsets": shift, "win_share": me["win_share"], "called": me["called"],
                     "calls_won": me["calls_won"]} | {k: paired[k] for k in
                    ("win_share_diff", "win_share_diff_ci", "score_diff", "score_diff_ci")})  # fmt: skip
    return {"policy": str(policy), "opponents": list(opponents), "hands": hands, "seed": seed,
            "base_win_share": base["summary"][0]["win_share"], "rows": rows}  # fmt: skip


def format_screen(record: Mapping[str, Any]) -> str:
    lines = [f"{record['policy']} unshifted: win share {record['base_win_share']:.4f} ({record['hands']} deals "
             f"of seed {record['seed']}); paired differences, shifted - unshifted:"]  # fmt: skip
    for r in record["rows"]:
        shift = ",".join(f"{g}={v:g}" for g, v in r["offsets"].items()) or "(none)"
        lines.append(f"  {shift:<28} {paired_text(r)}  calls {r['called']:.3f}")
    return "\n".join(lines)


def paired_text(row: Mapping[str, Any]) -> str:
    """A screened player's win share and its paired differences from the base player, in win
    share and points, with their intervals (a line of the screens' printouts)."""
    w, s = row["win_share_diff_ci"], row["score_diff_ci"]
    return (f"wins {row['win_share']:.4f}  {row['win_share_diff']:+.4f} [{w[0]:+.4f}, {w[1]:+.4f}]  points "
            f"{row['score_diff']:+.3f} [{s[0]:+.3f}, {s[1]:+.3f}]")  # fmt: skip


def markdown_table(records: Sequence[Mapping[str, Any]], names: Sequence[str]) -> str:
    """One row per offsets entry of the first record, one column per record (``names``): the paired
    win share difference with its interval; every record must have screened the same entries."""
    entries = [r["offsets"] for r in records[0]["rows"]]
    for name, record in zip(names, records):
        if [r["offsets"] for r in record["rows"]] != entries:
            raise ValueError(f"{name} screened other offsets than {names[0]}: accepted records of one --offsets list")
    head = "| offsets | " + " | ".join(names) + " |"
    lines = [head, "|---" * (len(names) + 1) + "|",
             "| (none: the policy's win share) | " + " | ".join(f"{r['base_win_share']:.4f}" for r in records) + " |"]
    for i, shift in enumerate(entries):
        cells = []
        for record in records:
            row = record["rows"][i]
            low, high = row["win_share_diff_ci"]
            cells.append(f"{row['win_share_diff']:+.4f} [{low:+.4f}, {high:+.4f}]")
        lines.append("| `" + ",".join(f"{g}={v:g}" for g, v in shift.items()) + "` | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    ap = Parser(prog="python -m nertz_env.training.move_offsets", description=__doc__.split("\n\n")[0])
    ap.add_argument("--policy", help="a train_selfplay.py policy.pt")
    ap.add_argument("--offsets", nargs="+", metavar="GROUP=NUMBER[,...]",
                    help=f"one shifted player per entry; groups: {', '.join(MOVE_GROUPS)}")  # fmt: skip
    ap.add_argument("--opponents", nargs="+", default=list(OPPONENTS), help="the other seats' agent specs")
    ap.add_argument("--hands", type=at_least(1), default=1000, help="duplicate deals per player")
    ap.add_argument("--seed", type=at_least(0), default=3001, help="the deals' seed, apart from the evaluation's")
    ap.add_argument("--json", type=output_file(".json"), help="also write the record here")
    ap.add_argument("--reports", type=report_folder, metavar="FOLDER",
                    help="also keep each harness report there (unshifted.json, shifted_1.json, ...) as --out does")
    ap.add_argument("--table", nargs="+", metavar="NAME=RECORD.json",
                    help="instead: print the markdown table of these records (--json files), one column each")
    args = ap.parse_args(argv)
    if args.table:
        if args.policy or args.offsets or args.reports or args.json:
            ap.error("--table prints kept records; it takes no --policy, --offsets, --reports or --json")
        return print_table(ap, args.table, markdown_table)
    if not args.policy or not args.offsets:
        ap.error("--policy and --offsets are needed to screen (or --table to print kept records)")
    try:
        shifts = [parse_offsets(text) for text in args.offsets]
        if args.reports:
            args.reports.mkdir(exist_ok=True)
        record = screen(args.policy, shifts, args.hands, args.seed, tuple(args.opponents), args.reports)
    except USER_ERRORS as err:
        ap.error(str(err))
    print(format_screen(record))
    if args.json:
        args.json.write_text(json.dumps(record, indent=1) + "\n")
    return 0


def report_folder(text: str) -> Path:
    """An argparse type: a folder to keep reports in, made if absent, inside a writable folder."""
    path = Path(text)
    if path.exists() and not path.is_dir():
        raise argparse.ArgumentTypeError(f"{text!r} is a file, not a folder")
    output_file()(str(path / "unshifted.json") if path.is_dir() else text)  # its parent: there and writable
    return path


def print_table(ap: Parser, items: Sequence[str], table: Callable[[list, list], str]) -> int:
    """Print ``table(records, names)`` of kept ``--json`` records given as ``NAME=RECORD.json``."""
    names, records = [], []
    for item in items:
        name, sep, path = item.partition("=")
        if not sep:
            ap.error(f"--table {item!r}: accepted NAME=RECORD.json")
        try:
            records.append(json.loads(Path(path).read_text()))
        except (OSError, json.JSONDecodeError) as err:
            ap.error(f"--table {item!r}: {err}")
        names.append(name)
    try:
        print(table(records, names))
    except (KeyError, TypeError, ValueError) as err:
        ap.error(f"--table: not records of one {ap.prog.split('.')[-1]} screen ({err})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
