"""Where a vector tick's time goes: the CPU time of each part of ``engine.step_batch``, per game-tick.

``python -m nertz_env.benchmarks.tick_parts [--batch 1024] [--players 4] [--repeats 7]`` records
100 ticks of the compiled sampler's random legal actions on ``B`` standard games after 50 ticks
of play, then replays them from the same start state: the whole composed tick
(``engine.step_batch``: rules, rewards, flags, observations, masks, redeals), the rules alone
(``engine.step_rules_batch``), and the observations and masks of every game on the table each
tick leaves (``engine.observe_batch``). The rest (rewards, end flags, the episode records) is
the whole less the parts. Each figure is the fastest of ``--repeats`` replays by CPU time, in
microseconds per game-tick (one tick of one game, ``P`` agent-steps).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from nertz_env import engine
from nertz_env.benchmarks.compare_workload import fastest_cpu
from nertz_env.cli_checks import Parser, at_least, output_file
from nertz_env.vector import NertzVectorEnv

TICKS, WARMUP = 100, 50


def measure(batch: int = 1024, players: int = 4, repeats: int = 7) -> dict[str, float]:
    """The parts in microseconds of CPU per game-tick (see the module doc)."""
    env = NertzVectorEnv(batch, num_players=players, seed=0)
    env.reset(seed=1)
    for _ in range(WARMUP):
        env.step(env.sample_actions())
    start = engine.copy_state(env.state)
    actions = np.zeros((TICKS, batch, players), np.int64)
    for t in range(TICKS):
        actions[t] = env.sample_actions()
        env.step(actions[t])
    # writable copies, as the vector env passes them (the same compiled kernels)
    cfg, table, speed = env.config.packed.copy(), env.catalogue.table.copy(), env.config.speed_weights
    plan, out = engine.mask_plan(table), env.buffers
    states = []  # the table after each tick (for the observation pass), from the rules alone
    s = engine.copy_state(start)
    for t in range(TICKS):
        engine.step_rules_batch(s, actions[t], cfg, table, speed)
        states.append(engine.copy_state(s))

    def whole() -> None:
        s = engine.copy_state(start)
        for t in range(TICKS):
            engine.step_batch(s, actions[t], cfg, table, speed, plan, 0.0, out)

    def rules() -> None:
        s = engine.copy_state(start)
        for t in range(TICKS):
            engine.step_rules_batch(s, actions[t], cfg, table, speed)

    def observe() -> None:
        for t in range(TICKS):
            engine.observe_batch(states[t], cfg, table, plan, out.obs, out.masks)

    per = 1e6 / (TICKS * batch)
    copy = fastest_cpu(lambda: engine.copy_state(start), repeats)  # whole() and rules() copy it once
    parts = {
        "whole": (fastest_cpu(whole, repeats) - copy) * per,
        "rules": (fastest_cpu(rules, repeats) - copy) * per,
        "observations_and_masks": fastest_cpu(observe, repeats) * per,
    }
    parts["rest"] = parts["whole"] - parts["rules"] - parts["observations_and_masks"]
    parts["agent_steps_per_cpu_s"] = players * 1e6 / parts["whole"]
    return parts


def main(argv: Sequence[str] | None = None) -> int:
    ap = Parser(prog="python -m nertz_env.benchmarks.tick_parts", description=__doc__.split("\n\n")[0])
    ap.add_argument("--batch", type=at_least(1), default=1024, help="games per tick")
    ap.add_argument("--players", type=at_least(2), default=4, help="seats per game (2 to 8)")
    ap.add_argument("--repeats", type=at_least(1), default=7, help="replays per figure (the fastest counts)")
    ap.add_argument("--json", metavar="PATH", type=output_file(), help="also write the figures as JSON")
    args = ap.parse_args(argv)
    if args.players > 8:
        ap.error(f"--players {args.players}: a table seats 2 to 8 players")
    parts = measure(args.batch, args.players, args.repeats)
    for name, value in parts.items():
        unit = "" if name == "agent_steps_per_cpu_s" else " us per game-tick"
        print(f"{name:<24}{value:>14,.3f}{unit}")
    if args.json:
        Path(args.json).write_text(json.dumps({"batch": args.batch, "players": args.players, **parts}, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
