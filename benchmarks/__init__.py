"""Benchmarks: ``python -m benchmarks.throughput`` measures agent-steps per second."""
