"""A model built from a config object (transformers' ``BertModel(config)``) written as
one: its classes take the config and build their layers from it, as the hand-written
ports do (``Linear(config.hidden_size, self.all_head_size)``, not ``Linear(48, 48)``).

Where each size came from is recorded, not guessed from equal values: the root's class
is built once more, on the meta device, from a copy of its config whose numbers remember
their origin (:class:`Origin` ints and floats: ``config.hidden_size``, and what arithmetic
made of them: ``int(config.hidden_size / config.num_attention_heads)``). Each module's
``__init__`` arguments are caught as they are handed over (a profile hook on the calls of
``__init__`` of ``torch.nn.Module`` subclasses), so the classes that take the config are
known, and each layer's attributes (``in_features``) then hold the expressions of their
sizes. A parent's own attributes of the same expression are read by name
(``self.all_head_size``), defined in its constructor as the torch class defines them.

The copy must come out like the model: the same modules at the same paths, of the same
classes, with weights of the same shapes; anything else (a constructor that draws sizes,
a model edited after construction, a constructor that fails on the meta device) leaves
the model written with literals, as before. Only the constructors are read this way: the
forward bodies keep the sizes the trace saw (a changed config builds other layers, and
the forward is translated for the traced one).
"""

from __future__ import annotations

import copy
import re
import sys
import warnings
from dataclasses import dataclass, field
from typing import Any

__all__ = ["ConfigBuild", "Origin", "OriginFloat", "config_build", "render"]


Expr = tuple[Any, ...]
"""An origin: ``("config", name)``, ``("item", expr, i)``, ``("lit", value)``,
``("bin", op, a, b)``, ``("neg", a)``, ``("int", a)``."""

_OPS = {
    "__add__": "+",
    "__sub__": "-",
    "__mul__": "*",
    "__floordiv__": "//",
    "__truediv__": "/",
    "__mod__": "%",
}


def _expr(x: Any) -> Expr:
    return x.origin if isinstance(x, Origin | OriginFloat) else ("lit", x)


def _make(value: Any, origin: Expr) -> Any:
    if type(value) is int:
        return Origin(value, origin)
    if type(value) is float:
        return OriginFloat(value, origin)
    return value


def _binary(name: str, op: str, base: type) -> tuple[Any, Any]:
    def fwd(self: Any, other: Any) -> Any:
        if type(other) not in (int, float, Origin, OriginFloat):
            return NotImplemented
        return _make(getattr(base, name)(self, other), ("bin", op, self.origin, _expr(other)))

    def rev(self: Any, other: Any) -> Any:
        if type(other) not in (int, float, Origin, OriginFloat):
            return NotImplemented
        rname = name.replace("__", "__r", 1)
        return _make(getattr(base, rname)(self, other), ("bin", op, _expr(other), self.origin))

    return fwd, rev


class Origin(int):
    """An ``int`` read from the config, or computed from such: its ``origin``."""

    origin: Expr

    def __new__(cls, value: int, origin: Expr) -> Origin:
        self = super().__new__(cls, value)
        self.origin = origin
        return self

    def __reduce__(self) -> Any:  # a deep copy of the config keeps the origins
        return (Origin, (int(self), self.origin))

    def __neg__(self) -> Any:
        return Origin(-int(self), ("neg", self.origin))


class OriginFloat(float):
    """A ``float`` read from the config, or computed from such: its ``origin``."""

    origin: Expr

    def __new__(cls, value: float, origin: Expr) -> OriginFloat:
        self = super().__new__(cls, value)
        self.origin = origin
        return self

    def __reduce__(self) -> Any:
        return (OriginFloat, (float(self), self.origin))


class _IntMeta(type):
    def __instancecheck__(cls, obj: Any) -> bool:
        return isinstance(obj, int)

    def __subclasscheck__(cls, sub: type) -> bool:
        return issubclass(sub, int)


class _OriginInt(metaclass=_IntMeta):
    """``int`` as the model's own modules see it while the copy is built: ``int(x)`` of
    a number with an origin keeps it (``int(config.hidden_size / config.heads)``; the
    builtin would return a plain int, as ``__int__`` cannot hand back a subclass);
    ``isinstance(n, int)`` is the builtin's answer."""

    def __new__(cls, *args: Any, **kwargs: Any) -> Any:
        if len(args) == 1 and not kwargs and isinstance(args[0], OriginFloat | Origin):
            x = args[0]
            return Origin(int(x), x.origin if type(x) is Origin else ("int", x.origin))
        return int(*args, **kwargs)


for _name, _op in _OPS.items():
    for _cls, _base in ((Origin, int), (OriginFloat, float)):
        _fwd, _rev = _binary(_name, _op, _base)
        setattr(_cls, _name, _fwd)
        setattr(_cls, _name.replace("__", "__r", 1), _rev)


@dataclass
class ConfigBuild:
    """What the second construction told of each module of the model."""

    config: Any
    """The config object the model was built from (its values are the package's data)."""
    takes_config: set[Any] = field(default_factory=set)
    """The modules (of the model) whose ``__init__`` was handed the config itself."""
    attrs: dict[Any, dict[str, Any]] = field(default_factory=dict)
    """Module -> its attributes as the copy holds them (numbers with their origins)."""
    weights: dict[Any, dict[str, tuple[Any, ...]]] = field(default_factory=dict)
    """Module -> its weights' sizes where some came from the config (``shapeorigins``)."""
    args: dict[Any, dict[str, Any]] = field(default_factory=dict)
    """Module -> the arguments its ``__init__`` was handed (by parameter name)."""
    read: set[str] = field(default_factory=set)
    """The config fields a written expression reads (filled as they are written)."""

    def takes(self, module: Any) -> bool:
        return module in self.takes_config

    def origin_of(self, module: Any, name: str, value: Any) -> Any:
        """``value`` of ``module``'s constructor parameter ``name`` as the copy holds it:
        its attribute of that name, else the argument its ``__init__`` was handed under
        that name (an :class:`Origin`, a tuple of them...); None where that is not
        ``value`` or no number of it came from the config."""
        for source in (self.attrs, self.args):
            held = source.get(module, {}).get(name)
            if _has_origin(held) and _plain(held) == value:
                return held
        return None

    def data(self) -> dict[str, Any]:
        """The config fields the written code reads, with the model's values."""
        out = {}
        for name in sorted(self.read):
            value = getattr(self.config, name)
            out[name] = list(value) if isinstance(value, tuple) else value
        return out


def _plain(value: Any) -> Any:
    if isinstance(value, tuple | list):
        return type(value)(_plain(v) for v in value)
    if isinstance(value, Origin):
        return int(value)
    return float(value) if isinstance(value, OriginFloat) else value


def _has_origin(value: Any) -> bool:
    if isinstance(value, Origin | OriginFloat):
        return True
    return isinstance(value, tuple | list) and any(_has_origin(v) for v in value)


def _recording(config: Any) -> Any:
    """A deep copy of ``config`` whose int and float fields (and lists of them) are
    :class:`Origin` numbers."""
    rec = copy.deepcopy(config)
    for name, value in list(vars(rec).items()):
        if name.startswith("_"):
            continue
        if type(value) in (int, float):
            setattr(rec, name, _make(value, ("config", name)))
        elif type(value) in (list, tuple) and value and all(type(v) is int for v in value):
            items = [Origin(v, ("item", ("config", name), i)) for i, v in enumerate(value)]
            setattr(rec, name, type(value)(items))
    return rec


def _same_build(model: Any, shadow: Any) -> bool:
    mine = dict(model.named_modules())
    theirs = dict(shadow.named_modules())
    if mine.keys() != theirs.keys():
        return False
    for path, m in mine.items():
        s = theirs[path]
        if type(m) is not type(s):
            return False
        for store, other in ((m._parameters, s._parameters), (m._buffers, s._buffers)):
            if store.keys() != other.keys():
                return False
            for k, t in store.items():
                o = other[k]
                if (t is None) != (o is None) or (t is not None and t.shape != o.shape):
                    return False
    return True


def config_build(model: Any) -> ConfigBuild | None:
    """The :class:`ConfigBuild` of ``model``, or None where it is not built from a config
    (its class's first constructor parameter is not ``config`` with ``model.config`` its
    value) or the second construction does not come out like it."""
    import inspect

    import torch

    from .shapeorigins import ShapeOrigins

    config = getattr(model, "config", None)
    try:
        params = list(inspect.signature(type(model).__init__).parameters)
    except (TypeError, ValueError):
        return None
    if config is None or len(params) < 2 or params[1] != "config":
        return None
    if not hasattr(config, "__dict__"):
        return None
    rec = _recording(config)
    handed: list[tuple[Any, dict[str, Any]]] = []
    seen: set[int] = set()

    shapes = ShapeOrigins(lambda n: isinstance(n, Origin))

    def hook(frame: Any, event: str, arg: Any) -> None:
        if event != "call":
            return
        name = frame.f_code.co_name
        if name in ("register_parameter", "register_buffer"):
            got = frame.f_locals
            me = got.get("self")
            if isinstance(me, torch.nn.Module) and isinstance(got.get("name"), str):
                shapes.registered(me, got["name"], got.get("param", got.get("tensor")))
            return
        if name != "__init__":
            return
        me = frame.f_locals.get("self")
        if isinstance(me, torch.nn.Module) and id(me) not in seen:
            seen.add(id(me))
            code = frame.f_code
            n = code.co_argcount + code.co_kwonlyargcount
            handed.append((me, {k: frame.f_locals.get(k) for k in code.co_varnames[1:n]}))

    shadow = _build_again(model, rec, hook, shapes)
    if shadow is None or not _same_build(model, shadow):
        return None
    pairs = list(zip(shadow.named_modules(), model.named_modules(), strict=True))
    by_shadow = {id(s): m for (_, s), (_, m) in pairs}
    built_with = getattr(shadow, "config", rec)
    out = ConfigBuild(config)
    for me, args in handed:
        real = by_shadow.get(id(me))
        if real is None:
            continue
        out.args[real] = args
        if any(v is built_with or v is rec for v in args.values()):
            out.takes_config.add(real)
    for (_, s), (_, real) in pairs:
        out.attrs[real] = {k: v for k, v in vars(s).items() if not k.startswith("_")}
        names = [*s._parameters, *s._buffers]
        found = {n: shapes.weights[id(s), n] for n in names if (id(s), n) in shapes.weights}
        if found:
            out.weights[real] = found
    if model not in out.takes_config:
        return None
    return out


def _build_again(model: Any, rec: Any, hook: Any, shapes: Any) -> Any:
    """``type(model)(rec)`` on the meta device under ``shapes`` (``shapeorigins``), with
    ``hook`` profiling it and ``int`` of
    the model's own modules (not torch's) keeping origins; None where it raises. Torch's
    generator, the warnings filters, the profile hook and the modules' globals are as
    they were afterwards."""
    import torch

    names = {type(m).__module__ for m in model.modules()}
    shadowed = [
        sys.modules[n]
        for n in sorted(names)
        if n in sys.modules and not n.startswith("torch.") and "int" not in vars(sys.modules[n])
    ]
    before = sys.getprofile()
    try:
        for mod in shadowed:
            mod.int = _OriginInt  # type: ignore[attr-defined]
        with warnings.catch_warnings(), torch.random.fork_rng(devices=[]):
            warnings.simplefilter("ignore")
            with torch.device("meta"), shapes:
                sys.setprofile(hook)
                try:
                    return type(model)(rec)
                finally:
                    sys.setprofile(before)
    except Exception:
        return None
    finally:
        for mod in shadowed:
            del mod.int  # type: ignore[attr-defined]


def render(
    value: Any, build: ConfigBuild, named: dict[Expr, str], *, skip: Expr | None = None
) -> str:
    """``value`` (a number with its origin, or a tuple or list of them) as Python text:
    an expression that one of ``named`` (origin -> ``self.attr``) computes is read by
    name (except ``skip``, the one being defined); config fields as ``config.name``
    (noted in ``build.read``)."""
    if isinstance(value, tuple | list):
        items = [render(v, build, named, skip=skip) for v in value]
        if isinstance(value, list):
            return "[" + ", ".join(items) + "]"
        return "(" + ", ".join(items) + ("," if len(items) == 1 else "") + ")"
    if not isinstance(value, Origin | OriginFloat):
        return repr(value)
    return _text(value.origin, build, named, skip)


_PRECEDENCE = {"+": 1, "-": 1, "*": 2, "/": 2, "//": 2, "%": 2}


def _text(e: Expr, build: ConfigBuild, named: dict[Expr, str], skip: Expr | None) -> str:
    if e != skip and e in named:
        return named[e]
    kind = e[0]
    if kind == "config":
        build.read.add(e[1])
        return f"config.{e[1]}"
    if kind == "item":
        return f"{_text(e[1], build, named, skip)}[{e[2]}]"
    if kind == "lit":
        return repr(e[1])
    if kind == "int":
        return f"int({_text(e[1], build, named, skip)})"
    if kind == "neg":
        return f"-{_operand(e[1], None, False, build, named, skip)}"
    _, op, a, b = e
    left = _operand(a, op, False, build, named, skip)
    return f"{left} {op} {_operand(b, op, True, build, named, skip)}"


def _operand(
    e: Expr, op: str | None, right: bool, build: ConfigBuild, named: dict[Expr, str], skip: Any
) -> str:
    """``e`` as an operand of ``op`` (None: of a minus sign), in parentheses where Python
    would read it otherwise or two operators of one precedence meet (``(a // b) * c``)."""
    text = _text(e, build, named, skip)
    if e[0] != "bin" or (e != skip and e in named):
        return text
    mine, theirs = _PRECEDENCE[e[1]], _PRECEDENCE.get(op or "", 3)
    bare = mine > theirs or (mine == theirs and not right and e[1] == op)
    return text if bare else f"({text})"


# -- writing ----------------------------------------------------------------------------

CONFIG_HELPER = '''def as_config(config):
    """``config`` as an object of its fields (``config.hidden_size``): None is CONFIG, the
    translated model's; a dict, or an object with ``to_dict`` (a transformers config), is
    read for its fields."""
    if config is None:
        config = CONFIG
    elif hasattr(config, "to_dict"):
        config = config.to_dict()
    changed = sorted(k for k, v in CONFIG.items() if config.get(k, v) != v)
    if changed:
        warnings.warn(
            f"this config differs from the one the package was translated at in {changed}: "
            "the layers are built from it, but sizes written in the forward code are the "
            "translated config's; translate the torch model again for another config",
            stacklevel=3,
        )
    return types.SimpleNamespace(**config)
'''


def config_data(build: ConfigBuild) -> str:
    """The ``CONFIG`` constant: the fields the written constructors read."""
    items = "".join(f"    {k!r}: {v!r},\n" for k, v in build.data().items())
    return f"CONFIG = {{  # the config the model was translated at\n{items}}}\n"


def configured(build: ConfigBuild, instances: list[Any]) -> set[int]:
    """The ``id`` of each instance (``templates.Instance``) written as taking the config:
    its module was handed it, and so was the nearest enclosing module written (the caller
    has the config to hand on), up to the root."""
    by_path = {m.path: m for m in instances}
    out: set[int] = set()
    for m in sorted(instances, key=lambda m: m.path.count(".") + bool(m.path)):
        if not build.takes(m.module):
            continue
        up = m.path
        while up:
            up = up.rpartition(".")[0]
            if up in by_path:
                break
        if m.is_root or (up in by_path and id(by_path[up]) in out):
            out.add(id(m))
    return out


def weight_text(build: ConfigBuild, module: Any, name: str) -> list[str] | None:
    """The sizes of ``module``'s weight ``name`` as written in a class taking the config
    (``(1, 1, config.hidden_size)``), or None where none came from it."""
    dims = build.weights.get(module, {}).get(name)
    return None if dims is None else [render(d, build, {}) for d in dims]


def attribute_names(build: ConfigBuild, module: Any, taken: set[str], attr: Any) -> dict:
    """Origin -> ``self.<name>`` for ``module``'s attributes that hold a number with an
    origin (the first attribute of each origin), skipping names in ``taken``; ``attr``
    maps a torch attribute to its Python name in the package."""
    named: dict[Expr, str] = {}
    for k, v in build.attrs.get(module, {}).items():
        if isinstance(v, Origin | OriginFloat) and attr(k) not in taken:
            named.setdefault(v.origin, f"self.{attr(k)}")
    return named


def definitions(
    build: ConfigBuild, module: Any, named: dict[Expr, str], texts: list[str]
) -> list[str]:
    """The constructor lines defining the attributes ``texts`` read (``self.all_head_size
    = self.num_attention_heads * self.attention_head_size``), and those they read, in the
    order torch's constructor set them."""
    by_name = {text: origin for origin, text in named.items()}
    used: set[str] = set()
    todo = [n for n in by_name if any(_reads(t, n) for t in texts)]
    lines: dict[str, str] = {}
    while todo:
        n = todo.pop()
        if n in used:
            continue
        used.add(n)
        origin = by_name[n]
        rhs = _text(origin, build, named, origin)
        lines[n] = f"{n} = {rhs}"
        todo += [m for m in by_name if m not in used and _reads(rhs, m)]
    order = [f"self.{k}" for k in build.attrs.get(module, {})]
    return [lines[n] for n in sorted(lines, key=lambda n: order.index(n) if n in order else 0)]


def _reads(text: str, name: str) -> bool:
    return re.search(rf"{re.escape(name)}\b", text) is not None
