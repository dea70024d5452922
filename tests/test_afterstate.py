"""The afterstates of ``agents._afterstate`` and the network that reads them
(``build_scorer(afterstate=True)``): each legal card move changes the viewer's observation (R9)
exactly as the engine's tick does when the move is played, save what the viewer cannot know
before (the Nertz card it turns up) and the per-tick progress counters (R5); the network's
afterstate summary is its summary of that observation."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import make_deck, new_game, play

from nertz_env import agents
from nertz_env.actions import ACTION_WAIT, CALL, DRAW, WAIT
from nertz_env.agents._afterstate import MAX_CHANGES, afterstate_changes
from nertz_env.agents.base import observation_offsets
from nertz_env.config import NertzConfig
from nertz_env.engine.constants import T_KIND
from nertz_env.game import Game
from nertz_env.layout import ObservationLayout

CONFIG = NertzConfig(num_players=2, nertz_pile_size=3, collision="seat", stall_ticks=10_000)
ME = make_deck(["KD", "5C", "AH"], ["9S", "7C", "4D", "QC"], ["3D", "2S", "8H"])
RIVAL = make_deck(["KS", "QS", "2H"], ["TS", "9C", "8S", "7S"])


def _unseen(config: NertzConfig) -> np.ndarray:
    """The entries an afterstate leaves as they were though the tick may change them: the Nertz
    card turned up under the moved one, and the progress counters (R5)."""
    layout = ObservationLayout(config)
    s = layout.slices
    keep = np.ones(layout.size, bool)
    for name in ("self.nertz_top", "since_progress", "stall_rotations"):
        keep[s[name]] = False
    return keep


def _changed(game: Game, player: int = 0) -> dict[str, np.ndarray]:
    """Each legal move of ``player``'s by name: its observation after ``afterstate_changes``."""
    obs, masks = game.obs[player : player + 1], game.masks[player : player + 1]
    rows, acts = np.nonzero(masks)
    idx, val, starts = afterstate_changes(obs, rows, acts, game.catalogue.table, observation_offsets(game.config))
    assert (np.diff(starts) <= MAX_CHANGES).all()
    out = {}
    for k, a in enumerate(acts):
        after = obs[0].astype(np.int64)
        np.add.at(after, idx[starts[k] : starts[k + 1]], val[starts[k] : starts[k + 1]].astype(np.int64))
        out[game.catalogue.names[a]] = after
    return out


def _check_every_move(game: Game, keep: np.ndarray, player: int = 0) -> int:
    """Play each legal move of ``player`` alone (the others wait) from the same table and compare
    the viewer's next observation with the afterstate; returns the card moves checked."""
    saved, checked = game.get_state(), 0
    before = game.obs[player].astype(np.int64)
    for name, after in _changed(game, player).items():
        a = game.catalogue.index(name)
        kind = game.catalogue.table[a, T_KIND]
        if kind in (WAIT, DRAW, CALL):
            assert (after == before).all(), name  # nothing the viewer can see beforehand
            continue
        actions = np.full(game.config.num_players, ACTION_WAIT)
        actions[player] = a
        game.step(actions)
        real = game.obs[player].astype(np.int64)
        assert (real[keep] == after[keep]).all(), (name, np.flatnonzero((real != after) & keep))
        game.set_state(saved)
        checked += 1
    return checked


def test_r4_each_card_move_of_an_exact_table_changes_what_the_tick_changes():
    game = new_game(CONFIG, [ME, RIVAL])
    keep = _unseen(CONFIG)
    play(game, "draw", "wait")  # 8H on my waste over 2S and 3D
    assert _check_every_move(game, keep) == 2  # AH up, 8H onto 9S (and wait, draw)
    after = _changed(game)
    s = ObservationLayout(CONFIG).slices
    code = {name: i for i, name in enumerate(r + u for u in "CDHS" for r in "A23456789TJQK")}
    moved = after["waste>work0"]  # 8H onto 9S (R4.3): 2S shows, the waste order moves up one
    assert moved[s["self.work0"]][code["8H"]] == 1 and moved[s["self.waste_top"]][code["2S"]] == 1
    assert moved[s["own_waste_order"]][code["2S"]] == 1 and moved[s["self.waste_count"]][0] == 2
    up = after["nertz>foundation"]  # AH up (R4.2): a foundation pile of hearts with the ace on top
    assert up[s["foundation_tops"]][code["AH"]] == 1 and up[s["self.foundation"]][code["AH"]] == 1
    assert up[s["self.nertz_top"]].sum() == 0 and up[s["self.nertz_count"]][0] == 2  # the next card unknown


@pytest.mark.parametrize("config", [CONFIG, NertzConfig(num_players=3), NertzConfig(stock_draw=1, block_moves="none")])
@pytest.mark.parametrize("seed", [3, 4])
def test_every_card_move_in_play_changes_what_the_tick_changes(config, seed):
    game = Game(config)
    game.reset(seed=seed)
    players = [agents.make("heuristic", config=config, seed=seed + p) for p in range(config.num_players)]
    keep, checked = _unseen(config), 0
    for tick in range(200):
        if game.ended:  # a short hand: the next deal
            game.reset(seed=seed + 100 * tick)
        checked += _check_every_move(game, keep, player=0)
        game.step(np.array([p.act_batch(game.obs[q : q + 1], game.masks[q : q + 1])[0]
                            for q, p in enumerate(players)]))  # fmt: skip
    assert checked > 80


def _dense_pair_scores(net, obs, rows, acts, feats, after_obs):
    """The afterstate network's scores with dense layers throughout: the reference."""
    import torch

    z = net.body(torch.from_numpy(obs).float() * net.scale)
    after = net.body(torch.from_numpy(after_obs).float() * net.scale)
    rows_t, acts_t = torch.from_numpy(rows), torch.from_numpy(acts)
    h = net.state_in(z)[rows_t] + net.move_in(torch.from_numpy(feats)) + net.embed(acts_t) + net.after_in(after)
    return net.move_out(torch.relu(net.move_mid(torch.relu(h)))).squeeze(-1), net.value_head(z).squeeze(-1)


def test_the_network_scores_each_move_by_the_summary_of_its_afterstate():
    torch = pytest.importorskip("torch", reason="the trained policies need torch (the training extra)")
    from nertz_env.agents.policy import build_scorer
    from nertz_env.vector import NertzVectorEnv

    config = NertzConfig(num_players=3)
    torch.manual_seed(0)
    net = build_scorer(config, (32, 16), 8, lookahead=False, opponent=True, afterstate=True)
    env = NertzVectorEnv(6, seed=5, **config.to_dict())
    obs, masks = env.reset()
    for _ in range(30):  # into the hand, where most moves are card moves
        obs, masks, *_ = env.step(agents.make("heuristic", config=config).act_batch(
            obs.reshape(18, -1), masks.reshape(18, -1)).reshape(6, 3))  # fmt: skip
    obs, masks = obs.reshape(18, -1), masks.reshape(18, -1)
    rows, acts, feats = net.features(obs, masks)
    idx, val, starts = afterstate_changes(obs, rows, acts, net.features.table, net.features.offsets)
    after_obs = obs[rows].astype(np.float32)
    for k in range(len(rows)):
        np.add.at(after_obs[k], idx[starts[k] : starts[k + 1]], val[starts[k] : starts[k + 1]])
    assert (after_obs != obs[rows]).any(1).sum() > len(np.unique(rows))  # most rows have a card move
    inputs = (torch.from_numpy(obs), torch.from_numpy(rows), torch.from_numpy(acts), torch.from_numpy(feats))
    scores, values = net.pair_scores(*inputs)
    dense_scores, dense_values = _dense_pair_scores(net, obs, rows, acts, feats, after_obs)
    torch.testing.assert_close(scores, dense_scores, rtol=1e-4, atol=1e-5)
    torch.testing.assert_close(values, dense_values)
    grads = []
    for compute in (lambda: net.pair_scores(*inputs)[0], lambda: _dense_pair_scores(net, obs, rows, acts, feats,
                                                                                     after_obs)[0]):  # fmt: skip
        net.zero_grad()
        (compute() ** 2).sum().backward()
        grads.append({name: p.grad.clone() for name, p in net.named_parameters() if p.grad is not None})
    for name in grads[1]:  # the sparse first layer and the change's layer pass the dense gradient
        torch.testing.assert_close(grads[0][name], grads[1][name], rtol=1e-3, atol=1e-5, msg=name)
    assert grads[0]["after_in.weight"].abs().sum() > 0


def test_an_afterstate_policy_saves_loads_and_is_refused_as_a_start_without_them(tmp_path):
    torch = pytest.importorskip("torch", reason="the trained policies need torch (the training extra)")
    from nertz_env.agents.policy import build_scorer, load_network, save_policy
    from training.init_policy import start_from

    net = build_scorer(CONFIG, (16,), 8, lookahead=False, afterstate=True)
    save_policy(tmp_path / "p.pt", net, CONFIG, (16,), action_hidden=8)
    loaded, _, blob = load_network(tmp_path / "p.pt")
    assert blob["afterstate"] is True and loaded.afterstate
    game = new_game(CONFIG, [ME, RIVAL])
    obs, masks = torch.from_numpy(game.obs), torch.from_numpy(game.masks)
    with torch.no_grad():
        assert torch.equal(net(obs, masks)[0], loaded(obs, masks)[0])
    plain = build_scorer(CONFIG, (16,), 8, lookahead=False)
    assert not plain.afterstate and "after_in.weight" not in plain.state_dict()
    with pytest.raises(ValueError, match="afterstate True"):
        start_from(plain, str(tmp_path / "p.pt"), CONFIG)
    player = agents.make("policy", path=str(tmp_path / "p.pt"), config=CONFIG)
    assert player.act_batch(game.obs, game.masks).shape == (2,)
