"""``NUMBA_DISABLE_JIT=1`` (numba's debugging mode: every kernel runs as plain Python) plays the same
games as the compiled engine, byte for byte: the parallel env, the vector env and an evaluation."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

PLAY = """
import hashlib
import numpy as np
from nertz_env import nertz_v0
from nertz_env.training.evaluate import evaluate
from nertz_env.vector import NertzVectorEnv

digest = hashlib.sha256()
env = nertz_v0.parallel_env(num_players=3)
obs, infos = env.reset(seed=5)
rng = np.random.default_rng(0)
for _ in range(60):
    if not env.agents:
        break
    obs, rewards, _, _, _ = env.step({a: int(rng.choice(np.flatnonzero(obs[a]["action_mask"]))) for a in env.agents})
    for a in sorted(obs):
        digest.update(obs[a]["observation"].tobytes() + obs[a]["action_mask"].tobytes())
        digest.update(np.float64(rewards[a]).tobytes())
venv = NertzVectorEnv(3, num_players=2, seed=9)
o, m = venv.reset()
for _ in range(40):
    actions = np.array([[rng.choice(np.flatnonzero(m[g, p])) for p in range(2)] for g in range(3)])
    o, m, r, term, trunc, _ = venv.step(actions)
    digest.update(o.tobytes() + m.tobytes() + r.tobytes() + term.tobytes() + trunc.tobytes())
report = evaluate(["heuristic", "greedy"], hands=1, seed=1, progress=False)
print(digest.hexdigest(), [row["score"] for row in report["summary"]])
"""


def _play(disable_jit: bool) -> str:
    env = {**os.environ, "NUMBA_DISABLE_JIT": "1" if disable_jit else "0", "PYTHONWARNINGS": "error::RuntimeWarning"}
    root = Path(__file__).resolve().parent.parent
    done = subprocess.run([sys.executable, "-c", PLAY], env=env, cwd=root, capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stderr[-3000:]
    return done.stdout.strip().splitlines()[-1]


def test_pure_python_plays_the_compiled_games():
    assert _play(disable_jit=True) == _play(disable_jit=False)
