"""The compiled rules engine (numba over numpy arrays): the one door to every rule of RULES.md.
It imports nothing outside itself and knows nothing of gymnasium, pettingzoo or torch; the envs,
agents and trainers use only the names below (and the named numbers of ``engine.constants``).

    The table      State, new_state, copy_state; columns END_*, MATCH_*, MS_*, MI_*, AIR_*
    Cards, deal    rank, red (R1); seed_streams (each game's stream); deal, shuffle_deal, dealt_decks (R2)
    Legality (R4)  legal_row (the one statement of R4), legal_mask, builds_on (R4.3),
                   fits_foundation (R4.2), builds_on_nertz (R4.8)
    Effects (R4)   play_own_move (one player's layout), lay_on_foundation_tops; the tick (R3-R7): step, r7_score
    Match (R8)     start_match, match_decision, match_winner, partner_of
    Composed       play_game_tick (a tick with rewards, ends, observations and masks), deal_game (NO_DECKS:
                   shuffle), observe_and_mask; whole batches: step_batch, deal_batch (*_threaded twins),
                   deal_games and step_games (some games), step_rules_batch (the rules alone), observe_batch
                   (observations and masks alone), Buffers, new_buffers; mask_plan, state_vector(s), sample_legal_rows
    Utilities      raw, Bound, HeldTick, stamp_compiled; python_engine, python_modules, is_cached, tick_is_cached
"""

from nertz_env.engine.cache import ensure_cache_dir, python_of, stamp_compiled

ensure_cache_dir()  # before any kernel below is decorated: a read-only install still caches

from nertz_env.engine import (  # noqa: E402
    batch,
    bind,
    compose,
    core,
    masks,
    match,
    moves,
    notice,
    observe,
    races,
    rng,
    tick,
    views,
    warm,
)
from nertz_env.engine.batch import (  # noqa: E402
    Buffers,
    deal_batch,
    deal_batch_threaded,
    deal_games,
    new_buffers,
    observe_batch,
    play_game_tick,
    sample_legal_rows,
    sample_legal_rows_threaded,
    state_vectors,
    step_batch,
    step_batch_threaded,
    step_games,
    step_rules_batch,
)
from nertz_env.engine.bind import Bound, HeldTick  # noqa: E402
from nertz_env.engine.compose import NO_DECKS, PLAY_MATCH, PLAY_OBSERVE, deal_game, observe_and_mask  # noqa: E402
from nertz_env.engine.core import (  # noqa: E402
    builds_on,
    builds_on_nertz,
    deal,
    dealt_decks,
    fits_foundation,
    legal_mask,
    legal_row,
    partner_of,
    r7_score,
    rank,
    red,
    shuffle_deal,
)
from nertz_env.engine.masks import mask_plan  # noqa: E402
from nertz_env.engine.match import match_decision, match_winner, start_match  # noqa: E402
from nertz_env.engine.moves import lay_on_foundation_tops, play_own_move  # noqa: E402
from nertz_env.engine.observe import state_vector  # noqa: E402
from nertz_env.engine.plain import is_cached, python_engine, python_modules, tick_is_cached  # noqa: E402
from nertz_env.engine.rng import seed_streams  # noqa: E402
from nertz_env.engine.state import (  # noqa: E402
    AIR_ACTION,
    AIR_CARD,
    AIR_KIND,
    AIR_TICKS,
    END_REASONS,
    MATCH_CAPPED,
    MATCH_DECIDED,
    MATCH_PLAYING,
    MATCH_TIE_BREAK,
    MI_HAND_OVER,
    MI_HANDS,
    MI_LAST_REASON,
    MI_LAST_TICKS,
    MI_STATE,
    MI_TICKS,
    MS_CALLED,
    MS_CONTENDER,
    MS_LAST,
    MS_TOTAL,
    State,
    copy_state,
    new_state,
)
from nertz_env.engine.tick import first_known_stock_tick, stall_ceiling, step  # noqa: E402
from nertz_env.engine.views import raw  # noqa: E402

for _module in (batch, bind, compose, core, masks, match, moves, observe, races, rng, tick, views):
    stamp_compiled(vars(_module))  # an edit to any engine source recompiles every engine kernel

notice.install()  # a first run compiles the engine (and agents' kernels): say so on stderr (and see collector)
warm.install()  # ... and compiles the rules of a tick in the background meanwhile

__all__ = [
    "AIR_ACTION", "AIR_CARD", "AIR_KIND", "AIR_TICKS", "Bound", "Buffers", "END_REASONS", "HeldTick", "MATCH_CAPPED",
    "MATCH_DECIDED", "MATCH_PLAYING", "MATCH_TIE_BREAK", "MI_HANDS", "MI_HAND_OVER", "MI_LAST_REASON", "MI_LAST_TICKS",
    "MI_STATE", "MI_TICKS", "MS_CALLED", "MS_CONTENDER", "MS_LAST", "MS_TOTAL", "NO_DECKS", "PLAY_MATCH",
    "PLAY_OBSERVE", "State", "builds_on", "builds_on_nertz", "copy_state", "deal", "deal_batch", "deal_batch_threaded",
    "deal_games", "deal_game", "dealt_decks", "first_known_stock_tick", "fits_foundation", "is_cached",
    "lay_on_foundation_tops", "legal_mask", "legal_row", "mask_plan", "match_decision", "match_winner", "new_buffers",
    "new_state", "observe_and_mask", "observe_batch", "partner_of", "play_game_tick", "play_own_move", "python_engine",
    "python_modules", "python_of", "r7_score", "rank", "raw", "red", "sample_legal_rows", "sample_legal_rows_threaded",
    "seed_streams", "shuffle_deal", "stamp_compiled", "stall_ceiling", "start_match", "state_vector", "state_vectors",
    "step", "step_batch", "step_batch_threaded", "step_games", "step_rules_batch", "tick_is_cached",
]
