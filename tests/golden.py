"""Golden trajectories: whole hands under many configurations (every house-rule option among
them), hashed so that a refactor can prove it changed no behaviour, byte for byte.

Each case plays through the public APIs: ``nertz_v0.parallel_env`` with scripted agents (every
observation, mask, reward, termination, truncation, ``state()`` and the agents' chosen actions
hashed; the infos hashed on their own, since their keys are an interface that may grow), and
``NertzVectorEnv`` with its compiled random sampler (every returned array hashed).

    python -m tests.golden            # print the hashes of the current code
    python -m tests.golden --write    # record them in tests/golden_trajectories.json
    python -m tests.golden --write-infos   # re-record only the "infos" hashes (an infos change),
                                           # refusing if any "play" hash moved
"""

from __future__ import annotations

import argparse
import hashlib
import json
from pathlib import Path
from typing import Any

import numpy as np

GOLDEN_FILE = Path(__file__).with_name("golden_trajectories.json")

# name: (num_players, rules, seats' agent specs, seeds, ticks at most per parallel hand)
PARALLEL_CASES: dict[str, tuple[int, dict[str, Any], list[str]]] = {
    "standard_4p": (4, {}, ["heuristic", "greedy", "random", "heuristic:depth=3"]),
    "standard_2p": (2, {}, ["heuristic", "greedy"]),
    "six_players_5_piles": (6, {"work_piles": 5}, ["greedy", "random", "heuristic", "greedy", "random", "heuristic"]),
    "draw_one_seat_collision": (3, {"stock_draw": 1, "collision": "seat"}, ["greedy", "greedy", "heuristic"]),
    "snerts": (3, {"preset": "snerts"}, ["heuristic", "greedy", "random"]),
    "family_relative": (4, {"preset": "family", "reward": "relative"}, ["greedy", "heuristic", "random", "greedy"]),
    "sparse_auto_call": (2, {"reward": "sparse", "auto_call": True, "slide_under": False}, ["greedy", "random"]),
    "turn_based": (3, {"turn_based": True}, ["heuristic", "greedy", "random"]),
    "nertz_builds": (4, {"nertz_builds": True}, ["heuristic", "greedy", "heuristic", "random"]),
    "move_ticks": (4, {"move_ticks": {"foundation": 2, "draw": 2}}, ["greedy", "heuristic", "random", "greedy"]),
    "builds_move_ticks": (3, {"nertz_builds": True, "move_ticks": {"work": 3}}, ["greedy", "heuristic", "random"]),
    "partners": (4, {"partners": True}, ["heuristic", "greedy", "heuristic", "greedy"]),
    "match": (3, {"episode": "match", "target_score": 20, "max_cycles": 150}, ["greedy", "heuristic", "random"]),
    "racing_demon": (4, {"preset": "racing_demon", "max_cycles": 120}, ["greedy", "random", "heuristic", "greedy"]),
    "stall_short": (2, {"stall_ticks": 5, "max_stall_rotations": 2}, ["random", "random"]),
    "shipped_policy": (4, {}, ["ppo-search", "heuristic", "greedy", "ppo-search"]),
}
PARALLEL_SEEDS = (0, 1)
MAX_TICKS = 400

VECTOR_CASES: dict[str, tuple[int, dict[str, Any]]] = {
    "standard_4p": (4, {}),
    "standard_2p": (2, {}),
    "builds_partners": (4, {"nertz_builds": True, "partners": True, "reward": "relative"}),
    "turn_based_ticks": (3, {"turn_based": True, "move_ticks": {"call": 2}}),
    "match": (2, {"episode": "match", "target_score": 15, "max_cycles": 100}),
}
VECTOR_ENVS, VECTOR_TICKS = 16, 300


class Digest:
    """A sha256 over arrays and plain values, fed in a fixed order."""

    def __init__(self) -> None:
        self._h = hashlib.sha256()

    def add(self, value: Any) -> None:
        if isinstance(value, np.ndarray):
            self._h.update(f"{value.dtype}{value.shape}".encode())
            self._h.update(np.ascontiguousarray(value).tobytes())
        elif isinstance(value, dict):
            for key in sorted(value, key=str):
                self._h.update(repr(key).encode())
                self.add(value[key])
        elif isinstance(value, (list, tuple)):
            self._h.update(f"seq{len(value)}".encode())
            for item in value:
                self.add(item)
        else:
            self._h.update(repr(_plain(value)).encode())

    def hexdigest(self) -> str:
        return self._h.hexdigest()


def _plain(value: Any) -> Any:
    if isinstance(value, np.generic):
        return value.item()
    return value


def parallel_case(num_players: int, rules: dict[str, Any], specs: list[str], seed: int) -> dict[str, str]:
    from nertz_env import agents, nertz_v0

    env = nertz_v0.parallel_env(num_players=num_players, **rules)
    config = env.unwrapped.config
    bots = [agents.make_spec(spec, seed=seed * 10 + k, config=config) for k, spec in enumerate(specs)]
    for k, bot in enumerate(bots):
        bot.reset(seat=k)
    play, infos_digest = Digest(), Digest()
    obs, infos = env.reset(seed=seed)
    play.add(obs)
    play.add(env.state())
    infos_digest.add(infos)
    ticks = 0
    while env.agents and ticks < MAX_TICKS:
        actions = {agent: int(bot.act(obs[agent])) for agent, bot in zip(env.agents, bots)}
        play.add(actions)
        obs, rewards, terminations, truncations, infos = env.step(actions)
        for part in (obs, rewards, terminations, truncations):
            play.add(part)
        play.add(env.state())
        infos_digest.add(infos)
        ticks += 1
    play.add(env.unwrapped.snapshot())
    return {"play": play.hexdigest(), "infos": infos_digest.hexdigest(), "ticks": str(ticks)}


def vector_case(num_players: int, rules: dict[str, Any], seed: int) -> dict[str, str]:
    from nertz_env.vector import NertzVectorEnv

    venv = NertzVectorEnv(VECTOR_ENVS, num_players=num_players, seed=seed, **rules)
    arrays, infos_digest = Digest(), Digest()
    obs, masks = venv.reset()
    arrays.add(obs)
    arrays.add(masks)
    for _ in range(VECTOR_TICKS):
        actions = venv.sample_actions()
        arrays.add(actions)
        obs, masks, rewards, terminated, truncated, infos = venv.step(actions)
        for part in (obs, masks, rewards, terminated, truncated):
            arrays.add(part)
        # final_state (added after the recording; tests/test_vector.py checks it against Game) stays out,
        # so that the recorded hashes still vouch for every other info, unchanged
        infos_digest.add({key: value for key, value in infos.items() if key != "final_state"})
    return {"play": arrays.hexdigest(), "infos": infos_digest.hexdigest()}


def record() -> dict[str, dict[str, str]]:
    result: dict[str, dict[str, str]] = {}
    for name, (players, rules, specs) in PARALLEL_CASES.items():
        for seed in PARALLEL_SEEDS:
            result[f"parallel/{name}/seed{seed}"] = parallel_case(players, rules, specs, seed)
    for name, (players, rules) in VECTOR_CASES.items():
        result[f"vector/{name}"] = vector_case(players, rules, seed=3)
    return result


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.golden", description=__doc__.splitlines()[0])
    parser.add_argument("--write", action="store_true", help=f"record the hashes in {GOLDEN_FILE.name}")
    parser.add_argument(
        "--write-infos", action="store_true", help="re-record only the infos hashes; fails if any play hash changed"
    )
    args = parser.parse_args(argv)
    result = record()
    if args.write_infos:
        recorded = json.loads(GOLDEN_FILE.read_text())
        moved = sorted(k for k in result if {**result[k], "infos": ""} != {**recorded.get(k, {}), "infos": ""})
        if moved:
            print(f"play changed, not writing: {', '.join(moved)}")
            return 1
        GOLDEN_FILE.write_text(json.dumps(result, indent=1, sort_keys=True) + "\n")
        changed = sum(result[k]["infos"] != recorded[k]["infos"] for k in result)
        print(f"play unchanged in all {len(result)} cases; re-recorded {changed} infos hashes")
    elif args.write:
        GOLDEN_FILE.write_text(json.dumps(result, indent=1, sort_keys=True) + "\n")
        print(f"wrote {len(result)} cases to {GOLDEN_FILE}")
    else:
        print(json.dumps(result, indent=1, sort_keys=True))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
