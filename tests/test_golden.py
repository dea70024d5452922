"""The golden trajectories (``tests/golden.py``) are byte-identical to those recorded before the
last refactor: same deals, same moves, same observations, masks, rewards, ends and states."""

from __future__ import annotations

import json

import golden
import pytest
from conftest import needs_torch

RECORDED = json.loads(golden.GOLDEN_FILE.read_text())


def test_every_case_is_recorded():
    names = {f"parallel/{n}/seed{s}" for n in golden.PARALLEL_CASES for s in golden.PARALLEL_SEEDS}
    names |= {f"vector/{n}" for n in golden.VECTOR_CASES}
    assert names == set(RECORDED)


def _case(name: str):
    """A case whose seats include a trained policy needs torch."""
    trained = any(spec.split(":")[0].startswith("ppo") for spec in golden.PARALLEL_CASES[name][2])
    return pytest.param(name, marks=needs_torch) if trained else name


@pytest.mark.parametrize("name", [_case(n) for n in sorted(golden.PARALLEL_CASES)])
@pytest.mark.parametrize("seed", golden.PARALLEL_SEEDS)
def test_parallel_trajectory_unchanged(name, seed):
    players, rules, specs = golden.PARALLEL_CASES[name]
    assert golden.parallel_case(players, rules, specs, seed) == RECORDED[f"parallel/{name}/seed{seed}"]


@pytest.mark.parametrize("name", sorted(golden.VECTOR_CASES))
def test_vector_trajectory_unchanged(name):
    players, rules = golden.VECTOR_CASES[name]
    assert golden.vector_case(players, rules, seed=3) == RECORDED[f"vector/{name}"]
