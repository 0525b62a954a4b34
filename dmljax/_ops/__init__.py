"""The index operators on logical arrays: scatter, gather, gather_elements, slice1.

Each operator's semantics live in one array function here; index conventions and the
eager index checks are shared by them. Imports only `dmljax._core`.
"""
