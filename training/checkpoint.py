"""What both trainers share about their files: atomic writes, checkpoints that load with a clear
error or not at all, the evaluation log kept with the checkpoint, and evaluations that leave the
run's random generators alone.

A checkpoint is one file, written to a temporary name, flushed to disk and renamed over the old
one: a kill at any moment leaves the previous checkpoint or the new one, never a mix. The
evaluations done so far are stored inside it, and ``evals.jsonl`` is rewritten from them when a
run resumes, so a line written after the last checkpoint (and redone after the resume) is not
doubled, and an evaluation interrupted by a kill is redone.
"""

from __future__ import annotations

import contextlib
import errno
import json
import os
import random
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import numpy as np
import torch

from nertz_env.config import NertzConfig


class CheckpointError(ValueError):
    """A file given to ``--resume`` that is not a usable checkpoint of this trainer."""


def atomic_write(path: Path, write: Callable[[Path], object], tmp: Path | None = None) -> None:
    """``write(tmp)``, flush it to disk, then rename it to ``path`` (atomic on POSIX). On any
    error the temporary file is removed; a full disk is reported as such, naming the file."""
    path = Path(path)
    tmp = Path(tmp) if tmp is not None else path.with_name(path.name + ".tmp")
    try:
        write(tmp)
        with open(tmp, "rb+") as fh:
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException as exc:
        with contextlib.suppress(FileNotFoundError):
            tmp.unlink()
        if isinstance(exc, OSError) and exc.errno == errno.ENOSPC:
            raise OSError(
                errno.ENOSPC, f"no space left on the device while writing {path}; the previous {path.name} is kept "
                "unchanged (free some space and resume from it)"
            ) from exc
        if isinstance(exc, RuntimeError) and "No space left" in str(exc):  # torch's zip writer wraps ENOSPC
            raise OSError(errno.ENOSPC, f"no space left on the device while writing {path}") from exc
        raise
    with contextlib.suppress(OSError):  # the rename itself reaches the disk with the directory
        fd = os.open(path.parent, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


def remove_partial_files(run_dir: Path) -> None:
    """Temporary files a killed run left behind (the files they were to replace are intact)."""
    for tmp in Path(run_dir).glob("*.tmp*"):
        with contextlib.suppress(OSError):
            tmp.unlink()


def write_json_lines(path: Path, rows: list[dict[str, Any]]) -> None:
    atomic_write(path, lambda tmp: tmp.write_text("".join(json.dumps(r) + "\n" for r in rows)))


def resume_file(path: str | Path, name: str) -> Path:
    """``--resume PATH`` as a file, or a ``CheckpointError``: a folder (a run's, say) is named as
    one, with the checkpoint file ``name`` to give instead; a missing file as missing."""
    path = Path(path)
    if path.is_dir():
        inside = path / name
        hint = f"give {inside}" if inside.is_file() else f"give a run's {name} (this folder holds none)"
        raise CheckpointError(f"--resume {path}: a folder, not a checkpoint file; {hint}")
    if not path.is_file():
        raise CheckpointError(f"--resume {path}: no such file (give the run's {name})")
    return path


def check_budget(
    path: str, given: set[str], total: int, done: int, saved_total: int, next_update: int | None = None
) -> None:
    """``--total-steps`` given on resume is not below the learner decisions the checkpoint has
    already trained: it would train nothing and record a budget the run has passed. With
    ``next_update`` (the budget at which a trainer that updates in whole batches runs one more
    update), a budget short of it is refused too: it would train nothing as well."""
    if "total_steps" not in given:
        return
    if total < done:
        raise ValueError(
            f"--total-steps {total} is below the {done} decisions {path} has already trained (its run's "
            f"--total-steps: {saved_total}): give at least {done}, or leave --total-steps out to keep {saved_total}"
        )
    if next_update is not None and total < next_update:
        raise ValueError(
            f"--total-steps {total} trains nothing after the {done} decisions {path} has already trained: its next "
            f"update (a whole batch) ends at {next_update} decisions; give at least {next_update}"
        )


def load_torch_checkpoint(path: str | Path, required: tuple[str, ...]) -> dict[str, Any]:
    """A checkpoint written by ``train_selfplay``, or a ``CheckpointError`` saying what the file is."""
    path = resume_file(path, "checkpoint.pt")
    try:
        blob = torch.load(path, map_location="cpu", weights_only=False)
    except Exception as exc:  # torch raises several kinds for a truncated or foreign file
        raise CheckpointError(
            f"--resume {path}: not a readable checkpoint ({type(exc).__name__}: {str(exc)[:200]}); the file is "
            "damaged or not written by train_selfplay"
        ) from exc
    if isinstance(blob, dict) and "state_dict" in blob and "args" not in blob:
        raise CheckpointError(
            f"--resume {path}: this is a policy file (what agents.make('policy') loads), not a checkpoint; resume "
            f"from {path.with_name('checkpoint.pt')}"
        )
    missing = [k for k in required if not isinstance(blob, dict) or k not in blob]
    if missing:
        raise CheckpointError(f"--resume {path}: not a train_selfplay checkpoint (missing {', '.join(missing)})")
    return blob


def trained_decisions(run_dir: Path) -> int:
    """The learner decisions a ``train_selfplay`` run in ``run_dir`` has trained (its checkpoint's
    count: whole updates, at most its ``--total-steps``)."""
    return int(torch.load(run_dir / "checkpoint.pt", map_location="cpu", weights_only=False)["global_step"])


def chance_states(agents: list[Any]) -> list[dict[str, Any] | None]:
    """Where each agent's draws stand (``Agent.chance_state``; None for one without chance state),
    for a checkpoint: a resumed run's scripted members and teacher (``random``, a sampling policy)
    then draw as the uninterrupted run's would."""
    return [a.chance_state() if hasattr(a, "chance_state") else None for a in agents]


def set_chance_states(agents: list[Any], states: list[dict[str, Any] | None] | None) -> None:
    """Put back ``chance_states``' record into the same agents (``--scripted`` and ``--teacher``,
    which a resume keeps); None (a checkpoint from before it kept them) leaves them as built."""
    if states is None:
        return
    if len(states) != len(agents):
        raise ValueError(f"the checkpoint holds the draws of {len(states)} agents, this run has {len(agents)}")
    for agent, state in zip(agents, states):
        if state is not None:
            agent.set_chance_state(state)


def resolve_device(name: str) -> torch.device:
    """The device of ``--device NAME`` (``auto``: CUDA when torch sees it, else the CPU), or an
    error naming what is accepted (checked before a run writes anything)."""
    if name == "auto":
        name = "cuda" if torch.cuda.is_available() else "cpu"
    try:
        device = torch.device(name)
    except RuntimeError:
        device = None
    if device is None or device.type not in ("cpu", "cuda"):
        raise ValueError(f"--device {name!r}: accepted auto, cpu, cuda or cuda:N")
    if device.type == "cuda" and not torch.cuda.is_available():
        raise ValueError(f"--device {name}: torch sees no CUDA device here (use --device cpu or auto)")
    return device


def training_device(name: str) -> torch.device:
    """``resolve_device(name)``, made ready to train on. On CUDA, torch's deterministic algorithms
    are switched on (and cuBLAS given the fixed workspace they need), so that a seed's run, and a
    resumed one, is the same float for float there too, as it is on the CPU."""
    device = resolve_device(name)
    if device.type == "cuda":
        os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", ":4096:8")
        torch.use_deterministic_algorithms(True)
    return device


def device_generator(device: torch.device) -> dict[str, torch.Tensor]:
    """For a checkpoint: the CUDA generator's state (``"cuda_rng"``) of a run on CUDA, whose
    draws on the GPU it drives; nothing on the CPU (``"torch_rng"`` holds that one)."""
    return {"cuda_rng": torch.cuda.get_rng_state(device)} if device.type == "cuda" else {}


def restore_device_generator(saved: dict[str, Any], device: torch.device) -> None:
    """Put back what ``device_generator`` saved, on CUDA, where the checkpoint holds it."""
    if device.type == "cuda" and "cuda_rng" in saved:
        torch.cuda.set_rng_state(saved["cuda_rng"], device)


@contextlib.contextmanager
def own_generators(device: torch.device | None = None) -> Iterator[None]:
    """Run a block (an evaluation) without moving the run's generators: torch's (CPU and the
    device's), numpy's global one and ``random``'s are restored afterwards."""
    np_state, py_state = np.random.get_state(), random.getstate()  # noqa: NPY002 - SB3 draws from these
    devices = [device.index or 0] if device is not None and device.type == "cuda" else []
    try:
        with torch.random.fork_rng(devices=devices):
            yield
    finally:
        np.random.set_state(np_state)  # noqa: NPY002
        random.setstate(py_state)


def evaluate_policy(policy_path: Path, config: NertzConfig, deals: int, seed: int) -> dict[str, Any]:
    """The harness's duplicate format: the policy against three of each scripted baseline."""
    from nertz_env.training.evaluate import evaluate

    out: dict[str, Any] = {}
    for rival in ("greedy", "heuristic"):
        lineup = ["policy:path=" + str(policy_path)] + [rival] * (config.num_players - 1)
        me = evaluate(lineup, hands=deals, seed=seed, config=config, progress=False)["summary"][0]
        out[rival] = {"win_share": me["win_share"], "win_ci": me["win_ci"], "score": me["score"]}
    return out


def eval_line(result: dict[str, Any]) -> str:
    """One evaluation as a printed line."""
    parts = [f"step {result['global_step']:>9,}"]
    for rival in ("greedy", "heuristic"):
        r = result[rival]
        lo, hi = r["win_ci"]
        parts.append(f"vs 3x {rival}: win {r['win_share']:.3f} [{lo:.3f}, {hi:.3f}] score {r['score']:+.2f}")
    return "eval  " + "  ".join(parts)


def summary_table(evals: list[dict[str, Any]], run_dir: Path, steps: int, seconds: float) -> str:
    """The closing summary: the run, then every evaluation as a row."""
    lines = [f"run {run_dir}: {steps:,} learner decisions in {seconds:.0f} s"]
    if not evals:
        return "\n".join([*lines, "no evaluations (--eval-every 0)"])
    lines.append(f"{'step':>10}  {'win vs greedy':>14}  {'score':>7}  {'win vs heuristic':>16}  {'score':>7}")
    for e in evals:
        g, h = e["greedy"], e["heuristic"]
        lines.append(
            f"{e['global_step']:>10,}  {g['win_share']:>14.3f}  {g['score']:>+7.2f}  "
            f"{h['win_share']:>16.3f}  {h['score']:>+7.2f}"
        )
    return "\n".join(lines)


def say(text: str) -> None:
    print(text, flush=True)
