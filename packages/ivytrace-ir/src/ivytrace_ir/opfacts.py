"""The registry of op semantics: what an op is, by its name.

Every fact about an operation that does not depend on one run lives here, one table per
kind of fact, and :func:`op_record` gathers them into one :class:`OpRecord` per op name
(the structural ``ivytrace.*`` ops included):

- how it is called (:data:`STRUCTURAL_OPS`, :data:`OPERATORS`, :data:`CONVERSIONS`; else a
  function, a method or a property, which :mod:`ivytrace_ir.lowering` tells from the
  resolved object);
- whether it draws random numbers (:data:`GENERATOR_OPS`, :data:`RANDOM_NAMESPACES`, and
  :data:`TRAINING_FLAG` for draws under a flag such as dropout's ``training``);
- which argument it changes in place (:data:`INPLACE_OPS`, :data:`INPLACE_DUNDERS`, a
  trailing ``_`` on a torch op, an ``inplace`` flag: :data:`INPLACE_FLAG_POSITION`);
- whether its results may share memory with its arguments (:data:`VIEW_OPS`);
- whether it changes process state (:data:`EFFECT_OPS`).

Readers: the interceptors when they record a call (runtime arguments), the passes when they
rewrite a node (IR arguments), the lowering that code generation and the interpreter share.
The per-call answers (:func:`draws_random`, :func:`draw_kind`, :func:`name_mutates`) take
``(op, args, kwargs)``; a flag that is not a plain Python value (a graph value computed at
run time) counts as set, so every answer errs on the safe side. Imports no framework.
"""

from __future__ import annotations

import functools
import operator
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any, Literal

__all__ = [
    "CONVERSIONS",
    "EFFECT_OPS",
    "GENERATOR_OPS",
    "IMMUTABLE_FRAMEWORKS",
    "INPLACE_DUNDERS",
    "INPLACE_FLAG_POSITION",
    "INPLACE_OPS",
    "NON_DRAWING_RANDOM_OPS",
    "OPERATORS",
    "RANDOM_NAMESPACES",
    "STAT_WRITES",
    "STRUCTURAL_OPS",
    "TRAINING_FLAG",
    "VIEW_OPS",
    "CallKind",
    "Conversion",
    "DrawKind",
    "OpRecord",
    "Operator",
    "RandomNamespace",
    "Structural",
    "draw_kind",
    "draws_random",
    "inplace_spelling",
    "is_view",
    "method_spelling",
    "name_mutates",
    "name_writes",
    "op_record",
    "operator_named",
]

CallKind = Literal["structural", "operator", "conversion", "builtin", "attribute"]
"""How an op is called, as far as its name says: a structural ``ivytrace.*`` op, a Python
operator (``a + b``), a conversion Python applies (``len(x)``, ``bool(x)``), another
builtin, or an attribute of a module or class (a function, a method or a property: the
lowering tells which from the resolved object)."""

DrawKind = Literal["draw", "seed", "key"]
"""``draw``: random on every call; ``seed`` / ``key``: a function of its ``seed`` / ``key``
argument, random only when that does not come from the inputs (the interceptor decides)."""


def _names(prefixes: tuple[str, ...], names: str) -> frozenset[str]:
    return frozenset(f"{p}.{n}" for p in prefixes for n in names.split())


INPLACE_OPS: Mapping[str, int] = MappingProxyType(
    {
        **dict.fromkeys(
            _names(
                ("numpy",), "copyto put place putmask fill_diagonal put_along_axis random.shuffle"
            ),
            0,
        ),
        **dict.fromkeys(
            _names(("numpy.ndarray",), "fill sort partition resize itemset setfield put"), 0
        ),
        "numpy.random.Generator.shuffle": 1,
        "numpy.random.Generator.permuted": 1,
        **dict.fromkeys(
            _names(
                ("tensorflow.Variable",),
                "assign assign_add assign_sub scatter_update scatter_add scatter_sub "
                "scatter_mul scatter_div scatter_max scatter_min scatter_nd_update "
                "scatter_nd_add scatter_nd_sub batch_scatter_update",
            ),
            0,
        ),
    }
)
"""Ops whose names do not say so but that change one positional argument in place:
name -> that position. Names that do say so (a trailing ``_`` on a torch op, the
dunders above) need no entry."""

INPLACE_FLAG_POSITION: Mapping[str, int] = MappingProxyType(
    {
        f"torch.nn.functional.{name}": pos
        for name, pos in {
            "relu": 1, "relu6": 1, "selu": 1, "silu": 1, "mish": 1, "hardswish": 1,
            "hardsigmoid": 1, "elu": 2, "celu": 2, "leaky_relu": 2, "threshold": 3,
            "hardtanh": 3, "rrelu": 4, "dropout": 3, "dropout1d": 3, "dropout2d": 3,
            "dropout3d": 3, "alpha_dropout": 3, "feature_alpha_dropout": 3,
        }.items()
    }
)  # fmt: skip
"""Where the ``inplace`` flag sits positionally for functions that take one."""

GENERATOR_OPS: frozenset[str] = (
    _names(
        ("torch",),
        "rand rand_like randn randn_like randint randint_like randperm bernoulli "
        "multinomial normal poisson",
    )
    | _names(
        ("torch.Tensor",),
        "bernoulli multinomial uniform_ normal_ bernoulli_ random_ exponential_ "
        "geometric_ log_normal_ cauchy_",
    )
    | _names(
        ("torch.nn.init",),
        "uniform_ normal_ trunc_normal_ xavier_uniform_ xavier_normal_ kaiming_uniform_ "
        "kaiming_normal_ orthogonal_ sparse_",
    )
    | _names(("torch.nn.functional",), "gumbel_softmax")
    | _names(
        ("tensorflow.random",),
        "uniform normal truncated_normal shuffle categorical gamma poisson",
    )
    | _names(("tensorflow.nn",), "dropout")
)
"""Ops that always draw random numbers, named one by one. Whole namespaces that draw by a
naming rule (``numpy.random``, ``jax.random``...) are :data:`RANDOM_NAMESPACES`."""

TRAINING_FLAG: Mapping[str, tuple[str, int | None, bool]] = MappingProxyType(
    {
        "torch.nn.functional.dropout": ("training", 2, True),
        "torch.nn.functional.dropout1d": ("training", 2, True),
        "torch.nn.functional.dropout2d": ("training", 2, True),
        "torch.nn.functional.dropout3d": ("training", 2, True),
        "torch.nn.functional.alpha_dropout": ("training", 2, False),
        "torch.nn.functional.feature_alpha_dropout": ("training", 2, False),
        "torch.nn.functional.rrelu": ("training", 3, False),
        "torch.dropout": ("train", 2, True),
        "torch.alpha_dropout": ("train", 2, True),
        "torch.feature_dropout": ("train", 2, True),
        "torch.feature_alpha_dropout": ("train", 2, True),
        "torch.nn.functional.scaled_dot_product_attention": ("dropout_p", 4, False),
        "tensorflow.nn.dropout": ("rate", 1, True),
        "tensorflow.nn.experimental_stateless_dropout": ("rate", 1, True),
    }
)
"""Ops that draw only when a flag is set (a rate is non-zero): name -> (keyword, position,
default)."""

STAT_WRITES: Mapping[str, tuple[tuple[str, int | None, bool], tuple[tuple[str, int], ...]]] = (
    MappingProxyType(
        {
            "torch.nn.functional.batch_norm": (
                ("training", 5, False),
                (("running_mean", 1), ("running_var", 2)),
            ),
            "torch.nn.functional.instance_norm": (
                ("use_input_stats", 5, True),
                (("running_mean", 1), ("running_var", 2)),
            ),
            **{
                op: ((flag, 5, default), (("running_mean", 3), ("running_var", 4)))
                for op, flag, default in (
                    ("torch.batch_norm", "training", False),
                    ("torch.native_batch_norm", "training", False),
                    ("torch._native_batch_norm_legit", "training", False),
                    ("torch.instance_norm", "use_input_stats", True),
                )
            },
            # always training: no flag argument (a keyword it has not, default True)
            "torch.ops.aten._batch_norm_with_update": (
                ("training", None, True),
                (("running_mean", 3), ("running_var", 4)),
            ),
        }
    )
)
"""Ops that update running statistics they are given when a flag is set (batch norm in
training mode): name -> ((flag keyword, position, default), ((argument, position), ...)).
Torch makes these writes without moving the tensors' version counters, so only this table
tells them (:func:`name_writes`). In training mode such an op reads the statistics only to
update them: its outputs do not depend on them."""

EFFECT_OPS = frozenset(
    {
        "torch.manual_seed", "torch.seed", "torch.set_rng_state", "torch.random.manual_seed",
        "torch.random.seed", "torch.random.set_rng_state", "torch.set_grad_enabled",
        "numpy.random.seed", "numpy.random.set_state", "tensorflow.random.set_seed",
    }
)  # fmt: skip
"""Ops that change process state (random seeds, grad mode): always kept, never merged."""


# ------------------------------------------------------------ how ops are called
@dataclass(frozen=True, slots=True)
class Structural:
    """A structural op: one the IR defines itself (it names no backend callable)."""

    form: str
    """The lowering's kind for it (:mod:`ivytrace_ir.lowering`): how it is written and run."""
    effect: bool
    """Whether it must stay when nothing reads it (a write-back, a check)."""


STRUCTURAL_OPS: Mapping[str, Structural] = MappingProxyType(
    {
        # ``ivytrace.getattr(obj, "name")`` reads an attribute of a stateful object or module
        "ivytrace.getattr": Structural("getattr", False),
        # ``ivytrace.setattr(obj, "name", value)`` writes one back
        "ivytrace.setattr": Structural("setattr", True),
        # ``ivytrace.getitem(obj, key)`` reads an item of a stateful mapping
        "ivytrace.getitem": Structural("getitem", False),
        # ``ivytrace.guard(value, expected)`` fails the call unless ``value == expected``
        "ivytrace.guard": Structural("guard", True),
    }
)
"""The structural ops ivytrace itself writes, by name."""


@dataclass(frozen=True, slots=True)
class Operator:
    """One Python operator, by every name it is recorded under."""

    symbol: str
    """Its text in source (``+``, ``not ``), with the operand(s) beside it."""
    arity: int
    """1 (prefix) or 2 (infix)."""
    function: Callable[..., Any]
    """What running it means: the :mod:`operator` function taking the operands in the
    written order (``in``: ``lhs in rhs``)."""
    names: tuple[str, ...] = ()
    """Its names in the :mod:`operator` module (``add``; ``invert`` and ``inv``)."""
    dunder: str = ""
    """The method Python calls on the left operand (``__add__``)."""
    reflected: str = ""
    """The method Python calls on the right operand (``__radd__``): written swapped."""
    inplace: str = ""
    """The augmented-assignment method (``__iadd__``): changes the left operand in place."""


OPERATORS: tuple[Operator, ...] = (
    *(
        Operator(sym, 2, getattr(operator, name), (name,), f"__{d}__", f"__r{d}__", f"__i{d}__")
        for sym, name, d in (
            ("+", "add", "add"), ("-", "sub", "sub"), ("*", "mul", "mul"),
            ("@", "matmul", "matmul"), ("/", "truediv", "truediv"),
            ("//", "floordiv", "floordiv"), ("%", "mod", "mod"), ("**", "pow", "pow"),
            ("&", "and_", "and"), ("|", "or_", "or"), ("^", "xor", "xor"),
            ("<<", "lshift", "lshift"), (">>", "rshift", "rshift"),
        )
    ),
    *(
        Operator(sym, 2, getattr(operator, name), (name,), f"__{name}__")
        for sym, name in (("==", "eq"), ("!=", "ne"), ("<", "lt"), ("<=", "le"), (">", "gt"), (">=", "ge"))
    ),
    Operator("in", 2, lambda item, container: item in container, (), "", "__contains__"),
    Operator("-", 1, operator.neg, ("neg",), "__neg__"),
    Operator("+", 1, operator.pos, ("pos",), "__pos__"),
    Operator("~", 1, operator.invert, ("invert", "inv"), "__invert__"),
    Operator("not ", 1, operator.not_, ("not_",)),
)  # fmt: skip
"""Python's operators. ``x.__add__(y)`` and ``operator.add(x, y)`` are written ``x + y``;
``x.__radd__(y)`` is ``y + x``; ``x.__contains__(y)`` is ``y in x``."""

INPLACE_DUNDERS = frozenset({"__setitem__", *(o.inplace for o in OPERATORS if o.inplace)})
"""Python's augmented-assignment dunders (``__iadd__``: the operators' ``inplace``) and
``__setitem__``: they change argument 0."""


@dataclass(frozen=True, slots=True)
class Conversion:
    """A builtin that turns an array into a plain Python value (the tracking is lost)."""

    dunder: str
    """The array method Python calls for it (``__bool__``)."""
    why: str
    """The reason a guard on its result gives (what the user's code did)."""
    builtin: str
    """The name it is written under in generated code (``bool``, ``index``)."""
    reads_value: bool = True
    """Whether it reads the array's values (``len`` reads only its shape): a guard on it
    can be written as a check of the array under a staging compiler."""


CONVERSIONS: Mapping[str, Conversion] = MappingProxyType(
    {
        "builtins.len": Conversion("__len__", "len() of an array was used by Python code", "len", False),
        "builtins.bool": Conversion("__bool__", "the truth of an array decided Python control flow", "bool"),
        "builtins.int": Conversion("__int__", "int() of an array left the graph", "int"),
        "builtins.float": Conversion("__float__", "float() of an array left the graph", "float"),
        "builtins.complex": Conversion("__complex__", "complex() of an array left the graph", "complex"),
        "operator.index": Conversion("__index__", "an array was used as a Python index or count", "index"),
    }
)  # fmt: skip
"""Calls whose result Python turns into a plain value, by the name they are recorded under
(``len(x)`` is ``builtins.len(x)``: the array classes do not all name these publicly)."""

CONVERSION_DUNDERS: Mapping[str, str] = MappingProxyType(
    {c.dunder: name for name, c in CONVERSIONS.items()}
)
"""An array dunder of :data:`CONVERSIONS` -> the name recorded for it."""

BUILTIN_DUNDERS: Mapping[str, str] = MappingProxyType(
    {
        "__abs__": "abs",
        **{c.dunder: c.builtin for c in CONVERSIONS.values() if c.dunder != "__index__"},
    }
)
"""Array dunders written as a call of a builtin (``x.__abs__()`` is ``abs(x)``)."""


# ------------------------------------------------------------------ spellings
_METHOD_OWNERS = MappingProxyType({"torch": "torch.Tensor"})
"""Framework namespace -> the array class whose methods repeat its functions' names."""

_INPLACE_SUFFIX = MappingProxyType({"torch": "_"})
"""Framework -> the suffix that names an op's in-place form (``add`` -> ``add_``)."""


def method_spelling(op: str) -> str | None:
    """The array-method spelling of a top-level framework function, or of a dunder given
    as ``<framework>.__add__``: ``torch.add`` -> ``torch.Tensor.add``, ``torch.__add__`` ->
    ``torch.Tensor.__add__``; ``None`` for a name in a submodule or a framework without one.
    Whether the method exists is the framework's to say."""
    namespace, _, attr = op.rpartition(".")
    owner = _METHOD_OWNERS.get(namespace)
    return f"{owner}.{attr}" if owner else None


def inplace_spelling(op: str) -> str | None:
    """The name of ``op``'s in-place form by its framework's naming rule (``torch.add`` ->
    ``torch.add_``, ``torch.Tensor.__add__`` -> ``torch.Tensor.__iadd__``), the form
    :func:`op_record` says changes argument 0; ``None`` when the rule names none. Whether the
    form exists is the framework's to say."""
    namespace, _, attr = op.rpartition(".")
    if attr.startswith("__") and attr.endswith("__"):
        o = _BY_DUNDER.get(attr)
        return f"{namespace}.{o[0].inplace}" if o and not o[1] and o[0].inplace else None
    suffix = _INPLACE_SUFFIX.get(op.split(".", 1)[0])
    return f"{op}{suffix}" if suffix and not attr.endswith(suffix) else None


def operator_named(name: str) -> Operator:
    """The Python operator of :data:`OPERATORS` called ``name`` in the :mod:`operator`
    module (``add``, ``truediv``, ``neg``)."""
    return _BY_OPERATOR_NAME[name]


# ------------------------------------------------------------------ views
_TORCH_VIEWS = """
    __getitem__ view view_as reshape reshape_as flatten unflatten expand expand_as
    broadcast_to broadcast_tensors permute transpose swapaxes swapdims t adjoint movedim
    moveaxis narrow select squeeze unsqueeze diagonal as_strided unfold real imag
    view_as_real view_as_complex split split_with_sizes tensor_split chunk unbind hsplit
    vsplit dsplit atleast_1d atleast_2d atleast_3d meshgrid detach alias contiguous to type
    type_as cpu cuda float double half bfloat16 int long short bool byte char numpy
    requires_grad_ as_subclass positive conj resolve_conj resolve_neg T mT H mH
    from_numpy as_tensor asarray ravel
"""
_NUMPY_VIEWS = """
    __getitem__ __array__ view reshape ravel transpose permute_dims matrix_transpose swapaxes
    moveaxis rollaxis squeeze expand_dims broadcast_to broadcast_arrays atleast_1d
    atleast_2d atleast_3d diagonal real imag asarray asanyarray ascontiguousarray
    asfortranarray astype split array_split hsplit vsplit dsplit flip fliplr flipud rot90
    T mT
"""

VIEW_OPS: Mapping[str, frozenset[str]] = MappingProxyType(
    {
        "torch": _names(("torch", "torch.Tensor"), _TORCH_VIEWS)
        | _names(
            ("torch.nn.functional",),
            "dropout dropout1d dropout2d dropout3d alpha_dropout feature_alpha_dropout",
        ),
        "numpy": _names(("numpy", "numpy.ndarray"), _NUMPY_VIEWS),
    }
)
"""Ops, per framework, whose results may share memory with their array arguments (true
views, and ops that may hand back their argument itself, such as
``torch.Tensor.contiguous`` or ``numpy.asarray``).

TensorFlow and JAX arrays are immutable, so aliasing cannot be observed there."""

_ALL_VIEWS = frozenset().union(*VIEW_OPS.values())

IMMUTABLE_FRAMEWORKS = frozenset({"jax", "tensorflow"})
"""Frameworks whose arrays can never be changed in place."""


def is_view(op: str) -> bool:
    """Whether the results of ``op`` may share memory with its arguments."""
    return op in _ALL_VIEWS


# ------------------------------------------------------------ random namespaces
@dataclass(frozen=True, slots=True)
class RandomNamespace:
    """How the callables of one namespace draw, by their attribute name."""

    default: DrawKind | None
    """The kind of an attribute no rule below names."""
    prefixes: tuple[tuple[str, DrawKind], ...] = ()
    """(prefix, kind): the first matching prefix decides (``stateless_`` -> ``seed``)."""
    suffixes: tuple[tuple[str, DrawKind], ...] = ()
    """(suffix, kind), tried after the prefixes."""
    not_draws: frozenset[str] = frozenset()
    """Attributes that draw nothing (seeding, key handling)."""

    def kind(self, attr: str) -> DrawKind | None:
        """The draw kind of ``namespace.attr``."""
        if attr in self.not_draws:
            return None
        for prefix, kind in self.prefixes:
            if attr.startswith(prefix):
                return kind
        for suffix, kind in self.suffixes:
            if attr.endswith(suffix):
                return kind
        return self.default


RANDOM_NAMESPACES: Mapping[str, RandomNamespace] = MappingProxyType(
    {
        "numpy.random": RandomNamespace(
            "draw",
            not_draws=frozenset(
                "seed get_state set_state default_rng get_bit_generator set_bit_generator".split()
            ),
        ),
        "tensorflow.random": RandomNamespace(
            "draw",
            prefixes=(("stateless_", "seed"),),
            not_draws=frozenset(
                "set_seed get_global_generator set_global_generator create_rng_state fold_in "
                "split".split()
            ),
        ),
        "tensorflow.image": RandomNamespace(
            None, prefixes=(("random_", "draw"), ("stateless_random_", "seed"))
        ),
        "tensorflow.nn": RandomNamespace(
            None,
            prefixes=(("experimental_stateless_dropout", "seed"),),
            suffixes=(("candidate_sampler", "draw"),),
        ),
        "jax.random": RandomNamespace(
            "key",
            not_draws=frozenset(
                "PRNGKey key split fold_in key_data wrap_key_data key_impl clone "
                "default_prng_impl threefry_2x32 threefry2x32_key rbg_key unsafe_rbg_key".split()
            ),
        ),
    }
)
"""Namespaces whose callables draw by a naming rule, not one by one: numpy's global draws,
TensorFlow's stateful and stateless (``seed``) ops, JAX's draws from a key."""

NON_DRAWING_RANDOM_OPS = frozenset(
    f"numpy.random.{n}" for n in RANDOM_NAMESPACES["numpy.random"].not_draws
)
"""Callables under ``numpy.random`` that draw nothing."""


def _flag(
    args: Sequence[Any], kwargs: Mapping[str, Any], name: str, position: int | None, default: bool
) -> bool:
    if name in kwargs:
        flag = kwargs[name]
    elif position is not None and position < len(args):
        flag = args[position]
    else:
        return default
    # A flag computed at run time (a graph value) might be set: assume it is.
    return bool(flag) if isinstance(flag, bool | int | float | type(None)) else True


# ------------------------------------------------------------ the record
@dataclass(frozen=True, slots=True)
class OpRecord:
    """Everything the registry knows about one op name (built by :func:`op_record`)."""

    name: str
    """The fully qualified op name (``torch.Tensor.__add__``, ``ivytrace.getattr``)."""
    call: CallKind
    """How it is called, as far as its name says (see :data:`CallKind`)."""
    form: str = ""
    """How the lowering writes it when the node's arguments fit its :attr:`arity` and it
    has no keywords: ``getattr``, ``setattr``, ``getitem``, ``guard`` (structural),
    ``setitem``, ``binop``, ``unop``, ``builtin``; ``""`` when the resolved object decides
    (a function, a method or a property: :mod:`ivytrace_ir.lowering`)."""
    symbol: str = ""
    """The operator's text (``+``) or the builtin's name (``len``) the form writes."""
    arity: int = 0
    """How many positional arguments the form takes (``0``: any)."""
    swap: bool = False
    """A reflected operator (``__radd__``): the two operands are written swapped."""
    draws: DrawKind | None = None
    """Whether it draws random numbers (see :data:`DrawKind`); ``None``: never."""
    draw_flag: tuple[str, int | None, bool] | None = None
    """(keyword, position, default) of the flag without which it draws nothing
    (dropout's ``training``, TensorFlow dropout's ``rate``)."""
    mutates: tuple[int, ...] = ()
    """Positions of the arguments it always changes in place."""
    inplace_flag: int | None = None
    """Position of its ``inplace`` flag (``F.relu(x, True)``), if it takes one positionally."""
    view: bool = False
    """Whether its results may share memory with its arguments."""
    effect: bool = False
    """Whether it changes state outside its results (a seed, a write-back, a guard): kept
    even when nothing reads it, never merged."""
    conversion: Conversion | None = None
    """The conversion to a plain Python value it is (``builtins.bool``, ``__bool__``)."""
    reads_value: bool = False
    """Whether it reads one value of an array into a plain Python value: a conversion that
    reads values (``bool(x)``; not ``len(x)``) or an array's ``item`` method."""


_BY_OPERATOR_NAME = MappingProxyType({n: o for o in OPERATORS for n in o.names})
_BY_DUNDER = MappingProxyType(
    {
        **{o.dunder: (o, False) for o in OPERATORS if o.dunder},
        **{o.reflected: (o, True) for o in OPERATORS if o.reflected},
    }
)
_SUBSCRIPTS = MappingProxyType({"__getitem__": ("getitem", 2), "__setitem__": ("setitem", 3)})


def _call_form(op: str, owner: str, attr: str) -> dict[str, Any]:
    """The ``call``/``form``/``symbol``/``arity``/``swap`` fields of :class:`OpRecord`."""
    if op in STRUCTURAL_OPS:
        return {"call": "structural", "form": STRUCTURAL_OPS[op].form}
    if owner == "builtins":
        kind = "conversion" if op in CONVERSIONS else "builtin"
        return {"call": kind, "form": "builtin", "symbol": attr}
    if owner == "operator":
        if attr in _BY_OPERATOR_NAME:
            o = _BY_OPERATOR_NAME[attr]
            form = "binop" if o.arity == 2 else "unop"
            return {"call": "operator", "form": form, "symbol": o.symbol, "arity": o.arity}
        if attr == "getitem":
            return {"call": "operator", "form": "getitem", "arity": 2}
        if op in CONVERSIONS:  # operator.index: called as a function
            return {"call": "conversion"}
        return {"call": "attribute"}
    if attr in _BY_DUNDER:
        o, swap = _BY_DUNDER[attr]
        form = "binop" if o.arity == 2 else "unop"
        return {
            "call": "operator",
            "form": form,
            "symbol": o.symbol,
            "arity": o.arity,
            "swap": swap,
        }
    if attr in BUILTIN_DUNDERS:
        kind = "conversion" if attr in CONVERSION_DUNDERS else "builtin"
        return {"call": kind, "form": "builtin", "symbol": BUILTIN_DUNDERS[attr], "arity": 1}
    if attr in _SUBSCRIPTS:
        form, arity = _SUBSCRIPTS[attr]
        return {"call": "operator", "form": form, "arity": arity}
    if attr == "__index__":
        return {"call": "conversion"}
    return {"call": "attribute"}


def _draws(op: str) -> DrawKind | None:
    parts = op.split(".")
    for cut in range(len(parts) - 1, 0, -1):  # the innermost namespace with a rule decides
        rule = RANDOM_NAMESPACES.get(".".join(parts[:cut]))
        if rule is not None:
            kind = rule.kind(".".join(parts[cut:]))
            if kind is not None:
                return kind
            break
    return "draw" if op in GENERATOR_OPS or op in TRAINING_FLAG else None


def _mutates(op: str, attr: str) -> tuple[int, ...]:
    if op in INPLACE_OPS:
        return (INPLACE_OPS[op],)
    if attr in INPLACE_DUNDERS:
        return (0,)
    if op.startswith("torch.ops.aten.") and op.count(".") in (3, 4):
        attr = op.split(".")[3]  # the aten op, not its overload: ``add_`` of ``add_.Tensor``
    suffix = _INPLACE_SUFFIX.get(op.split(".", 1)[0])
    if suffix and attr.endswith(suffix) and not attr.endswith("__"):
        return (0,)
    return ()


@functools.lru_cache(maxsize=8192)
def op_record(op: str) -> OpRecord:
    """The one record of ``op``, gathered from the tables of this module (cached: the
    tables are read-only)."""
    owner, _, attr = op.rpartition(".")
    conversion = CONVERSIONS.get(op) or CONVERSIONS.get(CONVERSION_DUNDERS.get(attr, ""))
    return OpRecord(
        name=op,
        **_call_form(op, owner, attr),
        draws=_draws(op),
        draw_flag=TRAINING_FLAG.get(op),
        mutates=_mutates(op, attr),
        inplace_flag=INPLACE_FLAG_POSITION.get(op),
        view=op in _ALL_VIEWS,
        effect=op in EFFECT_OPS or (op in STRUCTURAL_OPS and STRUCTURAL_OPS[op].effect),
        conversion=conversion,
        reads_value=(conversion is not None and conversion.reads_value)
        or (attr == "item" and bool(owner)),
    )


# ------------------------------------------------------------ per-call answers
def name_mutates(op: str, args: Sequence[Any], kwargs: Mapping[str, Any]) -> tuple[int, ...]:
    """Positions of the arguments ``op`` changes in place, by what its name and its
    ``inplace`` flag say (``out=`` is left to the caller: it is a keyword)."""
    rec = op_record(op)
    if rec.mutates:
        return rec.mutates
    if ("inplace" in kwargs or rec.inplace_flag is not None) and _flag(
        args, kwargs, "inplace", rec.inplace_flag, False
    ):
        return (0,)
    return ()


def draw_kind(op: str, args: Sequence[Any], kwargs: Mapping[str, Any]) -> DrawKind | None:
    """How calling ``op`` with these arguments draws random numbers (``None``: it does not)."""
    rec = op_record(op)
    if rec.draws is None or (rec.draw_flag is not None and not _flag(args, kwargs, *rec.draw_flag)):
        return None
    return rec.draws


def draws_random(op: str, args: Sequence[Any], kwargs: Mapping[str, Any]) -> bool:
    """Whether calling ``op`` with these arguments always draws random numbers (a draw
    from a seed or a key is the interceptor's to decide: :func:`draw_kind`)."""
    return draw_kind(op, args, kwargs) == "draw"


def name_writes(op: str, args: Sequence[Any], kwargs: Mapping[str, Any]) -> tuple[str, ...]:
    """The arguments ``op`` writes into besides :func:`name_mutates`' (running statistics
    under a training flag, :data:`STAT_WRITES`): their positions as text (``"1"``) or
    their keywords, as given, where the call passes an array there."""
    facts = STAT_WRITES.get(op)
    if facts is None or not _flag(args, kwargs, *facts[0]):
        return ()
    out = []
    for name, pos in facts[1]:
        if name in kwargs and kwargs[name] is not None:
            out.append(name)
        elif pos < len(args) and args[pos] is not None:
            out.append(str(pos))
    return tuple(out)
