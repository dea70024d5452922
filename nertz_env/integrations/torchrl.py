"""The batched engine as a native TorchRL environment: ``NertzTorchRLEnv`` is a TorchRL ``EnvBase``
over ``NertzVectorEnv``, so TorchRL's collectors, losses and BenchMARL run at the engine's speed
(one compiled call per tick for all games, no Python per game or per agent).

    >>> from nertz_env.integrations.torchrl import NertzTorchRLEnv     # doctest: +SKIP
    >>> env = NertzTorchRLEnv(num_envs=256, num_players=4, seed=0)
    >>> rollout = env.rollout(100)      # random legal actions: this env's action spec carries the mask

## Keys (TorchRL's multi-agent conventions, one group ``"agents"``)
Batch size ``[num_envs]``; the group holds every seat, ``P = num_players``:

- ``("agents", "observation")``: float32 ``[B, P, D]`` (R9; ``observation_dtype="int8"`` keeps
  the engine's int8), ``("agents", "action_mask")``: bool ``[B, P, N]`` (R4; WAIT always legal),
  ``"state"``: float32 ``[B, S]``, the whole table with hidden cards (``nertz_v0``'s ``state()``,
  for centralized critics; ``include_state=False`` drops it);
- ``("agents", "action")``: int64 ``[B, P]``, indices into the R10 catalogue; masked policies
  read ``("agents", "action_mask")``;
- ``("agents", "illegal")``: bool ``[B, P, 1]``, the seat's action of this step was illegal and
  was played as WAIT (R4.7, with ``illegal_action_penalty`` subtracted); False at a reset;
- ``("agents", "reward")``: float32 ``[B, P, 1]``, per the ``reward`` option (R7);
- ``("agents", "done" | "terminated" | "truncated")`` ``[B, P, 1]`` and the same at the root
  ``[B, 1]``: all seats of a game end together (R5: a call or a stall terminates, ``max_cycles``
  truncates).

## Random actions and the mask
This env's own action spec carries the mask of the table (updated in place at every step and
reset), so on the bare env ``env.rand_action()`` and ``env.rollout()`` without a policy play only
legal moves. No wrapper sees that update: ``TransformedEnv`` keeps a copy of the spec,
``SerialEnv`` and ``ParallelEnv`` build their own, and TorchRL's ``RandomPolicy`` (a collector
with no policy, ``init_random_frames``) clones the spec once. Their random actions come from a
stale mask, and the illegal ones are played as WAIT and flagged in ``("agents", "illegal")``.
TorchRL's ``ActionMask`` transform, last over the env (bare or ``ParallelEnv``), updates the
outermost spec from ``("agents", "action_mask")`` at every step and reset, so ``rand_action`` and
``rollout()`` play only legal moves again::

    TransformedEnv(env, Compose(StepCounter(300), ActionMask(("agents", "action"), ("agents", "action_mask"))))

Over a ``SerialEnv``, ``ActionMask`` reads a partial reset before TorchRL fills in the workers not
reset, so their next random actions may be illegal (flagged). ``RandomPolicy`` never sees the mask:
give collectors a policy that reads ``("agents", "action_mask")`` (docs/integrations.md).

## Episode ends and resets
The engine deals a game whose hand ended again in the same tick. In ``next`` such a game shows
the last observation of the ended hand (a WAIT-only mask) and its last ``state``, so a critic
can bootstrap a hand cut off at ``max_cycles`` (truncated, not terminated); the reset that
TorchRL's collectors and ``rollout`` then ask for (``"_reset"`` on the ended games) returns the
new deal without stepping anything. A ``"_reset"`` on games still playing (a time limit:
``StepCounter(max_steps)``, a collector's ``max_frames_per_traj``) ends their hands and deals them
anew (``NertzVectorEnv.reset(games=...)``, each from its own stream); the other games are left as
they are. A full ``reset()`` (no ``"_reset"``) deals every game from the seed of ``set_seed`` (or
the constructor's ``seed``), later ones from where each game's stream stands. Stepping an ended
game before its reset is refused, and so is stepping some games alone (``"_step"``, as
``rollout(break_when_all_done=True)`` sends).

``pip install 'nertz-env[torchrl]'``; torch and torchrl are imported here only.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

try:
    import torch
    from tensordict import TensorDict, TensorDictBase
    from torchrl.data import Categorical, Composite, Unbounded
    from torchrl.envs import EnvBase
except ImportError as exc:  # pragma: no cover - depends on the extra
    raise ModuleNotFoundError("the TorchRL integration needs torchrl: pip install 'nertz-env[torchrl]'") from exc

from nertz_env.actions import ACTION_WAIT
from nertz_env.checks import check_seed
from nertz_env.config import NertzConfig
from nertz_env.options import ObservationDtype, RuleOptions
from nertz_env.options import observation_dtype as observation_dtype_of
from nertz_env.vector import NertzVectorEnv

if TYPE_CHECKING:
    from typing_extensions import Unpack

__all__ = ["GROUP", "NertzTorchRLEnv"]

GROUP = "agents"


class NertzTorchRLEnv(EnvBase):
    """``num_envs`` Nertz games of ``num_players`` seats as one batched TorchRL env (see the module
    docstring for the keys).

    Args:
        num_envs: games stepped together (the env's batch size).
        num_players: seats per game, all in the group ``"agents"`` (2 to 8; default 4).
        seed: the seed of the first full reset (``set_seed`` replaces it).
        device: where the tensors are put (the engine runs on the CPU).
        observation_dtype: ``"float32"`` (default) or ``"int8"`` for ``("agents", "observation")``
            and ``"state"``.
        include_state: also return ``"state"`` (the whole table, for centralized critics).
        num_threads: threads for stepping (``None``: numba's maximum); results do not depend on it.
        illegal_action_penalty: subtracted from the reward of an illegal action (played as WAIT).
        config: the rules as one ``NertzConfig``, in place of ``num_players`` and the rule options.
        **rules: the ``NertzConfig`` options and ``preset``, as ``NertzVectorEnv`` takes them.
    """

    batch_locked = True

    def __init__(
        self,
        num_envs: int = 64,
        num_players: int | None = None,
        *,
        seed: int | None = None,
        device: str | torch.device = "cpu",
        observation_dtype: ObservationDtype = "float32",
        include_state: bool = True,
        num_threads: int | None = 1,
        illegal_action_penalty: float = 0.0,
        config: NertzConfig | None = None,
        **rules: Unpack[RuleOptions],
    ):
        vector = NertzVectorEnv(num_envs, num_players, seed, num_threads, illegal_action_penalty, config, **rules)
        super().__init__(device=device, batch_size=torch.Size([vector.num_envs]))
        self.vector = vector
        if not isinstance(include_state, (bool, np.bool_)):
            raise TypeError(f"include_state must be True or False, got {include_state!r}")
        self.include_state = bool(include_state)
        self._dtype = torch.float32 if observation_dtype_of(observation_dtype) is np.float32 else torch.int8
        self._seed = seed
        self._ended = np.zeros(vector.num_envs, bool)  # games dealt again in the last step
        self._dealt = False  # a full reset has dealt every game
        self._states = np.zeros((vector.num_envs, vector.layout.state_size), np.int8)
        self._wait_only = torch.zeros(vector.num_actions, dtype=torch.bool)
        self._wait_only[ACTION_WAIT] = True
        self._make_specs()

    # -- specs -----------------------------------------------------------------------------
    def _make_specs(self) -> None:
        v, dev = self.vector, self.device
        b, p, d, n = v.num_envs, v.num_players, v.obs_dim, v.num_actions
        group = (b, p)
        observation = Composite(
            observation=Unbounded((*group, d), dtype=self._dtype, device=dev),
            action_mask=Categorical(2, (*group, n), dtype=torch.bool, device=dev),
            illegal=Categorical(2, (*group, 1), dtype=torch.bool, device=dev),
            shape=group,
        )
        self.observation_spec = Composite({GROUP: observation}, shape=(b,), device=dev)
        if self.include_state:
            self.observation_spec["state"] = Unbounded((b, v.layout.state_size), dtype=self._dtype, device=dev)
        self.action_spec = Composite(
            {GROUP: Composite(action=Categorical(n, group, dtype=torch.int64, device=dev), shape=group)},
            shape=(b,),
            device=dev,
        )
        self.reward_spec = Composite(
            {GROUP: Composite(reward=Unbounded((*group, 1), dtype=torch.float32, device=dev), shape=group)},
            shape=(b,),
            device=dev,
        )
        flags = ("done", "terminated", "truncated")
        flag = lambda shape: Categorical(2, shape, dtype=torch.bool, device=dev)
        per_agent = Composite({k: flag((*group, 1)) for k in flags}, shape=group)
        root = {k: flag((b, 1)) for k in flags}
        self.done_spec = Composite({**root, GROUP: per_agent}, shape=(b,), device=dev)

    # -- the loop ----------------------------------------------------------------------------
    def _reset(self, tensordict: TensorDictBase | None = None, **kwargs: Any) -> TensorDictBase:
        rows = _reset_rows(tensordict, self.vector.num_envs)
        if rows is None or not self._dealt:
            self.vector.reset(seed=self._seed)
            self._seed = None  # later full resets continue each game's stream
            self._dealt = True
            self._ended[:] = False
        else:  # the engine has dealt the games that just ended already: deal the others asked for
            self.vector.reset(games=rows & ~self._ended)
            self._ended[rows] = False
        v = self.vector
        masks = torch.from_numpy(v.action_masks.view(np.bool_)).clone()
        obs = torch.from_numpy(v.observations).to(self._dtype, copy=True)
        out = self._output(obs, masks)
        zeros = torch.zeros((v.num_envs, 1), dtype=torch.bool)
        agent_zeros = torch.zeros((v.num_envs, v.num_players, 1), dtype=torch.bool)
        for key in ("done", "terminated", "truncated"):
            out[key] = zeros
            out[GROUP, key] = agent_zeros
        return out.to(self.device) if self.device != torch.device("cpu") else out

    def _step(self, tensordict: TensorDictBase) -> TensorDictBase:
        v = self.vector
        actions = self._checked_actions(tensordict)
        obs, masks, rewards, terminated, truncated, infos = v.step(actions.detach().cpu().numpy())
        ended = infos["episode"]["done"]
        self._ended[:] = ended
        obs_t = torch.from_numpy(obs).to(self._dtype, copy=True)
        mask_t = torch.from_numpy(masks.view(np.bool_)).clone()
        rows = np.flatnonzero(ended)
        if len(rows):  # next shows the ended hand's last observation (the new deal comes at reset)
            index = torch.from_numpy(rows)
            obs_t[index] = torch.from_numpy(infos["final_observation"][rows]).to(self._dtype, copy=True)
            mask_t[index] = self._wait_only
        out = self._output(obs_t, mask_t, ended_rows=rows, illegal=infos["illegal"])
        term = torch.from_numpy(terminated).unsqueeze(-1).clone()
        trunc = torch.from_numpy(truncated).unsqueeze(-1).clone()
        out[GROUP, "reward"] = torch.from_numpy(rewards).unsqueeze(-1).clone()
        out[GROUP, "terminated"], out[GROUP, "truncated"], out[GROUP, "done"] = term, trunc, term | trunc
        out["terminated"], out["truncated"] = term.any(1), trunc.any(1)
        out["done"] = out["terminated"] | out["truncated"]
        return out.to(self.device) if self.device != torch.device("cpu") else out

    def _checked_actions(self, tensordict: TensorDictBase) -> torch.Tensor:
        """The actions of a step every game can take: all games together, none whose hand ended
        unreset (the engine has dealt it again, a table no policy saw)."""
        partial = tensordict.get("_step", None)
        if partial is not None and not bool(partial.all()):
            raise RuntimeError(
                "NertzTorchRLEnv steps every game in one engine call: partial steps ('_step', as "
                "rollout(break_when_all_done=True) sends) are not supported; use break_when_any_done"
            )
        if self._ended.any():
            raise RuntimeError(
                f"games {np.flatnonzero(self._ended).tolist()} ended in the last step: reset them (env.reset(td) "
                "with their '_reset', as step_and_maybe_reset and the collectors do) before stepping"
            )
        actions = tensordict.get((GROUP, "action"), None)
        if not isinstance(actions, torch.Tensor):
            raise KeyError(
                f"NertzTorchRLEnv.step needs ({GROUP!r}, 'action'), an integer tensor [num_envs, num_players], "
                f"got {type(actions).__name__}"
            )
        return actions

    def _output(
        self, obs: torch.Tensor, masks: torch.Tensor, ended_rows: np.ndarray | None = None, illegal: Any = None
    ) -> TensorDict:
        self.action_spec[GROUP, "action"].update_mask(masks)  # this env's own spec: no wrapper's copy (docstring)
        shape = (*obs.shape[:2], 1)
        flags = torch.zeros(shape, dtype=torch.bool) if illegal is None else torch.tensor(illegal).reshape(shape)
        group = {"observation": obs, "action_mask": masks, "illegal": flags}
        data: dict[str, Any] = {GROUP: TensorDict(group, batch_size=obs.shape[:2])}
        if self.include_state:
            state = torch.from_numpy(self.vector.states(self._states)).to(self._dtype, copy=True)
            if ended_rows is not None and len(ended_rows):  # the ended hands' last tables, not the new deals
                final = self.vector.infos["final_state"][ended_rows]
                state[torch.from_numpy(ended_rows)] = torch.from_numpy(final).to(self._dtype)
            data["state"] = state
        return TensorDict(data, batch_size=self.batch_size)

    def _set_seed(self, seed: int | None) -> None:
        """The next full reset deals from ``seed`` (game ``i`` on stream ``i`` of it)."""
        self._seed = check_seed(seed)

    def close(self, *, raise_if_closed: bool = True) -> None:
        self.vector.close()
        super().close(raise_if_closed=raise_if_closed)


def _reset_rows(tensordict: TensorDictBase | None, num_envs: int) -> np.ndarray | None:
    """The games a partial reset asks for (bool ``[num_envs]``), or None for a full reset."""
    if tensordict is None:
        return None
    reset = tensordict.get("_reset", None)
    if reset is None:
        reset = tensordict.get((GROUP, "_reset"), None)
    if reset is None:
        return None
    return reset.reshape(num_envs, -1).any(-1).cpu().numpy()
