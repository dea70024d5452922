"""The presets (``NertzConfig.PRESETS``): each builds its source text's rules in every env, an
override wins over the preset, and an unknown name is refused. Racing Demon played end to end:
``test_partners_match.py``."""

from __future__ import annotations

import pytest

from nertz_env import nertz_v0
from nertz_env.config import PRESETS, NertzConfig
from nertz_env.vector import NertzVectorEnv


@pytest.mark.parametrize("name", sorted(PRESETS))
def test_presets_build_their_rules_and_overrides_win(name):
    config = NertzConfig.from_kwargs(preset=name)
    for key, value in PRESETS[name].items():
        assert getattr(config, key) == value
    assert NertzConfig.from_kwargs(preset=name, stock_draw=1).stock_draw == 1
    assert nertz_v0.parallel_env(preset=name).unwrapped.config == config
    assert nertz_v0.env(preset=name, num_players=3).unwrapped.config == config.replace(num_players=3)
    assert NertzVectorEnv(2, preset=name).config == config
    with pytest.raises(ValueError, match="preset"):
        NertzConfig.from_kwargs(preset="nertz-deluxe")


def test_presets_named_rules():
    assert NertzConfig.from_kwargs(preset="snerts") == NertzConfig(
        nertz_penalty=1, nertz_to_work=False, fill_empty_from="nertz", match_end="caller"
    )
    demon = NertzConfig.from_kwargs(preset="racing_demon", num_players=3, hands=3)
    assert (demon.episode, demon.hands, demon.num_players) == ("match", 3, 3)
