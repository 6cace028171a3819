"""A translation called again and again runs compiled: ``jax.jit`` or ``tf.function``.

The translated object calls its generated function eagerly: every op dispatched on its
own, as the target's eager mode does. That is the right first answer (nothing to compile,
errors named by node), but it is not what a user of the target gets from code written
by hand, which they call under ``jax.jit`` or as a ``tf.function``. Measured on BERT-base
(random weights, 1x128), the same translation runs at 1.07x torch eager's time eagerly on
jax and 0.79x under ``jax.jit``; on tensorflow 1.25x eagerly and 0.86x as a
``tf.function``. The written package compiles (its Keras ``call`` is a ``tf.function``;
jax users jit its ``forward``), so the object ran slower than its own package.

:class:`WarmCall` closes that gap for one specialisation: its calls run eagerly until one
set of input shapes has been seen :attr:`Target.eager_calls
<ivytrace_transpile.targets.base.Target.eager_calls>` times, after which calls at those
shapes go through the target's compiler (:meth:`Target.compile_call
<ivytrace_transpile.targets.base.Target.compile_call>`). On TensorFlow (2 eager calls) a
call that is made once or twice (a test, a new length) never pays for a compile; jax's
eager dispatch compiles every primitive at each new shape, dearer than one compile of the
whole call, so there it is 0: compiled from the first call, as under ``jax.jit``. A loop
pays once per shape.

What is compiled is the same generated function, so the answer is the same graph's (the
target's compiler may fuse and reorder, within the validation's tolerance). It is used
only where compiling cannot change what the call means:

- every input array is the target's own and every output of the graph is an array
  (a Python number handed back stays a number, not a 0-d array);
- a guard that fails while the compiler traces raises :class:`GuardFailure` as the eager
  call would (guards on sizes read static shapes under both compilers);
- any other error while compiled (code that needs a value, ``bool()`` of a mask sum in
  transformers' attention; an output the compiler cannot hand back) turns compiling off
  for this specialisation for good, and the call is answered eagerly, which is what
  reports errors. Nothing is compiled twice to find that out.

State: per object, per specialisation; the counts of input shapes seen are capped at
:data:`_MAX_SHAPES` (then cleared), so a stream of new lengths does not grow memory.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from ivytrace_ir import (
    GuardFailure,
    TensorSpec,
    Value,
    flatten,
    framework_of,
    iter_arg_leaves,
    unflatten,
)

__all__ = ["WarmCall"]

_MAX_SHAPES = 64
"""Input shape sets counted at once (then the counts start again)."""


class WarmCall:
    """One specialisation's function (``compiled.fn``: ``(weights, *args, **kwargs)``),
    called eagerly at first and compiled once its inputs' shapes repeat (see the module)."""

    __slots__ = ("_compiled", "_fn", "_off", "_seen", "_target")

    def __init__(self, target: Any, fn: Callable[..., Any], outputs: Any) -> None:
        self._target = target
        self._fn = fn
        self._off = not target.compiles or not _all_arrays(outputs)
        self._seen: dict[tuple[Any, ...], int] = {}
        # by input structure: the compiled call and its output structure
        self._compiled: dict[str, tuple[Callable[..., Any], list[Any]]] = {}

    @property
    def compiling(self) -> bool:
        """Whether calls may still be compiled (False once a compiled call failed)."""
        return not self._off

    def __call__(self, weights: Any, args: tuple[Any, ...], kwargs: Mapping[str, Any]) -> Any:
        if self._off:
            return self._fn(weights, *args, **kwargs)
        leaves, tree = flatten((args, dict(kwargs)), _is_any_array)
        if not all(self._target.is_array(x) for x in leaves):
            return self._fn(weights, *args, **kwargs)
        shape_key = (repr(tree), *((tuple(x.shape), str(x.dtype)) for x in leaves))
        seen = self._seen.get(shape_key, 0)
        if seen < self._target.eager_calls:
            if len(self._seen) >= _MAX_SHAPES:
                self._seen.clear()
            self._seen[shape_key] = seen + 1
            return self._fn(weights, *args, **kwargs)
        found = self._compiled.get(shape_key[0])
        if found is None:
            found = self._compiled[shape_key[0]] = self._compile(tree)
        run, out_tree = found
        try:
            out_leaves = run(_per_call_weights(self._fn, weights), leaves)
        except GuardFailure:
            raise
        except Exception:  # needs a value, or hands back what the compiler cannot: eager
            self._off = True
            self._compiled.clear()
            return self._fn(weights, *args, **kwargs)
        return unflatten(out_tree[0], list(out_leaves))

    def _compile(self, tree: Any) -> tuple[Callable[..., Any], list[Any]]:
        """The compiled call for inputs of structure ``tree``, taking the weights and the
        input arrays and returning the output arrays, and a box holding the structure
        they are handed back in (a model output class, set when the compiler traces:
        one input structure, one output structure)."""
        fn = self._fn
        out_tree: list[Any] = [None]

        def run(weights: Any, leaves: list[Any]) -> list[Any]:
            args, kwargs = unflatten(tree, list(leaves))
            out_leaves, out_tree[0] = flatten(fn(weights, *args, **kwargs), _is_any_array)
            return out_leaves

        run.__name__ = getattr(fn, "__name__", "forward")
        return self._target.compile_call(run), out_tree


def _is_any_array(x: Any) -> bool:
    return framework_of(x) is not None


def _all_arrays(outputs: Any) -> bool:
    """Whether every output of the graph is an array (a constant or a number is not)."""
    leaves = list(iter_arg_leaves(outputs))
    return bool(leaves) and all(
        isinstance(v, Value) and isinstance(v.spec, TensorSpec) for v in leaves
    )


def _per_call_weights(fn: Any, weights: Any) -> Any:
    """What ``fn`` reads its weights from: a :class:`~.folding.FoldedCall` called with its
    own weights takes its dict with the folded arrays in it (handed to the compiler as
    arguments, so that the folding is not traced into every call)."""
    own = getattr(fn, "own", None)
    return fn.weights if own is not None and weights is own else weights
