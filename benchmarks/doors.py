"""Throughput rows for the standard doors to the batched engine, each beside the wrapped parallel
env: TorchRL (``PettingZooWrapper`` against the native ``NertzTorchRLEnv``) and Gymnasium
(``SyncVectorEnv`` of ``NertzSingle-v0`` against ``NertzGymVectorEnv``); and OpenSpiel's
``python_nertz``, one game in Python beside the parallel API. Run by
``python -m nertz_env.benchmarks.throughput`` (``--doors-only`` for just these rows)."""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np

from nertz_env.benchmarks.throughput import measure


def torchrl_env(native: bool, batch: int, repeats: int, seconds: float, lean: bool = False) -> dict[str, Any] | str:
    """TorchRL's collector loop (``step_and_maybe_reset``) over the native batched env, or over
    ``PettingZooWrapper(nertz_v0.parallel_env())``, legal actions drawn from the tensordict's masks.
    ``lean``: the native env with int8 observations and no ``state``."""
    try:
        from torchrl.envs.libs.pettingzoo import PettingZooWrapper

        from nertz_env.integrations.torchrl import NertzTorchRLEnv
    except ImportError as e:
        return f"torchrl is not available ({e})"
    import torch

    from nertz_env import nertz_v0
    from nertz_env.vector import sample_legal

    torch.set_num_threads(1)  # one core, like every other row

    if native:
        options: dict[str, Any] = {"observation_dtype": "int8", "include_state": False} if lean else {}
        env = NertzTorchRLEnv(batch, num_players=4, seed=0, **options)
        group, per_step, k = "agents", batch * 4, max(1, 8192 // (batch * 4))
    else:
        with warnings.catch_warnings():  # its PettingZoo version warning
            warnings.simplefilter("ignore")
            env = PettingZooWrapper(nertz_v0.parallel_env(num_players=4, observation_dtype="float32"), use_mask=True)
        env.set_seed(0)
        group, per_step, k = "player", 4, 20
    state = {"td": env.reset()}
    rng = np.random.default_rng(0)

    def chunk() -> int:
        td = state["td"]
        for _ in range(k):
            td[group, "action"] = torch.from_numpy(sample_legal(td[group, "action_mask"].numpy(), rng))
            _, td = env.step_and_maybe_reset(td)
        state["td"] = td
        return k * per_step

    return measure(chunk, repeats, seconds)


def gym_vector_env(native: bool, batch: int, repeats: int, seconds: float) -> dict[str, Any] | str:
    """Gymnasium vector envs with random legal actions: ``NertzGymVectorEnv`` (self-play, ``batch``
    games) or ``SyncVectorEnv`` of ``batch`` single-seat envs against three ``random`` opponents."""
    import gymnasium

    import nertz_env  # noqa: F401  (registers NertzSingle-v0)
    from nertz_env.vector import sample_legal

    if native:
        from nertz_env.gym_vector import NertzGymVectorEnv

        env = NertzGymVectorEnv(batch, num_players=4, seed=0)
        per_step, k = batch * 4, max(1, 8192 // (batch * 4))
    else:
        env = gymnasium.make_vec("nertz_env/NertzSingle-v0", num_envs=batch, vectorization_mode="sync",
                                 opponents=["random"] * 3)  # fmt: skip
        per_step, k = batch * 4, max(1, 512 // (batch * 4))
    rng = np.random.default_rng(0)
    env.reset(seed=0)

    def current_masks() -> np.ndarray:
        if native:
            return env.action_masks()
        return np.stack(env.call("action_masks"))

    def chunk() -> int:
        for _ in range(k):
            env.step(sample_legal(current_masks(), rng))
        return k * per_step

    return measure(chunk, repeats, seconds)


def openspiel_game(repeats: int, seconds: float) -> dict[str, Any] | str:
    """OpenSpiel's ``python_nertz``, 4 players, as an OpenSpiel loop plays it: a random deal at the
    chance node, then each tick every seat's observation tensor (through one ``make_observation``
    observer, as OpenSpiel's agents read it) and legal-action mask read and a random legal joint
    action applied (4 agent-steps a tick, as the parallel API's row counts)."""
    try:
        from open_spiel.python.observation import make_observation

        from nertz_env.integrations.openspiel import load_game
    except ImportError as e:
        return f"open_spiel is not available ({e})"
    from nertz_env.benchmarks.throughput import pick

    game = load_game(players=4)
    observation = make_observation(game)
    rng = np.random.default_rng(0)
    holder = {"state": game.new_initial_state()}

    def chunk() -> int:
        state = holder["state"]
        for _ in range(50):
            if state.is_chance_node():
                state.apply_action(int(rng.integers(game.deals)))
            joint = []
            for p in range(4):
                observation.set_from(state, p)
                joint.append(pick(np.asarray(state.legal_actions_mask(p)), rng))
            state.apply_actions(joint)
            if state.is_terminal():
                state = game.new_initial_state()
        holder["state"] = state
        return 200

    return measure(chunk, repeats, seconds)
