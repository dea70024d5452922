"""Where the self-play trainer's time goes: learner decisions per second, end to end (rollout and
update), and the split between the batched env, the move features, the teacher's labels, the
rollout's forward pass and draws, the opponents, GAE and the update.

It builds the trainer of ``train_selfplay`` from the same flags (any of them may follow, e.g.
``--lookahead-features false`` for the search-free policy, ``--threads 2``), runs ``--updates``
updates after one warm-up, and prints the median over them of each share and of the rate. With
``--peer dense`` it also times the same updates with the observation summary's first layer as a
dense matrix product (``agents.policy``'s former path) in the same run, for the ratio; with
``--peer catalogue``, the same updates with ``--sampler catalogue`` (rollouts drawing one number
per catalogue entry, as runs did before the flag); with ``--peer afterstate``, the same updates
with ``--afterstate false`` (the trainer flags then ask for ``--afterstate true``).

    python -m nertz_env.training.profile_selfplay --updates 5 -- --lookahead-features false --bc-steps 0

A trainer flag ``--resume CHECKPOINT`` times the updates of a run from where it stopped (its policy,
pool and games). ``--json F`` also writes the figures, the flags, the torch threads and the load average to ``F``.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import time
from collections.abc import Sequence

import torch

from nertz_env.cli_checks import Parser, at_least, output_file
from nertz_env.training import train_selfplay
from nertz_env.training.selfplay_ppo import advantages, collect, update

PARTS = ("env", "features", "teacher", "net", "opponents", "gae", "update")


def profile(argv: Sequence[str], updates: int, dense: bool = False, as_command: bool = False) -> dict[str, float]:
    """Median shares of each part and ``decisions_per_s`` over ``updates`` updates (after one
    warm-up) of the trainer ``train_selfplay`` builds from ``argv``. ``as_command``: a bad trainer
    flag is one line (``train_selfplay.open_trainer``)."""
    t, loop, buf, first = train_selfplay.open_trainer(argv, as_command)
    if dense:
        def dense_summary(obs, pre_add=None):
            pre = t.net.body[0](obs.float() * t.net.scale)
            return t.net.body[1:](pre if pre_add is None else pre + pre_add)

        t.net.summary = dense_summary  # type: ignore[method-assign]  # profiled in place of the sparse one
    rows: list[dict[str, float]] = []
    for i in range(updates + 1):
        cloning, lr, bc_coef = train_selfplay.apply_schedule(t, first + i)
        began = time.perf_counter()
        collect(t, buf, loop, bc_coef, train_selfplay.draw_temperature(t, cloning))
        rolled = time.perf_counter()
        adv, ret = advantages(t, buf, loop)
        gae = time.perf_counter()
        update(t, buf, adv, ret, cloning, bc_coef)  # the hidden-card critic's fit included
        done = time.perf_counter()
        if i:
            total = done - began
            row = {k: buf.times[k] / total for k in PARTS[:5]}
            row.update(gae=(gae - rolled) / total, update=(done - gae) / total, decisions_per_s=t.batch_size / total)
            rows.append(row)
    return {k: statistics.median(r[k] for r in rows) for k in (*PARTS, "decisions_per_s")}


def repeated(argv: Sequence[str], updates: int, dense: bool, repeats: int) -> dict:
    """``profile`` run ``repeats`` times, for the command (a bad trainer flag is one line): the
    median of each figure over them, and every rate."""
    runs = [profile(argv, updates, dense, as_command=True) for _ in range(repeats)]
    medians: dict = {k: statistics.median(r[k] for r in runs) for k in runs[0]}
    medians["rates"] = [r["decisions_per_s"] for r in runs]
    return medians


def main(argv: Sequence[str] | None = None) -> None:
    parser = Parser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--updates", type=at_least(1), default=5, help="updates timed after one warm-up (median over them)"
    )
    parser.add_argument(
        "--peer", choices=["none", "dense", "catalogue", "afterstate"], default="none",
        help="also time the dense first layer, the catalogue sampler or the network without afterstates (same run)",
    )  # fmt: skip
    parser.add_argument("--repeats", type=at_least(1), default=1, help="profiles run (medians over them)")
    parser.add_argument("--json", type=output_file(), default=None, help="also write the figures to this JSON file")
    parser.add_argument("trainer", nargs=argparse.REMAINDER, help="train_selfplay flags, after --")
    a = parser.parse_args(argv)
    flags = [f for f in a.trainer if f != "--"]
    peers = {"none": [], "dense": [("dense first layer", flags, True)],
             "catalogue": [("catalogue sampler", [*flags, "--sampler", "catalogue"], False)],
             "afterstate": [("without afterstates", [*flags, "--afterstate", "false"], False)]}  # fmt: skip
    runs = [("this trainer", flags, False), *peers[a.peer]]
    results = {name: repeated(trainer_flags, a.updates, dense, a.repeats) for name, trainer_flags, dense in runs}
    print(f"torch threads {torch.get_num_threads()}, trainer flags: {' '.join(flags) or '(defaults)'}")
    for name, r in results.items():
        split = ", ".join(f"{k} {100 * r[k]:.0f}%" for k in PARTS)
        spread = f" [{min(r['rates']):,.0f} to {max(r['rates']):,.0f} over {a.repeats}]" if a.repeats > 1 else ""
        print(f"{name}: {r['decisions_per_s']:,.0f} decisions/s{spread} ({split})")
    if len(results) == 2:
        first, second = results.values()
        print(f"ratio: {first['decisions_per_s'] / second['decisions_per_s']:.2f}x")
    if a.json:
        record = {
            "torch_threads": torch.get_num_threads(),
            "trainer_flags": flags,
            "updates": a.updates,
            "repeats": a.repeats,
            "load_average": os.getloadavg(),
            "results": results,
        }
        with open(a.json, "w") as f:
            json.dump(record, f, indent=1)


if __name__ == "__main__":
    main()
