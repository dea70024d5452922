"""Fit the search-free network to the learned search's labels (``training.search_labels``), from a
policy's weights, and report whether what it learns holds on states it was not trained on.

    python -m nertz_env.training.distill_search runs/labels/s10*.npz --val runs/labels/s1015.npz \\
        --target clear --epochs 3 --out runs/distill/clear.pt --json runs/distill/clear.json

Targets, over each state's legal moves (the search's candidates only; every other move 0):

- ``pick``: the move the search played on its samples (one draw of its choice, as DAgger labels);
- ``clear``: its choice where it makes it with probability above 1/2 under normal resampling of
  the candidates' means (their standard errors), else the policy's own first choice;
- ``soft``: ``softmax(value / eta)`` of the candidates' mean outcomes.

The loss is the cross-entropy of the network's softmax over the row's legal moves (the trainer's
``pair_log_softmax``) against the target. After each epoch it reports, on the ``--val`` states and
on as many training states: the cross-entropy, how often the network's first choice is the
target's, and how often it departs from the starting policy's first choice (candidate 0).
"""

from __future__ import annotations

import json
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from nertz_env.cli_checks import USER_ERRORS, Parser, at_least, number_from, output_file
from nertz_env.training.search_labels import load, replay

TARGETS = ("pick", "clear", "soft")


def read(paths: Sequence[str | Path]) -> tuple[dict[str, np.ndarray], list[int]]:
    """The states (replayed) and labels of the files ``paths``, concatenated, and each file's count."""
    if not paths:
        raise ValueError("no label files given")
    parts = []
    for path in paths:
        labels = load(path)
        obs, masks = replay(labels)
        parts.append({"obs": obs, "masks": masks, **{k: labels[k] for k in ("cands", "mean", "se", "pick")}})
    widths = {p["cands"].shape[1] for p in parts}
    if len(widths) > 1:
        raise ValueError(f"label files of different candidate counts {sorted(widths)} do not mix")
    return {k: np.concatenate([p[k] for p in parts]) for k in parts[0]}, [len(p["pick"]) for p in parts]


def targets(data: dict[str, np.ndarray], target: str, eta: float = 0.25, draws: int = 64, seed: int = 0) -> np.ndarray:
    """``[n, candidates]``: the target's probability of each candidate (module doc)."""
    cands, mean, se = data["cands"], data["mean"], np.nan_to_num(data["se"], nan=0.0)
    valid = cands >= 0
    n, k = cands.shape
    out = np.zeros((n, k), np.float32)
    if target == "pick":
        out[np.arange(n), data["pick"].astype(np.int64)] = 1.0
    elif target == "soft":
        value = np.where(valid, mean - mean[:, :1], -np.inf) / eta
        out[:] = np.exp(value - value.max(axis=1, keepdims=True))
        out /= out.sum(axis=1, keepdims=True)
    elif target == "clear":
        rng = np.random.default_rng(seed)
        advantage = np.where(valid, mean - mean[:, :1], -np.inf)
        share = np.zeros((n, k))
        for _ in range(draws):  # RolloutAgent._pick (margin 1) on resampled means
            drawn = np.where(valid, advantage + se * rng.standard_normal((n, k)), -np.inf)
            drawn[:, 0] = 0.0
            best = drawn.argmax(axis=1)
            sure = drawn[np.arange(n), best] > se[np.arange(n), best]
            share[np.arange(n), np.where(sure, best, 0)] += 1.0
        out[np.arange(n), np.where(share.max(axis=1) > draws / 2, share.argmax(axis=1), 0)] = 1.0
    else:
        raise ValueError(f"unknown target {target!r}; accepted {', '.join(TARGETS)}")
    return out


class Fit:
    """The network, its optimiser and the data of one distillation (``fit`` runs it)."""

    def __init__(self, data: dict[str, np.ndarray], target: np.ndarray, init: str, lr: float, seed: int):
        import torch

        from nertz_env.agents.policy import load_network

        torch.manual_seed(seed)
        self.torch, self.data, self.target = torch, data, target
        self.net, self.config, self.blob = load_network(init)
        self.net.train()
        self.optimizer = torch.optim.Adam(self.net.parameters(), lr=lr, eps=1e-5)

    def loss(self, idx: np.ndarray):
        """The mean cross-entropy of rows ``idx``, and the pairs it was computed over: ``(loss, rows,
        actions, scores)``."""
        from nertz_env.training.pair_policy import pair_log_softmax

        torch, d = self.torch, self.data
        rows, acts, feats = self.net.features(d["obs"][idx], d["masks"][idx])
        pair_target = np.zeros(len(rows), np.float32)
        for j in range(d["cands"].shape[1]):
            hit = np.flatnonzero(acts == d["cands"][idx[rows], j])
            pair_target[hit] = self.target[idx[rows[hit]], j]
        t_rows = torch.from_numpy(rows)
        scores, _ = self.net.pair_scores(torch.from_numpy(d["obs"][idx]), t_rows, torch.from_numpy(acts),
                                         torch.from_numpy(feats))  # fmt: skip
        logp, _ = pair_log_softmax(scores, t_rows, len(idx))
        return -(torch.from_numpy(pair_target) * logp).sum() / len(idx), rows, acts, scores

    def measure(self, idx: np.ndarray, chunk: int = 4096) -> dict[str, float]:
        """Cross-entropy, agreement with the target's first choice (overall, and where that choice
        departs from candidate 0) and the network's own departures from candidate 0."""
        d, total, agree, departs, off, agree_off = self.data, 0.0, 0, 0, 0, 0
        self.net.eval()
        with self.torch.no_grad():
            for start in range(0, len(idx), chunk):
                part = idx[start : start + chunk]
                ce, rows, acts, scores = self.loss(part)
                top = self.torch.full((len(part),), -self.torch.inf).scatter_reduce(
                    0, self.torch.from_numpy(rows), scores, "amax")
                first = np.zeros(len(part), np.int64)  # each row's first choice
                at_top = (scores >= top[rows]).numpy()
                first[rows[at_top]] = acts[at_top]
                wanted = d["cands"][part, self.target[part].argmax(axis=1)]
                total += float(ce) * len(part)
                agree += int((first == wanted).sum())
                departs += int((first != d["cands"][part, 0]).sum())
                moved = wanted != d["cands"][part, 0]
                off, agree_off = off + int(moved.sum()), agree_off + int((first == wanted)[moved].sum())
        self.net.train()
        n = max(len(idx), 1)
        return {"cross_entropy": total / n, "agree_target": agree / n, "departs": departs / n,
                "agree_where_target_departs": agree_off / off if off else float("nan"), "target_departs": off / n}

    def epoch(self, train: np.ndarray, minibatch: int, rng: np.random.Generator) -> None:
        order = rng.permutation(train)
        for start in range(0, len(order), minibatch):
            loss = self.loss(order[start : start + minibatch])[0]
            self.optimizer.zero_grad()
            loss.backward()
            self.torch.nn.utils.clip_grad_norm_(self.net.parameters(), 0.5)
            self.optimizer.step()


def fit(train_paths: Sequence[str | Path], val_paths: Sequence[str | Path], target: str = "clear",
        epochs: int = 3, lr: float = 3e-4, minibatch: int = 1024, eta: float = 0.25, seed: int = 1,
        init: str | Path | None = None, out: str | Path | None = None, log=print) -> dict[str, Any]:  # fmt: skip
    """Distil the labels of ``train_paths`` into the network of ``init`` (default: the shipped
    ``ppo-league``); returns the per-epoch measurements and writes the policy to ``out`` if given."""
    from nertz_env.agents.policy import SHIPPED_POLICIES, save_policy

    init = init or SHIPPED_POLICIES["ppo-league"][0]
    data, counts = read([*train_paths, *val_paths])
    n_val = sum(counts[len(train_paths) :])
    train, val = np.arange(len(data["obs"]) - n_val), np.arange(len(data["obs"]) - n_val, len(data["obs"]))
    job = Fit(data, targets(data, target, eta, seed=seed), str(init), lr, seed)
    rng = np.random.default_rng(seed)
    seen = rng.choice(train, size=min(len(train), max(len(val), 1)), replace=False)
    history = [{"epoch": 0, "val": job.measure(val), "train": job.measure(seen)}]
    log(f"epoch 0: {history[-1]}")
    start = time.perf_counter()
    for e in range(1, epochs + 1):
        job.epoch(train, minibatch, rng)
        history.append({"epoch": e, "seconds": time.perf_counter() - start, "val": job.measure(val),
                        "train": job.measure(seen)})  # fmt: skip
        log(f"epoch {e}: {history[-1]}")
    report = {"target": target, "eta": eta, "epochs": epochs, "lr": lr, "minibatch": minibatch, "seed": seed,
              "init": str(init), "train_states": len(train), "val_states": len(val), "history": history,
              "train_files": [str(p) for p in train_paths], "val_files": [str(p) for p in val_paths]}  # fmt: skip
    if out is not None:
        job.net.eval()
        save_policy(out, job.net, job.config, tuple(job.blob["hidden"]), extra={"distill_search": report},
                    action_hidden=job.blob["action_hidden"])  # fmt: skip
    return report


def main(argv: Sequence[str] | None = None) -> int:
    ap = Parser(prog="python -m nertz_env.training.distill_search", description=__doc__.split("\n\n")[0])
    ap.add_argument("labels", nargs="+", help="label files of search_labels make (training states)")
    ap.add_argument("--val", nargs="+", required=True, help="label files held out for the measurements")
    ap.add_argument("--target", choices=TARGETS, default="clear", help="what the network is fitted to")
    ap.add_argument("--epochs", type=at_least(1), default=3, help="passes over the training states")
    ap.add_argument("--lr", type=number_from(0.0, inclusive=False), default=3e-4, help="Adam learning rate")
    ap.add_argument("--minibatch", type=at_least(1), default=1024, help="states per step")
    ap.add_argument("--eta", type=number_from(0.0, inclusive=False), default=0.25, help="temperature of soft")
    ap.add_argument("--seed", type=at_least(0), default=1, help="torch's and the order's seed")
    ap.add_argument("--init", default=None, help="the policy.pt to start from (default: the shipped ppo-league)")
    ap.add_argument("--out", type=output_file(".pt"), required=True, help="the distilled policy.pt")
    ap.add_argument("--json", type=output_file(".json"), default=None, help="also write the measurements here")
    a = ap.parse_args(argv)
    try:
        report = fit(a.labels, a.val, a.target, a.epochs, a.lr, a.minibatch, a.eta, a.seed, a.init, a.out)
    except USER_ERRORS as exc:
        ap.error(str(exc))
    if a.json is not None:
        Path(a.json).write_text(json.dumps(report, indent=1) + "\n")
    print(f"wrote {a.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
