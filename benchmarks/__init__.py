"""Benchmarks: ``python -m nertz_env.benchmarks.throughput`` measures agent-steps per second.

A benchmark measures the compiled engine: with an empty cache its games compile before they play
(``NERTZ_INTERIM=0``) rather than play the first minute in plain Python (``nertz_env.interim``)."""

import os

os.environ.setdefault("NERTZ_INTERIM", "0")
