"""What every family shares and nothing else: errors, data types, limits, the options
(`config`), the operator markers of every trace (`markers`), platform helpers, the
version, the type aliases (`typing`) and the ordered gather that ``_ops`` registers for the
families beside it (`ordered_hooks`).

Imports nothing from the rest of dmljax.
"""
