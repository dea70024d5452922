"""Garbage at every public boundary ends in a clean Python exception, never a signal.

Each boundary is fuzzed by hypothesis inside a subprocess, so that a crash of the interpreter
(SIGSEGV, SIGBUS, an abort from a corrupted heap) fails the test instead of ending the run:
saved tables with one or more values changed, observations and masks handed to every scripted
agent (changed values of real ones, and random bytes), vector-env and ``Game`` actions, seeds and
rule options. Whatever a boundary accepts is then played on for a few ticks. ``NERTZ_FUZZ_EXAMPLES``
sets the examples per boundary (default 150); the subprocess prints how many were accepted and
how many refused."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import pytest

pytest.importorskip("hypothesis")

EXAMPLES = int(os.environ.get("NERTZ_FUZZ_EXAMPLES", "150"))

COMMON = """
import sys
import numpy as np
from hypothesis import HealthCheck, given, settings, strategies as st
from nertz_env import NertzConfig, agents, nertz_v0
from nertz_env.game import Game
from nertz_env.vector import NertzVectorEnv

CLEAN = (ValueError, TypeError, RuntimeError, KeyError)
count = {"accepted": 0, "refused": 0}
SETTINGS = settings(max_examples=int(sys.argv[1]), deadline=None, database=None,
                    suppress_health_check=list(HealthCheck))

def attempt(fn, then=None):
    try:
        out = fn()
    except CLEAN:
        count["refused"] += 1
        return
    count["accepted"] += 1
    if then is not None:
        then(out)

def play(game, ticks=5):
    rng = np.random.default_rng(0)
    for _ in range(ticks):
        if game.ended:
            return
        game.step([rng.choice(np.flatnonzero(game.masks[p])) for p in range(game.config.num_players)])

def real_game(options, ticks):
    game = Game(NertzConfig.from_kwargs(**options))
    game.reset(seed=ticks)
    play(game, ticks)
    if game.ended:
        game.reset(seed=1)
    return game
"""

BOUNDARIES = {
    "saved_tables": """
CONFIGS = [{}, {"nertz_builds": True, "num_players": 3}, {"episode": "match"}, {"move_ticks": 2}]

@SETTINGS
@given(st.sampled_from(CONFIGS), st.integers(0, 60), st.lists(st.tuples(st.integers(0, 29), st.integers(0, 10**6),
       st.integers(-2**31, 2**31 - 1)), min_size=1, max_size=4))
def fuzz(options, ticks, changes):
    game = real_game(options, ticks)
    state = game.get_state()
    for field, where, value in changes:
        a = state[field].reshape(-1)
        a[where % a.size] = np.array(value).astype(a.dtype) if a.dtype != np.bool_ else value % 2
    attempt(lambda: game.set_state(state), lambda _: play(game))
fuzz()
""",
    "env_states": """
@SETTINGS
@given(st.integers(0, 40), st.sampled_from(["agents", "table", "config", "extra"]), st.integers(0, 10**6))
def fuzz(ticks, part, value):
    env = nertz_v0.parallel_env(num_players=3)
    env.reset(seed=ticks)
    saved = env.unwrapped.get_state()
    if part == "agents":
        saved["agents"] = [f"player_{value % 5}"]
    elif part == "table":
        a = saved["table"].foundations.reshape(-1)
        a[value % a.size] = value % 400
    elif part == "config":
        saved["config"] = NertzConfig(num_players=3, call_bonus=value % 50 + 1)
    else:
        saved["more"] = value
    def then(_):
        while env.agents:
            env.step({a: 0 for a in env.agents})
    attempt(lambda: env.unwrapped.set_state(saved), then)
fuzz()
""",
    "agents": """
NAMES = ["random", "passive", "greedy", "heuristic"]
ENV = NertzVectorEnv(8, seed=5)
OBS, MASKS = ENV.reset()
for _ in range(25):
    OBS, MASKS, *_ = ENV.step(ENV.sample_actions())
O, M = OBS.reshape(32, -1).copy(), MASKS.reshape(32, -1).copy()
HIGH = ENV.layout.high.astype(np.int64)
PLAYERS = {n: agents.make(n, seed=1) for n in NAMES}

@SETTINGS
@given(st.sampled_from(NAMES), st.booleans(), st.one_of(st.just([]), st.lists(st.tuples(st.integers(0, 31),
       st.integers(0, O.shape[1] - 1), st.integers(-128, 127)), max_size=6)), st.one_of(st.just([]),
       st.lists(st.tuples(st.integers(0, 31), st.integers(0, M.shape[1] - 1)), max_size=6)), st.integers(0, 2**32 - 1))
def fuzz(name, in_space, obs_changes, mask_flips, seed):
    o, m = O.copy(), M.copy()
    for row, col, value in obs_changes:
        o[row, col] = value % (HIGH[col] + 1) if in_space else value
    for row, col in mask_flips:
        m[row, col] ^= 1
    if seed % 7 == 0:  # random bytes as well
        rng = np.random.default_rng(seed)
        o = rng.integers(-128, 128, o.shape).astype(np.int8)
    def then(out):
        assert m[np.arange(len(out)), out].all()
    attempt(lambda: PLAYERS[name].act_batch(o, m), then)
fuzz()
""",
    "actions_seeds_options": """
VALUES = st.one_of(st.integers(-2**70, 2**70), st.floats(allow_nan=True), st.booleans(), st.none(), st.text(max_size=3),
                   st.lists(st.integers(-3, 300), max_size=5))
OPTIONS = ["nertz_penalty", "call_bonus", "max_cycles", "stall_ticks", "max_stall_rotations", "target_score",
           "num_players", "work_piles", "nertz_pile_size", "move_ticks", "speed", "max_hands", "hands"]

@SETTINGS
@given(st.sampled_from(["vector", "game", "seed", "option", "agent_seed"]), VALUES, st.sampled_from(OPTIONS),
       st.integers(0, 5))
def fuzz(target, value, option, k):
    if target == "vector":
        env = NertzVectorEnv(2, seed=k)
        env.reset()
        actions = np.zeros((2, 4), np.int64).tolist()
        actions[k % 2][k % 4] = value
        attempt(lambda: env.step(np.asarray(actions, dtype=object) if not isinstance(value, (int, float))
                                 else np.asarray(actions)), lambda _: env.step(env.sample_actions()))
    elif target == "game":
        game = real_game({}, k)
        attempt(lambda: game.step([value, 0, 0, 0]), lambda _: play(game))
    elif target == "seed":
        game = Game(NertzConfig())
        attempt(lambda: game.reset(seed=value), lambda _: play(game))
    elif target == "agent_seed":
        attempt(lambda: agents.make("random", seed=value))
    else:
        def then(config):
            env = NertzVectorEnv(2, seed=k, **config.to_dict())
            env.reset()
            for _ in range(20):
                env.step(env.sample_actions())
        attempt(lambda: NertzConfig.from_kwargs(**{option: value}), then)
fuzz()
""",
}


@pytest.mark.parametrize("boundary", sorted(BOUNDARIES))
def test_garbage_at_a_boundary_never_crashes_the_interpreter(boundary, tmp_path):
    script = tmp_path / f"fuzz_{boundary}.py"
    script.write_text(textwrap.dedent(COMMON) + BOUNDARIES[boundary] + '\nprint("accepted", count["accepted"], '
                      '"refused", count["refused"])\n')  # fmt: skip
    res = subprocess.run([sys.executable, "-W", "ignore", str(script), str(EXAMPLES)], capture_output=True, text=True,
                         timeout=1200)  # fmt: skip
    assert res.returncode == 0, f"{boundary}: exit {res.returncode}\n{res.stdout[-2000:]}\n{res.stderr[-4000:]}"
    accepted, refused = (int(x) for x in res.stdout.split()[-3::2])
    print(f"{boundary}: {accepted} accepted, {refused} refused")
    assert refused > 0  # the garbage reached the checks
