"""A search whose evaluation is learned: CMA-ES over the weights of the ``heuristic``'s look-ahead.

The ``heuristic`` scores the places its look-ahead reaches with hand-set weights (``DEFAULTS`` of
``agents.heuristic``: empty work piles, a Nertz top that can go out next, a move that races an
opponent, the discount, ...). Here those weights are learned from play instead: a covariance
matrix adaptation evolution strategy (the ``cma`` package) proposes ``--popsize`` weight vectors
per generation; each plays ``--deals`` duplicate deals (with seat rotation) against three
``heuristic:depth=3`` with the default weights, and its fitness is its mean score difference per
deal against them. All candidates of a generation play the same deals (drawn afresh each
generation from ``--seed``), so they are compared on equal hands. The search itself is unchanged
(the same depth, the same moves tried): only what it counts as good is learned, and a decision
costs what a ``heuristic:depth=3`` decision costs.

    python -m nertz_env.training.tune_search --run-dir runs/tune --generations 24 --popsize 10 --deals 150

Each generation is checkpointed (``state.pkl``, ``history.json``); ``--resume`` goes on from the
last one. ``best.json`` holds the distribution's mean (the strategy's estimate of the best
weights, less noisy than the best single candidate) as an agent spec for ``nertz eval``.
"""

from __future__ import annotations

import json
import pickle
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from nertz_env import NertzConfig
from nertz_env.agents.heuristic import DEFAULTS, HeuristicAgent
from nertz_env.cli_checks import Parser, ascii_number, at_least
from nertz_env.training.checkpoint import atomic_write
from nertz_env.training.evaluate import evaluate

# The learned weights, each searched as a multiple of its default (gamma as itself, within bounds).
TUNED = ("empty", "nertz_found", "nertz_work", "nertz_unknown", "found_ready", "race", "draw", "step", "out",
         "waste_work", "gamma")  # fmt: skip
RIVAL = "heuristic:depth=3"


def weights_of(x: Sequence[float]) -> dict[str, float]:
    """The heuristic's weights from a point of the search space (multiples of the defaults; gamma
    itself)."""
    return {k: round(float(v) if k == "gamma" else float(v) * DEFAULTS[k], 4) for k, v in zip(TUNED, x)}


def spec_of(weights: dict[str, float], depth: int = 3) -> str:
    return f"heuristic:depth={depth}," + ",".join(f"{k}={v}" for k, v in weights.items())


def fitness(x: Sequence[float], deals: int, seed: int, players: int = 4) -> float:
    """Mean score difference per deal of the heuristic with these weights against each of
    ``players - 1`` default ``heuristic:depth=3`` (higher is better)."""
    config = NertzConfig(num_players=players)
    weights: dict[str, Any] = weights_of(x)  # the search's weights: none of them is HeuristicAgent's wait
    learner = HeuristicAgent(config, seed=seed, depth=3, **weights)
    report = evaluate([learner] + [RIVAL] * (players - 1), hands=deals, seed=seed, config=config, progress=False)
    diffs = [row["score_diff"] for row in report["paired"] if row["agent"] == report["agents"][0]]
    return float(np.mean(diffs))


def _start(args) -> tuple[Any, list[dict[str, Any]]]:
    import cma

    state = Path(args.run_dir) / "state.pkl"
    if args.resume:
        if not state.exists():
            raise SystemExit(f"--resume: no {state} to go on from (run without --resume first)")
        with open(state, "rb") as f:
            saved = pickle.load(f)
        return saved["es"], saved["history"]
    x0 = [DEFAULTS[k] if k == "gamma" else 1.0 for k in TUNED]
    lower = [0.5 if k == "gamma" else 0.0 for k in TUNED]
    upper = [1.0 if k == "gamma" else 4.0 for k in TUNED]
    options = {"bounds": [lower, upper], "popsize": args.popsize, "seed": args.seed + 1, "verbose": -9}
    return cma.CMAEvolutionStrategy(x0, args.sigma, options), []


def run(args) -> dict[str, Any]:
    out = Path(args.run_dir)
    out.mkdir(parents=True, exist_ok=True)
    es, history = _start(args)
    while len(history) < args.generations:
        g = len(history)
        candidates = es.ask()
        scores = [fitness(x, args.deals, seed=args.seed * 1000 + g) for x in candidates]
        es.tell(candidates, [-s for s in scores])  # cma minimises
        mean = weights_of(es.mean)
        history.append({"generation": g, "deal_seed": args.seed * 1000 + g, "scores": scores,
                        "best": max(scores), "median": float(np.median(scores)), "mean_weights": mean})  # fmt: skip
        print(f"generation {g}: candidates' score difference per deal median {np.median(scores):+.3f}, "
              f"best {max(scores):+.3f}; mean weights {mean}", flush=True)  # fmt: skip
        atomic_write(out / "state.pkl", lambda tmp: tmp.write_bytes(pickle.dumps({"es": es, "history": history})))
        atomic_write(out / "history.json", lambda tmp: tmp.write_text(json.dumps(history, indent=1)))
    best = {"weights": weights_of(es.mean), "spec": spec_of(weights_of(es.mean)), "generations": len(history),
            "popsize": args.popsize, "deals_per_candidate": args.deals, "seed": args.seed}  # fmt: skip
    atomic_write(out / "best.json", lambda tmp: tmp.write_text(json.dumps(best, indent=1)))
    return best


def main(argv: Sequence[str] | None = None) -> int:
    ap = Parser(prog="python -m nertz_env.training.tune_search", description=__doc__.split("\n\n")[0])
    ap.add_argument("--run-dir", required=True, help="where the checkpoint, history and best weights go")
    ap.add_argument("--generations", type=at_least(1), default=24, help="generations in all (with --resume too)")
    ap.add_argument("--popsize", type=at_least(2), default=10, help="candidates per generation")
    ap.add_argument("--deals", type=at_least(1), default=150, help="duplicate deals per candidate")
    ap.add_argument("--sigma", type=ascii_number(float), default=0.3, help="the strategy's first step size")
    ap.add_argument("--seed", type=at_least(0), default=7, help="seeds the strategy and every generation's deals")
    ap.add_argument("--resume", action="store_true", help="go on from the run directory's state.pkl")
    args = ap.parse_args(argv)
    if not 0 < args.sigma <= 2:
        ap.error(f"--sigma {args.sigma}: accepted a number in (0, 2]")
    try:
        import cma  # noqa: F401
    except ImportError:
        ap.error('needs the cma package: pip install -e ".[training]"')
    best = run(args)
    print(f"learned weights (the strategy's mean): {best['spec']}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
