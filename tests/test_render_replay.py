"""Pictures of the table and exact replays of recorded hands."""

from __future__ import annotations

import numpy as np
import pytest

from nertz_env import nertz_v0
from nertz_env.replay import Recording, replay, save_replay


def play(env, seed, ticks):
    rng = np.random.default_rng(seed)
    obs, _ = env.reset(seed=seed)
    for _ in range(ticks):
        if not env.agents:
            break
        obs, *_ = env.step({a: int(rng.choice(np.flatnonzero(obs[a]["action_mask"]))) for a in env.agents})


def test_rgb_array_is_an_image_that_changes_with_the_table():
    env = nertz_v0.parallel_env(num_players=4, render_mode="rgb_array")
    env.reset(seed=0)
    first = env.render()
    assert first.dtype == np.uint8 and first.ndim == 3 and first.shape[2] == 3
    play(env, 0, 30)
    assert env.render().shape[1] == first.shape[1]
    assert not np.array_equal(env.render()[:200], first[:200])


def test_recorded_hand_replays_exactly_through_json(tmp_path):
    env = nertz_v0.parallel_env(num_players=3, record=True, collision="random")
    play(env, 5, 10_000)
    rec = Recording.from_json(env.unwrapped.recording.to_json())
    frames = replay(rec)
    assert len(frames) == env.unwrapped.game.tick + 1
    assert frames[-1]["snapshot"] == env.snapshot()
    html = save_replay(rec, tmp_path / "hand.html")
    assert 'type="range"' in html.read_text()
    gif = save_replay(rec, tmp_path / "hand.gif", every=25)
    from PIL import Image

    with Image.open(gif) as im:
        assert im.n_frames == len(frames[::25])
    with pytest.raises(ValueError, match=r"\.gif or \.html"):
        save_replay(rec, tmp_path / "hand.mp4")
