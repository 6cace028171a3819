"""ivytrace-compile: an ivytrace IR graph -> a fast Python function generated as source.

``compile_graph(graph)`` writes one function per graph, the way ``torch.fx`` generates a
``GraphModule``'s code: one line per node, backend callables resolved once under the
allowlist and bound as globals, the input and output pytrees unpacked and built inline,
values freed after their last use. ``backend_compile`` hands that function to
``torch.compile``, ``tf.function`` or ``jax.jit``. ``sanitize`` turns any text into a
Python identifier the way the generated code names its values (for other writers of code).

Imports no ML framework: a framework is imported only when a graph naming it is compiled.
"""

from ivytrace_ir import DEFAULT_ALLOWLIST, GuardFailure

from ._naming import sanitize
from .backend import NoNativeCompiler, backend_compile
from .compiled import CompiledGraph, compile_graph
from .errors import CompileError, InputMismatch

__all__ = [
    "DEFAULT_ALLOWLIST",
    "CompileError",
    "CompiledGraph",
    "GuardFailure",
    "InputMismatch",
    "NoNativeCompiler",
    "backend_compile",
    "compile_graph",
    "sanitize",
]
