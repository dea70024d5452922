"""Where a tick of the parallel API's benchmark loop goes: the loop's own random choice from each
agent's mask, ``env.step``, and inside it the compiled tick of the game (``Game.play``).

``python -m nertz_env.benchmarks.parallel_parts [--ticks 20000] [--repeats 5]`` plays ``--ticks``
ticks of ``nertz_v0.parallel_env(num_players=4)`` the way ``nertz bench`` does (one uniformly
random legal action per agent, chosen in Python; a new hand when one ends), timing the choice and
the step of each tick; then plays the same hands again (the same seed and actions) through
``Game.play`` alone. Each figure is the median over ``--repeats`` of the microseconds of wall time per tick.

``--peer`` instead runs ``nertz bench``'s parallel-API row and OpenSpiel's ``crazy_eights`` row
alternately, ``--repeats`` rounds, the loop choosing with ``mask.nonzero()[0]`` (the bench's
``pick``) and with ``np.flatnonzero`` (as the bench did before): the same actions, so the two
ratios show what the loop's choice itself costs.
"""

from __future__ import annotations

import json
import statistics
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from nertz_env import nertz_v0
from nertz_env.benchmarks.throughput import nertz_parallel, openspiel, pick, pick_flatnonzero
from nertz_env.cli_checks import Parser, at_least, output_file


def one_run(ticks: int) -> dict[str, float]:
    """Microseconds per tick of the choice, the step and the bound tick alone, over ``ticks``."""
    env = nertz_v0.parallel_env(num_players=4)
    game, rng = env.unwrapped.game, np.random.default_rng(0)
    obs, _ = env.reset(seed=0)
    rows, choose, step = np.zeros((ticks, 4), np.int64), 0.0, 0.0
    for t in range(ticks):
        t0 = time.perf_counter()
        actions = {a: pick(obs[a]["action_mask"], rng) for a in env.agents}
        t1 = time.perf_counter()
        obs, *_ = env.step(actions)
        step += time.perf_counter() - t1
        choose += t1 - t0
        rows[t] = game.actions
        if not env.agents:
            obs, _ = env.reset()
    # the same hands again (the same seed and actions deal and play them), the compiled tick alone
    env = nertz_v0.parallel_env(num_players=4)
    game, play = env.unwrapped.game, 0.0
    env.reset(seed=0)
    for row in rows:
        game.actions[:] = row
        t0 = time.perf_counter()
        game.play()
        play += time.perf_counter() - t0
        if game.ended:
            env.reset()
    return {"choice": 1e6 * choose / ticks, "step": 1e6 * step / ticks, "tick": 1e6 * play / ticks}


def measure(ticks: int = 20_000, repeats: int = 5) -> dict[str, float]:
    one_run(1_000)  # compiled code loaded, caches warm
    runs = [one_run(ticks) for _ in range(repeats)]
    return {k: statistics.median(r[k] for r in runs) for k in runs[0]}


def against_peer(repeats: int = 3, seconds: float = 1.0) -> dict[str, Any]:
    """Rounds of the parallel API's rate with each choice and ``crazy_eights``' rate, and the
    medians of the ratios."""
    rounds = []
    for _ in range(repeats):
        nonzero = nertz_parallel(5, seconds)
        flat = nertz_parallel(5, seconds, pick_flatnonzero)
        peer = openspiel("crazy_eights", 5, seconds)
        if isinstance(peer, str):
            raise SystemExit(f"--peer needs OpenSpiel: {peer}")
        rounds.append({"nonzero": nonzero["agent_steps_per_s"], "flatnonzero": flat["agent_steps_per_s"],
                       "crazy_eights": peer["agent_steps_per_s"]})  # fmt: skip
    ratios = {k: statistics.median(r[k] / r["crazy_eights"] for r in rounds) for k in ("nonzero", "flatnonzero")}
    return {"rounds": rounds, "ratio_to_crazy_eights": ratios}


def main(argv: Sequence[str] | None = None) -> int:
    ap = Parser(prog="python -m nertz_env.benchmarks.parallel_parts", description=__doc__.split("\n\n")[0])
    ap.add_argument("--ticks", type=at_least(1), default=20_000, help="ticks per run")
    ap.add_argument("--repeats", type=at_least(1), default=5, help="runs (the median counts)")
    ap.add_argument("--json", metavar="PATH", type=output_file(), help="also write the figures as JSON")
    ap.add_argument("--peer", action="store_true", help="the bench's row against crazy_eights, with each choice")
    args = ap.parse_args(argv)
    if args.peer:
        result = against_peer(args.repeats)
        for r in result["rounds"]:
            print(f"parallel API {r['nonzero']:,.0f} (np.flatnonzero choice {r['flatnonzero']:,.0f}), "
                  f"crazy_eights {r['crazy_eights']:,.0f}")  # fmt: skip
        ratios = result["ratio_to_crazy_eights"]
        print(f"median ratio to crazy_eights: {ratios['nonzero']:.2f} with mask.nonzero()[0], "
              f"{ratios['flatnonzero']:.2f} with np.flatnonzero")  # fmt: skip
        if args.json:
            Path(args.json).write_text(json.dumps(result, indent=1))
        return 0
    parts = measure(args.ticks, args.repeats)
    print(f"per tick of 4 agents (µs, median of {args.repeats} runs of {args.ticks} ticks): "
          f"random choice {parts['choice']:.2f}, env.step {parts['step']:.2f}, "
          f"of which the compiled tick {parts['tick']:.2f}")  # fmt: skip
    if args.json:
        Path(args.json).write_text(json.dumps({"ticks": args.ticks, "repeats": args.repeats, **parts}, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
