"""The DirectML-faithful descriptor layer: operator structs, feature levels, validation, compile.

A thin adapter above the families: buffer -> `read_tensor` -> array function ->
`write_tensor` -> buffer. It holds no operator semantics.
"""
