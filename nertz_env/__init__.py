"""nertz-env: Nertz as a fast PettingZoo environment over a compiled, batched rules engine."""

from nertz_env.actions import ActionCatalogue
from nertz_env.config import NertzConfig
from nertz_env.layout import ObservationLayout

__version__ = "0.1.0"

import gymnasium as _gymnasium

if "nertz_env/NertzSingle-v0" not in _gymnasium.registry:
    _gymnasium.register(
        id="nertz_env/NertzSingle-v0",
        entry_point="nertz_env.agents.single_env:NertzSingleAgentEnv",
        vector_entry_point="nertz_env.agents.single_env:make_vector",
    )
__all__ = ["ActionCatalogue", "NertzConfig", "ObservationLayout", "__version__"]
