"""engine.Bound and engine.HeldTick: a kernel called on arrays it holds, without numba's per-call dispatch
(HeldTick is Game's tick: its arguments held by compiled code, unboxed as one object)."""

import copy
import pickle

import numpy as np
import pytest
from numba import typeof

from nertz_env import NertzConfig, engine
from nertz_env.game import Game


def _game(penalty: float = 0.0) -> Game:
    g = Game(NertzConfig(num_players=3), illegal_action_penalty=penalty)
    g.reset(seed=5)
    return g


def _illegal(g: Game, seat: int) -> int:
    return int(np.flatnonzero(g.masks[seat] == 0)[0])


def _args(g: Game, penalty: float = 0.0) -> tuple:
    return (g.state, 0, g.actions, g._cfg, g.catalogue.table, g._speed, g._plan, penalty,
            engine.PLAY_MATCH | engine.PLAY_OBSERVE, g.obs, g.masks, g.rewards, g._prev)  # fmt: skip


def test_held_and_bound_ticks_play_the_same_game_as_the_dispatched_kernel():
    held, bound, plain = _game(), _game(), _game()
    bound_tick = engine.Bound(engine.play_game_tick, _args(bound))
    rng = np.random.default_rng(0)
    for _ in range(300):
        if held.ended:
            break
        actions = np.array([rng.choice(np.flatnonzero(m)) for m in held.masks], np.int64)
        held.step(actions)  # Game's HeldTick
        bound.actions[:] = actions
        bound_tick()
        plain.actions[:] = actions
        engine.play_game_tick(*_args(plain))
        for other in (bound, plain):
            for a, b in zip(held.state, other.state):
                np.testing.assert_array_equal(a, b)
            np.testing.assert_array_equal(held.obs, other.obs)
            np.testing.assert_array_equal(held.masks, other.masks)
            np.testing.assert_array_equal(held.rewards, other.rewards)
    assert held.tick > 10


def test_set_refuses_an_argument_of_another_type():
    g = _game()
    with pytest.raises(TypeError, match="argument 9 \\(obs\\) was bound as array\\(int8"):
        g._tick.set(9, np.zeros(g.obs.shape, np.float32))
    with pytest.raises(TypeError, match="argument 2 \\(actions\\) was bound as array\\(int64"):
        g._tick.set(2, np.zeros(3, np.int32))
    bound = engine.Bound(engine.play_game_tick, _args(g))
    with pytest.raises(TypeError, match="argument 2 was bound as array\\(int64"):
        bound.set(2, np.zeros(3, np.int32))
    with pytest.raises(TypeError, match="takes 13 arguments"):
        engine.HeldTick(_args(g)[:-1])


def test_a_replaced_argument_is_the_one_the_held_tick_writes():
    """``set`` rebuilds the compiled object: the tick writes the new observation buffer, not the old."""
    g = _game()
    old, new = g.obs.copy(), np.zeros_like(g.obs)
    g._tick.set(9, new)
    actions = np.array([np.flatnonzero(m)[-1] for m in g.masks], np.int64)
    g.step(actions)
    np.testing.assert_array_equal(g.obs, old)  # the game's own buffer was not written
    assert new.any()
    fresh = _game()
    fresh.step(actions)
    np.testing.assert_array_equal(new, fresh.obs)


def test_the_penalty_can_change_between_ticks():
    g = _game(penalty=0.0)
    before = g.get_state()
    actions = np.zeros(3, np.int64)
    actions[0] = _illegal(g, 0)
    g.step(actions)
    free = g.rewards.copy()
    g.set_state(before)
    g.illegal_action_penalty = 2  # an int is stored as the float the kernel takes
    assert g.illegal_action_penalty == 2.0 and isinstance(g.illegal_action_penalty, float)
    g.step(actions)
    assert g.rewards[0] == pytest.approx(free[0] - 2.0)
    np.testing.assert_array_equal(g.rewards[1:], free[1:])


@pytest.mark.parametrize("clone", [copy.deepcopy, lambda g: pickle.loads(pickle.dumps(g))])
def test_a_copied_game_is_bound_to_its_own_arrays(clone):
    g = _game(penalty=1.5)
    twin = clone(g)
    assert twin.illegal_action_penalty == 1.5
    # the options and the catalogue stay read-only: the copy calls the kernels the original compiled
    for mine, its in ((g._cfg, twin._cfg), (g.catalogue.table, twin.catalogue.table)):
        assert not its.flags.writeable and typeof(its) == typeof(mine)
    actions = np.array([np.flatnonzero(m)[-1] for m in g.masks], np.int64)
    twin.step(actions)
    assert twin.tick == 1 and g.tick == 0  # the original's table did not move
    g.step(actions)
    for a, b in zip(g.state, twin.state):
        np.testing.assert_array_equal(a, b)


def test_parallel_parts_replays_the_same_hands(monkeypatch):
    """The benchmark's second pass plays the hands of the first: the bound tick alone, same tables."""
    from nertz_env import nertz_v0
    from nertz_env.benchmarks import parallel_parts

    finals = []
    real = nertz_v0.parallel_env

    def spy(**kwargs):
        env = real(**kwargs)
        finals.append(env.unwrapped.game)
        return env

    monkeypatch.setattr(parallel_parts.nertz_v0, "parallel_env", spy)
    parts = parallel_parts.one_run(400)
    timed, replayed = finals
    for a, b in zip(timed.state, replayed.state):
        np.testing.assert_array_equal(a, b)
    assert timed.tick > 0
    # Times only: which pass is faster is the benchmark's to report, not a test's (a busy machine
    # can turn it around; it did on a 2-core CI run beside two trainings).
    assert parts["tick"] > 0 and parts["step"] > 0 and parts["choice"] > 0
