"""The fixed workloads of ``nertz_env.benchmarks.compare``, run on one source tree in its own process.

``python compare_workload.py TREE`` imports the ``nertz_env`` of the source tree ``TREE`` (and its
agents, wherever that tree keeps them), runs each workload once to warm up and then ``--runs``
times, and prints one JSON object: per workload the rate from the fastest run's CPU time (the run
least disturbed by other processes). The workloads are fixed and seeded, so both trees do the same
work:

- ``parallel``: the PettingZoo parallel API, 4 players, three hands (seeds 0-2) of uniformly random
  legal actions drawn in Python; agent-steps per CPU second;
- ``vector``: ``NertzVectorEnv`` B=1024, 100 steps of its compiled sampler's actions after a
  seeded reset; agent-steps per CPU second;
- ``engine``: the rules alone, 100 recorded ticks of B=1024 games replayed from one start state;
  agent-steps per CPU second;
- ``heuristic``: the ``heuristic`` agent's batched decisions on the 4096 observations and masks
  the vector env left; decisions per CPU second;
- ``blocks_whole``, ``move_ticks``, ``nertz_builds``: ``vector`` with one house rule on
  (``OPTION_GAMES``), so the paths the standard game skips are timed too; ``null`` where the tree
  does not know the option.

It imports nothing from the tree that runs the comparison, so it works on older layouts too (top-
level ``agents``, the engine's old batch kernel names).
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import sys
import time

import numpy as np

BATCH, TICKS = 1024, 100
OPTION_GAMES = {  # workload: the house rule it turns on (the masks go row by row; moves take time; R4.8)
    "blocks_whole": {"block_moves": "whole"},
    "move_ticks": {"move_ticks": 2},
    "nertz_builds": {"nertz_builds": True},
}


def load(tree: str):
    """The tree's ``engine`` and ``agents`` modules, and whether the engine has ``step_rules_batch``."""
    sys.path.insert(0, tree)
    import nertz_env

    if not nertz_env.__file__.startswith(os.path.abspath(tree)):
        raise SystemExit(f"imported nertz_env from {nertz_env.__file__}, not from {tree}")
    agents_dir = os.path.join(tree, "agents")
    with open(os.path.join(tree, "pyproject.toml")) as f:
        mapped = '"nertz_env.agents" = "agents"' in f.read()
    if mapped:  # agents/ installs as nertz_env.agents: load this tree's (an editable install maps another's)
        spec = importlib.util.spec_from_file_location(
            "nertz_env.agents", os.path.join(agents_dir, "__init__.py"), submodule_search_locations=[agents_dir]
        )
        agents = importlib.util.module_from_spec(spec)
        sys.modules["nertz_env.agents"] = agents
        spec.loader.exec_module(agents)
        nertz_env.agents = agents
    else:  # the older layout: a top-level agents package
        agents = importlib.import_module("agents")
    from nertz_env import engine

    return engine, agents


def fastest_cpu(fn, runs: int) -> float:
    """The least CPU time of ``runs`` calls of ``fn`` (after one warm-up call): the run least
    disturbed by other processes."""
    fn()
    times = []
    for _ in range(runs):
        c = time.process_time()
        fn()
        times.append(time.process_time() - c)
    return min(times)


def best_rate(work: int, fn, runs: int) -> float:
    return work / fastest_cpu(fn, runs)


def parallel_rate(runs: int) -> float:
    from nertz_env import nertz_v0

    env = nertz_v0.parallel_env(num_players=4)

    def play() -> int:
        steps = 0
        for seed in range(3):
            obs, _ = env.reset(seed=seed)
            rng = np.random.default_rng(seed)
            while env.agents:
                actions = {}
                for a in env.agents:
                    legal = np.flatnonzero(obs[a]["action_mask"])
                    actions[a] = int(legal[rng.integers(len(legal))])
                obs, *_ = env.step(actions)
                steps += len(actions)
        return steps

    return best_rate(play(), play, runs)


def engine_rate(engine, env, runs: int) -> float:
    env.reset(seed=2)
    start = engine.copy_state(env.state)
    record = np.zeros((TICKS, BATCH, env.num_players), np.int64)
    for t in range(TICKS):
        record[t] = env.sample_actions()
        env.step(record[t])
    cfg, table, speed = env.config.packed, env.catalogue.table, env.config.speed_weights
    if hasattr(engine, "step_rules_batch"):

        def replay():
            s = engine.copy_state(start)
            for t in range(TICKS):
                engine.step_rules_batch(s, record[t], cfg, table, speed)
    else:  # the older name of the rules-only batch kernel
        from nertz_env.engine import batch as kernels

        ended = np.zeros(BATCH, np.int64)

        def replay():
            s = engine.copy_state(start)
            for t in range(TICKS):
                kernels.step_only_batch(s, record[t], cfg, table, speed, ended)

    return best_rate(TICKS * BATCH * env.num_players, replay, runs)


def vector_rate(env_class, runs: int, **options) -> float | None:
    """The ``vector`` workload, under ``options`` if given; None if the tree refuses them (an older
    tree)."""
    try:
        env = env_class(BATCH, seed=0, **options)
    except (TypeError, ValueError):
        return None

    def steps():
        env.reset(seed=1)
        for _ in range(TICKS):
            env.step(env.sample_actions())

    return best_rate(TICKS * BATCH * env.num_players, steps, runs)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("tree")
    ap.add_argument("--runs", type=int, default=7)
    args = ap.parse_args()
    if args.runs < 1:  # plain argparse: nertz_env.cli_checks would import another tree's nertz_env first
        ap.error(f"argument --runs: expected an integer >= 1, got {args.runs}")
    if not os.path.isfile(os.path.join(args.tree, "pyproject.toml")):
        ap.error(f"argument tree: {args.tree!r} is not a nertz-env source tree (no pyproject.toml)")
    engine, agents = load(os.path.abspath(args.tree))
    from nertz_env.vector import NertzVectorEnv

    out = {"parallel": parallel_rate(args.runs), "vector": vector_rate(NertzVectorEnv, args.runs)}
    env = NertzVectorEnv(BATCH, seed=0)
    out["engine"] = engine_rate(engine, env, args.runs)
    obs = env.observations.reshape(-1, env.obs_dim).copy()
    masks = env.action_masks.reshape(-1, env.num_actions).copy()
    heuristic = agents.make("heuristic", config=env.config)
    out["heuristic"] = best_rate(obs.shape[0], lambda: heuristic.act_batch(obs, masks), args.runs)
    for name, options in OPTION_GAMES.items():
        out[name] = vector_rate(NertzVectorEnv, args.runs, **options)
    print(json.dumps(out))


if __name__ == "__main__":
    main()
