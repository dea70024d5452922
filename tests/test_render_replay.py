"""Pictures of the table and exact replays of recorded hands."""

from __future__ import annotations

import json

import numpy as np
import pytest
from conftest import needs_pillow

from nertz_env import NertzConfig, nertz_v0
from nertz_env.render import render_rgb
from nertz_env.replay import Recording, replay, save_replay


def play(env, seed, ticks):
    rng = np.random.default_rng(seed)
    obs, _ = env.reset(seed=seed)
    for _ in range(ticks):
        if not env.agents:
            break
        obs, *_ = env.step({a: int(rng.choice(np.flatnonzero(obs[a]["action_mask"]))) for a in env.agents})


@needs_pillow
def test_rgb_array_is_an_image_that_changes_with_the_table():
    env = nertz_v0.parallel_env(num_players=4, render_mode="rgb_array")
    env.reset(seed=0)
    first = env.render()
    assert first.dtype == np.uint8 and first.ndim == 3 and first.shape[2] == 3
    play(env, 0, 30)
    assert env.render().shape[1] == first.shape[1]
    assert not np.array_equal(env.render()[:200], first[:200])


def _played_and_replayed():
    env = nertz_v0.parallel_env(num_players=3, record=True, collision="random")
    play(env, 5, 10_000)
    rec = Recording.from_json(env.unwrapped.recording.to_json())
    return env, rec, replay(rec)


def test_recorded_hand_replays_exactly_through_json(tmp_path):
    env, rec, frames = _played_and_replayed()
    assert len(frames) == env.unwrapped.game.tick + 1
    assert frames[-1]["snapshot"] == env.snapshot()
    html = save_replay(rec, tmp_path / "hand.html")
    assert 'type="range"' in html.read_text()
    with pytest.raises(ValueError, match=r"\.gif or \.html"):
        save_replay(rec, tmp_path / "hand.mp4")


@needs_pillow
def test_a_recorded_hand_saves_as_a_gif_of_every_kth_table(tmp_path):
    _, rec, frames = _played_and_replayed()
    gif = save_replay(rec, tmp_path / "hand.gif", every=25)
    from PIL import Image

    with Image.open(gif) as im:
        assert im.n_frames == len(frames[::25]) + bool((len(frames) - 1) % 25)  # and the final table


def _recorded_hand(seed=3, players=3):
    from nertz_env import agents

    env = nertz_v0.parallel_env(num_players=players, record=True)
    bots = [agents.make("greedy", seed=k, config=env.unwrapped.config) for k in range(players)]
    obs, _ = env.reset(seed=seed)
    while env.agents:
        obs, *_ = env.step({a: bot.act(obs[a]) for a, bot in zip(env.agents, bots)})
    return env.unwrapped.recording


def _page_data(text):
    import json

    start = text.index("const D = ") + len("const D = ")
    return json.loads(text[start : text.index(";\n", start)])


def test_html_replay_holds_every_kept_frame_with_names_moves_and_races(tmp_path):
    rec = _recorded_hand()
    frames = replay(rec)
    path = save_replay(rec, tmp_path / "hand.html", every=4, names=["ann", "bob", "cy"])
    data = _page_data(path.read_text())
    kept = list(range(0, len(frames), 4)) + ([len(frames) - 1] if (len(frames) - 1) % 4 else [])
    assert data["names"] == ["ann", "bob", "cy"]
    assert [f["tick"] for f in data["frames"]] == [frames[k]["snapshot"]["tick"] for k in kept]
    assert data["frames"][-1]["end"] == frames[-1]["snapshot"]["end_reason"]  # ends on the final table
    for view, k in zip(data["frames"][1:], kept[1:]):
        snap, before = frames[k]["snapshot"], frames[k - 1]["snapshot"]
        for p, (name, move) in enumerate(zip(frames[k]["actions"], view["moves"])):
            assert move.startswith(name)  # R10 name, then the card it moved
            if name.split(">")[0] in ("nertz", "waste"):
                assert move.split()[1] == before["players"][p][name.split(">")[0]][-1]
            assert ("W" in view["races"][p]) == frames[k]["events"]["won_race"][p]
        assert view["found"] == [[f["cards"][-1][1], f["cards"][-1][0], f["complete"]] for f in snap["foundations"]]
        assert [pl["nertz"][1] for pl in view["players"]] == [len(pl["nertz"]) for pl in snap["players"]]
    assert data["frames"][0]["moves"] == []  # the deal


def test_gif_frames_carry_the_tick_and_the_moves(tmp_path):
    Image = pytest.importorskip("PIL.Image")

    rec = _recorded_hand()
    frames = replay(rec)
    plain = render_rgb(frames[5]["snapshot"], frames[5]["events"])
    captioned = render_rgb(frames[5]["snapshot"], frames[5]["events"], caption=["tick 5", "a: draw", "b: wait"])
    assert captioned.shape[0] == plain.shape[0] + 3 * 15 + 6
    assert np.array_equal(captioned[3 * 15 + 6 :], plain)  # the table below is the same picture
    ink = (captioned[: 3 * 15 + 6] != plain[0, 0]).any(axis=2)
    assert all(ink[6 + 15 * k : 6 + 15 * k + 12].sum() > 50 for k in range(3))  # each caption line is written
    gif = save_replay(rec, tmp_path / "hand.gif", every=1)
    with Image.open(gif) as im:
        assert im.n_frames == len(frames)
        im.seek(1)
        first = np.asarray(im.convert("RGB"))
    top = render_rgb(frames[1]["snapshot"], frames[1]["events"], names=[f"player_{p}" for p in range(3)],
                     caption=["tick 1"] + [f"player_{p}: {m}" for p, m in enumerate(_moves_of(frames, 1))])
    assert np.abs(first[: top.shape[0]].astype(int) - top.astype(int)).mean() < 8  # GIF palette, same picture


def _moves_of(frames, k):
    from nertz_env.render import move_text

    ev = frames[k]["events"]
    return [move_text(frames[k - 1]["snapshot"], p, a, ev["won_race"][p], ev["collision"][p])
            for p, a in enumerate(frames[k]["actions"])]


@pytest.mark.parametrize(
    ("option", "message"),
    [({"every": 0}, r"invalid every=0"), ({"every": True}, r"invalid every=True: accepted an integer >= 1"),
     ({"every": 2.0}, r"invalid every=2.0"), ({"fps": "4"}, r"invalid fps='4': accepted a number from 0.01 to 100"),
     ({"fps": float("inf")}, r"invalid fps=inf"), ({"fps": float("nan")}, r"invalid fps=nan"), ({"fps": 0}, "fps=0"),
     ({"fps": True}, "fps=True"), ({"names": ["a", "b"]}, r"names must name the 3 players, got 2"),
     ({"names": [1, 2, 3]}, r"names must be a list of 3 strings, one per seat, got \[1, 2, 3\]"),
     ({"names": "abc"}, r"names must be a list of 3 strings, one per seat, got 'abc'")],
)  # fmt: skip
def test_save_replay_checks_its_arguments_before_replaying(tmp_path, option, message):
    rec = _recorded_hand()
    for suffix in ("html", "gif"):  # fps=inf wrote a GIF whose frames last 0 ms
        with pytest.raises(ValueError, match=message):
            save_replay(rec, tmp_path / f"hand.{suffix}", **option)
        assert not (tmp_path / f"hand.{suffix}").exists()


def test_save_replay_takes_numpy_numbers(tmp_path):
    """numpy numbers write the replay Python's numbers write: the same page of every third table,
    and a GIF of every 60th table, each held 1000 / fps ms."""
    rec = _recorded_hand()
    frames = replay(rec)
    kept = lambda every: len(range(0, len(frames), every)) + bool((len(frames) - 1) % every)  # and the final table
    html = save_replay(rec, tmp_path / "hand.html", fps=np.float32(2), every=np.int64(3), names=("a", "b", "c"))
    plain = save_replay(rec, tmp_path / "plain.html", fps=2.0, every=3, names=("a", "b", "c"))
    assert html.read_text() == plain.read_text()
    data = _page_data(html.read_text())
    assert len(data["frames"]) == kept(3) and data["names"] == ["a", "b", "c"]
    Image = pytest.importorskip("PIL.Image")
    gif = save_replay(rec, tmp_path / "hand.gif", fps=np.float32(2), every=np.int64(60))
    with Image.open(gif) as im:
        assert im.n_frames == kept(60) and im.info["duration"] == 500


def _chromium():
    import shutil

    for name in ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable"):
        if shutil.which(name):
            return shutil.which(name)
    pytest.skip("no Chromium to open the replay page in (apt-get install chromium)")


def _dom(browser, page, query, *flags):
    import subprocess

    out = subprocess.run(
        [browser, "--headless", "--no-sandbox", "--disable-gpu", *flags, "--dump-dom", f"{page.as_uri()}?{query}"],
        capture_output=True, text=True, timeout=120,
    )
    assert out.returncode == 0, out.stderr[-2000:]
    return out.stdout


def test_html_replay_renders_and_steps_in_a_browser(tmp_path):
    import re

    browser = _chromium()
    rec = _recorded_hand()
    frames = replay(rec)
    page = save_replay(rec, tmp_path / "hand.html", names=["ann", "bob", "cy"])
    dom = _dom(browser, page, "steps=7")
    assert 'data-frame="7"' in dom
    assert re.search(rf'id="tick">tick 7 / {frames[-1]["snapshot"]["tick"]}<', dom)
    snap = frames[7]["snapshot"]
    faces = sum(bool(pl["nertz"]) + bool(pl["waste"]) + sum(len(w) for w in pl["work"]) for pl in snap["players"])
    assert dom.count('class="card"') == faces + len(snap["foundations"])  # every visible card drawn
    assert dom.count('class="back"') == sum(bool(pl["stock"]) for pl in snap["players"])
    for name, move in zip(["ann", "bob", "cy"], _moves_of(frames, 7)):
        assert f'<span class="who">{name}: </span>{move.replace(">", "&gt;")}' in dom
    assert 'data-frame="0"' in _dom(browser, page, "")
    final = frames[-1]["snapshot"]
    best = max(final["scores"])
    winners = ", ".join(n for n, sc in zip(["ann", "bob", "cy"], final["scores"]) if sc == best)
    last = _dom(browser, page, f"frame={len(frames) - 1}")
    assert f"(hand over: {final['end_reason']}; {'tied' if ',' in winners else 'winner'}: {winners})" in last
    played = _dom(browser, page, "play=1", "--virtual-time-budget=3000")  # about 7 frames at 2.5 per second
    assert int(re.search(r'data-frame="(\d+)"', played).group(1)) >= 3


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"rng": -1}, r"rng must be an integer from 1 to 2\*\*64 - 1 .*, got -1"),
        ({"rng": 2**64}, r"rng must be an integer from 1 to 2\*\*64 - 1"),
        ({"rng": 0}, r"from 1 to 2\*\*64 - 1 \(a random stream is a nonzero word.*, got 0"),  # xorshift's fixed point
        ({"rng": 1.5}, r"rng must be an integer .*, got 1.5"),
        ({"rng": "7"}, r"rng must be an integer .*, got '7'"),
        ({"rng": True}, r"rng must be an integer .*, got True"),
        ({"actions": "wait"}, "actions must be a list of ticks, each a list of action names"),
        ({"actions": [["wait", 3]]}, "actions must be a list of ticks"),
        ({"decks": [["AS"], "KD"]}, "decks must be a list of lists of card names"),
        ({"config": [2]}, "config must be a dict of NertzConfig options, not a list"),
        ({"names": "ab"}, "names must be None or a list of strings, got 'ab'"),
        ({"speed_up": 2}, r"unknown \['speed_up'\], missing \[\]; accepted: config, decks, rng, actions, names"),
        ({"config": {"num_players": 2, "foo": 3}}, r"config has unknown option\(s\) 'foo'; accepted: aces_to_work, .*"),
    ],
)
def test_a_saved_recording_is_checked_field_by_field(change, message):
    """A recording read from JSON (from anywhere) is refused by field before anything replays it."""
    env = nertz_v0.parallel_env(num_players=2, record=True)
    play(env, 1, 5)
    fields = {**json.loads(env.unwrapped.recording.to_json()), **change}
    with pytest.raises(ValueError, match=message):
        Recording.from_json(json.dumps(fields))
    assert replay(Recording.from_json(env.unwrapped.recording.to_json()))[-1]["snapshot"] == env.snapshot()


@pytest.mark.parametrize(
    ("text", "message"),
    [("[1, 2]", "a recording is a JSON object, got list"), ("{", "the JSON text of Recording.to_json"),
     ('{"config": {}}', r"missing \['decks', 'rng'\]")],
)  # fmt: skip
def test_a_recording_that_is_not_one_is_refused(text, message):
    with pytest.raises(ValueError, match=message):
        Recording.from_json(text)


def test_a_recording_with_ticks_after_the_end_is_refused():
    """R5: nothing is played after the tick that ends the hand; such ticks replayed silently before."""
    env = nertz_v0.parallel_env(num_players=2, record=True, max_cycles=20)
    play(env, 1, 100)
    fields = json.loads(env.unwrapped.recording.to_json())
    assert len(replay(Recording.from_json(json.dumps(fields)))) == 21  # the deal and 20 ticks
    fields["actions"] += [["call", "call"]] * 3000
    with pytest.raises(ValueError, match=r"3000 tick\(s\) recorded after the hand ended at tick 20 \(action row 20\)"):
        replay(Recording.from_json(json.dumps(fields)))


@pytest.mark.parametrize("missing", [["nertz_penalty"], ["num_players"], ["speed", "reward"], ["match_end"],
                                     ["block_moves", "aces_to_work"], list(NertzConfig().to_dict())])  # fmt: skip
def test_a_recording_config_without_an_option_is_refused(missing):
    """An option left out replayed at its default: a hand recorded with nertz_penalty=1 replayed
    with the default 2, other scores (R7) and no error."""
    env = nertz_v0.parallel_env(num_players=2, record=True, nertz_penalty=1)
    play(env, 1, 40)
    fields = json.loads(env.unwrapped.recording.to_json())
    for key in missing:
        del fields["config"][key]
    with pytest.raises(ValueError, match=rf"recording config lacks option\(s\) {', '.join(missing)}: a recording "
                                         r"names every NertzConfig option .* a recording of 0\.1\.0 leaves out "
                                         r"exactly block_moves, aces_to_work, match_end"):  # fmt: skip
        Recording.from_json(json.dumps(fields))


def test_a_recording_of_0_1_0_replays_at_the_defaults_of_the_options_it_did_not_have():
    """0.1.0 had no block_moves, aces_to_work or match_end: its recordings leave out exactly these
    three, and its games played what their defaults play."""
    env = nertz_v0.parallel_env(num_players=3, record=True, nertz_penalty=1)
    play(env, 2, 60)
    fields = json.loads(env.unwrapped.recording.to_json())
    for key in ("block_moves", "aces_to_work", "match_end"):
        del fields["config"][key]
    assert replay(Recording.from_json(json.dumps(fields)))[-1]["snapshot"] == env.snapshot()


def step_randomly(env, rng, ticks):
    for _ in range(ticks):
        if not env.agents:
            return
        obs = {a: env.unwrapped.game.masks[i] for i, a in enumerate(env.agents)}
        env.step({a: int(rng.choice(np.flatnonzero(m))) for a, m in obs.items()})


@pytest.mark.parametrize("options", [{}, {"episode": "match", "max_cycles": 12, "hands": 3}])
def test_set_state_under_record_cuts_the_recording_back_to_the_restored_table(options):
    """A search that saves a table, plays on and restores it: the recording kept the ticks played
    after the saved table, and its replay played another hand with no error."""
    env = nertz_v0.parallel_env(num_players=2, record=True, **options)
    env.reset(seed=0)
    rng = np.random.default_rng(0)
    step_randomly(env, rng, 5)
    saved = env.unwrapped.get_state()
    step_randomly(env, rng, 10)  # across a hand's end in the match
    later = env.unwrapped.get_state()
    env.unwrapped.set_state(saved)
    assert len(env.unwrapped.recording.actions) == 5
    frames = replay(env.unwrapped.recording)  # an episode still in play replays the ticks it holds
    assert len(frames) == 6 and frames[-1]["snapshot"] == env.snapshot() and not frames[-1]["snapshot"]["ended"]
    with pytest.raises(ValueError, match="restores only a table that this env's get_state"):
        env.unwrapped.set_state(later)  # its ticks were dropped: no longer the episode's
    step_randomly(env, rng, 10_000)
    assert not env.agents
    rec = Recording.from_json(env.unwrapped.recording.to_json())
    assert replay(rec)[-1]["snapshot"] == env.snapshot()


def test_set_state_under_record_refuses_a_table_of_another_episode():
    env, other = (nertz_v0.parallel_env(num_players=2, record=record) for record in (True, False))
    other.reset(seed=0)
    with pytest.raises(ValueError, match=r"\(nothing is recorded yet: reset\(\) deals and starts the recording\)"):
        env.unwrapped.set_state(other.unwrapped.get_state())
    env.reset(seed=0)
    before = env.unwrapped.get_state()
    env.unwrapped.set_state(other.unwrapped.get_state())  # the same table: the deal this env recorded
    step_randomly(other, np.random.default_rng(0), 3)  # the same deal, played on by the other env only
    message = (r"set_state under record=True restores only a table that this env's get_state\(\) saved during the "
               r"recorded episode, at a tick still recorded \(a recording replays from its deal, so it cannot go on "
               r"from another table\); restore this table into an env made without record=True")  # fmt: skip
    with pytest.raises(ValueError, match=message):
        env.unwrapped.set_state(other.unwrapped.get_state())
    env.reset(seed=1)
    with pytest.raises(ValueError, match=message):
        env.unwrapped.set_state(before)  # of the hand recorded before this one
    env.unwrapped.set_state(env.unwrapped.get_state())
    assert env.unwrapped.recording.actions == []
