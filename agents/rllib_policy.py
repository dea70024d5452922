"""An RLlib-trained policy as an agent: the RLModule of a ``training/train_rllib.py`` checkpoint
(or any ``algo.save`` of ``nertz_env.integrations.rllib.ppo_config``), playing greedily.

>>> import agents, agents.rllib_policy                                   # doctest: +SKIP
>>> player = agents.make("rllib", path="runs/nertz_v0__rllib__1__<time>/checkpoint", config=NertzConfig())

Importing this module registers the name ``"rllib"``; ray and torch are imported only when an
agent is built, so the scripted agents never need them (``pip install 'nertz-env[rllib]'``).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from nertz_env.agents import register
from nertz_env.agents.base import Agent
from nertz_env.config import NertzConfig


class RLlibAgent(Agent):
    """Plays the masked argmax of an RLlib RLModule's action logits (``forward_inference``).

    Args:
        config: the rules the policy was trained under (its observation size and action
            catalogue must match the module's spaces).
        seed: unused (the policy plays greedily); kept for the agent protocol.
        path: an algorithm checkpoint directory (``algo.save``), or the module directory
            ``<ckpt>/learner_group/learner/rl_module/<policy_id>``.
        policy_id: the module to load from an algorithm checkpoint.
    """

    name = "rllib"

    def __init__(
        self,
        config: NertzConfig | None = None,
        seed: int = 0,
        path: str | Path | None = None,
        policy_id: str | None = None,
    ):
        super().__init__(config, seed)
        if path is None:
            raise ValueError("the rllib agent needs path=<an RLlib checkpoint directory>")
        try:
            import torch

            from nertz_env.integrations import rllib as nertz_rllib
        except ImportError as exc:
            raise ModuleNotFoundError("the rllib agent needs Ray RLlib: pip install 'nertz-env[rllib]'") from exc
        self._torch = torch
        self.path = Path(path)
        self.policy_id = policy_id or nertz_rllib.POLICY_ID
        self.module = nertz_rllib.load_module(self.path, self.policy_id)
        self.high = nertz_rllib.observation_high(self.config)
        self._to_module = nertz_rllib.module_observation
        space = self.module.observation_space
        inner = space["observations"] if hasattr(space, "spaces") and "observations" in space.spaces else space
        want = (self.obs_size,)
        if getattr(inner, "shape", want) != want or getattr(self.module.action_space, "n", len(self.catalogue)) != len(
            self.catalogue
        ):
            raise ValueError(
                f"the policy at {self.path} was trained for observations {inner.shape} and "
                f"{self.module.action_space} actions, but this config ({self.config.num_players} players, "
                f"{self.config.work_piles} work piles) has ({self.obs_size},) and {len(self.catalogue)}: "
                "build the agent with the config the policy was trained under"
            )

    def _choose(self, obs: np.ndarray, masks: np.ndarray, out: np.ndarray) -> None:
        torch = self._torch
        batch = {k: torch.from_numpy(v) for k, v in self._to_module(obs, masks, self.high).items()}
        with torch.no_grad():
            logits = self.module.forward_inference({"obs": batch})["action_dist_inputs"].numpy()
        # The module already masks; masking again keeps the choice legal whatever the module does.
        logits = np.where(masks.astype(bool), logits, -np.inf)
        out[:] = logits.argmax(axis=1)

    def __repr__(self) -> str:
        return f"RLlibAgent(path={str(self.path)!r}, policy_id={self.policy_id!r})"


register("rllib", RLlibAgent)

__all__ = ["RLlibAgent"]
