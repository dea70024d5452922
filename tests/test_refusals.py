"""Refusals that leave nothing half done, and values that only look like what a boundary takes.

- ``numpy.timedelta64`` is a subclass of numpy's signed integers, so a duration passed for a
  count, seed, seat, action, weight, mask or observation was read as that integer; every integer
  boundary now refuses it (``config_values.is_int`` / ``is_int_dtype``), as it refuses ``True``.
- A reset refused for its R10 decks changed the game first: ``Game.reset`` reseeded the stream and
  zeroed a match's totals (R8) before it read the decks, and the single-seat env reseeded its
  generator. The decks are read before anything changes.
- A recording's ``speed`` that is not a list (``5``) failed with ``'int' object is not iterable``.
- ``NertzVectorEnv.scores``, ``totals`` and ``ticks`` are live views of the engine's arrays; a
  write through them reached compiled code unchecked (a tick past int32 wrapped). They are
  read-only.
"""

from __future__ import annotations

import json

import gymnasium
import numpy as np
import pytest

from nertz_env import NertzConfig, agents, nertz_v0
from nertz_env.game import Game
from nertz_env.replay import Recording, replay
from nertz_env.vector import NertzVectorEnv, sample_legal

TD = np.timedelta64


def _dealt_game() -> Game:
    game = Game(NertzConfig())
    game.reset(seed=1)
    return game


def _stepped_parallel():
    env = nertz_v0.parallel_env()
    env.reset(seed=1)
    return env


DURATIONS = {
    "a rule option": (lambda: NertzConfig(num_players=TD(3)), r"invalid num_players"),
    "a reset seed": (lambda: nertz_v0.parallel_env().reset(seed=TD(3)), r"seed must be None or an integer"),
    "a parallel action": (lambda: (e := _stepped_parallel()).step({a: TD(0) for a in e.agents}), r"must be an integer"),
    "a one-element action array": (
        lambda: (e := _stepped_parallel()).step({a: np.array([0], "m8") for a in e.agents}),
        r"must be an integer",
    ),
    "vector-env actions": (
        lambda: (v := NertzVectorEnv(2, seed=0)).reset() and v.step(np.zeros((2, 4), "m8")),
        r"actions must be integers",
    ),
    "an agent seed": (lambda: agents.make("random", seed=TD(3)), r"seed must be an integer"),
    "a seat": (lambda: _dealt_game().legal_actions(TD(0)), r"player must be a seat"),
    "sample_legal masks": (lambda: sample_legal(np.ones((2, 5), "m8"), 1), r"masks must be bool, integer or float"),
    "agent observations": (
        lambda: agents.make("greedy").act_batch((g := _dealt_game()).obs.astype("m8"), g.masks),
        r"observations must be arrays of whole numbers",
    ),
    "agent masks": (
        lambda: agents.make("greedy").act_batch((g := _dealt_game()).obs, g.masks.astype("m8")),
        r"masks must be arrays of whole numbers",
    ),
    "a heuristic weight": (lambda: agents.make("heuristic", empty=TD(3)), r"invalid empty=.*accepted a finite number"),
    "a rollout setting": (lambda: agents.make("rollout", samples=TD(3)), r"invalid samples=.*accepted an integer"),
}


@pytest.mark.parametrize("where", sorted(DURATIONS))
def test_a_duration_is_not_an_integer(where):
    call, message = DURATIONS[where]
    with pytest.raises((TypeError, ValueError), match=message):
        call()


def test_the_single_seat_env_refuses_a_duration_for_an_action():
    env = gymnasium.make("nertz_env/NertzSingle-v0", opponents=["random"] * 3)
    env.reset(seed=0)
    with pytest.raises(TypeError, match=r"action for the learner must be an integer 0\.\.180"):
        env.step(TD(0))


def test_a_reset_refused_for_its_decks_leaves_the_match_as_it_was():
    config = NertzConfig(num_players=2, episode="match")
    game = Game(config)
    game.reset(seed=1)
    player = agents.make("greedy", config=config)
    while game.hands_played < 1:  # R8: one hand scored into the match totals, the next in play
        game.step(player.act_batch(game.obs, game.masks))
    game.step(player.act_batch(game.obs, game.masks))
    before = game.get_state()
    with pytest.raises(ValueError, match=r"unknown card 'XX'"):
        game.reset(seed=9, decks=[["XX"]] * 2)
    after = game.get_state()
    for field in before._fields:
        assert np.array_equal(getattr(before, field), getattr(after, field)), field
    assert game.hands_played == 1 and game.totals.any()


def test_the_single_seat_env_keeps_its_generator_when_a_reset_is_refused():
    env = gymnasium.make("nertz_env/NertzSingle-v0", opponents=["random"] * 3, seat="random")
    env.reset(seed=4)
    generator = env.unwrapped.np_random.bit_generator.state
    table = env.unwrapped.game.get_state()
    with pytest.raises(ValueError, match=r"unknown card 'XX'"):
        env.reset(seed=5, options={"decks": [["XX"]] * 4})
    assert env.unwrapped.np_random.bit_generator.state == generator
    assert all(np.array_equal(a, b) for a, b in zip(table, env.unwrapped.game.get_state()))


@pytest.mark.parametrize("speed", [5, "abcd", {"a": 1}, [1, "x", 1, 1]])
def test_a_recording_with_a_bad_speed_is_refused_by_name(speed):
    env = nertz_v0.parallel_env(record=True, collision="random", speed=(1, 2, 1, 1))
    env.reset(seed=0)
    for _ in range(3):
        env.step({a: 0 for a in env.agents})
    saved = json.loads(env.unwrapped.recording.to_json())
    assert len(replay(Recording.from_json(json.dumps(saved)))) == 4  # the list JSON gives replays
    saved["config"]["speed"] = speed
    with pytest.raises(ValueError, match=r"invalid speed=.*accepted None or 4 positive numbers"):
        replay(Recording.from_json(json.dumps(saved)))


@pytest.mark.parametrize("name", ["scores", "totals", "ticks"])
def test_the_vector_envs_live_views_refuse_writes(name):
    env = NertzVectorEnv(2, seed=0, episode="match")
    env.reset()
    view = getattr(env, name)
    with pytest.raises(ValueError, match="read-only"):
        view[:] = 10**6
    before = view.copy()
    for _ in range(40):
        env.step(env.sample_actions())
    assert not np.array_equal(view, before) or name == "totals"  # live: it follows the games
    assert np.array_equal(view, getattr(env, name))
