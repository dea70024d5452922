"""The infos contract (nertz_env.infos): the same numeric keys at reset and at every step, in the
parallel, AEC, turn-based and match forms; the observation_dtype and info_action_mask options;
the typed keyword options."""

from __future__ import annotations

import dataclasses
import inspect
import re
import typing

import gymnasium
import numpy as np
import pytest

from nertz_env import NertzConfig, infos, nertz_v0
from nertz_env.options import RuleOptions, observation_dtype

FORMS = {
    "standard": {"num_players": 3},
    "partners": {"num_players": 4, "partners": True},
    "match": {"num_players": 2, "episode": "match", "target_score": 15, "max_cycles": 120},
    "partners_match": {"num_players": 4, "partners": True, "episode": "match", "target_score": 20, "max_cycles": 80},
    "turn_based": {"num_players": 2, "turn_based": True, "max_cycles": 300},
}


def play_parallel(env, seed: int):
    obs, info = env.reset(seed=seed)
    steps = [info]
    rng = np.random.default_rng(seed)
    while env.agents:
        acts = {a: int(rng.choice(np.flatnonzero(obs[a]["action_mask"]))) for a in env.agents}
        obs, _, _, _, info = env.step(acts)
        steps.append(info)
    return steps


def assert_stackable(steps: list[dict], keys: tuple[str, ...]) -> None:
    """Every step's infos have exactly ``keys``, numbers only, each key one type throughout."""
    types: dict[str, type] = {}
    for info in steps:
        for agent_info in info.values():
            assert tuple(agent_info) == keys
            for k, v in agent_info.items():
                if k == "action_mask":
                    assert isinstance(v, np.ndarray) and v.dtype == np.int8
                    continue
                assert isinstance(v, (bool, int)) and not isinstance(v, np.generic), (k, v)
                assert types.setdefault(k, type(v)) is type(v), k
    np.array([[list(i.values()) for i in info.values()] for info in steps if "action_mask" not in keys])


@pytest.mark.parametrize("form", sorted(FORMS))
def test_parallel_infos_have_the_same_numeric_keys_at_reset_and_every_step(form):
    env = nertz_v0.parallel_env(**FORMS[form])
    steps = play_parallel(env, seed=4)
    assert_stackable(steps, infos.info_keys(env.config))
    last, result = steps[-1], env.outcome()
    assert nertz_v0.END_REASONS[last["player_0"]["end_reason"]] == result["end_reason"] is not None
    assert {a: i["final_score"] for a, i in last.items()} == result["final_scores"]
    assert [a for a, i in last.items() if i["called"]] == result["callers"]
    assert all(i["end_reason"] == 0 and i["final_score"] == 0 for info in steps[:-1] for i in info.values())
    if env.config.episode == "match":
        assert all(i["match_rank"] == result["match_rank"][a] for a, i in last.items())
        assert [a for a, i in last.items() if i["match_winner"]] == result["match_winners"]


def test_match_infos_report_each_finished_hand():
    env = nertz_v0.parallel_env(**FORMS["match"])
    steps = play_parallel(env, seed=2)
    overs = [info for info in steps if info["player_0"]["hand_over"]]
    assert len(overs) == env.outcome()["hands"] >= 2
    totals = {a: sum(info[a]["hand_score"] for info in overs) for a in env.possible_agents}
    assert totals == env.outcome()["final_scores"]
    assert all(info[a]["hand_ticks"] > 0 and info[a]["hand_end_reason"] in (1, 2, 3) for info in overs for a in info)
    quiet = [info for info in steps if not info["player_0"]["hand_over"]]
    assert all(i["hand_score"] == 0 and i["hand_ticks"] == 0 for info in quiet for i in info.values())


@pytest.mark.parametrize("form", ["standard", "turn_based", "match"])
def test_aec_infos_have_the_same_keys_at_reset_and_every_step(form):
    capped = {"max_hands": 4} if form == "match" else {}  # random play seldom reaches the target
    env = nertz_v0.env(**FORMS[form], **capped, info_action_mask=True)
    env.reset(seed=1)
    keys = infos.info_keys(env.unwrapped.config, action_mask=True)
    rng = np.random.default_rng(1)
    seen = [dict(env.infos)]
    for _ in env.agent_iter(max_iter=20_000):
        obs, _, term, trunc, info = env.last()
        assert np.array_equal(info["action_mask"], obs["action_mask"])
        env.step(None if term or trunc else int(rng.choice(np.flatnonzero(obs["action_mask"]))))
        seen.append(dict(env.infos))
    assert_stackable(seen, keys)
    result = env.unwrapped.outcome()  # None while the episode runs
    assert env.agents == [] and result is not None
    ended = next((info for info in seen if info and all(i["end_reason"] for i in info.values())), None)
    assert ended is not None and list(ended) == env.possible_agents  # the tick that ended it told every agent
    assert all(nertz_v0.END_REASONS[i["end_reason"]] == result["end_reason"] for i in ended.values())
    assert {a: i["final_score"] for a, i in ended.items()} == result["final_scores"]


def test_info_action_mask_is_the_observation_mask():
    env = nertz_v0.parallel_env(num_players=2, info_action_mask=True)
    obs, info = env.reset(seed=0)
    for _ in range(30):
        for a in env.agents:
            assert np.array_equal(info[a]["action_mask"], obs[a]["action_mask"])
            assert info[a]["action_mask"] is not obs[a]["action_mask"]
        obs, _, _, _, info = env.step({a: 1 if obs[a]["action_mask"][1] else 0 for a in env.agents})
    with pytest.raises(ValueError, match="invalid info_action_mask='yes': accepted False, True or 'only'"):
        nertz_v0.parallel_env(info_action_mask="yes")


@pytest.mark.parametrize("turn_based", [False, True])
def test_info_action_mask_only_leaves_the_bare_observation(turn_based):
    env = nertz_v0.parallel_env(num_players=2, info_action_mask="only", turn_based=turn_based)
    full = nertz_v0.parallel_env(num_players=2, turn_based=turn_based)
    obs, info = env.reset(seed=3)
    ref, _ = full.reset(seed=3)
    for a in env.agents:
        assert env.observation_space(a).contains(obs[a]) and isinstance(env.observation_space(a), gymnasium.spaces.Box)
        assert np.array_equal(obs[a], ref[a]["observation"])
        assert info[a]["action_mask"] == ref[a]["action_mask"].tolist()
        assert all(type(x) is int for x in info[a]["action_mask"])
    aec = nertz_v0.env(num_players=2, info_action_mask="only", turn_based=turn_based)
    aec.reset(seed=3)
    assert np.array_equal(aec.observe("player_1"), ref["player_1"]["observation"])


@pytest.mark.parametrize("dtype", ["float32", np.float32])
def test_float32_observation_and_state_hold_the_int8_values(dtype):
    ints = nertz_v0.parallel_env(num_players=3, turn_based=True)
    floats = nertz_v0.parallel_env(num_players=3, turn_based=True, observation_dtype=dtype)
    a, _ = ints.reset(seed=5)
    b, _ = floats.reset(seed=5)
    for agent in ints.agents:
        assert b[agent]["observation"].dtype == np.float32 and b[agent]["action_mask"].dtype == np.int8
        assert np.array_equal(b[agent]["observation"], a[agent]["observation"].astype(np.float32))
        assert floats.observation_space(agent).contains(b[agent])
    assert floats.state().dtype == np.float32 and np.array_equal(floats.state(), ints.state())
    assert floats.state_space.contains(floats.state())
    aec = nertz_v0.env(num_players=3, turn_based=True, observation_dtype=dtype)
    aec.reset(seed=5)
    assert aec.observe("player_1")["observation"].dtype == np.float32
    with pytest.raises(ValueError, match="invalid observation_dtype=.*'int8'.*'float32'"):
        nertz_v0.parallel_env(observation_dtype="float16")


@pytest.mark.parametrize("given", [np.array(["int8"]), np.array("float32"), ["int8"], np.str_("int16")])
def test_observation_dtype_is_named_by_a_string_not_an_array_equal_to_one(given):
    """``observation_dtype=np.array(['int8'])`` was taken: the array compared equal to 'int8'."""
    with pytest.raises(ValueError, match=re.escape(f"invalid observation_dtype={given!r}: accepted 'int8' (default) "
                                                   "or 'float32'")) as info:  # fmt: skip
        nertz_v0.parallel_env(observation_dtype=given)
    assert ("not a str" in str(info.value)) is not isinstance(given, str)
    assert observation_dtype(np.str_("float32")) is np.float32 and observation_dtype(np.dtype("int8")) is np.int8


def test_render_mode_and_the_single_seat_are_named_by_strings_not_arrays_equal_to_one():
    """``render_mode=np.array(['ansi'])`` and the single-seat env's ``seat=np.array(['random'])``
    were taken (and kept as arrays): each compared equal to the name."""
    with pytest.raises(ValueError, match=r"invalid render_mode=array\(\['ansi'\]"):
        nertz_v0.parallel_env(render_mode=np.array(["ansi"]))
    with pytest.raises(ValueError, match=r"invalid render_mode=array\(\['ansi'\]"):
        gymnasium.make("nertz_env/NertzSingle-v0", render_mode=np.array(["ansi"]))
    with pytest.raises(ValueError, match=r"invalid seat=array\(\['random'\].*: accepted 'random' or 0..3"):
        gymnasium.make("nertz_env/NertzSingle-v0", seat=np.array(["random"]))
    assert gymnasium.make("nertz_env/NertzSingle-v0", seat=np.str_("random")).unwrapped.seat_option == "random"
    assert nertz_v0.parallel_env(render_mode=np.str_("ansi")).render_mode == "ansi"


def test_end_reason_codes_are_published():
    assert nertz_v0.END_REASONS == (None, "call", "stall", "max_cycles")
    assert [infos.end_reason_code(r) for r in nertz_v0.END_REASONS] == [0, 1, 2, 3]
    with pytest.raises(ValueError, match="unknown end reason 'timeout'"):
        infos.end_reason_code("timeout")


def test_rule_options_are_typed_keywords_of_every_constructor():
    fields = {f.name for f in dataclasses.fields(NertzConfig) if f.init}
    # num_players is a parameter of every constructor itself: in both, PEP 692 calls it an overlap
    assert set(typing.get_type_hints(RuleOptions, include_extras=False)) == fields - {"num_players"} | {"preset"}
    from nertz_env.gym_vector import NertzGymVectorEnv
    from nertz_env.vector import NertzVectorEnv

    for fn in (nertz_v0.parallel_env, nertz_v0.env, nertz_v0.raw_env, NertzVectorEnv, NertzGymVectorEnv):
        params = inspect.signature(fn).parameters
        assert params["rules"].annotation == "Unpack[RuleOptions]", fn
        assert "num_players" in params and "config" in params, fn
        named = {"observation_dtype", "illegal_action_penalty"} - set(params)
        assert not named or fn is NertzVectorEnv, (fn, named)


def test_single_seat_env_infos_and_rgb_render():
    pytest.importorskip("PIL", reason="rgb_array rendering needs Pillow (extra 'render')")
    env = gymnasium.make("nertz_env/NertzSingle-v0", opponents=["random"], render_mode="rgb_array", max_cycles=200)
    _, first = env.reset(seed=0)
    keys = tuple(first)
    assert keys == (*infos.info_keys(env.unwrapped.config), "seat")
    done = False
    while not done:
        _, _, term, trunc, info = env.step(int(np.flatnonzero(env.unwrapped.action_masks())[-1]))
        assert tuple(info) == keys
        done = term or trunc
    assert info["final_score"] == env.unwrapped.outcome()["final_scores"][f"player_{info['seat']}"]
    image = env.render()
    assert image.ndim == 3 and image.shape[2] == 3 and image.dtype == np.uint8
