"""What one decision of each agent costs: decisions per CPU-second, batched and one at a time.

    python -m nertz_env.benchmarks.decision_cost
    python -m nertz_env.benchmarks.decision_cost --agents heuristic ppo --repeats 7 --out costs.json

The rows are real positions: ``--rows`` observations and masks taken from 4-player games of
``greedy`` players stepped by the batched env (every seat, every third tick), the same
rows for every agent. *Batched*: ``act_batch`` on all rows at once, as a vector env's loop calls
an agent. *Single*: ``act_batch`` on one row at a time (``--single-rows`` of them, spread over the
sample), as a PettingZoo loop calls ``act``. Both include ``act_batch``'s checks of its inputs.
Each rate is the median of ``--repeats`` runs of CPU time (``time.process_time``, all threads
counted) after one warm-up call (compiled code loaded); torch runs on one thread.
The column "computes" says what the agent works out at each decision.
"""

from __future__ import annotations

import json
import statistics
import time
from collections.abc import Sequence
from typing import Any

import numpy as np

from nertz_env import agents
from nertz_env.cli_checks import USER_ERRORS, Parser, at_least, output_file
from nertz_env.config import NertzConfig
from nertz_env.vector import NertzVectorEnv

AGENTS = ("random", "greedy", "heuristic", "heuristic:depth=3", "ppo", "ppo-league", "ppo-search")

# What each agent computes at a decision (agents/ and agents/policies/README.md).
COMPUTES = {
    "random": "one uniform draw among the legal moves",
    "passive": "a fixed priority over the legal moves",
    "greedy": "a fixed priority over the legal moves",
    "heuristic": "depth-2 own-move search (every legal move, then every reply of its own)",
    "heuristic:depth=3": "depth-3 own-move search",
    "ppo": "features of each legal move's immediate effect (the heuristic's depth-1 value of the table it leaves "
    "among them) and of the opponents' cards in reach + one network forward pass (no search)",
    "ppo-league": "features of each legal move's immediate effect + one network forward pass (no search)",
    "ppo-search": "depth-3 own-move search (its features) + one network forward pass",
    "rollout": "3 candidates x 16 determinised play-outs of 8 ticks by ppo-league (4 seats), its critic at the end",
}


def sample_rows(rows: int, every: int = 3, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """``rows`` observations and masks (int8) from 4-player games of ``greedy`` players."""
    config = NertzConfig()
    env = NertzVectorEnv(64, seed=seed)
    player = agents.make("greedy", seed=seed, config=config)
    obs, masks = env.reset(seed=seed)
    kept_obs, kept_masks, tick = [], [], 0
    while sum(len(o) for o in kept_obs) < rows:
        flat_obs, flat_masks = obs.reshape(-1, obs.shape[-1]), masks.reshape(-1, masks.shape[-1])
        if tick % every == 0:
            kept_obs.append(flat_obs.copy())
            kept_masks.append(flat_masks.copy())
        actions = player.act_batch(flat_obs, flat_masks).reshape(masks.shape[:2])
        obs, masks, *_ = env.step(actions)
        tick += 1
    return np.concatenate(kept_obs)[:rows], np.concatenate(kept_masks)[:rows]


def _cpu_rate(call, decisions: int, repeats: int) -> float:
    call()  # warm-up
    rates = []
    for _ in range(repeats):
        c0 = time.process_time()
        call()
        rates.append(decisions / max(time.process_time() - c0, 1e-9))
    return statistics.median(rates)


def decision_cost(
    specs: Sequence[str] = AGENTS, rows: int = 4096, single_rows: int = 256, repeats: int = 5, seed: int = 0
) -> list[dict[str, Any]]:
    """One row per agent: ``spec``, ``computes``, ``batched`` and ``single`` decisions per CPU-second."""
    try:
        import torch

        torch.set_num_threads(1)
    except ImportError:  # the scripted agents need no torch
        pass
    built = [(spec, agents.make_spec(spec, seed=seed, config=NertzConfig())) for spec in specs]  # names checked first
    obs, masks = sample_rows(rows, seed=seed)
    out = []
    for spec, agent in built:
        batched = _cpu_rate(lambda a=agent: a.act_batch(obs, masks), rows, repeats)
        spread = np.linspace(0, rows - 1, min(single_rows, rows)).astype(np.int64)  # early and late positions alike

        def one_by_one(a=agent, spread=spread) -> None:
            for i in spread:
                a.act_batch(obs[i : i + 1], masks[i : i + 1])

        single = _cpu_rate(one_by_one, len(spread), repeats)
        name = agents.parse_spec(spec)[0]
        out.append({"spec": spec, "computes": COMPUTES.get(spec, COMPUTES.get(name, "")), "batched": batched,
                    "single": single})  # fmt: skip
    return out


def format_costs(results: list[dict[str, Any]], rows: int) -> str:
    width = max(len(r["spec"]) for r in results)
    lines = [f"{'agent':<{width}}  {'batched/CPU-s':>13}  {'single/CPU-s':>12}  computes ({rows} rows batched)"]
    for r in results:
        lines.append(f"{r['spec']:<{width}}  {r['batched']:>13,.0f}  {r['single']:>12,.0f}  {r['computes']}")
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None, prog: str = "python -m nertz_env.benchmarks.decision_cost") -> int:
    ap = Parser(prog=prog, description=__doc__.split("\n\n")[0])
    ap.add_argument("--agents", nargs="+", default=list(AGENTS), help="agent names or name:key=value,... specs")
    ap.add_argument("--rows", type=at_least(1), default=4096, help="positions in the batch")
    ap.add_argument("--single-rows", type=at_least(1), default=256, help="positions decided one at a time")
    ap.add_argument("--repeats", type=at_least(1), default=5, help="runs per rate (the median is reported)")
    ap.add_argument("--seed", type=at_least(0), default=0, help="seed of the games the positions come from")
    ap.add_argument("--out", type=output_file(), default=None, help="write the rates as JSON")
    args = ap.parse_args(argv)
    try:
        results = decision_cost(args.agents, args.rows, args.single_rows, args.repeats, args.seed)
    except USER_ERRORS as e:
        ap.error(str(e))
    print(format_costs(results, args.rows))
    if args.out:
        with open(args.out, "w") as f:
            json.dump({"rows": args.rows, "single_rows": args.single_rows, "repeats": args.repeats,
                       "seed": args.seed, "results": results}, f, indent=1)  # fmt: skip
        print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
