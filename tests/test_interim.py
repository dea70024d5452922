"""``nertz_env.interim``: a first start plays at once in plain Python while its kernels compile in
the background, then goes on compiled from the next tick, playing the same game byte for byte."""

from __future__ import annotations

import copy
import functools
import hashlib
import os
import pickle
import subprocess
import sys
import textwrap
import time

import numpy as np
import pytest

from nertz_env import engine, interim
from nertz_env import game as game_module
from nertz_env.config import NertzConfig
from nertz_env.game import Game
from nertz_env.vector import NertzVectorEnv

# The plain-Python engine multiplies uint64 in the random stream as compiled code does, wrapping;
# numpy warns where it wraps (engine.rng silences that at import, which pytest resets per test).
pytestmark = pytest.mark.filterwarnings("ignore:overflow encountered in scalar:RuntimeWarning")


class SwitchAfter:
    """A stand-in background compile that ends after ``ticks`` ticks have asked."""

    def __init__(self, ticks: int):
        self.engine = engine.python_engine()
        self.ticks = ticks
        self.asked = 0

    def done(self) -> bool:
        self.asked += 1
        return self.asked > self.ticks


def play(game: Game, seed: int, ticks: int) -> tuple[list[str], list[bool]]:
    """Random legal play from ``seed``: a digest of every output and of the table after each tick,
    and whether the game played compiled at each tick."""
    rng = np.random.default_rng(seed)
    game.reset(seed=seed)
    digests, compiled = [], []
    for _ in range(ticks):
        compiled.append(game.compiled)
        game.step([rng.choice(np.flatnonzero(row)) for row in game.masks])
        h = hashlib.blake2b(digest_size=16)
        for a in (game.obs, game.masks, game.rewards, *game.state):
            h.update(a.tobytes())
        digests.append(h.hexdigest())
        if game.ended:
            game.reset()
    return digests, compiled


CONFIGS = [
    NertzConfig(num_players=4),
    NertzConfig(num_players=3, episode="match", target_score=20, move_ticks=2),
    NertzConfig(num_players=3, nertz_builds=True, block_moves="whole", max_cycles=120),
]


@pytest.mark.parametrize("config", CONFIGS, ids=["standard", "match-move-ticks", "builds-whole-blocks"])
def test_a_game_that_goes_compiled_mid_play_plays_the_same_game(config, monkeypatch):
    expected, compiled = play(Game(config), seed=11, ticks=400)
    assert all(compiled)
    job = SwitchAfter(150)
    monkeypatch.setattr(interim, "background", lambda kind, warm, cached: job)
    game = Game(config)
    assert not game.compiled
    got, compiled = play(game, seed=11, ticks=400)
    assert compiled == [False] * 151 + [True] * 249  # the 151st tick finds the compile over
    assert got == expected


def test_a_penalty_set_in_plain_python_holds_after_the_switch_and_copies_play_on_alike(monkeypatch):
    config = NertzConfig(num_players=2)
    monkeypatch.setattr(interim, "background", lambda kind, warm, cached: SwitchAfter(3))
    game = Game(config, illegal_action_penalty=0.5)
    game.illegal_action_penalty = 2.0
    game.reset(seed=3)
    twin = copy.deepcopy(game)  # chooses its engine again: plain Python too, with a job of its own
    assert not twin.compiled and twin.illegal_action_penalty == 2.0
    illegal = int(np.flatnonzero(game.masks[0] == 0)[0])
    for g in (game, twin):
        for _ in range(5):
            g.step([illegal, 0])
        assert g.compiled and g.illegal_action_penalty == 2.0
    np.testing.assert_array_equal(game.rewards, twin.rewards)
    game.step([illegal, 0])
    assert game.rewards[0] <= -2.0  # the compiled tick holds the penalty set in Python
    with pytest.raises(TypeError, match="was bound as float64"):
        game._tick.set(7, 1)  # and checks types again, as a compiled tick does


def play_vector(env: NertzVectorEnv, ticks: int) -> tuple[list[str], list[bool]]:
    """Random legal play from the env's own sampler: a digest of every output after each tick."""
    env.reset(seed=5)
    digests, compiled = [], []
    for _ in range(ticks):
        compiled.append(env.compiled)
        outputs = env.step(env.sample_actions().copy())
        h = hashlib.blake2b(digest_size=16)
        for a in (*outputs[:5], *env.state, env.states()):
            h.update(a.tobytes())
        digests.append(h.hexdigest())
    return digests, compiled


@pytest.mark.parametrize("threads", [1, 2])
def test_a_vector_env_that_goes_compiled_mid_play_plays_the_same_games(threads, monkeypatch):
    rules = {"num_players": 3, "max_cycles": 60, "move_ticks": 1}
    expected, compiled = play_vector(NertzVectorEnv(5, num_threads=threads, **rules), ticks=150)
    assert all(compiled)
    monkeypatch.setattr(interim, "background", lambda kind, warm, cached: SwitchAfter(200))
    env = NertzVectorEnv(5, num_threads=threads, **rules)
    got, compiled = play_vector(env, ticks=150)
    first = compiled.index(True)  # each tick asks five times (compiled, sample, step, states)
    assert 20 < first < 60 and compiled == [False] * first + [True] * (150 - first)
    assert got == expected
    twin = pickle.loads(pickle.dumps(env))  # chooses its engine again: plain Python, a job of its own
    assert not twin.compiled and twin.step(twin.sample_actions())[0].shape == env.observations.shape


def test_a_warm_cache_plays_compiled_from_the_start(monkeypatch):
    monkeypatch.setenv("NERTZ_INTERIM", "1")
    monkeypatch.setattr(interim, "BackgroundCompile", None)  # would fail if a compile were started
    game = Game(NertzConfig(num_players=4))
    assert game.compiled and NertzVectorEnv(2).compiled and NertzVectorEnv(2, num_threads=2).compiled


@pytest.mark.parametrize("value", ["yes", "2", "true"])
def test_a_bad_interim_setting_names_what_is_accepted(value, monkeypatch):
    monkeypatch.setenv("NERTZ_INTERIM", value)
    with pytest.raises(ValueError, match=rf"NERTZ_INTERIM must be 1 .* or 0 .*, got '{value}'"):
        Game(NertzConfig(num_players=2))


def wait_done(job: interim.BackgroundCompile, seconds: float = 300) -> None:
    deadline = time.monotonic() + seconds
    while not job.done():
        assert time.monotonic() < deadline, "the background compile did not end"
        time.sleep(0.05)


def test_the_background_process_makes_a_game_of_the_config_and_ends(capsys):
    warm = functools.partial(game_module._first_tick, NertzConfig(num_players=3, move_ticks=2))
    job = interim.BackgroundCompile(warm)
    wait_done(job)  # a warm cache: it loads the kernels and plays its tick
    assert job.returncode == 0
    err = capsys.readouterr().err
    assert "compiled the kernels in the background in" in err


def test_a_failed_background_compile_is_reported_and_the_game_compiles_itself(capsys, monkeypatch):
    failing = [sys.executable, "-c", "import sys; sys.stderr.write('no compiler here\\n'); sys.exit(3)"]
    job = interim.BackgroundCompile(print, command=failing)
    monkeypatch.setattr(interim, "background", lambda kind, warm, cached: job)
    game = Game(NertzConfig(num_players=2))
    game.reset(seed=0)
    wait_done(job)
    assert job.returncode == 3
    err = capsys.readouterr().err
    assert "the background compile of the kernels failed (exit 3)" in err and "no compiler here" in err
    game.step([0, 0])
    assert game.compiled


def test_a_process_that_ends_stops_its_background_compile():
    job = interim.BackgroundCompile(print, command=[sys.executable, "-c", "import time; "
                                    "time.sleep(60)"])  # fmt: skip
    assert not job.done()
    job.stop()  # what atexit calls
    assert job.done() and job.returncode != 0


def test_the_plain_python_engine_is_a_second_copy_that_leaves_the_compiled_one_in_place():
    plain = engine.python_engine()
    assert plain is engine.python_engine()
    assert not hasattr(plain.step, "compile") and hasattr(engine.step, "compile")
    assert sys.modules["nertz_env.engine"] is engine
    import nertz_env
    import nertz_env.engine.tick

    assert nertz_env.engine is engine and nertz_env.engine.tick.step is engine.step


def test_a_cold_start_plays_without_compiling_anything(tmp_path):
    """An empty cache: the parallel env deals and plays in plain Python, and this process compiles
    no kernel of the engine; the agents decide in plain Python too, and of their kernels only the
    check of their inputs compiles here (the background compiles are stand-ins that sleep)."""
    script = textwrap.dedent("""
        import sys
        from numba.core import event
        compiled = []
        class Count(event.Listener):
            def on_start(self, ev): compiled.append(ev.data["dispatcher"].py_func.__module__)
            def on_end(self, ev): pass
        event.register("numba:compile", Count())
        from nertz_env import agents, interim, nertz_v0
        class Sleeper(interim.BackgroundCompile):
            def __init__(self, warm, **kw):
                super().__init__(warm, command=[sys.executable, "-c", "import time; time.sleep(120)"], **kw)
        interim.BackgroundCompile = Sleeper
        env = nertz_v0.parallel_env(num_players=3)
        obs, _ = env.reset(seed=0)
        for _ in range(30):
            env.step({a: 0 for a in env.agents})
        print(env.unwrapped.game.compiled, compiled, sorted(job.done() for job in interim._jobs.values()))
        players = [agents.make(name, config=env.unwrapped.config) for name in ("heuristic", "greedy")]
        obs, *_ = env.step({a: players[i % 2].act(obs[a]) for i, a in enumerate(env.agents)})
        print(sorted({m for m in compiled if m.startswith("nertz_env")}), len(interim._jobs))
        for job in interim._jobs.values():
            job.stop()
    """)
    env = {**os.environ, "NUMBA_CACHE_DIR": str(tmp_path), "NERTZ_INTERIM": "1", "NERTZ_COMPILE_NOTICE": "0"}
    out = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=240)
    assert out.returncode == 0, out.stderr
    lines = out.stdout.split("\n")
    assert lines[0] == "False [] [False]"  # no kernel at all
    assert lines[1] == "['nertz_env.agent_input_scan'] 3"  # the input check; the game's, heuristic's and greedy's jobs


def decisions(agent, config: NertzConfig, ticks: int) -> tuple[list[list[int]], list[bool]]:
    """The agent's choice for every seat of a compiled game, tick by tick, and whether its kernels
    were the compiled ones at each tick."""
    game = Game(config)
    game.reset(seed=9)
    chosen, compiled = [], []
    for _ in range(ticks):
        actions = agent.act_batch(game.obs, game.masks)
        compiled.append(not any(isinstance(m, interim.InterimEngine) for m in agent._kernel_modules.values()))
        chosen.append(actions.tolist())
        game.step(actions)
        if game.ended:
            game.reset()
    return chosen, compiled


@pytest.mark.parametrize(("name", "options"), [("heuristic", {}), ("heuristic", {"depth": 2}), ("greedy", {}),
                                               ("random", {})])  # fmt: skip
def test_an_agent_that_goes_compiled_mid_game_makes_the_same_decisions(name, options, monkeypatch):
    from nertz_env import agents

    config = NertzConfig(num_players=3)
    expected, compiled = decisions(agents.make(name, seed=4, config=config, **options), config, ticks=60)
    assert all(compiled)
    monkeypatch.setattr(interim, "background", lambda kind, warm, cached: SwitchAfter(20))
    agent = agents.make(name, seed=4, config=config, **options)
    copy_before = pickle.loads(pickle.dumps(agent))
    got, compiled = decisions(agent, config, ticks=60)
    assert compiled == [False] * 20 + [True] * 40  # the 21st decision finds the compile over
    assert got == expected
    assert decisions(copy_before, config, ticks=60)[0] == expected  # a copy chooses its kernels again


def test_each_background_compile_plays_what_its_kind_needs():
    """The functions the background process calls (here in this process): a game's deal and tick,
    the vector env's deal, sampling and step on one and two threads, an agent's decision."""
    from nertz_env import vector
    from nertz_env.agents import base
    from nertz_env.agents.heuristic import HeuristicAgent
    from nertz_env.agents.scripted import GreedyAgent

    config = NertzConfig(num_players=3, episode="match")
    game_module._first_tick(config)
    for threads in (1, 2):
        vector._first_step(config, threads)
    for cls in (HeuristicAgent, GreedyAgent):
        base._first_decision(cls, config)
        assert pickle.loads(pickle.dumps(functools.partial(base._first_decision, cls, config))).args == (cls, config)


def test_the_evaluation_arena_plays_its_agents_compiled_from_the_first_decision(monkeypatch):
    from nertz_env import agents
    from nertz_env.agents import _kernels
    from nertz_env.training.arena import Arena

    monkeypatch.setattr(interim, "background", lambda kind, warm, cached: SwitchAfter(10**9))
    config = NertzConfig(num_players=2)
    greedy = agents.make("greedy", config=config)
    Arena(config, [greedy, agents.make("random", config=config)])
    game = Game(config)  # plain Python (the stand-in compile never ends), as a watched game is
    game.reset(seed=1)
    greedy.act_batch(game.obs, game.masks)
    assert not game.compiled and greedy._kernel_modules == {_kernels.__name__: _kernels}


def test_a_kind_found_in_the_cache_is_not_probed_again(monkeypatch):
    """Every object of a kind calls its kernels with the same types, so once the cache held them
    the next object of that kind plays compiled without the probe (its typing costs as much as the
    rest of a vector env's constructor)."""
    monkeypatch.setenv("NERTZ_INTERIM", "1")
    monkeypatch.setattr(interim, "_cached", set())
    asked = []
    assert interim.background("a kind", print, lambda: asked.append(1) or True) is None
    assert interim.background("a kind", print, lambda: pytest.fail("probed again")) is None
    assert asked == [1]


def test_greedy_in_plain_python_chooses_as_compiled_where_builds_on_nertz_piles_are_legal():
    """R4.8 builds onto an opponent's Nertz pile: greedy's plain-Python kernel (a first start's)
    scores them with an int8 count, which under NumPy 2's promotion overflowed (OverflowError)
    where the compiled kernel widens it; both must choose alike on every row."""
    from nertz_env import agents
    from nertz_env.agents.base import KERNEL_MODULES

    config = NertzConfig(num_players=2, nertz_builds=True)
    env = NertzVectorEnv(16, seed=3, config=config)
    obs, masks = env.reset()
    compiled = agents.make("greedy", config=config)
    plain = agents.make("greedy", config=config)
    plain._kernel_modules = dict(zip(KERNEL_MODULES, engine.python_modules(KERNEL_MODULES)))
    catalogue, builds = env.catalogue, 0
    to_nertz = np.array([">nertz@" in name for name in catalogue.names])
    for _ in range(150):
        rows_obs, rows_masks = obs.reshape(-1, env.obs_dim), masks.reshape(-1, env.num_actions)
        builds += int((rows_masks[:, to_nertz] != 0).any(axis=1).sum())
        assert plain.act_batch(rows_obs, rows_masks).tolist() == compiled.act_batch(rows_obs, rows_masks).tolist()
        obs, masks, *_ = env.step(env.sample_actions())
    assert builds > 0  # rows where a build on a Nertz pile was legal were decided
