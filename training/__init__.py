"""Evaluation (and, later, training) of Nertz players: the batched arena, the duplicate-format
harness and its statistics."""
