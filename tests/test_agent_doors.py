"""Every public method of an agent that hands rows to compiled code checks them first, and the
agents' other doors (specs, the search's policy, OpenSpiel bots, the benchmark's tasks) refuse
what does not fit by name. Before these checks some of these calls aborted the interpreter."""

import numpy as np
import pytest
from test_cli_flags import refused

from nertz_env import agents, tasks
from nertz_env.config import NertzConfig
from nertz_env.game import Game

pytest.importorskip("torch", reason="the trained policies need torch (extra: training)")


def _two_player_rows():
    game = Game(NertzConfig(num_players=2))
    game.reset(seed=0)
    return game.obs.copy(), game.masks.copy()


def test_a_policys_scores_refuse_rows_of_other_rules():
    obs, masks = _two_player_rows()
    with pytest.raises(ValueError, match="build it with the env's config"):
        agents.make("ppo-league").scores(obs, masks)  # 4-player network, 2-player rows: aborted before


def test_a_policy_under_rules_of_other_input_sizes_names_them():
    """slide_under changes the network's inputs as the player count does; the error named only
    players and work piles ("trained for 4 players and 4 work piles; it cannot play 4 players
    with 4 work piles")."""
    with pytest.raises(ValueError) as error:
        agents.make("ppo-league", config=NertzConfig(slide_under=False))
    assert str(error.value).endswith("was trained for 4 players, 4 work piles and slide_under=True; it cannot play "
                                     "4 players, 4 work piles and slide_under=False (its inputs' sizes depend on these "
                                     "rules)")  # fmt: skip


def test_a_policy_under_other_play_rules_warns_once_naming_them():
    """A policy plays rules of the same input sizes that it was not trained under (R4.4's
    stock_draw=1 here), and says so once per file and set of differences; none under its own."""
    import warnings

    from nertz_env.agents import _policy_file

    _policy_file._WARNED.clear()
    with pytest.warns(UserWarning) as said:
        agents.make("ppo", config=NertzConfig(stock_draw=1))
    assert len(said) == 1 and str(said[0].message).endswith(
        "ppo.pt was trained under stock_draw=3; it plays stock_draw=1, which it never saw in training (its inputs "
        "fit, so it plays on)")  # fmt: skip
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        agents.make("ppo", config=NertzConfig(stock_draw=1))  # said once
        agents.make("ppo")
        agents.make("ppo", config=NertzConfig(reward="relative", max_cycles=500))  # not rules of play
    with pytest.warns(UserWarning, match="nertz_penalty=2, call_bonus=0; it plays nertz_penalty=1, call_bonus=5"):
        agents.make("ppo", config=NertzConfig(nertz_penalty=1, call_bonus=5))


def test_every_rule_option_is_classed_once_for_a_policy_under_other_rules():
    """A new NertzConfig option must be put in one group: refused, warned of, or neither (a policy
    file's rules; an opponent object at the env doors is refused under other INPUT or PLAY rules)."""
    from nertz_env.config import option_names
    from nertz_env.options import INPUT_RULES, OTHER_RULES, PLAY_RULES

    groups = INPUT_RULES + PLAY_RULES + OTHER_RULES
    assert sorted(groups) == sorted(option_names()) and len(set(groups)) == len(groups)


def test_the_heuristics_calls_refuse_rows_outside_the_observation_space():
    """The refusal names the batch's row, the index and its part (before, the row was always 0: the
    message was built from the offending row alone)."""
    heuristic = agents.make("heuristic")
    rows = np.random.default_rng(0).integers(-128, 128, (2, heuristic.obs_size)).astype(np.int8)
    outside = r"observation row {}, index 0 \(self.nertz_top\) is 89, outside the observation space \[0, 1\]"
    with pytest.raises(ValueError, match=outside.format(0)):
        heuristic.calls(rows, np.ones((2, len(heuristic.catalogue)), np.int8))  # segfaulted before
    game = Game(heuristic.config)
    game.reset(seed=0)
    obs = game.obs.copy()
    obs[2, 0] = 89  # rows 0 and 1 as dealt
    for call in (heuristic.calls, heuristic.act_batch):
        with pytest.raises(ValueError, match=outside.format(2)):
            call(obs, game.masks)


def test_the_searchs_policy_must_play_the_searchs_rules():
    two = NertzConfig(num_players=2)
    with pytest.raises(ValueError, match="build the policy with the search's config"):
        agents.make("rollout", config=two, policy=agents.make("ppo-league"), samples=2, candidates=2, horizon=2)
    rollout = agents.make("rollout", samples=2, candidates=2, horizon=2)
    obs, masks = _two_player_rows()
    with pytest.raises(ValueError, match="build it with the env's config"):
        rollout.search(obs, masks, np.zeros(2, np.uint64))
    game = Game(rollout.config)
    game.reset(seed=0)
    with pytest.raises(ValueError, match="keys must be uint64"):
        rollout.search(game.obs, game.masks, np.zeros(3, np.uint64))


def test_an_ensembles_member_logits_check_their_rows():
    ensemble = agents.make("ensemble", paths="agents/policies/ppo.pt+agents/policies/ppo_league.pt")
    obs, masks = _two_player_rows()
    with pytest.raises(ValueError, match="build it with the env's config"):
        ensemble.member_logits(obs, masks)


def test_the_checked_and_the_engine_paths_score_alike():
    policy = agents.make("ppo")
    game = Game(policy.config)
    game.reset(seed=3)
    checked, engine_rows = policy.scores(game.obs, game.masks), policy._scores(game.obs, game.masks)
    assert all(np.array_equal(a.numpy(), b.numpy()) for a, b in zip(checked, engine_rows))
    heuristic = agents.make("heuristic")
    assert np.array_equal(heuristic.calls(game.obs, game.masks), heuristic._calls(game.obs, game.masks))


@pytest.mark.parametrize("spec", ["heuristic:seed=5", "random:config=1", "greedy:seed=1,config=2"])
def test_a_spec_cannot_set_the_seed_or_the_rules(spec):
    with pytest.raises(ValueError, match="cannot be set in a spec"):
        agents.make_spec(spec)


def test_the_command_line_names_a_seed_in_a_spec_in_one_line(capsys):
    argv = ["eval", "--agents", "heuristic:seed=5", "greedy", "--hands", "2"]
    assert "cannot be set in a spec" in refused(argv, capsys)


def test_the_heuristics_depth_is_an_integer_not_a_bool():
    with pytest.raises(ValueError, match=r"invalid depth=True.*not a bool"):
        agents.make("heuristic", depth=True)
    assert agents.make("heuristic", depth=np.int64(2)).options["depth"] == 2


def test_a_tasks_rules_are_read_only_and_a_task_checks_its_numbers():
    task = tasks.get("nertz-4p")
    with pytest.raises(TypeError, match="a task's rules are fixed"):
        task.rules["num_players"] = 2
    assert tasks.get("nertz-4p").config.num_players == 4
    with pytest.raises(ValueError, match=r"invalid eval_deals=-1"):
        tasks.Task("x", 1, "d", {}, eval_deals=-1)
    with pytest.raises(ValueError, match="unknown rule option.s. bogus"):
        tasks.Task("x", 1, "d", {"bogus": 1})
    with pytest.raises(ValueError, match="pool must be a non-empty tuple"):
        tasks.Task("x", 1, "d", {}, pool=("",))


def test_an_openspiel_bot_refuses_an_agent_of_other_rules():
    pytest.importorskip("pyspiel", reason="needs open_spiel: pip install 'nertz-env[openspiel]'")
    import pyspiel

    from nertz_env.agents.openspiel_bot import AgentBot

    game = pyspiel.load_game("python_nertz", {"players": 2})
    with pytest.raises(ValueError, match="build the agent with the game's config"):
        AgentBot(agents.make("heuristic"), 0, game)  # built for 4 players
    with pytest.raises(TypeError, match="AgentBot plays an agents.Agent"):
        AgentBot(None, 0, game)
    with pytest.raises(ValueError, match="invalid player=2"):
        AgentBot(agents.make("heuristic", config=game.config), 2, game)


def test_the_benchmark_names_an_agent_given_twice(capsys):
    argv = ["benchmark", "eval", "--task", "nertz-2p", "--agent", "greedy", "--agent", "greedy"]
    assert "'greedy' given more than once" in refused(argv, capsys)


def test_a_move_scorers_forward_checks_its_rows():
    """``MoveScorer.forward`` (a ``build_scorer`` network, which trainers call) hands its rows to
    the move features' compiled code: a mask wider than the catalogue segfaulted there."""
    import torch

    from nertz_env.agents.policy import build_scorer

    obs, masks = _two_player_rows()
    net = build_scorer(NertzConfig(num_players=2), hidden=(8,), action_hidden=8, lookahead=False)
    wide = torch.zeros((1, 5000), dtype=torch.int8)
    wide[0, ::7] = 1
    with pytest.raises(ValueError, match="ActionFeatures was built for .* and 181 actions .* got 895 and 5000"):
        net(torch.from_numpy(obs[:1]), wide)
    logits, _ = net(torch.from_numpy(obs), torch.from_numpy(masks))
    assert ((logits > -1e8) == torch.from_numpy(masks != 0)).all()
