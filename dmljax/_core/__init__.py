"""What every family shares and nothing else: errors, data types, limits, platform helpers, version, type aliases.

Imports nothing from the rest of dmljax.
"""
