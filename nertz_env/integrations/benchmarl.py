"""Nertz as a BenchMARL task over the batched engine (``NertzTorchRLEnv``): every algorithm of
BenchMARL with discrete actions trains on it, with the legal-action masks (R4) and ``state`` (the
whole table, for centralized critics such as MAPPO's).

    >>> from benchmarl.algorithms import MappoConfig                          # doctest: +SKIP
    >>> from benchmarl.experiment import Experiment, ExperimentConfig
    >>> from benchmarl.models.mlp import MlpConfig
    >>> from nertz_env.integrations.benchmarl import nertz_task
    >>> Experiment(task=nertz_task(num_players=4), algorithm_config=MappoConfig.get_from_yaml(),
    ...            model_config=MlpConfig.get_from_yaml(), critic_model_config=MlpConfig.get_from_yaml(),
    ...            seed=0, config=ExperimentConfig.get_from_yaml()).run()

The task's config is ``NertzTorchRLEnv``'s keyword options (``num_players``, the rule options,
``observation_dtype``...); BenchMARL gives it ``num_envs``, ``seed`` and ``device``. One group,
``"agents"``, holds every seat (shared-parameter self-play by default, as BenchMARL shares
parameters within a group).

BenchMARL 1.5 needs ``torchrl<0.12``: ``pip install 'nertz-env[benchmarl]'`` in a venv of its own.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

try:
    from benchmarl.environments.common import Task, TaskClass
    from torchrl.data import Composite
    from torchrl.envs import EnvBase
except ImportError as exc:  # pragma: no cover - depends on the extra
    raise ModuleNotFoundError("the BenchMARL task needs benchmarl: pip install 'nertz-env[benchmarl]'") from exc

from nertz_env.config import NertzConfig
from nertz_env.integrations.torchrl import GROUP, NertzTorchRLEnv

__all__ = ["NertzTask", "NertzTaskClass", "nertz_task"]


class NertzTaskClass(TaskClass):
    """The BenchMARL task class of Nertz; its ``config`` is ``NertzTorchRLEnv``'s options."""

    def get_env_fun(
        self, num_envs: int, continuous_actions: bool, seed: int | None, device: Any
    ) -> Callable[[], EnvBase]:
        options = dict(self.config)
        return lambda: NertzTorchRLEnv(num_envs=num_envs, seed=seed, device=device, **options)

    def supports_continuous_actions(self) -> bool:
        return False

    def supports_discrete_actions(self) -> bool:
        return True

    def max_steps(self, env: EnvBase) -> int:
        return env.vector.config.max_cycles

    def has_render(self, env: EnvBase) -> bool:
        return False

    def group_map(self, env: EnvBase) -> dict[str, list[str]]:
        return {GROUP: [f"player_{p}" for p in range(env.vector.num_players)]}

    def observation_spec(self, env: EnvBase) -> Composite:
        return self._only(env, "observation")

    def action_mask_spec(self, env: EnvBase) -> Composite:
        return self._only(env, "action_mask")

    def info_spec(self, env: EnvBase) -> Composite | None:
        return None

    def state_spec(self, env: EnvBase) -> Composite | None:
        spec = env.full_observation_spec_unbatched
        return Composite({"state": spec["state"].clone()}) if "state" in list(spec.keys()) else None

    def action_spec(self, env: EnvBase) -> Composite:
        return env.full_action_spec_unbatched.clone()

    @staticmethod
    def env_name() -> str:
        return "nertz"

    @staticmethod
    def _only(env: EnvBase, key: str) -> Composite:
        spec = env.full_observation_spec_unbatched.clone()
        group = spec[GROUP]
        for other in [k for k in list(group.keys()) if k != key]:
            del group[other]
        if "state" in list(spec.keys()):
            del spec["state"]
        return spec


class NertzTask(Task):
    """BenchMARL's enum of Nertz tasks: ``NertzTask.NERTZ.get_task(config={...})``."""

    NERTZ = None

    @staticmethod
    def associated_class() -> type[TaskClass]:
        return NertzTaskClass


def nertz_task(**options: Any) -> NertzTaskClass:
    """The Nertz task with ``NertzTorchRLEnv`` options (checked here: a bad rule option raises)."""
    rules = {k: v for k, v in options.items() if k not in ("observation_dtype", "include_state", "num_threads",
                                                              "illegal_action_penalty")}  # fmt: skip
    NertzConfig.from_kwargs(**rules)
    # benchmarl is read as untyped (pyproject.toml), so mypy sees no Enum and NERTZ as None
    return NertzTask.NERTZ.get_task(config=dict(options))  # type: ignore[attr-defined]
