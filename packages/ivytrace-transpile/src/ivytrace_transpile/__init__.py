"""ivytrace-transpile: torch -> TensorFlow / JAX translation (not built yet).

The distribution exists so the workspace has its final shape and the import-boundary
contracts cover it; the translation rules will build on ``ivytrace_ir.optable``.
"""

__all__: list[str] = []
