"""Benchmarks: every operator against its baselines, side by side (see `_harness`)."""
