"""Operation-name resolution under an allowlist.

``"torch.Tensor.__pow__"`` -> the callable. Only names inside the allowed
array-framework namespaces resolve; everything else is refused *before* anything is
imported or called. The allowlist can be extended by the user in code (never by a
file): :meth:`Allowlist.extend`.
"""

from __future__ import annotations

import functools
import importlib
import keyword
import sys
import types
from dataclasses import dataclass
from typing import Any

__all__ = [
    "DEFAULT_ALLOWLIST",
    "Allowlist",
    "OpNameError",
    "check_name",
    "owner_of",
    "resolve",
]


class OpNameError(ValueError):
    """An operation or symbol name that may not be resolved (not allowed, or not found)."""


_ALLOWED_DUNDERS = frozenset(
    {
        "__add__", "__radd__", "__iadd__", "__sub__", "__rsub__", "__isub__",
        "__mul__", "__rmul__", "__imul__", "__matmul__", "__rmatmul__", "__imatmul__",
        "__truediv__", "__rtruediv__", "__itruediv__", "__div__", "__rdiv__", "__idiv__",
        "__floordiv__", "__rfloordiv__",
        "__ifloordiv__", "__mod__", "__rmod__", "__imod__", "__pow__", "__rpow__", "__ipow__",
        "__neg__", "__pos__", "__abs__", "__invert__", "__and__", "__rand__", "__iand__",
        "__or__", "__ror__", "__ior__", "__xor__", "__rxor__", "__ixor__", "__lshift__",
        "__rlshift__", "__ilshift__", "__rshift__", "__rrshift__", "__irshift__",
        "__eq__", "__ne__", "__lt__", "__le__", "__gt__", "__ge__",
        "__getitem__", "__setitem__", "__len__", "__bool__", "__int__", "__float__",
        "__index__", "__complex__", "__array__", "__contains__",
    }
)  # fmt: skip

# Names that exist inside allowed namespaces but read or write files, load code,
# call back into Python, or change the process: never resolvable from a name.
_DENIED_NAMES = frozenset(
    {
        "load", "save", "loads", "dumps", "savez", "savez_compressed", "savetxt", "loadtxt",
        "fromfile", "tofile", "genfromtxt", "fromregex", "memmap", "from_file",
        "hub", "jit", "compile", "package", "utils", "ops", "classes", "library",
        "py_function", "numpy_function", "pure_callback", "io_callback", "callback",
        "debug", "load_op_library", "load_library", "io", "saved_model", "summary",
        "config", "distribute", "autograph", "function", "compat", "profiler",
        "experimental_connect_to_cluster", "set_default_device", "set_default_dtype",
        "ctypeslib", "lib", "f2py", "distutils", "testing", "show_config", "info",
        "system", "exec", "eval", "open", "__import__", "breakpoint", "input",
        "attrgetter", "methodcaller", "call", "itemgetter", "setattr", "delattr", "getattr",
        "globals", "locals", "vars", "memoryview", "frombuffer",
        # ndarray.dump pickles to a path; numpy.test runs a test suite; tensorflow.print
        # writes to any "file://" output stream.
        "dump", "test", "print",
    }
)  # fmt: skip

_BUILTINS = frozenset(
    {"len", "int", "float", "bool", "complex", "abs", "min", "max", "round", "sum",
     "pow", "divmod", "slice", "tuple", "list", "range"}
)  # fmt: skip


@dataclass(frozen=True, slots=True)
class Allowlist:
    """Where operation and symbol names may resolve.

    A name ``a.b.c`` resolves when ``a.b`` is one of ``namespaces`` (its direct
    attributes are allowed) or the whole name is in ``names``.
    """

    namespaces: frozenset[str]
    """Modules or classes whose direct public attributes are allowed."""
    names: frozenset[str] = frozenset()
    """Single fully qualified names allowed one by one."""

    def extend(self, namespaces: tuple[str, ...] = (), names: tuple[str, ...] = ()) -> Allowlist:
        """A larger allowlist: the user's choice, in code."""
        return Allowlist(self.namespaces | frozenset(namespaces), self.names | frozenset(names))

    def allows(self, name: str) -> bool:
        """Whether ``name`` passes the syntactic and namespace checks."""
        try:
            check_name(name, self)
        except OpNameError:
            return False
        return True


DEFAULT_ALLOWLIST = Allowlist(
    namespaces=frozenset(
        {
            # torch
            "torch", "torch.Tensor", "torch.nn.functional", "torch.linalg", "torch.fft",
            "torch.special", "torch.nn.init", "torch.nn.Parameter", "torch.random",
            "torch.return_types",
            # tensorflow
            "tensorflow", "tensorflow.math", "tensorflow.math.special", "tensorflow.nn",
            "tensorflow.linalg",
            "tensorflow.signal", "tensorflow.random", "tensorflow.image", "tensorflow.bitwise",
            "tensorflow.Tensor", "tensorflow.Variable", "tensorflow.dtypes",
            "tensorflow.experimental.numpy", "tensorflow.keras.ops",
            "keras.ops",
            # jax
            "jax.numpy", "jax.numpy.linalg", "jax.numpy.fft", "jax.nn", "jax.lax",
            "jax.random", "jax.scipy.special", "jax.Array",
            # numpy
            "numpy", "numpy.ndarray", "numpy.linalg", "numpy.fft", "numpy.random",
            "numpy.random.Generator",
            # pure Python arithmetic on tracked scalars
            "operator", "math",
        }
    ),
    names=frozenset(f"builtins.{n}" for n in _BUILTINS),
)  # fmt: skip
"""The array-framework namespaces every graph may name.

``tensorflow.raw_ops`` is deliberately absent: it holds ``WriteFile``, ``ReadFile``,
``Save``, ``PyFunc`` and other ops that touch files or call back into Python."""

_ROOTS = ("torch", "tensorflow", "keras", "jax", "numpy", "operator", "math", "builtins")
# Modules whose objects the roots re-export as their own (``operator.add`` is ``_operator.add``).
_ALSO_FRAMEWORK = frozenset({"jaxlib", "ml_dtypes", "keras", "tf_keras", "_operator"})


# torch's operator namespace and its private functions: named as torch itself names them
# (``torch.ops.aten.add.Tensor``, ``torch._weight_norm``), allowed only when what the name
# resolves to is an aten operator, or a library's operator that only computes on arrays
# and numbers (``torch.ops.torchvision.nms``; checked after import, ``_torch_op_only``). Words that
# mark a process switch, printing or file access are refused inside them.
_ATEN_PREFIX = "torch.ops.aten."
_TORCH_PRIVATE_DENIED = (
    "set_", "print", "use_", "cufft", "debug", "available", "file", "save", "load",
)  # fmt: skip


def _is_torch_op_name(parts: list[str]) -> bool:
    """``torch.ops.<namespace>.<op>[.<overload>]`` (aten's, or a library's registered
    operator: ``torch.ops.torchvision.nms``) or ``torch._<name>``: import-free shape check."""
    if parts[:2] == ["torch", "ops"] and len(parts) in (4, 5):
        words = parts[2:]
    elif len(parts) == 2 and parts[0] == "torch" and parts[1].startswith("_"):
        words = [parts[1]]
    else:
        return False
    return not any(
        w.startswith("__") or w in _DENIED_NAMES or any(bad in w for bad in _TORCH_PRIVATE_DENIED)
        for w in words
    )


def check_name(name: str, allow: Allowlist) -> tuple[str, str]:
    """Syntactic and namespace checks of ``name``; returns (owner, attribute). Imports nothing."""
    if not isinstance(name, str) or not name:
        raise OpNameError(f"operation name must be a non-empty string, got {name!r}")
    parts = name.split(".")
    if len(parts) < 2 or any(not p.isidentifier() or keyword.iskeyword(p) for p in parts):
        raise OpNameError(f"{name!r} is not a dotted Python name")
    owner, attr = ".".join(parts[:-1]), parts[-1]
    if "torch" in allow.namespaces and _is_torch_op_name(parts):
        return owner, attr
    for p in parts[:-1]:
        if p.startswith("_"):
            raise OpNameError(f"{name!r} goes through a private name ({p!r}); refused")
    if attr.startswith("_") and attr not in _ALLOWED_DUNDERS:
        raise OpNameError(f"{name!r} names a private attribute ({attr!r}); refused")
    if name in allow.names:
        return owner, attr
    if attr in _DENIED_NAMES or any(p in _DENIED_NAMES for p in parts[1:-1]):
        raise OpNameError(
            f"{name!r} is refused: {attr!r} can read or write files, run code or change the "
            "process, and is never resolved from a name"
        )
    if owner not in allow.namespaces:
        raise OpNameError(
            f"{name!r} is outside the allowed array-framework namespaces; refused "
            "(extend the Allowlist in code if you trust it)"
        )
    return owner, attr


def _import_owner(owner: str) -> Any:
    parts = owner.split(".")
    # Import the longest importable module prefix, then walk attributes.
    for cut in range(len(parts), 0, -1):
        modname = ".".join(parts[:cut])
        try:
            obj: Any = importlib.import_module(modname)
        except ImportError:
            continue
        for p in parts[cut:]:
            obj = getattr(obj, p)
        return obj
    raise ImportError(owner)


@functools.lru_cache(maxsize=4096)
def _resolve_cached(name: str, allow: Allowlist) -> Any:
    owner_name, attr = check_name(name, allow)
    root = name.split(".", 1)[0]
    try:
        owner = _import_owner(owner_name)
        obj = getattr(owner, attr)
    except (ImportError, AttributeError) as exc:
        raise OpNameError(f"{name!r} does not exist in this process ({exc})") from None
    if isinstance(obj, types.ModuleType):
        raise OpNameError(f"{name!r} is a module, not an operation or symbol")
    if _is_torch_op_name(name.split(".")) and not _torch_op_only(obj, name):
        raise OpNameError(f"{name!r} is not an aten operator; refused")
    mod = getattr(obj, "__module__", None)
    if isinstance(owner, types.ModuleType) and isinstance(mod, str) and root in _ROOTS:
        # A module attribute that is really a foreign object (``numpy.os``-style re-exports).
        top = mod.split(".", 1)[0]
        if top not in _ROOTS and top not in _ALSO_FRAMEWORK:
            raise OpNameError(f"{name!r} resolves to {mod}.{attr}, outside the framework; refused")
    return obj


def _torch_op_only(obj: Any, name: str) -> bool:
    """What a ``torch.ops.aten`` or private torch name may resolve to: an aten operator
    overload or packet, or a builtin bound to one (``torch._C._VariableFunctions``)."""
    torch = sys.modules.get("torch")  # imported by resolving the name's owner
    if torch is None:
        return False
    if name.startswith(_ATEN_PREFIX):
        return isinstance(obj, torch._ops.OpOverload | torch._ops.OpOverloadPacket)
    if name.startswith("torch.ops."):
        return _array_operator(obj, torch)
    attr = name.rsplit(".", 1)[1]
    return (
        isinstance(obj, types.BuiltinFunctionType)
        and getattr(torch._C._VariableFunctions, attr, None) is obj
    )


_ARRAY_ARGUMENTS = frozenset(
    {"Tensor", "Tensor?", "Tensor[]", "Tensor?[]", "int", "int?", "int[]", "SymInt",
     "SymInt?", "SymInt[]", "float", "float?", "float[]", "bool", "bool?", "bool[]",
     "Scalar", "Scalar?", "ScalarType?"}
)  # fmt: skip


def _array_operator(obj: Any, torch: Any) -> bool:
    """Whether ``obj`` is a library's registered operator (an overload, or a packet all of
    whose overloads are) that only computes: it takes arrays and numbers (no string, so no
    path), mutates none of its arguments and returns arrays -- ``torchvision::nms`` and
    ``roi_align`` are, ``image::read_file(str)`` is not."""
    if isinstance(obj, torch._ops.OpOverloadPacket):
        overloads = [getattr(obj, o) for o in obj.overloads()]
        return bool(overloads) and all(_array_operator(o, torch) for o in overloads)
    if not isinstance(obj, torch._ops.OpOverload):
        return False
    schema = obj._schema
    return (
        not schema.is_mutable
        and all(str(a.type) in _ARRAY_ARGUMENTS for a in schema.arguments)
        and bool(schema.returns)
        and all(str(r.type) in ("Tensor", "Tensor[]") for r in schema.returns)
    )


def resolve(name: str, allow: Allowlist = DEFAULT_ALLOWLIST) -> Any:
    """The callable or object named ``name``, if the allowlist admits it.

    Raises :class:`OpNameError` with the reason otherwise. Results are cached per
    (name, allowlist); the framework is imported only here, on first use.
    """
    return _resolve_cached(name, allow)


@functools.lru_cache(maxsize=4096)
def _owner_cached(name: str, allow: Allowlist) -> Any:
    _resolve_cached(name, allow)
    return _import_owner(check_name(name, allow)[0])


def owner_of(name: str, allow: Allowlist = DEFAULT_ALLOWLIST) -> Any:
    """The module or class that ``name`` is an attribute of (``torch.Tensor`` for
    ``torch.Tensor.add``), under the same checks as :func:`resolve`. Cached likewise."""
    return _owner_cached(name, allow)
