"""Soak check: long random play across random rule sets, with the process's memory sampled.

Each round draws a config (players, work piles, draw, every house rule of R3, R4.8 and R8, the
presets), then plays random legal actions through ``NertzVectorEnv`` (a random batch size),
round-trips tables through ``Game.get_state`` / ``set_state``, and asks the scripted agents for
moves on the observations. The resident set size (RSS, ``/proc/self/status``) is sampled every
``--sample`` seconds. A leak shows as RSS that keeps rising once every config's kernels are
compiled: the report gives the RSS after the warm-up and at the end, its maximum, and the slope
of a least-squares line through the samples of the second half, in MiB per minute.

Usage: ``python -m nertz_env.benchmarks.soak --minutes 2 --seed 0 [--json soak.json]``
"""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Sequence
from typing import Any

import numpy as np

from nertz_env import agents
from nertz_env.cli_checks import Parser, at_least, number_from, output_file
from nertz_env.game import Game
from nertz_env.vector import NertzVectorEnv


def rss_mib() -> float:
    """This process's resident set size in MiB (Linux)."""
    with open("/proc/self/status") as fh:
        for line in fh:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return float("nan")


def random_config(rng: np.random.Generator) -> dict[str, Any]:
    """Options for ``NertzConfig.from_kwargs``: every house rule on or off at random."""
    players = int(rng.integers(2, 9))
    options: dict[str, Any] = {
        "num_players": players,
        "work_piles": int(rng.integers(4, 7)),
        "stock_draw": int(rng.choice([1, 3])),
        "nertz_builds": bool(rng.random() < 0.3),
        "turn_based": bool(rng.random() < 0.2),
        "partners": bool(players in (4, 6, 8) and rng.random() < 0.3),
        "slide_under": bool(rng.random() < 0.8),
        "collision": str(rng.choice(["random", "seat"])),
        "max_cycles": int(rng.integers(50, 2001)),
    }
    if rng.random() < 0.25:
        options["move_ticks"] = {"draw": int(rng.integers(1, 3)), "foundation": int(rng.integers(1, 4))}
    if rng.random() < 0.25:
        options.update(episode="match", target_score=int(rng.integers(10, 101)))
    if rng.random() < 0.2:
        options["preset"] = str(rng.choice(["snerts", "nerds", "pounce", "family"]))
    return options


def play_round(options: dict[str, Any], rng: np.random.Generator, ticks: int) -> int:
    """One config: vector play, table round trips and agent moves; returns agent-steps played."""
    env = NertzVectorEnv(int(rng.integers(1, 65)), seed=int(rng.integers(2**31)), **options)
    obs, masks = env.reset()
    config = env.config
    game, twin = Game(config), Game(config)
    game.reset(seed=int(rng.integers(2**31)))
    players = [agents.make(name, seed=int(rng.integers(2**31)), config=config) for name in ("random", "greedy")]
    steps = 0
    for t in range(ticks):
        obs, masks, *_ = env.step(env.sample_actions())
        steps += env.num_agents
        if t % 16 == 0:
            rows = obs.reshape(-1, env.obs_dim), masks.reshape(-1, env.num_actions)
            players[t // 16 % 2].act_batch(*rows)
            game.step([rng.choice(np.flatnonzero(game.masks[p])) for p in range(config.num_players)])
            if game.ended:
                game.reset()
            twin.set_state(game.get_state())
    return steps


def main(argv: Sequence[str] | None = None) -> int:
    ap = Parser(prog="python -m nertz_env.benchmarks.soak", description=__doc__.split("\n\n")[0])
    ap.add_argument("--minutes", type=number_from(0, inclusive=False), default=2.0, help="how long to play")
    ap.add_argument("--seed", type=at_least(0), default=0, help="the seed of the configs and the play")
    ap.add_argument("--ticks", type=at_least(1), default=400, help="ticks per config")
    ap.add_argument("--sample", type=number_from(0), default=2.0, help="seconds between RSS samples")
    ap.add_argument("--json", type=output_file(), default=None, help="write the samples and the summary here")
    args = ap.parse_args(argv)
    rng = np.random.default_rng(args.seed)
    start = time.perf_counter()
    samples: list[tuple[float, float]] = [(0.0, rss_mib())]
    rounds = steps = 0
    refused = 0
    while (now := time.perf_counter() - start) < args.minutes * 60:
        options = random_config(rng)
        try:
            steps += play_round(options, rng, args.ticks)
        except ValueError:  # a combination NertzConfig refuses (it names why); draw another
            refused += 1
            continue
        rounds += 1
        if now - samples[-1][0] >= args.sample:
            samples.append((now, rss_mib()))
    samples.append((time.perf_counter() - start, rss_mib()))
    t, m = np.array(samples).T
    half = t >= t[-1] / 2
    slope = float(np.polyfit(t[half] / 60, m[half], 1)[0]) if half.sum() >= 2 else float("nan")
    summary = {
        "minutes": float(t[-1] / 60), "configs": rounds, "configs_refused": refused, "agent_steps": steps,
        "rss_start_mib": float(m[0]),
        "rss_after_warmup_mib": float(m[half][0]), "rss_end_mib": float(m[-1]), "rss_max_mib": float(m.max()),
        "second_half_slope_mib_per_min": slope,
    }  # fmt: skip
    for key, value in summary.items():
        print(f"{key:>32}: {value:,.2f}" if isinstance(value, float) else f"{key:>32}: {value:,}")
    if args.json:
        with open(args.json, "w") as fh:
            json.dump({"summary": summary, "samples": samples, "seed": args.seed}, fh, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
