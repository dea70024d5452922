"""What a newcomer meets first: the README's examples repeat, and early mistakes get clear errors."""

from __future__ import annotations

import contextlib
import io
import re
from pathlib import Path

import pytest

from nertz_env import nertz_v0
from nertz_env.agents.single_env import NertzSingleAgentEnv

README = Path(__file__).resolve().parents[1] / "README.md"


def _readme_block(heading: str) -> str:
    text = README.read_text()
    section = text[text.index(f"## {heading}\n") :]
    return re.search(r"```python\n(.*?)```", section, re.S).group(1)


def test_the_ten_lines_print_the_same_hand_every_run():
    code = _readme_block("Ten lines")
    outputs = []
    for _ in range(2):
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            exec(compile(code, "README.md", "exec"), {})
        outputs.append(out.getvalue())
    assert outputs[0] == outputs[1]
    final = r"'final_scores': \{'player_0': -?\d+, 'player_1': -?\d+, 'player_2': -?\d+, 'player_3': -?\d+\}"
    assert re.search(r"'end_reason': '(call|stall|max_cycles)'", outputs[0]) and re.search(final, outputs[0])


def test_reset_seed_seeds_the_action_spaces_per_agent():
    env = nertz_v0.parallel_env(num_players=3)
    draws = []
    for _ in range(2):
        env.reset(seed=11)
        draws.append([env.action_space(a).sample() for a in env.agents for _ in range(5)])
    assert draws[0] == draws[1]
    assert draws[0][:5] != draws[0][5:10]  # each agent its own stream


def test_step_before_reset_says_so():
    env = nertz_v0.parallel_env(num_players=2)
    with pytest.raises(RuntimeError, match=r"step\(\) called before reset\(\)"):
        env.step({"player_0": 0, "player_1": 0})
    single = NertzSingleAgentEnv(opponents=["greedy"], num_players=2)
    with pytest.raises(RuntimeError, match=r"step\(\) called before reset\(\)"):
        single.step(0)


@pytest.mark.parametrize("key", ["deck", "Decks", "decs"])
def test_a_misspelt_reset_option_raises_naming_decks(key):
    env = nertz_v0.parallel_env(num_players=2)
    with pytest.raises(ValueError, match=rf"unknown reset option '{key}'; did you mean 'decks'"):
        env.reset(seed=0, options={key: []})
    with pytest.raises(ValueError, match="did you mean 'decks'"):
        NertzSingleAgentEnv(opponents=["greedy"], num_players=2).reset(seed=0, options={key: []})


def test_an_unrelated_reset_option_only_warns():
    env = nertz_v0.parallel_env(num_players=2)
    with pytest.warns(UserWarning, match="ignoring unknown reset option 'options'"):
        env.reset(seed=0, options={"options": 1})  # what PettingZoo's own API test passes
    assert env.agents == ["player_0", "player_1"]
