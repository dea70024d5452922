"""Sampling throughput of RLlib env runners on Nertz (the ``rllib`` extra): N remote env runners,
each stepping its envs with the shared PPO policy of ``ppo_config``, no learning.

    python -m nertz_env.benchmarks.rllib_sampling --runners 1 2 --repeats 5 --ticks 1000

An env step is one tick: every one of the 4 players acts.
"""

from __future__ import annotations

import statistics
import time

from nertz_env.cli_checks import Parser, at_least, require


def measure(runners: int, repeats: int, ticks: int, envs: int) -> list[float]:
    import ray

    from nertz_env.integrations import rllib as nr

    ray.init(num_cpus=max(2, runners), include_dashboard=False, log_to_driver=False)
    try:
        algo = nr.ppo_config(num_env_runners=runners, num_envs_per_env_runner=envs, seed=1).build_algo()
        group = algo.env_runner_group
        group.foreach_env_runner(lambda r: len(r.sample(num_timesteps=200)), local_env_runner=False)  # warm-up
        rates = []
        for _ in range(repeats):
            t = time.perf_counter()
            group.foreach_env_runner(lambda r: len(r.sample(num_timesteps=ticks)), local_env_runner=False)
            rates.append(runners * ticks / (time.perf_counter() - t))
        algo.stop()
        return rates
    finally:
        ray.shutdown()


def main(argv: list[str] | None = None) -> int:
    ap = Parser(prog="python -m nertz_env.benchmarks.rllib_sampling", description=__doc__.split("\n\n")[0])
    ap.add_argument("--runners", type=at_least(1), nargs="+", default=[1, 2], help="env runner counts to measure")
    ap.add_argument("--repeats", type=at_least(1), default=5, help="runs per figure (the median is reported)")
    ap.add_argument("--ticks", type=at_least(1), default=1000, help="ticks each runner samples per run")
    ap.add_argument("--envs-per-runner", type=at_least(1), default=1, help="envs each runner steps")
    args = ap.parse_args(argv)
    require(ap, "ray", what="rllib_sampling")
    for n in args.runners:
        rates = measure(n, args.repeats, args.ticks, args.envs_per_runner)
        print(f"{n} env runner(s) x {args.envs_per_runner} env(s): median {statistics.median(rates):,.0f} env steps/s "
              f"(runs: {', '.join(f'{r:,.0f}' for r in rates)})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
