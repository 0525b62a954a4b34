"""Function transformations over whole programs, above the operator families.

- `deterministic`: ``dmljax.deterministic(fun)``, the public transformation.
- `interpreter`: the evaluator that binds a jaxpr again with its scatters ordered.
- `flat_scatter`: a lax scatter of any dimension numbers as an ordered 1-D reduction.
- `ordered_gather`: a lax gather whose transpose is that ordered scatter.
- `jax_internals`: the JAX internals these need, imported in one place.
"""
