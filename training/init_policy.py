"""``train_selfplay --init-policy``: start a run's network from a saved policy of the same shape."""

from __future__ import annotations

import torch

from nertz_env.agents.policy import load_network
from nertz_env.config import NertzConfig


def start_from(net: torch.nn.Module, path: str, config: NertzConfig) -> None:
    """``--init-policy``: the weights of a saved policy whose network has this run's shape."""
    saved, saved_config, blob = load_network(path)
    saved_depth, saved_dropped = getattr(saved, "lookahead", 0) or 0, tuple(getattr(saved, "drop_features", ()))
    saved_cycle, saved_opponent = bool(getattr(saved, "cycle", False)), bool(getattr(saved, "opponent", False))
    same = (
        {k: v.shape for k, v in saved.state_dict().items()} == {k: v.shape for k, v in net.state_dict().items()}
        and (saved_config.num_players, saved_config.work_piles) == (config.num_players, config.work_piles)
        and (saved_depth, saved_dropped, saved_cycle, saved_opponent)
        == (net.lookahead or 0, tuple(net.drop_features), net.cycle, net.opponent)
    )
    if not same:
        raise ValueError(
            f"--init-policy {path} is a network of {saved_config.num_players} players, --hidden "
            f"{' '.join(map(str, blob['hidden']))} --action-hidden {blob.get('action_hidden')}, look-ahead depth "
            f"{saved_depth}, dropped features {list(saved_dropped)}, cycle features {saved_cycle}, opponent features "
            f"{saved_opponent}: use the same flags"
        )
    net.load_state_dict(saved.state_dict())
