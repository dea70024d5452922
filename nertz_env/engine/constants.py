"""Every number the compiled engine and its callers share, named once: the cards (R1), the action
kinds and sources of the catalogue (R4, R10), the catalogue's columns, the packed options, the
reward modes and the sizes of the observation's parts (R9).

The engine owns these; ``nertz_env.config``, ``nertz_env.actions`` and ``nertz_env.layout`` read
them from here (``nertz_env.engine``), never the other way round.
"""

from __future__ import annotations

# ---------------------------------------------------------------------------------------------
# Cards (R1): each player's own deck of 52, codes ``suit * 13 + rank - 1`` (suits C D H S).
DECK_SIZE = 52
SUIT_SIZE = 13  # ranks per suit, and the most cards a work pile can hold (K down to A)
N_SUITS = 4
NO_CARD = -1  # an empty pile's top

# ---------------------------------------------------------------------------------------------
# The action catalogue (R4, R10): a table [N, 4] of rows (kind, source, destination, count).
T_KIND, T_SOURCE, T_DEST, T_COUNT = range(4)
# Action kinds (column T_KIND). TO_NERTZ is R4.8: the destination is the target's seat offset.
WAIT, DRAW, CALL, TO_FOUNDATION, TO_WORK, UNDER, TO_NERTZ = range(7)
N_KINDS = 7
# Sources (column T_SOURCE): the Nertz top, the waste top, or work pile i as WORK_SOURCE + i.
NERTZ, WASTE, WORK_SOURCE = 0, 1, 2
# The first three rows of every catalogue.
ACTION_WAIT, ACTION_DRAW, ACTION_CALL = 0, 1, 2

# ---------------------------------------------------------------------------------------------
# The packed options (``NertzConfig.packed``): an int64 vector, one entry per option.
C_PLAYERS, C_NERTZ, C_WORK, C_DRAW, C_NERTZ_TO_WORK, C_FILL_ANY, C_SLIDE, C_AUTO_CALL = range(8)
C_COLLISION_SEAT, C_PENALTY, C_BONUS, C_STALL_TICKS, C_MAX_ROT, C_MAX_CYCLES, C_REWARD = range(8, 15)
C_TURN_BASED, C_BUILDS, C_PARTNERS = range(15, 18)
# C_TICKS + kind: the ticks a move of that action kind takes (kind 0, WAIT, is always 1).
C_TICKS = 18
C_TICKS_END = C_TICKS + N_KINDS  # one past the last kind's ticks
# R8 matches: C_EPISODE (1 = "match"), the target, the fixed number of hands (0 = play to the
# target) and the cap on the hands of one match.
C_EPISODE = C_TICKS_END
C_TARGET, C_HANDS, C_MAX_HANDS = C_EPISODE + 1, C_EPISODE + 2, C_EPISODE + 3
# R4.3 block_moves and aces_to_work, R4.4 whether the waste top may fill a space, R8 match_end.
C_BLOCKS, C_ACES_TO_WORK, C_FILL_WASTE, C_MATCH_END = range(C_MAX_HANDS + 1, C_MAX_HANDS + 5)
C_SIZE = C_MATCH_END + 1
# R4.3 ``block_moves`` (C_BLOCKS): any exposed card with the cards above it, only a whole pile, or
# only the exposed card.
BLOCKS_ANY, BLOCKS_WHOLE, BLOCKS_NONE = range(3)
# R8 ``match_end`` (C_MATCH_END): how a match to ``target_score`` ends and who wins it.
MATCH_END_HIGHEST, MATCH_END_CALLER, MATCH_END_SPREAD, MATCH_END_EXCEED = range(4)

# Option ``reward`` (C_REWARD).
REWARD_DENSE, REWARD_SPARSE, REWARD_RELATIVE, REWARD_LEAD = 0, 1, 2, 3

# ---------------------------------------------------------------------------------------------
# The observation's parts (R9), in order; ``nertz_env.layout.ObservationLayout`` names them.
# A player's block: per card of their deck, the Nertz top, each work pile, the waste top and the
# cards on foundations (BLOCK_CARD_PARTS_BEFORE_WORK + work piles + BLOCK_CARD_PARTS_AFTER_WORK
# parts of DECK_SIZE), then the BLOCK_COUNTS counts.
BLOCK_CARD_PARTS_BEFORE_WORK = 1  # nertz_top
BLOCK_CARD_PARTS_AFTER_WORK = 2  # waste_top, foundation
BLOCK_COUNTS = 4  # nertz_count, stock_count, waste_count, called
# The viewer's memory of their own piles: the waste order, the stock order, whether it is known.
MEMORY_WASTE, MEMORY_STOCK, MEMORY_STOCK_KNOWN = 0, DECK_SIZE, 2 * DECK_SIZE
MEMORY_SIZE = 2 * DECK_SIZE + 1
# The shared table: the foundation tops (suit * 13 + rank - 1), the stall counters (R5).
SHARED_TOPS, SHARED_SINCE_PROGRESS, SHARED_ROTATIONS = 0, DECK_SIZE, DECK_SIZE + 1
SHARED_SIZE = DECK_SIZE + 2
# The state vector's hidden part per player: the Nertz, stock and waste orders.
HIDDEN_NERTZ, HIDDEN_STOCK, HIDDEN_WASTE = 0, DECK_SIZE, 2 * DECK_SIZE
HIDDEN_SIZE = 3 * DECK_SIZE
# Observed values are int8: counters saturate here.
INT8_MAX = 127

# ---------------------------------------------------------------------------------------------
# The rows of the tick's scratch buffer (``_tick_buffer``), one entry per player: the move made
# (kind, source, destination, count, as the catalogue's columns), the card it carries to a
# foundation, the foundation pile (R6) or Nertz pile (R4.8) it lands on, the claimants of one race
# and which of them won, who is already settled, who plays from their own Nertz pile (R4.8), and
# the owner of the moving card (R1).
KIND, SOURCE, DEST, COUNT, CARD, PILE, CLAIMANTS, WON, DONE, REACH, OWNER = range(11)
SCRATCH_ROWS = 11
MAX_SEATS = 8  # the most players a table seats (NertzConfig: 2 to 8); the tick's scratch holds this many
MAX_WORK = 6  # the most work piles a player has (NertzConfig: 4 to 6); the masks' scratch holds this many
SCRATCH_SIZE = SCRATCH_ROWS * MAX_SEATS  # int64 slots of the tick scratch (on the stack)
