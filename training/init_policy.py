"""``train_selfplay --init-policy``: start a run's network from a saved policy of the same shape,
and the test of "the same network" that it and ``average_policies`` share."""

from __future__ import annotations

from typing import Any

import torch

from nertz_env.agents.policy import INPUT_FLAGS, load_network
from nertz_env.config import NertzConfig


def inputs_of(net: torch.nn.Module) -> tuple[Any, ...]:
    """What a network reads besides its weights: its look-ahead depth (0: none), the feature groups
    it drops, whether it reads the cycle, the opponent, the card identity and the follow-up
    columns, the afterstates, the legal-move summary and the race columns (networks saved before a
    setting read as without it)."""
    return (getattr(net, "lookahead", 0) or 0, tuple(getattr(net, "drop_features", ())),
            *(bool(getattr(net, name, False)) for name in INPUT_FLAGS))  # fmt: skip


def same_network(a: torch.nn.Module, b: torch.nn.Module) -> bool:
    """Whether ``a`` and ``b`` have the same weights' names and shapes and read the same inputs."""
    shapes = ({k: v.shape for k, v in net.state_dict().items()} for net in (a, b))
    return next(shapes) == next(shapes) and inputs_of(a) == inputs_of(b)


def start_from(net: torch.nn.Module, path: str, config: NertzConfig) -> None:
    """``--init-policy``: the weights of a saved policy whose network has this run's shape."""
    saved, saved_config, blob = load_network(path)
    same_rules = (saved_config.num_players, saved_config.work_piles) == (config.num_players, config.work_piles)
    if not (same_network(saved, net) and same_rules):
        depth, dropped, cycle, opponent, identity, follow, afterstate, move_set, race = inputs_of(saved)
        raise ValueError(
            f"--init-policy {path} is a network of {saved_config.num_players} players, --hidden "
            f"{' '.join(map(str, blob['hidden']))} --action-hidden {blob.get('action_hidden')}, look-ahead depth "
            f"{depth}, dropped features {list(dropped)}, cycle features {cycle}, opponent features "
            f"{opponent}, identity features {identity}, follow features {follow}, afterstate {afterstate}, "
            f"move set {move_set}, race features {race}: "
            "use the same flags"
        )
    net.load_state_dict(saved.state_dict())
