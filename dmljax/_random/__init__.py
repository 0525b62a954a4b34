"""Philox 4x32-10 and everything built on its stream: random_generator, keys, distributions.

Imports only `dmljax._core`.
"""
