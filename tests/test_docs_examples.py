"""The code shown in the documentation runs: every script under docs/examples (the environment
page's usage section includes them verbatim) plays a whole hand to its end."""

from __future__ import annotations

import runpy
from pathlib import Path

import pytest

from nertz_env import nertz_v0

EXAMPLES = sorted((Path(__file__).resolve().parent.parent / "docs" / "examples").glob("*.py"))


def test_examples_exist():
    assert {p.name for p in EXAMPLES} >= {"usage_aec.py", "usage_parallel.py"}


@pytest.mark.parametrize("path", EXAMPLES, ids=[p.name for p in EXAMPLES])
def test_example_plays_a_whole_hand(path, capsys):
    namespace = runpy.run_path(str(path), run_name="__main__")
    env = namespace["env"]
    assert env.agents == []  # every agent has ended (R5: all agents end together)
    assert len(env.possible_agents) == 4
    if "infos" in namespace:
        reason = nertz_v0.END_REASONS[namespace["infos"]["player_0"]["end_reason"]]
        assert reason in {"call", "stall", "max_cycles"} and reason == env.unwrapped.outcome()["end_reason"]
        assert reason in capsys.readouterr().out


def test_documented_commands_name_the_installed_modules():
    """``python -m training.X`` and ``python -m benchmarks.X`` import only from the repository's
    root; the installed package's modules are ``nertz_env.training.X`` and ``nertz_env.benchmarks.X``."""
    import re

    root = Path(__file__).resolve().parents[1]
    files = [root / "README.md", *sorted((root / "docs").glob("*.md")), *sorted((root / "training").glob("*.py")),
             *sorted((root / "benchmarks").glob("*.py"))]  # fmt: skip
    short = re.compile(r"-m (training|benchmarks)\.")
    found = [f"{p.relative_to(root)}:{n}" for p in files for n, line in enumerate(p.read_text().splitlines(), 1)
             if short.search(line)]  # fmt: skip
    assert not found, found
