"""The scalars of every ``train_selfplay`` update, one JSON line each in the run's ``scalars.jsonl``,
written whether or not TensorBoard is on, so a run's losses, approximate KL, clip fraction, entropy,
teacher agreement, pool shares and hidden-card critic figures can be read back without TensorBoard
(``read_scalars``; a notebook: ``pandas.read_json(path, lines=True)``).

Each line is ``{"global_step": decisions so far, "update": k, TAG: value, ...}`` with the tags that
TensorBoard also gets (``charts/...``, ``losses/...``, ``pool/...``, ``central/...``). On
``--resume`` the lines after the checkpoint's decisions (written by updates the checkpoint does not
hold, or a line cut short by a kill) are dropped first, so a resumed run's file holds one line per
update, as an uninterrupted run's does; every figure but the timings (``charts/*share_of_time``,
``charts/steps_per_second``) is then the same.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import numpy as np

FILE = "scalars.jsonl"
TIMINGS = ("charts/steps_per_second", "charts/env_share_of_time", "charts/features_share_of_time",
           "charts/rollout_net_share_of_time", "charts/update_share_of_time")  # fmt: skip


def update_scalars(stats: dict[str, Any], times: dict[str, float]) -> dict[str, float]:
    """The tags and values of one update: ``stats`` from ``selfplay_ppo.update``, ``times`` the
    rollout's timings plus ``elapsed``, ``rollout``, ``lr``, ``score``, ``batch`` and ``bc_coef``."""
    elapsed = times["elapsed"]
    out = {
        "charts/learning_rate": times["lr"],
        "charts/episode_score": times["score"],
        "charts/steps_per_second": times["batch"] / elapsed,
        "charts/env_share_of_time": times["env"] / elapsed,
        "charts/features_share_of_time": times["features"] / elapsed,
        "charts/rollout_net_share_of_time": times["net"] / elapsed,
        "charts/update_share_of_time": (elapsed - times["rollout"]) / elapsed,
        "charts/bc_coef": times["bc_coef"],
    }
    if stats["agreement"]:
        out["charts/teacher_agreement"] = float(np.mean(stats["agreement"]))
    out["losses/value_loss"] = stats["v_loss"].item()
    out["losses/policy_loss"] = stats["pg_loss"].item()
    out["losses/bc_loss"] = stats["bc_loss"].item()
    out["losses/entropy"] = stats["entropy"].mean().item()
    out["losses/approx_kl"] = stats["approx_kl"].item()
    if stats["clipfracs"]:
        out["losses/clipfrac"] = float(np.mean(stats["clipfracs"]))
    if "aux_loss" in stats:  # train_selfplay --aux-hidden
        out["losses/aux_hidden_loss"] = stats["aux_loss"].item()
    if "aux_opponents_loss" in stats:  # train_selfplay --aux-opponents
        out["losses/aux_opponents_loss"] = stats["aux_opponents_loss"].item()
    for name, value in stats.get("central", {}).items():  # train_selfplay --central-critic
        out[f"central/{name}"] = value
    return {tag: float(value) for tag, value in out.items()}


def _json_value(value: float) -> float | None:
    """JSON has no NaN or infinity: such a value is written as null (``read_scalars`` reads NaN)."""
    return value if math.isfinite(value) else None


def read_lines(path: str | Path, up_to: int | None = None) -> list[dict[str, Any]]:
    """The lines of a ``scalars.jsonl`` (``up_to``: those at or below that many decisions). A last
    line cut short by a kill is left out; a damaged line before it is an error naming the line."""
    path = Path(path)
    if not path.exists():
        return []
    lines = path.read_text().split("\n")
    rows = []
    for k, line in enumerate(lines):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except json.JSONDecodeError:
            if all(not rest.strip() for rest in lines[k + 1:]):
                break  # the line being written when the run was killed
            row = None
        if not isinstance(row, dict) or not isinstance(row.get("global_step"), int):
            raise ValueError(f"{path}, line {k + 1}: not a JSON line of train_selfplay's scalars "
                             '(an object with an integer "global_step")')  # fmt: skip
        if up_to is None or row["global_step"] <= up_to:
            rows.append(row)
    return rows


def read_scalars(run_dir: str | Path, tags: list[str] | tuple[str, ...] | None = None) -> dict[str, tuple[list, list]]:
    """A run's scalars as ``{tag: (steps, values)}`` (every tag when ``tags`` is None): from its
    ``scalars.jsonl`` (a value written as null is NaN), or from its TensorBoard log for a run made
    before that file. A tag the run does not hold is a ``KeyError`` naming the known ones."""
    path = Path(run_dir) / FILE
    if path.exists():
        found: dict[str, tuple[list, list]] = {}
        for row in read_lines(path):
            for tag, value in row.items():
                if tag not in ("global_step", "update"):
                    steps, values = found.setdefault(tag, ([], []))
                    steps.append(row["global_step"])
                    values.append(math.nan if value is None else value)
    elif list(Path(run_dir).glob("events.out.tfevents.*")):
        found = _tensorboard_scalars(run_dir)
    else:
        raise FileNotFoundError(f"{run_dir} holds neither {FILE} nor a TensorBoard log (events.out.tfevents.*)")
    if tags is not None and (missing := [t for t in tags if t not in found]):
        raise KeyError(f"no scalars {missing} in {run_dir}; known: {', '.join(sorted(found))}")
    return {tag: found[tag] for tag in (tags if tags is not None else sorted(found))}


def _tensorboard_scalars(run_dir: str | Path) -> dict[str, tuple[list, list]]:
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    acc = EventAccumulator(str(run_dir), size_guidance={"scalars": 0})
    acc.Reload()
    return {tag: ([e.step for e in acc.Scalars(tag)], [e.value for e in acc.Scalars(tag)])
            for tag in acc.Tags()["scalars"]}  # fmt: skip


class ScalarLog:
    """Appends each update's scalars to ``run_dir/scalars.jsonl`` and, when ``writer`` (a
    TensorBoard ``SummaryWriter``) is given, to TensorBoard too. Made at a run's start or resume:
    lines past ``global_step`` (what the checkpoint holds) are dropped first."""

    def __init__(self, run_dir: Path, global_step: int, writer=None):
        from nertz_env.training.checkpoint import write_json_lines  # torch's side of the package

        self.path = Path(run_dir) / FILE
        write_json_lines(self.path, read_lines(self.path, up_to=global_step))
        self.writer = writer
        self._file = self.path.open("a", buffering=1)  # line-buffered: each update's line reaches the file

    def write(self, global_step: int, update: int, scalars: dict[str, float]) -> None:
        row = {"global_step": global_step, "update": update, **{t: _json_value(v) for t, v in scalars.items()}}
        self._file.write(json.dumps(row) + "\n")
        if self.writer is not None:
            for tag, value in scalars.items():
                self.writer.add_scalar(tag, value, global_step)

    def close(self) -> None:
        self._file.close()
        if self.writer is not None:
            self.writer.close()
