"""``Module``: the seeds' stateful layer pattern, and a few layers.

::

    class Network(ivy.Module):
        def __init__(self):
            self._layer = ivy.Linear(3, 3)   # layers first,
            super().__init__()               # then Module.__init__ collects their variables

        def _forward(self, x):
            return self._layer(x)

    net = Network()
    net.trace_graph(x)   # trace the forward once
    net(x)               # runs the traced graph

``v`` is a :class:`~ivytrace.frontend.Container` of the variables, nested by submodule
(``net.v.layer.w``; one leading underscore of an attribute name is dropped, as in Ivy);
they are native arrays of the backend current at construction, randomly initialised.
"""

from __future__ import annotations

import contextlib
import math
from collections.abc import Iterator, Sequence
from typing import Any

from . import functions as F
from .container import Container

__all__ = [
    "GELU",
    "AvgPool2D",
    "Conv2D",
    "Dropout",
    "Flatten",
    "LayerNorm",
    "Linear",
    "MaxPool2D",
    "Module",
    "ReLU",
    "Sequential",
    "Sigmoid",
    "Softmax",
    "Tanh",
]

_INTERNAL = frozenset({"v", "training", "_graph", "_lazy_trace", "_built", "_device", "_dtype"})


def _vkey(name: str) -> str:
    return name[1:] if name.startswith("_") and not name.startswith("__") else name


class Module:
    """Base class of frontend layers and networks (see the module docstring).

    Subclasses assign their sublayers, then call ``super().__init__()``; they define
    ``_forward`` and, when they own variables, ``_create_variables(device, dtype)``
    returning a dict of arrays.
    """

    def __init__(
        self,
        *args: Any,
        device: Any = None,
        v: Any = None,
        dtype: Any = None,
        training: bool = True,
        **kwargs: Any,
    ) -> None:
        d = self.__dict__
        d["_device"] = device
        d["_dtype"] = dtype
        d["training"] = training
        d.setdefault("_graph", None)
        d.setdefault("_lazy_trace", None)
        if v is not None:
            self._set_v(v if isinstance(v, Container) else Container(v))
        else:
            vc = Container()
            for name, sub in self._submodule_items():
                vc[name] = sub
            own = self._create_variables(device=device, dtype=dtype) or {}
            for k, val in own.items():
                vc[k] = val
            d["v"] = vc
        d["_built"] = True

    # ---------------------------------------------------------------- variables

    def _create_variables(self, *, device: Any = None, dtype: Any = None) -> dict[str, Any]:
        """This module's own variables (not its submodules'); none by default."""
        return {}

    def _submodules_raw(self) -> Iterator[tuple[str, Any]]:
        for name, val in list(self.__dict__.items()):
            if name in _INTERNAL:
                continue
            if isinstance(val, Module):
                yield name, val
            elif isinstance(val, (list, tuple)) and val and all(isinstance(m, Module) for m in val):
                yield name, list(val)
            elif isinstance(val, dict) and val and all(isinstance(m, Module) for m in val.values()):
                yield name, dict(val)

    def _submodule_items(self) -> Iterator[tuple[str, Container]]:
        """(v key, Container of variables) for each submodule or list/dict of them."""
        taken = set(self.__dict__)
        for name, val in self._submodules_raw():
            key = _vkey(name)
            if key != name and key in taken:
                key = name
            if isinstance(val, Module):
                yield key, val.v
            elif isinstance(val, list):
                yield key, Container({f"v{i}": m.v for i, m in enumerate(val)})
            else:
                yield key, Container({str(k): m.v for k, m in val.items()})

    def _set_v(self, v: Container) -> None:
        """Use ``v`` as this module's variables, sharing its inner Containers with submodules."""
        self.__dict__["v"] = v
        taken = set(self.__dict__)
        for name, val in self._submodules_raw():
            key = _vkey(name)
            if key != name and key in taken:
                key = name
            if key not in v:
                continue
            if isinstance(val, Module):
                val._set_v(v[key])
            elif isinstance(val, list):
                for i, m in enumerate(val):
                    m._set_v(v[key][f"v{i}"])
            else:
                for k, m in val.items():
                    m._set_v(v[key][str(k)])

    @contextlib.contextmanager
    def _using_v(self, v: Any) -> Iterator[None]:
        old = self.__dict__["v"]
        self._set_v(v if isinstance(v, Container) else Container(v))
        try:
            yield
        finally:
            self._set_v(old)

    def __setattr__(self, name: str, value: Any) -> None:
        object.__setattr__(self, name, value)
        if isinstance(value, Module) and self.__dict__.get("_built") and name not in _INTERNAL:
            self.__dict__["v"][_vkey(name)] = value.v

    # ---------------------------------------------------------------- calling

    def _forward(self, *args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError(f"{type(self).__name__} defines no _forward")

    def __call__(self, *args: Any, v: Any = None, **kwargs: Any) -> Any:
        """Run the forward (the traced graph once :meth:`trace_graph` has run); with ``v``,
        run the forward on those variables instead of ``self.v``."""
        if v is not None:
            with self._using_v(v):
                return self._forward(*args, **kwargs)
        graph = self.__dict__.get("_graph")
        if graph is not None:
            return graph(*args, **kwargs)
        lazy = self.__dict__.get("_lazy_trace")
        if lazy is not None:
            self.__dict__["_lazy_trace"] = None
            self.trace_graph(*args, trace_options=lazy, **kwargs)
            return self.__dict__["_graph"](*args, **kwargs)
        return self._forward(*args, **kwargs)

    def trace_graph(self, *args: Any, trace_options: dict[str, Any] | None = None, **kwargs: Any):
        """Trace the forward on these example inputs (``net.trace_graph(x)``); later calls of
        the module run the graph. Ivy's form ``net.trace_graph(args=(x,), kwargs={})``
        works too; without inputs the trace happens on the first call. ``trace_options``
        go to :func:`ivytrace.trace_graph` (``to``, ``array_caching``, ...). Returns self."""
        if not args and kwargs and set(kwargs) <= {"args", "kwargs"}:
            args = tuple(kwargs.get("args") or ())
            kwargs = dict(kwargs.get("kwargs") or {})
        opts = dict(trace_options or {})
        if not args and not kwargs:
            self.__dict__["_lazy_trace"] = opts
            self.__dict__["_graph"] = None
            return self
        from ivytrace.tracing import trace_graph as _trace_graph

        opts["stateful"] = [*opts.get("stateful", ()), *self._ivytrace_state()]
        self.__dict__["_graph"] = _trace_graph(self._forward, args=args, kwargs=kwargs, **opts)
        return self

    def _ivytrace_state(self) -> list[Any]:
        """The variable containers (``self.v`` and the nested ones): traced as stateful
        objects, so the graph reads the current variables on every call instead of
        baking the ones seen while tracing."""
        out: list[Any] = []

        def walk(c: Any) -> None:
            if isinstance(c, Container) and not any(c is o for o in out):
                out.append(c)
                for val in c.values():
                    walk(val)

        walk(self.__dict__.get("v"))
        return out

    def _ivytrace_set_graph(self, graph: Any) -> None:
        """Used by :func:`ivytrace.trace_graph` when it is given the module itself."""
        self.__dict__["_graph"] = graph

    @property
    def is_traced(self) -> bool:
        """Whether calls run a traced graph."""
        return self.__dict__.get("_graph") is not None

    def untrace(self) -> Module:
        """Go back to running ``_forward``; returns self."""
        self.__dict__["_graph"] = None
        self.__dict__["_lazy_trace"] = None
        return self

    # ---------------------------------------------------------------- modes, printing

    def train(self, mode: bool = True) -> Module:
        """Set ``training`` here and in every submodule; returns self."""
        self.__dict__["training"] = mode
        for _, val in self._submodules_raw():
            mods = (
                [val]
                if isinstance(val, Module)
                else list(val.values() if isinstance(val, dict) else val)
            )
            for m in mods:
                m.train(mode)
        return self

    def eval(self) -> Module:
        """``train(False)``."""
        return self.train(False)

    def extra_repr(self) -> str:
        return ""

    def __repr__(self) -> str:
        subs = list(self._submodules_raw())
        head = f"{type(self).__name__}({self.extra_repr()}"
        if not subs:
            return head + ")"
        lines = [head]
        for name, val in subs:
            if isinstance(val, Module):
                lines.append(f"  ({name}): " + repr(val).replace("\n", "\n  "))
            else:
                items = val.items() if isinstance(val, dict) else enumerate(val)
                for k, m in items:
                    lines.append(f"  ({name}.{k}): " + repr(m).replace("\n", "\n  "))
        lines.append(")")
        return "\n".join(lines)


# ==================================================================== layers


def _glorot(shape: tuple[int, ...], fan_in: int, fan_out: int, dtype: Any, device: Any) -> Any:
    lim = math.sqrt(6.0 / (fan_in + fan_out))
    return F.random_uniform(-lim, lim, shape, dtype=dtype, device=device)


class Linear(Module):
    """``x @ w.T + b`` with ``w`` shaped (out, in) (Glorot-uniform) and ``b`` zeros."""

    def __init__(
        self,
        input_channels: int,
        output_channels: int,
        /,
        with_bias: bool = True,
        *,
        device: Any = None,
        dtype: Any = None,
        v: Any = None,
    ) -> None:
        self._input_channels = int(input_channels)
        self._output_channels = int(output_channels)
        self._with_bias = with_bias
        super().__init__(device=device, dtype=dtype, v=v)

    def _create_variables(self, *, device: Any = None, dtype: Any = None) -> dict[str, Any]:
        i, o = self._input_channels, self._output_channels
        out = {"w": _glorot((o, i), i, o, dtype, device)}
        if self._with_bias:
            out["b"] = F.zeros((o,), dtype=dtype, device=device)
        return out

    def _forward(self, x: Any) -> Any:
        return F.linear(x, self.v.w, self.v.b if self._with_bias else None)

    def extra_repr(self) -> str:
        return f"{self._input_channels} -> {self._output_channels}"


class Conv2D(Module):
    """2-D convolution with HWIO filters ``w`` (Glorot-uniform) and bias ``b`` (zeros)."""

    def __init__(
        self,
        input_channels: int,
        output_channels: int,
        filter_shape: int | Sequence[int],
        /,
        strides: int | Sequence[int] = 1,
        padding: Any = "SAME",
        *,
        with_bias: bool = True,
        data_format: str = "NHWC",
        dilations: int | Sequence[int] = 1,
        device: Any = None,
        dtype: Any = None,
        v: Any = None,
    ) -> None:
        self._input_channels = int(input_channels)
        self._output_channels = int(output_channels)
        fs = (filter_shape, filter_shape) if isinstance(filter_shape, int) else tuple(filter_shape)
        self._filter_shape = (int(fs[0]), int(fs[1]))
        self._strides = strides
        self._padding = padding
        self._with_bias = with_bias
        self._data_format = data_format
        self._dilations = dilations
        super().__init__(device=device, dtype=dtype, v=v)

    def _create_variables(self, *, device: Any = None, dtype: Any = None) -> dict[str, Any]:
        kh, kw = self._filter_shape
        i, o = self._input_channels, self._output_channels
        out = {"w": _glorot((kh, kw, i, o), kh * kw * i, kh * kw * o, dtype, device)}
        if self._with_bias:
            out["b"] = F.zeros((o,), dtype=dtype, device=device)
        return out

    def _forward(self, x: Any) -> Any:
        return F.conv2d(
            x,
            self.v.w,
            self._strides,
            self._padding,
            data_format=self._data_format,
            dilations=self._dilations,
            bias=self.v.b if self._with_bias else None,
        )

    def extra_repr(self) -> str:
        return (
            f"{self._input_channels} -> {self._output_channels}, kernel={self._filter_shape}, "
            f"strides={self._strides}, padding={self._padding!r}"
        )


class Sequential(Module):
    """Layers called in order; their variables under ``v.submodules.v0``, ``v1``, ..."""

    def __init__(self, *sub_modules: Module, device: Any = None, v: Any = None) -> None:
        self._submodules = list(sub_modules)
        super().__init__(device=device, v=v)

    def _forward(self, x: Any) -> Any:
        for m in self._submodules:
            x = m(x)
        return x

    def __len__(self) -> int:
        return len(self._submodules)

    def __getitem__(self, i: int) -> Module:
        return self._submodules[i]

    def __iter__(self) -> Iterator[Module]:
        return iter(self._submodules)


class _Activation(Module):
    def __init__(self) -> None:
        super().__init__()


class ReLU(_Activation):
    """max(x, 0)."""

    def _forward(self, x: Any) -> Any:
        return F.relu(x)


class GELU(Module):
    """Gaussian error linear unit."""

    def __init__(self, *, approximate: bool = False) -> None:
        self._approximate = approximate
        super().__init__()

    def _forward(self, x: Any) -> Any:
        return F.gelu(x, approximate=self._approximate)


class Sigmoid(_Activation):
    """Logistic sigmoid."""

    def _forward(self, x: Any) -> Any:
        return F.sigmoid(x)


class Tanh(_Activation):
    """Hyperbolic tangent."""

    def _forward(self, x: Any) -> Any:
        return F.tanh(x)


class Softmax(Module):
    """Softmax along ``axis``."""

    def __init__(self, axis: int = -1) -> None:
        self._axis = axis
        super().__init__()

    def _forward(self, x: Any) -> Any:
        return F.softmax(x, axis=self._axis)


class Flatten(Module):
    """Merge axes start_dim..end_dim (all but the batch axis by default)."""

    def __init__(self, start_dim: int = 1, end_dim: int = -1) -> None:
        self._start_dim, self._end_dim = start_dim, end_dim
        super().__init__()

    def _forward(self, x: Any) -> Any:
        return F.flatten(x, start_dim=self._start_dim, end_dim=self._end_dim)


class LayerNorm(Module):
    """Normalise over the trailing axes of ``normalized_shape``; ``weight`` (ones) and
    ``bias`` (zeros) when ``elementwise_affine``."""

    def __init__(
        self,
        normalized_shape: int | Sequence[int],
        /,
        *,
        eps: float = 1e-5,
        elementwise_affine: bool = True,
        device: Any = None,
        dtype: Any = None,
        v: Any = None,
    ) -> None:
        shp = (normalized_shape,) if isinstance(normalized_shape, int) else tuple(normalized_shape)
        self._normalized_shape = tuple(int(s) for s in shp)
        self._eps = eps
        self._elementwise_affine = elementwise_affine
        super().__init__(device=device, dtype=dtype, v=v)

    def _create_variables(self, *, device: Any = None, dtype: Any = None) -> dict[str, Any]:
        if not self._elementwise_affine:
            return {}
        shp = self._normalized_shape
        return {
            "weight": F.ones(shp, dtype=dtype, device=device),
            "bias": F.zeros(shp, dtype=dtype, device=device),
        }

    def _forward(self, x: Any) -> Any:
        n = len(self._normalized_shape)
        axes = tuple(range(-n, 0))
        if self._elementwise_affine:
            return F.layer_norm(x, axes, scale=self.v.weight, offset=self.v.bias, eps=self._eps)
        return F.layer_norm(x, axes, eps=self._eps)

    def extra_repr(self) -> str:
        return f"{self._normalized_shape}, eps={self._eps}"


class Dropout(Module):
    """Dropout with probability ``prob`` while ``training`` (see :meth:`Module.eval`)."""

    def __init__(self, prob: float, /, *, scale: bool = True) -> None:
        self._prob = float(prob)
        self._scale = scale
        super().__init__()

    def _forward(self, x: Any) -> Any:
        return F.dropout(x, self._prob, scale=self._scale, training=self.training)

    def extra_repr(self) -> str:
        return f"prob={self._prob}"


class _Pool2D(Module):
    """2-D pooling (NHWC by default) by the frontend function :attr:`_pool`."""

    _pool: Any = None

    def __init__(self, kernel: Any, strides: Any, padding: Any = "VALID", /, *, data_format="NHWC"):
        self._kernel, self._strides, self._padding = kernel, strides, padding
        self._data_format = data_format
        super().__init__()

    def _forward(self, x: Any) -> Any:
        return self._pool(
            x, self._kernel, self._strides, self._padding, data_format=self._data_format
        )


class MaxPool2D(_Pool2D):
    """2-D max pooling (NHWC by default)."""

    _pool = staticmethod(F.max_pool2d)


class AvgPool2D(_Pool2D):
    """2-D average pooling (NHWC by default)."""

    _pool = staticmethod(F.avg_pool2d)
