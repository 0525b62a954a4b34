"""The index operators on logical arrays: scatter, gather, gather_elements, slice1.

Each operator's semantics live in one array function here; index conventions and the
eager index checks are shared by them. Imports only `dmljax._core`.
"""

from dmljax._ops import marker_rules as marker_rules  # noqa: E402  (registers the markers' vmap rules)
from dmljax._ops import order_marker_rules as order_marker_rules  # noqa: E402  (their rules for the order operators)
