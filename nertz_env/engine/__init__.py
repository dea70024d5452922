"""The compiled rules engine: numpy arrays in, numpy arrays out. It knows nothing of gymnasium,
pettingzoo or torch; the environments are thin layers over it."""

from nertz_env.engine.core import deal, legal, legal_mask, shuffle_deal, step
from nertz_env.engine.observe import (
    advance,
    obs_size,
    observe_and_mask,
    observe_game,
    rewards,
    state_size,
    state_vector,
)
from nertz_env.engine.rng import seed_streams
from nertz_env.engine.state import END_REASONS, State, copy_state, new_state, put_game, take_game

__all__ = [
    "END_REASONS",
    "State",
    "advance",
    "copy_state",
    "deal",
    "legal",
    "legal_mask",
    "new_state",
    "obs_size",
    "observe_and_mask",
    "observe_game",
    "put_game",
    "rewards",
    "seed_streams",
    "shuffle_deal",
    "state_size",
    "state_vector",
    "step",
    "take_game",
]
