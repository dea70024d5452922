"""The shipped policies' names say what they compute: ``ppo`` and ``ppo-league`` are search-free
(``ppo`` reads each legal move's immediate effect, the heuristic's depth-1 value of the table the
move leaves), ``ppo-search`` runs the heuristic's depth-3 search at every decision, and each refuses
a file of the other kind."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch", reason="needs torch: pip install 'nertz-env[training]'")

from nertz_env import NertzConfig, agents  # noqa: E402
from nertz_env.agents import policy  # noqa: E402
from nertz_env.agents.features import LOOKAHEAD_COLUMNS, N_FEATURES, N_OPPONENT_FEATURES, ActionFeatures  # noqa: E402
from nertz_env.agents.policy import SHIPPED_POLICIES, build_scorer, load_network, save_policy  # noqa: E402


@pytest.mark.parametrize("name, depth", [("ppo", 1), ("ppo-league", 0), ("ppo-search", 3)])
def test_each_shipped_file_is_of_the_kind_its_name_says(name, depth):
    path, searches = SHIPPED_POLICIES[name]
    if not path.exists():
        pytest.skip(f"no {path.name} in this checkout")
    _, config, blob = load_network(path)
    assert (blob["lookahead"] or 0) == depth and searches == (depth > policy.IMMEDIATE_EFFECT)
    agent = agents.make(name)
    assert agent.lookahead == depth
    assert config.num_players == 4


@pytest.mark.parametrize("name, opponent, effect", [("ppo", True, True), ("ppo-league", False, False)])
def test_the_search_free_policies_read_no_search(name, opponent, effect):
    """No engine search at decision time: ``ppo-league``'s features leave the look-ahead columns at
    zero; ``ppo``'s fill them with each legal move's immediate effect alone (the depth-1 values,
    which differ from a depth-3 search's), and it reads the opponent columns (R4.2: what an
    opponent's next foundation play frees). ``ppo-league`` is the policy ``rollout`` searches with."""
    import numpy as np

    from nertz_env.vector import NertzVectorEnv

    if not SHIPPED_POLICIES[name][0].exists():
        pytest.skip(f"no {SHIPPED_POLICIES[name][0].name} in this checkout")
    net, config, blob = load_network(SHIPPED_POLICIES[name][0])
    assert bool(blob.get("opponent")) == opponent
    assert net.features.width == (N_OPPONENT_FEATURES if opponent else N_FEATURES)
    env = NertzVectorEnv(8, seed=3)
    obs, masks = env.reset(seed=3)
    for _ in range(6):  # a few ticks in, where moves differ in what they lead to
        obs, masks, *_ = env.step(env.sample_actions())
    obs, masks = obs.reshape(32, -1), masks.reshape(32, -1)
    _, _, feats = net.features(obs, masks)
    look = feats[:, list(LOOKAHEAD_COLUMNS)]
    assert len(feats) > 32 and bool(np.any(look)) == effect
    if effect:
        def columns(depth):
            return ActionFeatures(config, depth, opponent=True)(obs, masks)[2][:, list(LOOKAHEAD_COLUMNS)]

        np.testing.assert_array_equal(look, columns(1))
        assert not np.array_equal(look, columns(3))
    else:
        assert agents.make("rollout").policy.path == SHIPPED_POLICIES[name][0]


@pytest.mark.parametrize(
    "name, lookahead, says",
    [("ppo", 3, "runs a depth-3 search"), ("ppo", 2, "runs a depth-2 search"), ("ppo-search", 0, "is search-free"),
     ("ppo-search", 1, "is search-free")],
)
def test_a_shipped_name_refuses_a_file_of_the_other_kind(tmp_path, monkeypatch, name, lookahead, says):
    cfg = NertzConfig()
    path = save_policy(tmp_path / "p.pt", build_scorer(cfg, (8,), 8, lookahead=lookahead), cfg, (8,), action_hidden=8)
    monkeypatch.setitem(policy.SHIPPED_POLICIES, name, (path, name == "ppo-search"))
    policy.register(name, policy._shipped(name), overwrite=True)
    try:
        with pytest.raises(ValueError, match=f"{says}.*--lookahead-depth 1 .each move's immediate effect.*as ppo.pt"):
            agents.make(name)
    finally:
        monkeypatch.undo()
        policy.register(name, policy._shipped(name), overwrite=True)


def test_a_near_miss_name_gets_a_hint():
    with pytest.raises(ValueError, match="unknown agent 'ppo_search' \\(did you mean 'ppo-search'\\?\\)"):
        agents.make("ppo_search")
