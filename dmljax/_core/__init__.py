"""What every family shares and nothing else: errors, data types, limits, the options
(`config`), the operator markers of every trace (`markers`), platform helpers, the
version and the type aliases (`typing`).

Imports nothing from the rest of dmljax.
"""
