"""The shipped policies' names say what they compute: ``ppo`` and ``ppo-league`` are search-free,
``ppo-search`` runs the heuristic's depth-3 search at every decision, and each refuses a file of the
other kind."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

from nertz_env import NertzConfig, agents  # noqa: E402
from nertz_env.agents import policy  # noqa: E402
from nertz_env.agents.features import LOOKAHEAD_COLUMNS, N_FEATURES, N_OPPONENT_FEATURES  # noqa: E402
from nertz_env.agents.policy import SHIPPED_POLICIES, build_scorer, load_network, save_policy  # noqa: E402


@pytest.mark.parametrize("name, searches", [("ppo", False), ("ppo-league", False), ("ppo-search", True)])
def test_each_shipped_file_is_of_the_kind_its_name_says(name, searches):
    path, _ = SHIPPED_POLICIES[name]
    if not path.exists():
        pytest.skip(f"no {path.name} in this checkout")
    _, config, blob = load_network(path)
    assert (blob["lookahead"] or 0) > 0 if searches else not blob["lookahead"]
    agent = agents.make(name)
    assert agent.lookahead == (3 if searches else 0)
    assert config.num_players == 4


@pytest.mark.parametrize("name, opponent", [("ppo", True), ("ppo-league", False)])
def test_the_search_free_policies_never_fill_the_search_columns(name, opponent):
    """Their features leave the look-ahead columns at zero: no engine search at decision time.
    ``ppo`` reads the opponent columns (R4.2: what an opponent's next foundation play frees),
    ``ppo-league``, the policy ``rollout`` searches with by default, does not."""
    import numpy as np

    from nertz_env.vector import NertzVectorEnv

    if not SHIPPED_POLICIES[name][0].exists():
        pytest.skip(f"no {SHIPPED_POLICIES[name][0].name} in this checkout")
    net, _, blob = load_network(SHIPPED_POLICIES[name][0])
    assert bool(blob.get("opponent")) == opponent
    assert net.features.width == (N_OPPONENT_FEATURES if opponent else N_FEATURES)
    obs, masks = NertzVectorEnv(8, seed=3).reset(seed=3)
    _, _, feats = net.features(obs.reshape(32, -1), masks.reshape(32, -1))
    assert len(feats) > 32 and not np.any(feats[:, list(LOOKAHEAD_COLUMNS)])
    if name == "ppo-league":
        assert agents.make("rollout").policy.path == SHIPPED_POLICIES[name][0]


@pytest.mark.parametrize(
    "name, lookahead, says", [("ppo", 3, "runs a depth-3 search"), ("ppo-search", 0, "is search-free")]
)
def test_a_shipped_name_refuses_a_file_of_the_other_kind(tmp_path, monkeypatch, name, lookahead, says):
    cfg = NertzConfig()
    path = save_policy(tmp_path / "p.pt", build_scorer(cfg, (8,), 8, lookahead=lookahead), cfg, (8,), action_hidden=8)
    monkeypatch.setitem(policy.SHIPPED_POLICIES, name, (path, name == "ppo-search"))
    policy.register(name, policy._shipped(name), overwrite=True)
    try:
        with pytest.raises(ValueError, match=f"{says}.*--lookahead-features false as ppo.pt"):
            agents.make(name)
    finally:
        monkeypatch.undo()
        policy.register(name, policy._shipped(name), overwrite=True)


def test_a_near_miss_name_gets_a_hint():
    with pytest.raises(ValueError, match="unknown agent 'ppo_search' \\(did you mean 'ppo-search'\\?\\)"):
        agents.make("ppo_search")
