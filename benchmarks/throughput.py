"""Throughput of Nertz and of peer card-game environments, in agent-steps per second.

An agent-step is one agent's action applied by the environment, with the observation (and, where
the env has one, the legal-action mask) it hands back. Every env is driven by the same loop:
uniformly random legal actions, a new hand when one ends. Python-API envs pick their actions in
Python (``mask.nonzero()[0]`` and one uniform draw); the batched Nertz env uses its
compiled sampler. Every figure is the median of ``--repeats`` runs of about ``--seconds``
wall-clock seconds each, on one core (the vector env with ``num_threads=1`` unless ``--threads``).
Beside the wall-clock rate, the rate per second of this process's CPU time: on a shared machine it
leaves out the time the OS gave to other processes (with threads it adds up all threads).

Measured:

a. ``nertz_v0`` through the PettingZoo parallel API, 4 players;
b. ``NertzVectorEnv`` at several batch sizes, observations and masks included;
c. the rules engine alone: ``tick.step`` and the redeal of ended hands, replaying the actions
   recorded in (b), no observations, masks or rewards;
d. the standard doors to the batched engine, each beside the wrapped parallel env (when torchrl is
   installed): TorchRL's ``PettingZooWrapper`` over ``nertz_v0`` against the native
   ``NertzTorchRLEnv`` (both stepped by ``step_and_maybe_reset``, as TorchRL's collectors do, with
   actions from the compiled sampler on the tensordict's masks; float32 observations, ``state``
   included, and once with int8 observations and no ``state``); Gymnasium's ``SyncVectorEnv`` of
   ``NertzSingle-v0`` (three ``random`` opponents) against ``NertzGymVectorEnv`` (self-play, every
   seat a sub-env); every seat's action counts as an agent-step;
e. peers, when installed (``pip install 'nertz-env[bench]'`` and pygame for PettingZoo's classic
   envs): PettingZoo ``leduc_holdem_v4`` and ``texas_holdem_no_limit_v6`` (AEC), OpenSpiel's C++
   ``hearts`` and ``crazy_eights`` (4 players) with the acting player's observation tensor built
   every step (``hearts`` has no observation tensor: its information-state tensor is built).

Also the numba compile time of the vector env on first use, measured in a subprocess with an
empty ``NUMBA_CACHE_DIR``, and the start-up once the cache is filled.

Usage: ``nertz bench [--json out.json] [--repeats 5] [--quick] [--doors-only | --no-doors] [--no-compile]`` (or
``python -m nertz_env.benchmarks.throughput``)
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
import warnings
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

BATCH_SIZES = (64, 256, 1024, 4096)
ENGINE_BATCH = 1024
PEERS = ("leduc_holdem_v4", "texas_holdem_no_limit_v6", "hearts", "crazy_eights")


def measure(chunk: Callable[[], int], repeats: int, seconds: float) -> dict[str, Any]:
    """Median agent-steps/s of ``repeats`` runs, each calling ``chunk`` (which returns the
    agent-steps it made) until ``seconds`` have passed; CPU-time rates alongside."""
    chunk()  # warm up: compiled code loaded, caches filled
    wall, cpu = [], []
    for _ in range(repeats):
        steps, t0, c0 = 0, time.perf_counter(), time.process_time()
        while time.perf_counter() - t0 < seconds:
            steps += chunk()
        dt, dc = time.perf_counter() - t0, time.process_time() - c0
        wall.append(steps / dt)
        cpu.append(steps / max(dc, 1e-9))
    return {"agent_steps_per_s": statistics.median(wall), "runs": wall, "cpu_agent_steps_per_s": statistics.median(cpu)}


def pick(mask: np.ndarray, rng: np.random.Generator) -> int:
    """A uniformly random legal action of one mask, in Python (the loop of the Python-API envs)."""
    legal = mask.nonzero()[0]  # np.flatnonzero's own Python layer costs 1.2 us more a call (numpy 2.4)
    return int(legal[int(rng.random() * len(legal))])


def pick_flatnonzero(mask: np.ndarray, rng: np.random.Generator) -> int:
    """``pick`` as the loop had it before (``np.flatnonzero``): the same action, a slower call."""
    legal = np.flatnonzero(mask)
    return int(legal[int(rng.random() * len(legal))])


# ---------------------------------------------------------------------------------------------
# Nertz


def nertz_parallel(repeats: int, seconds: float, choose: Callable = pick) -> dict[str, Any] | str:
    try:
        from nertz_env import nertz_v0
    except ImportError as e:
        return f"nertz_env.nertz_v0 is not available ({e})"
    env = nertz_v0.parallel_env(num_players=4)
    rng = np.random.default_rng(0)
    obs, _ = env.reset(seed=0)
    state = {"obs": obs}

    def chunk() -> int:
        n = 0
        for _ in range(50):
            obs = state["obs"]
            actions = {a: choose(obs[a]["action_mask"], rng) for a in env.agents}
            n += len(actions)
            obs, *_ = env.step(actions)
            if not env.agents:
                obs, _ = env.reset()
            state["obs"] = obs
        return n

    return measure(chunk, repeats, seconds)


def nertz_vector(batch: int, repeats: int, seconds: float, threads: int = 1) -> dict[str, Any]:
    from nertz_env.vector import NertzVectorEnv

    env = NertzVectorEnv(batch, seed=0, num_threads=threads)
    env.reset()
    per_step = batch * env.num_players
    k = max(1, 32_768 // per_step)

    def chunk() -> int:
        for _ in range(k):
            env.step(env.sample_actions())
        return k * per_step

    return measure(chunk, repeats, seconds)


def nertz_engine(batch: int, repeats: int, ticks: int) -> dict[str, Any]:
    """Replays recorded random legal actions through the rules alone (``engine.step_rules_batch``:
    ``tick.step`` and the redeal of ended hands)."""
    from nertz_env import engine
    from nertz_env.vector import NertzVectorEnv

    env = NertzVectorEnv(batch, seed=0)
    env.reset()
    start = engine.copy_state(env.state)
    record = np.zeros((ticks, batch, env.num_players), np.int64)
    for t in range(ticks):
        record[t] = env.sample_actions()
        env.step(record[t])
    args = (env.config.packed, env.catalogue.table, env.config.speed_weights)
    wall, cpu = [], []
    for r in range(repeats + 1):
        s = engine.copy_state(start)
        t0, c0 = time.perf_counter(), time.process_time()
        for t in range(ticks):
            engine.step_rules_batch(s, record[t], *args)
        dt, dc = time.perf_counter() - t0, time.process_time() - c0
        if r == 0:  # the warm-up run also checks that the replay is the recorded play
            assert all((a == b).all() for a, b in zip(s, env.state)), "the replay left the recorded play"
            continue
        wall.append(ticks * batch * env.num_players / dt)
        cpu.append(ticks * batch * env.num_players / dc)
    return {"agent_steps_per_s": statistics.median(wall), "runs": wall, "cpu_agent_steps_per_s": statistics.median(cpu)}


# ---------------------------------------------------------------------------------------------
# Peers


def pettingzoo_aec(name: str, repeats: int, seconds: float) -> dict[str, Any] | str:
    try:
        with warnings.catch_warnings():  # their deprecation and Box-precision warnings
            warnings.simplefilter("ignore")
            module = importlib.import_module(f"pettingzoo.classic.{name}")
            env = module.env()
    except Exception as e:  # rlcard or pygame missing
        return f"pettingzoo.classic.{name} is not available ({type(e).__name__}: {e})"
    rng = np.random.default_rng(0)
    env.reset(seed=0)

    def chunk() -> int:
        n = 0
        for _ in range(200):
            obs, _, terminated, truncated, _ = env.last()
            action = None if terminated or truncated else pick(obs["action_mask"], rng)
            n += action is not None
            env.step(action)
            if not env.agents:
                env.reset()
        return n

    return measure(chunk, repeats, seconds)


def openspiel(name: str, repeats: int, seconds: float) -> dict[str, Any] | str:
    try:
        import pyspiel
    except ImportError as e:
        return f"open_spiel is not available ({e})"
    game = pyspiel.load_game(name, {"players": 4} if name == "crazy_eights" else {})
    kind = game.get_type()
    rng = np.random.default_rng(0)
    holder = {"state": game.new_initial_state()}

    def chunk() -> int:
        n = 0
        state = holder["state"]
        while n < 200:
            if state.is_terminal():
                state = game.new_initial_state()
            if state.is_chance_node():
                outcomes = state.chance_outcomes()
                x, i = rng.random(), 0
                while i < len(outcomes) - 1 and x >= outcomes[i][1]:
                    x -= outcomes[i][1]
                    i += 1
                state.apply_action(outcomes[i][0])
                continue
            player = state.current_player()
            if kind.provides_observation_tensor:
                state.observation_tensor(player)
            else:
                state.information_state_tensor(player)
            legal = state.legal_actions(player)
            state.apply_action(legal[int(rng.random() * len(legal))])
            n += 1
        holder["state"] = state
        return n

    return measure(chunk, repeats, seconds)


# ---------------------------------------------------------------------------------------------
# Compile time


_FIRST_USE = (
    "import time; t0 = time.perf_counter(); from nertz_env.vector import NertzVectorEnv; "
    "e = NertzVectorEnv(8, seed=0, num_threads={threads}); e.reset(); e.step(e.sample_actions()); "
    "print(time.perf_counter() - t0)"
)


def compile_time(threads: int = 1) -> dict[str, float]:
    """Seconds from import to the first step with an empty numba cache, then with it filled; and
    the CPU seconds of the first (on a busy machine the fairer figure)."""
    try:
        import resource
    except ImportError:  # not on Windows: no CPU figure
        resource = None
    code = _FIRST_USE.format(threads=threads)
    with tempfile.TemporaryDirectory(prefix="nertz-numba-") as cache:
        env = {**os.environ, "NUMBA_CACHE_DIR": cache}
        times, cpu = [], []
        for _ in range(2):
            before = resource.getrusage(resource.RUSAGE_CHILDREN) if resource else None
            out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
            times.append(float(out.stdout.strip().splitlines()[-1]))
            if resource:
                after = resource.getrusage(resource.RUSAGE_CHILDREN)
                cpu.append(after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime)
            else:
                cpu.append(float("nan"))
    return {"first_use_s": times[0], "cached_s": times[1], "first_use_cpu_s": cpu[0]}


# ---------------------------------------------------------------------------------------------
# Report


def machine() -> dict[str, Any]:
    import numba

    cpu = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo") as f:
            cpu = next((line.split(":", 1)[1].strip() for line in f if line.startswith("model name")), cpu)
    except OSError:
        pass
    return {
        "cpu": cpu,
        "cores": os.cpu_count(),
        "load_average": os.getloadavg() if hasattr(os, "getloadavg") else None,
        "python": platform.python_version(),
        "numpy": np.__version__,
        "numba": numba.__version__,
    }


def table(results: list[dict[str, Any]]) -> str:
    peers = [r for r in results if r["group"] == "peer" and "agent_steps_per_s" in r]
    head = f"{'environment':<46}{'agent-steps/s':>15}{'per cpu-s':>14}"
    head += "".join(f"{'x ' + p['short']:>14}" for p in peers)
    lines = [head, "-" * len(head)]
    for r in results:
        if "agent_steps_per_s" not in r:
            lines.append(f"{r['name']:<46}  skipped: {r['skipped']}")
            continue
        line = f"{r['name']:<46}{r['agent_steps_per_s']:>15,.0f}{r['cpu_agent_steps_per_s']:>14,.0f}"
        line += "".join(f"{r['agent_steps_per_s'] / p['agent_steps_per_s']:>14,.1f}" for p in peers)
        lines.append(line)
    return "\n".join(lines)


def others(args: argparse.Namespace, batches: Sequence[int], repeats: int, seconds: float, add: Callable) -> Any:
    """The vector env, the engine alone, the peers and the compile time."""
    for b in batches:
        add(f"NertzVectorEnv B={b}, obs+masks", "nertz", nertz_vector(b, repeats, seconds))
    if args.threads > 1:
        b = max(batches)
        add(f"NertzVectorEnv B={b}, {args.threads} threads", "nertz", nertz_vector(b, repeats, seconds, args.threads))
    ticks = max(20, int(100 * seconds))
    add(f"engine alone (step only) B={ENGINE_BATCH}", "nertz", nertz_engine(ENGINE_BATCH, repeats, ticks))
    add("PettingZoo leduc_holdem_v4 (AEC)", "peer", pettingzoo_aec("leduc_holdem_v4", repeats, seconds), "leduc")
    add(
        "PettingZoo texas_holdem_no_limit_v6 (AEC)",
        "peer",
        pettingzoo_aec("texas_holdem_no_limit_v6", repeats, seconds),
        "texas",
    )
    add("OpenSpiel hearts (C++, 4 players)", "peer", openspiel("hearts", repeats, seconds), "hearts")
    add("OpenSpiel crazy_eights (C++, 4 players)", "peer", openspiel("crazy_eights", repeats, seconds), "crazy8")

    compile_info: dict[str, Any] | str = "skipped (--quick)"
    if args.no_compile:
        compile_info = "skipped (--no-compile)"
    elif not args.quick:
        print("measuring compile time in a subprocess with an empty NUMBA_CACHE_DIR...", file=sys.stderr)
        compile_info = compile_time()
    return compile_info


def check_unused(ap: argparse.ArgumentParser, args: argparse.Namespace) -> None:
    """A flag given where it would change nothing is an error naming it; then the defaults."""
    unused = [("--repeats", "--quick", "it sets 2 repeats of 0.3 s"), ("--seconds", "--quick", "it sets 0.3 s"),
              ("--batch-sizes", "--doors-only", "its rows are at --door-batch"),
              ("--threads", "--doors-only", "its rows run on one thread"),
              ("--no-compile", "--doors-only", "it has no compile-time run"),
              ("--door-batch", "--no-doors", "it leaves out the rows it sizes")]  # fmt: skip
    for flag, other, why in unused:  # given: not None (or, for --no-compile, True)
        if getattr(args, other[2:].replace("-", "_")) and getattr(args, flag[2:].replace("-", "_")) not in (None, 0):
            ap.error(f"argument {flag}: not allowed with {other} ({why})")
    args.repeats, args.seconds = args.repeats or 5, args.seconds or 1.0
    args.threads, args.door_batch = args.threads or 1, args.door_batch or 1024


def main(argv: Sequence[str] | None = None, prog: str = "nertz bench") -> int:
    import numba

    from nertz_env.cli_checks import MOST_BATCH, Parser, at_least, number_from, output_file

    ap = Parser(prog=prog, description=__doc__.split("\n\n")[0])
    ap.add_argument("--json", metavar="PATH", type=output_file(), help="also write the results as JSON")
    ap.add_argument("--repeats", type=at_least(1), default=None, help="runs per figure, the median reported (5)")
    ap.add_argument("--seconds", type=number_from(0, inclusive=False), default=None, help="seconds per run (1.0)")
    ap.add_argument("--quick", action="store_true", help="2 repeats of 0.3 s, batch sizes 64 and 1024, no compile run")
    ap.add_argument("--threads", type=at_least(1), default=None, help="also run the vector env with this many threads")
    ap.add_argument(
        "--batch-sizes", type=at_least(1, MOST_BATCH), nargs="+", default=None, help=f"default {BATCH_SIZES}"
    )
    ap.add_argument("--door-batch", type=at_least(1, MOST_BATCH), default=None,
                    help="games of the TorchRL and Gymnasium batch envs (1024)")  # fmt: skip
    doors = ap.add_mutually_exclusive_group()
    doors.add_argument("--no-doors", action="store_true", help="leave out the TorchRL and Gymnasium rows")
    ap.add_argument("--no-compile", action="store_true", help="leave out the compile-time run")
    doors.add_argument(
        "--doors-only", action="store_true", help="only the TorchRL and Gymnasium rows (with the parallel API's)"
    )
    args = ap.parse_args(argv)
    check_unused(ap, args)
    most = numba.config.NUMBA_NUM_THREADS  # NertzVectorEnv's limit, checked before the first row is measured
    if args.threads > most:
        ap.error(f"argument --threads: expected an integer from 1 to {most} (numba's threads), got {args.threads}")
    repeats, seconds = (2, 0.3) if args.quick else (args.repeats, args.seconds)
    batches = args.batch_sizes or ((64, 1024) if args.quick else BATCH_SIZES)

    results: list[dict[str, Any]] = []

    def add(name: str, group: str, result: dict[str, Any] | str, short: str = "") -> None:
        row = {"name": name, "group": group, "short": short}
        row.update(result if isinstance(result, dict) else {"skipped": result})
        results.append(row)
        figure = f"{row['agent_steps_per_s']:,.0f} agent-steps/s" if "agent_steps_per_s" in row else row["skipped"]
        print(f"  {name}: {figure}", file=sys.stderr, flush=True)

    print(f"measuring (medians of {repeats} runs of {seconds:.1f} s)...", file=sys.stderr)
    add("nertz_v0 parallel API, 4 players", "nertz", nertz_parallel(repeats, seconds))
    from nertz_env.benchmarks.doors import gym_vector_env, openspiel_game, torchrl_env

    b = args.door_batch
    if not args.no_doors:
        add("TorchRL PettingZooWrapper(nertz_v0)", "nertz", torchrl_env(False, b, repeats, seconds))
        add(f"NertzTorchRLEnv B={b} (TorchRL EnvBase)", "nertz", torchrl_env(True, b, repeats, seconds))
        add(f"NertzTorchRLEnv B={b}, int8, no state", "nertz", torchrl_env(True, b, repeats, seconds, lean=True))
        add("Gymnasium SyncVectorEnv(NertzSingle) x8", "nertz", gym_vector_env(False, 8, repeats, seconds))
        add(f"NertzGymVectorEnv B={b} (Gymnasium VectorEnv)", "nertz", gym_vector_env(True, b, repeats, seconds))
        add("OpenSpiel python_nertz, 4 players", "nertz", openspiel_game(repeats, seconds))
    if args.doors_only:  # the batched env itself, for reference
        add(f"NertzVectorEnv B={b}, obs+masks", "nertz", nertz_vector(b, repeats, seconds))
    compile_info = "skipped (--doors-only)" if args.doors_only else others(args, batches, repeats, seconds, add)
    print()
    print(table(results))
    print()
    if isinstance(compile_info, dict):
        print(
            f"numba compile on first use (import to first step, empty cache): {compile_info['first_use_s']:.1f} s "
            f"({compile_info['first_use_cpu_s']:.1f} s of CPU); "
            f"with the cache filled: {compile_info['cached_s']:.2f} s"
        )
    else:
        print(f"numba compile time: {compile_info}")
    report = {"machine": machine(), "repeats": repeats, "seconds": seconds, "results": results, "compile": compile_info}
    m = report["machine"]
    print(f"machine: {m['cpu']}, {m['cores']} cores, load average {m['load_average']}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(report, f, indent=2)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
