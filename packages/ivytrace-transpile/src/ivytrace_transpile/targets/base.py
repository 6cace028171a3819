"""The base of the target frameworks as array namespaces the translation rules are written against.

A rule is written once, against :class:`Target`'s small vocabulary of primitives
(numpy's names and semantics: ``reshape``, ``transpose``, ``sum(x, axis, keepdims)``,
``conv`` in NCHW, ...), and runs on any target. Each target implements the vocabulary
with its own native calls, which the tracer records while a rule runs: the translated
graph is made of those native calls.

Elementwise primitives (the op table's elementwise ops and activations) are one call of a
native function with the same arguments on every target; their native names are read from
the op table (:mod:`..optable`, the one place that says "exp on tensorflow is
``tensorflow.math.exp``", "relu on jax is ``jax.nn.relu``"); a target composes the ones it
has no native for (or whose native lacks an argument: tensorflow's ``round`` with
``decimals``) in an ``ew_<name>`` method, which wins over the table. Everything else is a
method written per target.

Targets import their framework when they are built, never at module import.
"""

from __future__ import annotations

import contextlib
import functools
import importlib
import math
import sys
from collections.abc import Iterator, Sequence
from contextvars import ContextVar
from typing import Any

from ivytrace_intercept import IdentityMap
from ivytrace_ir import DEFAULT_ALLOWLIST, check_name

from .. import optable

__all__ = [
    "Target",
    "native",
    "own_torch_copy",
    "remembering_transposes",
    "torch_borrowable",
    "torch_memory",
]


@functools.lru_cache(maxsize=1024)
def _path(name: str) -> tuple[str, ...]:
    check_name(name, DEFAULT_ALLOWLIST)
    return tuple(name.split("."))


def _plain_torch_cpu(x: Any, dtypes: Sequence[str]) -> Any:
    """torch, where ``x`` is a plain strided torch CPU tensor of one of ``dtypes`` (torch's
    names: ``"float32"``), else None."""
    torch = sys.modules.get("torch")
    if (
        torch is None
        or type(x) not in (torch.Tensor, torch.nn.Parameter)
        or x.device.type != "cpu"
        or x.layout != torch.strided
        or str(x.dtype).removeprefix("torch.") not in dtypes
    ):
        return None
    return torch


def own_torch_copy(x: Any, dtypes: Sequence[str]) -> Any:
    """A contiguous copy of ``x`` in memory of its own where ``x`` is a plain torch CPU
    tensor of one of ``dtypes`` (torch's names: ``"float32"``), else None: the elements a
    target can take over without copying again (:meth:`Target.copied_from`). Torch's
    allocator makes fresh memory cheaper than numpy's and TensorFlow's here (BERT-base's
    440 MB of weights, one thread, fresh process: 0.2 s CPU against 0.8)."""
    torch = _plain_torch_cpu(x, dtypes)
    if torch is None:
        return None
    return x.detach().clone(memory_format=torch.contiguous_format)


def torch_borrowable(x: Any, dtypes: Sequence[str]) -> Any:
    """``x`` detached, where it is a plain contiguous torch CPU tensor of one of ``dtypes``
    whose memory a target array may read as it is (:meth:`Target.borrowed_from`), else
    None."""
    if _plain_torch_cpu(x, dtypes) is None or not x.is_contiguous():
        return None
    return x.detach()


def torch_memory(x: Any) -> tuple[int, int] | None:
    """(first address, bytes) of the storage behind a torch CPU tensor ``x``, else None."""
    torch = sys.modules.get("torch")
    if torch is None or not isinstance(x, torch.Tensor) or x.device.type != "cpu":
        return None
    if x.layout != torch.strided:
        return None
    storage = x.untyped_storage()
    return storage.data_ptr(), storage.nbytes()


def native(name: str) -> Any:
    """The target callable ``name`` (checked against the allowlist once), looked up from
    its root module at call time: the tracer's wrapper is what runs while it records, and
    a namespace module that the framework rebinds (importing ``tensorflow.math`` by name
    does) is never held stale."""
    root, *rest = _path(name)
    obj: Any = importlib.import_module(root)
    for part in rest:
        obj = getattr(obj, part)
    return obj


_TRANSPOSED: ContextVar[IdentityMap | None] = ContextVar("ivytrace_transposed", default=None)
"""While a translated run records: array -> {perm: that array transposed by perm}, for the
transposes channels-last regions made (both ways). Context-local (one per translation),
never module state."""


@contextlib.contextmanager
def remembering_transposes() -> Iterator[None]:
    """Within, a transpose into or out of a channels-last region that undoes the transpose
    which made its input returns that input (``conv -> to NCHW -> to NHWC -> batch norm``
    runs and records one transpose, not two), and one already made of the same array is
    reused (a block's input read by two convs). The arrays are the same values; the layout
    pass would cancel the pairs anyway: this saves running them during translation."""
    token = _TRANSPOSED.set(IdentityMap())
    try:
        yield
    finally:
        _TRANSPOSED.reset(token)


class Target:
    """A target framework seen as an array namespace. Subclasses implement the primitives."""

    name: str = ""
    """The framework's name in specs: ``"tensorflow"``, ``"jax"``, ``"numpy"``."""

    transpose_op: str = ""
    """The target's ``transpose(x, perm)``, which channels-last regions are made with."""

    identity_op: str = ""
    """The target's identity function: a cancelled pair of transposes whose result is a
    graph output is written as it."""

    writes_channels_last: bool = False
    """Whether its convolutions, pooling and per-channel affine maps are written
    channels-last between transposes (which the layout pass then cancels)."""

    moves_transposes: bool = False
    """Whether the layout pass (``layout.optimize_transposes``) runs on its translations:
    its rules write regions of another layout between transposes (channels-last on
    tensorflow and jax; channels-first on torch, for channels-last sources)."""

    def relayout(self, x: Any, perm: Sequence[int]) -> Any:
        """``x`` transposed by ``perm``; inside :func:`remembering_transposes`, an array
        already at hand when there is one: the input of the transpose that made ``x`` when
        ``perm`` undoes it, or the result of the same transpose of ``x`` made before."""
        perm = tuple(perm)
        known = _TRANSPOSED.get()
        if known is None:
            return native(self.transpose_op)(x, list(perm))
        done = known.get(x)
        if done is not None and perm in done:
            return done[perm]
        y = native(self.transpose_op)(x, list(perm))
        inverse = [0] * len(perm)
        for i, p in enumerate(perm):
            inverse[p] = i
        if done is None:
            known.set(x, done := {})
        done[perm] = y
        known.set(y, {tuple(inverse): x})
        return y

    def channels_last(self, x: Any) -> Any:
        """N, C, *spatial -> N, *spatial, C."""
        return self.relayout(x, [0, *range(2, len(x.shape)), 1])

    def channels_first(self, x: Any) -> Any:
        """N, *spatial, C -> N, C, *spatial."""
        rank = len(x.shape)
        return self.relayout(x, [0, rank - 1, *range(1, rank - 1)])

    def affine_channels_last(self, x: Any, scale: Any, shift: Any) -> Any:
        """Per-channel ``x * scale + shift`` of an N, C, *spatial array, written channels-last
        between transposes (for the layout pass to cancel); either may be ``None``."""
        y = self.channels_last(x)
        if scale is not None:
            y = y * scale
        if shift is not None:
            y = y + shift
        return self.channels_first(y)

    array_types: tuple[type, ...] = ()
    """The target's array classes."""

    # ---- staging the translated run (``staging.py``) ---------------------------
    stages: bool = False
    """Whether the translated run can be staged: recorded on the values the target's
    compiler traces and computed in one compiled call (:meth:`run_staged`)."""

    abstract_errors: tuple[type[BaseException], ...] = ()
    """What the target's compiler raises when staged code needs a concrete value."""

    def is_staged(self, x: Any) -> bool:
        """Whether ``x`` is a staged (abstract) value of this target."""
        return False

    def once(self, fn: Any) -> Any:
        """``fn`` (a function of target arrays) as one program that runs once, at conversion
        (the weights' rearrangement, the work that reads only weights): as it is, or
        compiled where eager dispatch compiles every op (jax)."""
        return fn

    compiles: bool = False
    """Whether :meth:`compile_call` compiles: a translation called again and again at one
    set of shapes then runs compiled (``warmcalls.py``)."""

    eager_calls: int = 2
    """Calls at one set of input shapes answered eagerly before the next one is compiled
    (``warmcalls.py``): where eager ops are ready-made kernels (TensorFlow), a call made
    once or twice (a test, a new length) pays no compile."""

    def compile_call(self, fn: Any) -> Any:
        """``fn`` (a function of a weights dict and a list of target arrays) compiled as
        the target's users compile their code (``jax.jit``, ``tf.function``): it traces at
        each new set of shapes and runs compiled after."""
        raise NotImplementedError(f"{self.name} does not compile calls")

    def run_staged(self, fn: Any, params: list[Any], leaves: list[Any]) -> list[Any]:
        """``fn(params, leaves)`` (which returns a list of arrays) traced on staged values,
        with a trace of this target recording the calls made on them, compiled and run
        once: the arrays it returns, computed."""
        raise NotImplementedError(f"{self.name} does not stage")

    def gelu(self, x: Any, approximate: bool) -> Any:
        """GELU, exact (``erf``) or torch's tanh approximation: the target's own (the op
        table's native: ``tf.nn.gelu``, ``jax.nn.gelu``), else written out."""
        found = optable.OPS["gelu"].natives.get(self.name)
        if found is not None:
            return native(found)(x, approximate=approximate)
        if approximate:
            inner = (x + x * x * x * 0.044715) * math.sqrt(2.0 / math.pi)
            return x * 0.5 * (self.ew("tanh", inner) + 1.0)
        return x * 0.5 * (self.ew("erf", x * (1.0 / math.sqrt(2.0))) + 1.0)

    def softmax(self, x: Any, axis: Any) -> Any:
        """``exp(x - max) / sum`` over ``axis`` (an axis or a tuple of them)."""
        m = self.reduce("max", x, axis, True)
        e = self.ew("exp", x - m)
        return e / self.reduce("sum", e, axis, True)

    def standardize(self, x: Any, axes: tuple[int, ...], eps: Any) -> Any:
        """``(x - mean) / sqrt(var + eps)`` over ``axes`` (negative), the variance the mean
        of squared deviations (not ``E[x^2] - E[x]^2``, which cancels): a layer norm
        before its affine map."""
        mean = self.reduce("mean", x, axes, True)
        d = x - mean
        var = self.reduce("mean", d * d, axes, True)
        return d * self.ew("rsqrt", var + eps)

    def from_numpy(self, arr: Any) -> Any:
        """A numpy array (of a dtype this target has) as a target array, outside any trace:
        the parameters and inputs of a translation."""
        return self.asarray(arr)

    def copied_from(self, x: Any) -> Any | None:
        """``x`` (a source-framework array whose dtype this target holds as it is) as a
        target array in memory of its own, where the target has a faster way than through
        numpy; None where not (the caller converts through numpy)."""
        return None

    def borrowed_from(self, x: Any) -> Any | None:
        """``x`` (a source-framework array) as a target array that reads ``x``'s own memory,
        for the translation's own run alone: the translated run reads a weight without
        copying it first (most of a model's weights are rearranged before they are stored,
        :mod:`..folding`, and a copy in the source layout would be dropped). None where the
        target cannot (the caller converts as :meth:`copied_from` does). Only targets whose
        arrays are immutable borrow; a stored weight never keeps borrowed memory
        (``translate.translate_graph`` copies what still reads it: :meth:`memory_of`)."""
        return None

    def memory_of(self, x: Any) -> tuple[int, int] | None:
        """(first address, bytes) of the memory a target array ``x`` reads, where the target
        can say; None where not (a stored weight whose memory is not known is copied when
        anything was borrowed)."""
        return None

    from_numpy_copies: bool = False
    """Whether :meth:`from_numpy` gives an array holding its own copy of the elements, so a
    caller need not copy first (``reference.to_target``): TensorFlow's ``EagerTensor`` and
    ``torch.tensor`` copy; numpy's ``asarray`` and jax's ``device_put`` on CPU may share
    the numpy array's memory."""

    def dense(self, x: Any) -> Any:
        """``x`` laid out densely in its own memory, as a stored weight should be; the
        targets whose arrays are always dense return it as it is."""
        return x

    def is_array(self, x: Any) -> bool:
        """Whether ``x`` is an array of this target, judged by its class alone (reading an
        attribute of an array while tracing would record a read)."""
        return isinstance(x, self.array_types)

    # ---- dtypes --------------------------------------------------------------
    def canonical_dtype(self, dtype: str) -> str:
        """The dtype this target uses for the canonical ``dtype`` (jax without x64 has no
        64-bit types)."""
        return dtype

    def dtype(self, dtype: str) -> Any:
        """The native dtype object for a canonical dtype name."""
        raise NotImplementedError

    def shape(self, x: Any) -> tuple[Any, ...]:
        """The sizes of ``x`` (tracked while tracing: a translated graph reads them anew)."""
        return tuple(x.shape)

    # ---- elementwise, from the tables ---------------------------------------
    @functools.cached_property
    def _elementwise(self) -> dict[str, Any]:
        table: dict[str, Any] = {}
        for op in optable.unique_ops():
            if op.category in ("elementwise", "activation") and self.name in op.natives:
                table[op.name] = op.natives[self.name]
        return table

    def has(self, name: str) -> bool:
        """Whether ``name`` is an elementwise primitive of this target (or a method)."""
        return name in self._elementwise or hasattr(self, "ew_" + name)

    def ew(self, name: str, *args: Any, **kwargs: Any) -> Any:
        """Call the elementwise primitive ``name`` (numpy's name for it)."""
        own = getattr(self, "ew_" + name, None)
        if own is not None:
            return own(*args, **kwargs)
        try:
            name_ = self._elementwise[name]
        except KeyError:
            raise NotImplementedError(f"{self.name} has no elementwise {name!r}") from None
        return native(name_)(*args, **kwargs)

    # ---- linear algebra and FFTs ----------------------------------------------
    def linalg(self, name: str, *args: Any, **kwargs: Any) -> Any:
        """The linear-algebra function ``name`` (numpy's name and signature), native name
        from the op table (category ``linalg``)."""
        found = optable.OPS[name].natives.get(self.name) if name in optable.OPS else None
        if found is None:
            raise NotImplementedError(f"{self.name} has no linalg {name!r} here")
        return native(found)(*args, **kwargs)

    def svd(self, x: Any, full_matrices: bool = False, compute_uv: bool = True) -> Any:
        """numpy's ``svd``: ``(u, s, vh)``, or ``s`` alone without ``compute_uv``."""
        raise NotImplementedError(f"{self.name} svd")

    def fft(self, kind: str, x: Any, *args: Any, **kwargs: Any) -> Any:
        """numpy's ``numpy.fft.<kind>`` (same signature)."""
        raise NotImplementedError(f"torch.fft.{kind} on {self.name}")

    def nonzero(self, mask: Any) -> Any:
        """The (k, rank) int64 coordinates of the True elements of ``mask``."""
        raise NotImplementedError(f"{self.name} nonzero")

    def non_max_suppression(self, boxes: Any, scores: Any, iou_threshold: float) -> Any:
        """Greedy non-maximum suppression (torchvision's ``nms``): the int indices of the
        kept ``(n, 4)`` boxes ``(x1, y1, x2, y2)``, by decreasing score; a box is dropped
        when its IoU with a kept higher-scored box exceeds ``iou_threshold``. A loop over the
        boxes whose result size depends on the data: only a target with the native op
        has it."""
        raise NotImplementedError(
            f"non-maximum suppression on {self.name}: greedy suppression is a loop over the "
            "boxes with a data-dependent result size, which this target has no recordable "
            "op for (tensorflow has tf.image.non_max_suppression); translate to tensorflow"
        )

    def boolean_mask(self, x: Any, mask: Any) -> Any:
        """The elements of ``x`` where ``mask`` is True, flattened in order."""
        raise NotImplementedError(f"{self.name} boolean_mask")

    def index_update(self, x: Any, pos: Any, values: Any) -> Any:
        """A new 1-d array: ``x`` (1-d) with ``values`` written at positions ``pos`` (1-d
        integer, in range, as long as ``values``): the functional form of every indexed
        write (``x[key] = v`` once the key is turned into flat positions). Where a position
        repeats, one of its values is kept (torch leaves which one unspecified too)."""
        raise NotImplementedError(f"{self.name} index_update")

    def segment_reduce(self, kind: str, data: Any, ids: Any, num: int, dtype: str) -> Any:
        """``out[k] = reduce(data[i] for i with ids[i] == k)`` over the first axis of
        ``data`` (``kind``: sum, prod, max, min; ``dtype``: data's canonical dtype);
        segments nobody hits hold the reduction's identity. Here a one-hot (N, num) mask
        reduced along N: plain elementwise ops and a reduction that every target has and
        XLA fuses (jax's segment sums and ``.at[]`` cannot be recorded by name)."""
        import numpy as np

        hit = self.ew(
            "equal", self.expand_dims(ids, 1), self.expand_dims(self.arange(0, num, 1, "int32"), 0)
        )
        rank = len(data.shape)
        hit = self.reshape(hit, [*self.shape(hit), *([1] * (rank - 1))])  # (N, num, 1...)
        if kind == "sum":
            fill: Any = 0
        elif kind == "prod":
            fill = 1
        elif dtype == "bool":
            fill = kind == "min"
        elif dtype.startswith(("int", "uint")):
            info = np.iinfo(dtype)
            fill = int(info.min if kind == "max" else info.max)
        else:
            fill = -math.inf if kind == "max" else math.inf
        spread = self.where(hit, self.expand_dims(data, 1), self.asarray(fill, dtype))
        if dtype == "bool" and kind in ("sum", "max"):
            return self.reduce("any", spread, 0)
        if dtype == "bool":
            return self.reduce("all", spread, 0)
        return self.reduce(kind, spread, 0)

    # ---- the vocabulary every target implements ----------------------------------
    # creation
    def asarray(self, value: Any, dtype: str | None = None) -> Any:
        """An array of ``value`` (a Python number, nested lists, or an array), of the
        canonical ``dtype`` when given."""
        raise NotImplementedError(f"{self.name} asarray")

    def full(self, shape: Sequence[Any], value: Any, dtype: str) -> Any:
        """An array of ``shape`` (sizes may be tracked) filled with ``value``."""
        raise NotImplementedError(f"{self.name} full")

    def arange(self, start: Any, stop: Any, step: Any, dtype: str) -> Any:
        """``start, start + step, ...`` below ``stop``, of ``dtype``."""
        raise NotImplementedError(f"{self.name} arange")

    def cast(self, x: Any, dtype: str) -> Any:
        """``x`` converted to the canonical ``dtype``."""
        raise NotImplementedError(f"{self.name} cast")

    # manipulation
    def reshape(self, x: Any, shape: Sequence[Any]) -> Any:
        """``x`` with ``shape`` (one size may be -1)."""
        raise NotImplementedError(f"{self.name} reshape")

    def transpose(self, x: Any, perm: Sequence[int]) -> Any:
        """``x`` with its axes permuted: axis ``i`` of the result is axis ``perm[i]``."""
        raise NotImplementedError(f"{self.name} transpose")

    def expand_dims(self, x: Any, axis: int) -> Any:
        """``x`` with a new axis of size 1 at ``axis``."""
        raise NotImplementedError(f"{self.name} expand_dims")

    def squeeze(self, x: Any, axis: Any = None) -> Any:
        """``x`` without its size-1 axes ``axis`` (an axis or a tuple; all when None)."""
        raise NotImplementedError(f"{self.name} squeeze")

    def broadcast_to(self, x: Any, shape: Sequence[Any]) -> Any:
        """``x`` broadcast to ``shape``."""
        raise NotImplementedError(f"{self.name} broadcast_to")

    def concat(self, xs: Sequence[Any], axis: int) -> Any:
        """The arrays ``xs`` joined along ``axis``."""
        raise NotImplementedError(f"{self.name} concat")

    def stack(self, xs: Sequence[Any], axis: int) -> Any:
        """The arrays ``xs`` (one shape) stacked along a new ``axis``."""
        raise NotImplementedError(f"{self.name} stack")

    def split(self, x: Any, sizes: Sequence[Any], axis: int) -> list[Any]:
        """``x`` cut along ``axis`` into pieces of ``sizes`` (summing to its size there)."""
        raise NotImplementedError(f"{self.name} split")

    def take(self, x: Any, idx: Any, axis: int) -> Any:
        """``x`` indexed along ``axis`` by the integer array ``idx`` (numpy's ``take``)."""
        raise NotImplementedError(f"{self.name} take")

    def take_along_axis(self, x: Any, idx: Any, axis: int) -> Any:
        """``out[..., i, ...] = x[..., idx[..., i, ...], ...]`` along ``axis``
        (numpy's ``take_along_axis``, torch's ``gather``)."""
        raise NotImplementedError(f"{self.name} take_along_axis")

    def where(self, cond: Any, a: Any, b: Any) -> Any:
        """``a`` where ``cond`` holds, else ``b`` (broadcasting)."""
        raise NotImplementedError(f"{self.name} where")

    def getitem(self, x: Any, key: Any) -> Any:
        """``x[key]`` for a basic key: ints, slices, ``None``, ``Ellipsis``."""
        return x[key]

    def pad(
        self, x: Any, pads: Sequence[tuple[Any, Any]], mode: str = "constant", value: Any = 0
    ) -> Any:
        """``x`` padded by ``(before, after)`` per axis; ``mode``: constant (``value``),
        reflect, replicate or circular (torch's names)."""
        raise NotImplementedError(f"{self.name} pad")

    def tile(self, x: Any, reps: Sequence[Any]) -> Any:
        """``x`` repeated ``reps[i]`` times along each axis ``i``."""
        raise NotImplementedError(f"{self.name} tile")

    def flip(self, x: Any, axes: Sequence[int]) -> Any:
        """``x`` reversed along ``axes``."""
        raise NotImplementedError(f"{self.name} flip")

    def roll(self, x: Any, shift: Any, axis: Any) -> Any:
        """``x`` rotated by ``shift`` along ``axis`` (both may be tuples)."""
        raise NotImplementedError(f"{self.name} roll")

    def repeat(self, x: Any, repeats: Any, axis: int) -> Any:
        """Each element of ``x`` repeated ``repeats`` times along ``axis``."""
        raise NotImplementedError(f"{self.name} repeat")

    # scans, reductions, sorting
    def cumsum(self, x: Any, axis: int) -> Any:
        """The running sum of ``x`` along ``axis``."""
        raise NotImplementedError(f"{self.name} cumsum")

    def cumprod(self, x: Any, axis: int) -> Any:
        """The running product of ``x`` along ``axis``."""
        raise NotImplementedError(f"{self.name} cumprod")

    def reduce(self, kind: str, x: Any, axis: Any = None, keepdims: bool = False) -> Any:
        """``x`` reduced by ``kind`` (sum, mean, prod, max, min, any, all) over ``axis`` (an
        axis or a tuple; all axes when None)."""
        raise NotImplementedError(f"{self.name} reduce")

    def argmax(self, x: Any, axis: Any = None, keepdims: bool = False) -> Any:
        """The index of the largest element along ``axis`` (of the flattened ``x`` when
        None), int64 where the target has it."""
        raise NotImplementedError(f"{self.name} argmax")

    def argmin(self, x: Any, axis: Any = None, keepdims: bool = False) -> Any:
        """The index of the smallest element along ``axis`` (as :meth:`argmax`)."""
        raise NotImplementedError(f"{self.name} argmin")

    def sort(self, x: Any, axis: int, descending: bool = False) -> Any:
        """``x`` sorted along ``axis``."""
        raise NotImplementedError(f"{self.name} sort")

    def argsort(self, x: Any, axis: int, descending: bool = False) -> Any:
        """The stable sorting permutation of ``x`` along ``axis``."""
        raise NotImplementedError(f"{self.name} argsort")

    # linear algebra
    def matmul(self, a: Any, b: Any) -> Any:
        """numpy's ``matmul`` (1-d operands included)."""
        raise NotImplementedError(f"{self.name} matmul")

    def einsum(self, eq: str, *xs: Any) -> Any:
        """numpy's ``einsum(eq, *xs)``."""
        raise NotImplementedError(f"{self.name} einsum")

    # nn
    def channel_affine(self, x: Any, scale: Any, shift: Any) -> Any:
        """``x * scale + shift`` with per-channel vectors along axis 1 (NC... layout); either
        may be ``None``."""
        raise NotImplementedError(f"{self.name} channel_affine")

    def conv(
        self,
        x: Any,
        w: Any,
        stride: Sequence[int],
        pads: Sequence[tuple[int, int]],
        dilation: Sequence[int],
        groups: int,
        wshape: Sequence[int],
    ) -> Any:
        """N-d convolution in NC... layout, weights O I/groups ... (``wshape``, known when the
        rule runs), explicit padding pairs."""
        raise NotImplementedError(f"{self.name} conv")

    def pool(
        self,
        kind: str,
        x: Any,
        kernel: Sequence[int],
        stride: Sequence[int],
        pads: Sequence[tuple[int, int]],
        dilation: Sequence[int] = (),
    ) -> Any:
        """Max or sum pooling over the trailing spatial dims (NC... layout), padding with
        -inf (max) or 0 (sum)."""
        raise NotImplementedError(f"{self.name} pool")
