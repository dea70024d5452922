"""nertz_v0 on Ray RLlib's new API stack: the env under RLlib's multi-agent conventions, registered
as ``"nertz_v0"``, and a ready shared-policy PPO config with action masking.

    >>> from nertz_env.integrations import rllib as nertz_rllib       # doctest: +SKIP
    >>> algo = nertz_rllib.ppo_config(num_env_runners=2, num_players=2).build_algo()
    >>> result = algo.train()
    >>> algo.save(str(Path("runs/rllib").resolve()))   # then agents.make("rllib", path=..., config=...)

## Conventions
RLlib's ``ParallelPettingZooEnv`` ones, plus what its action-masking RLModule reads:

- Agent ids are the env's own, ``player_0 .. player_{n-1}``. Play is simultaneous (R3): every
  agent observes and acts in every tick, so each action dict RLlib sends holds every live agent.
- Observations are ``{"observations": float32[D], "action_mask": float32[N]}``, the key names of
  ``ray/rllib/examples/rl_modules/classes/action_masking_rlm.py``: the R9 observation scaled into
  [0, 1] by the layout's ``high`` (``module_observation``), and the R4 mask. WAIT is always legal
  (R4.7), so no masked distribution is empty.
- All agents end together (R5): a call or the stall rule sets ``terminateds``, ``max_cycles``
  sets ``truncateds``, for every agent and for ``"__all__"`` in the same step.
- One policy, ``POLICY_ID``, plays every seat (``policy_mapping_fn`` maps everyone to it): self-play
  with shared parameters, every seat's experience training the same network.
- Env options (``env_config``) are the keyword arguments of ``nertz_v0.parallel_env``: the rule
  options of ``NertzConfig``, ``num_players``, ``illegal_action_penalty``.

Ray is imported here and only here (``pip install 'nertz-env[rllib]'``); RLlib pins its own
gymnasium, so install it in an environment of its own.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
from gymnasium import spaces

try:
    from ray.rllib.env.multi_agent_env import MultiAgentEnv
    from ray.tune.registry import register_env
except ImportError as exc:  # pragma: no cover - depends on the extra
    raise ModuleNotFoundError("the RLlib integration needs Ray RLlib: pip install 'nertz-env[rllib]'") from exc

from nertz_env import nertz_v0
from nertz_env.config import NertzConfig
from nertz_env.layout import ObservationLayout

ENV_NAME = "nertz_v0"
POLICY_ID = "shared_policy"

__all__ = [
    "ENV_NAME",
    "POLICY_ID",
    "NertzMultiAgentEnv",
    "env_options",
    "load_module",
    "make_env",
    "module_observation",
    "module_path",
    "observation_high",
    "ppo_config",
    "register",
]


def observation_high(config: NertzConfig) -> np.ndarray:
    """The largest value of each observation entry (R9 layout ``high``, at least 1), float32."""
    return np.maximum(ObservationLayout(config).high, 1).astype(np.float32)


def module_observation(observation: np.ndarray, action_mask: np.ndarray, high: np.ndarray) -> dict[str, np.ndarray]:
    """The RLModule's input for one row (``[D]``, ``[N]``) or a batch (``[n, D]``, ``[n, N]``): the
    observation divided by ``observation_high`` into [0, 1] (exactly 1 at the top), the mask as is."""
    return {
        "action_mask": np.asarray(action_mask, dtype=np.float32),
        "observations": np.asarray(observation, dtype=np.float32) / high,
    }


def env_options(**options: Any) -> dict[str, Any]:
    """Env options as a plain dict for ``env_config`` (a ``config=NertzConfig`` is spread into its
    rule options, so RLlib can copy and log it like any other setting)."""
    config = options.pop("config", None)
    if config is not None:
        if not isinstance(config, NertzConfig):
            raise TypeError(f"config must be a NertzConfig, got {type(config).__name__}")
        clash = sorted(set(options) & set(config.to_dict()))
        if clash:
            raise ValueError(f"pass either config=NertzConfig(...) or the rule options {clash}, not both")
        options = {**config.to_dict(), **options}
    return options


class NertzMultiAgentEnv(MultiAgentEnv):
    """``nertz_v0.parallel_env`` as an RLlib ``MultiAgentEnv``; see the module docstring.

    Args:
        config: env options (RLlib passes its ``EnvContext``, a dict); see ``env_options``.
    """

    def __init__(self, config: Mapping[str, Any] | None = None):
        super().__init__()
        self.par_env = nertz_v0.parallel_env(**env_options(**dict(config or {})))
        self.config = self.par_env.config
        self.possible_agents = list(self.par_env.possible_agents)
        self.agents: list[str] = []
        self.high = observation_high(self.config)
        n = len(self.par_env.action_names)
        d = self.high.shape[0]
        space = spaces.Dict(
            {
                "action_mask": spaces.Box(0.0, 1.0, (n,), np.float32),
                "observations": spaces.Box(0.0, 1.0, (d,), np.float32),
            }
        )
        self.observation_spaces: dict[str, spaces.Space] = dict.fromkeys(self.possible_agents, space)
        self.action_spaces: dict[str, spaces.Space] = {a: self.par_env.action_space(a) for a in self.possible_agents}
        # Old-stack names, still read by some RLlib checks.
        self.observation_space = spaces.Dict(self.observation_spaces)
        self.action_space = spaces.Dict(self.action_spaces)
        self._agent_ids = set(self.possible_agents)

    def _convert(self, obs: Mapping[str, Mapping[str, np.ndarray]]) -> dict[str, dict[str, np.ndarray]]:
        return {a: module_observation(o["observation"], o["action_mask"], self.high) for a, o in obs.items()}

    def reset(self, *, seed: int | None = None, options: dict | None = None):
        obs, infos = self.par_env.reset(seed=seed, options=options)
        self.agents = list(self.par_env.agents)
        return self._convert(obs), infos

    def step(self, action_dict: Mapping[str, Any]):
        obs, rewards, terminateds, truncateds, infos = self.par_env.step(action_dict)
        self.agents = list(self.par_env.agents)
        # Every agent ends in the same tick (R5), so "__all__" is any agent's flag.
        terminateds["__all__"] = all(terminateds.values())
        truncateds["__all__"] = all(truncateds.values())
        return self._convert(obs), rewards, terminateds, truncateds, infos

    def render(self):
        return self.par_env.render()

    def close(self) -> None:
        self.par_env.close()


def make_env(env_config: Mapping[str, Any] | None = None) -> NertzMultiAgentEnv:
    """The env creator RLlib calls with its ``EnvContext``."""
    return NertzMultiAgentEnv(env_config)


def register(name: str = ENV_NAME) -> str:
    """Register the env with Ray's registry (workers of a cluster read it from there)."""
    register_env(name, make_env)
    return name


def _map_to_shared_policy(agent_id: str, episode: Any = None, **kwargs: Any) -> str:
    return POLICY_ID


def ppo_config(
    num_env_runners: int = 2,
    num_learners: int = 0,
    *,
    num_envs_per_env_runner: int = 1,
    hiddens: Sequence[int] = (256, 256),
    train_batch_size: int = 4000,
    minibatch_size: int = 500,
    num_epochs: int = 4,
    lr: float = 3e-4,
    entropy_coeff: float = 0.01,
    seed: int | None = None,
    **env_opts: Any,
):
    """Shared-policy PPO with action masking on the new API stack, for ``"nertz_v0"``.

    ``train_batch_size`` is env steps (ticks) per iteration over all learners; every tick holds one
    decision per player. ``num_envs_per_env_runner`` > 1 batches the policy's forward passes over
    several hands per runner (RLlib >= 2.46; older versions play one), which roughly doubled
    sampling throughput at 8 in our measurements. Chain further ``PPOConfig`` calls on the result
    as usual. The remaining keyword arguments are env options (``env_options``), e.g.
    ``num_players=2, reward="relative"``.
    """
    from ray.rllib.algorithms.ppo import PPOConfig
    from ray.rllib.core.rl_module.multi_rl_module import MultiRLModuleSpec
    from ray.rllib.core.rl_module.rl_module import RLModuleSpec
    from ray.rllib.examples.rl_modules.classes.action_masking_rlm import ActionMaskingTorchRLModule

    env_config = env_options(**env_opts)
    NertzMultiAgentEnv(env_config)  # fail here, not on a remote worker, on a bad option
    learners = max(1, num_learners)
    config = (
        PPOConfig()
        .api_stack(enable_rl_module_and_learner=True, enable_env_runner_and_connector_v2=True)
        .environment(register(), env_config=env_config)
        .framework("torch")
        .env_runners(num_env_runners=num_env_runners, num_envs_per_env_runner=num_envs_per_env_runner)
        .learners(num_learners=num_learners)
        .multi_agent(policies={POLICY_ID}, policy_mapping_fn=_map_to_shared_policy)
        .rl_module(
            rl_module_spec=MultiRLModuleSpec(
                rl_module_specs={POLICY_ID: RLModuleSpec(module_class=ActionMaskingTorchRLModule)}
            ),
            model_config={"fcnet_hiddens": list(hiddens), "fcnet_activation": "relu", "vf_share_layers": False},
        )
        .training(
            train_batch_size_per_learner=max(1, train_batch_size // learners),
            minibatch_size=minibatch_size,
            num_epochs=num_epochs,
            lr=lr,
            entropy_coeff=entropy_coeff,
        )
    )
    if seed is not None:
        config = config.debugging(seed=seed)
    return config


def module_path(checkpoint: str | Path, policy_id: str = POLICY_ID) -> Path:
    """The RLModule directory inside an algorithm checkpoint
    (``<ckpt>/learner_group/learner/rl_module/<policy_id>``); a module directory is returned as is."""
    path = Path(checkpoint).expanduser()
    for candidate in (
        path / "learner_group" / "learner" / "rl_module" / policy_id,
        path / "rl_module" / policy_id,
        path / policy_id,
        path,
    ):
        if any((candidate / name).exists() for name in ("module_state.pkl", "module_state.pt")):
            return candidate
    raise FileNotFoundError(
        f"no RLModule {policy_id!r} under {path}: pass an algorithm checkpoint (algo.save(...)) "
        "or its learner_group/learner/rl_module/<policy_id> directory"
    )


def load_module(checkpoint: str | Path, policy_id: str = POLICY_ID):
    """The trained RLModule (torch, for inference) from an algorithm or module checkpoint."""
    from ray.rllib.core.rl_module.multi_rl_module import MultiRLModule
    from ray.rllib.core.rl_module.rl_module import RLModule

    module = RLModule.from_checkpoint(module_path(checkpoint, policy_id))
    if isinstance(module, MultiRLModule):  # the rl_module directory itself was passed
        if policy_id not in module:
            raise KeyError(f"no RLModule {policy_id!r} in {checkpoint}; it holds {sorted(module.keys())}")
        module = module[policy_id]
    module.eval()
    return module
