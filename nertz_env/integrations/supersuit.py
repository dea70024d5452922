"""Keep the legal-action masks through SuperSuit's vectorisation, for sb3-contrib's MaskablePPO.

SuperSuit turns ``nertz_v0.parallel_env()`` into a Stable-Baselines3 ``VecEnv`` of agents
(``pettingzoo_env_to_vec_env_v1`` then ``concat_vec_envs_v1(..., base_class="stable_baselines3")``)
whose observations are the env's dicts ``{"observation", "action_mask"}``. Nothing there serves
``action_masks``, so a masked learner cannot see the mask and an unmasked one plays illegal moves,
which the env plays as WAIT (and flags in ``infos[i]["illegal_action"]``): with random initial
policies almost every action is then a WAIT. ``MaskedVecEnv`` wraps such a ``VecEnv``:

- observations are the ``"observation"`` part (a ``Box``, so ``"MlpPolicy"`` works), terminal
  observations in the infos too;
- ``action_masks()`` (and ``has_attr``, ``env_method`` and ``get_attr`` of ``"action_masks"``,
  which MaskablePPO calls) returns the masks of the latest observations, bool ``[num_envs, N]``.

    >>> import supersuit as ss                                                   # doctest: +SKIP
    >>> venv = ss.pettingzoo_env_to_vec_env_v1(nertz_v0.parallel_env(num_players=2))
    >>> venv = MaskedVecEnv(ss.concat_vec_envs_v1(venv, 4, base_class="stable_baselines3"))
    >>> MaskablePPO("MlpPolicy", venv, n_steps=64).learn(2048)

Any SB3 ``VecEnv`` with such dict observations can be wrapped, not only SuperSuit's.
``pip install 'nertz-env[supersuit]'`` (supersuit and the training extra).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, cast

import numpy as np
from gymnasium import spaces

from nertz_env.checks import check_int_actions, check_seed

try:
    from stable_baselines3.common.vec_env import VecEnv, VecEnvWrapper
except ImportError as exc:  # pragma: no cover - depends on the extra
    raise ModuleNotFoundError("MaskedVecEnv needs stable-baselines3: pip install 'nertz-env[supersuit]'") from exc

__all__ = ["MaskedVecEnv"]


class MaskedVecEnv(VecEnvWrapper):
    """An SB3 ``VecEnv`` of ``{"observation", "action_mask"}`` dicts as one of ``"observation"``
    arrays that serves ``action_masks()`` (see the module docstring)."""

    def __init__(self, venv: VecEnv):
        space = venv.observation_space
        if not isinstance(space, spaces.Dict) or {"observation", "action_mask"} - set(space.spaces):
            raise ValueError(
                f"MaskedVecEnv wraps a VecEnv whose observations are dicts with 'observation' and 'action_mask' "
                f"(nertz_v0's), got {space}"
            )
        super().__init__(venv, observation_space=space["observation"])
        mask_space = cast(spaces.Box, space["action_mask"])  # nertz_v0's: a Box
        self._masks = np.ones((self.num_envs, mask_space.shape[-1]), bool)
        self._seed: int | None = None

    def _split(self, observations: dict[str, np.ndarray]) -> np.ndarray:
        self._masks = np.asarray(observations["action_mask"]).astype(bool).reshape(self.num_envs, -1)
        return observations["observation"]

    def seed(self, seed: int | None = None) -> Sequence[int | None]:
        """Seed the next reset. SuperSuit's SB3 wrapper cannot take ``seed()`` (its vector env has
        none, which breaks ``MaskablePPO(..., seed=s)``), so for it the seed goes to its reset."""
        seed = check_seed(seed)  # SuperSuit would add True or "3" to the env index
        try:
            return self.venv.seed(seed)
        except AttributeError:
            self._seed = seed
            return [seed] * self.num_envs

    def reset(self) -> np.ndarray:
        inner = getattr(self.venv, "venv", None)
        if self._seed is not None and inner is not None and hasattr(self.venv, "reset_infos"):
            observations, self.venv.reset_infos = inner.reset(seed=self._seed)  # SuperSuit's SB3VecEnvWrapper
            self._seed = None
            return self._split(observations)
        return self._split(cast(dict[str, np.ndarray], self.venv.reset()))  # a Dict space's observations

    def step_async(self, actions: np.ndarray) -> None:
        """Check the actions here: SuperSuit casts a bool array into its int buffer (True plays 1)."""
        a = np.asarray(actions)
        if a.shape != (self.num_envs,):
            raise ValueError(f"MaskedVecEnv.step takes one action per env, shaped ({self.num_envs},), got {a.shape}")
        check_int_actions(a, self._masks.shape[1], "MaskedVecEnv.step")
        self.venv.step_async(a)

    def step_wait(self):
        observations, rewards, dones, infos = self.venv.step_wait()
        for info in infos:
            terminal = info.get("terminal_observation")
            if isinstance(terminal, dict):
                info["terminal_observation"] = terminal["observation"]
        return self._split(observations), rewards, dones, infos

    def action_masks(self) -> np.ndarray:
        """bool ``[num_envs, num_actions]``: the legal actions of the latest observations (R4)."""
        return self._masks

    def env_method(self, method_name: str, *method_args: Any, indices: Any = None, **method_kwargs: Any) -> list:
        if method_name == "action_masks":
            return [self._masks[i] for i in self._get_indices(indices)]
        return self.venv.env_method(method_name, *method_args, indices=indices, **method_kwargs)

    def has_attr(self, attr_name: str) -> bool:
        if attr_name == "action_masks":
            return True
        return self.venv.has_attr(attr_name)

    def get_attr(self, attr_name: str, indices: Any = None) -> list:
        if attr_name == "action_masks":
            return [self.action_masks for _ in self._get_indices(indices)]
        return self.venv.get_attr(attr_name, indices)
