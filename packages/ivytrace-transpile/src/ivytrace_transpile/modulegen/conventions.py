"""The target's conventions in the written code (issue 20), as rewrites of a forward's text:

- tensorflow sizes (:func:`dynamic_sizes`): a size is read with :data:`SHAPE_LIST`
  (Python ints where the graph knows them, ``tf.shape`` where it does not), so the layers
  run on ``keras.Input`` with ``None`` sizes and under a ``tf.function`` with a ``None``
  input signature; a decision on a size then checks when the graph runs (:data:`CHECK`)
  where the size is unknown when it is traced;
- the root's call (:func:`root_call`): keras takes its inputs as Keras does (``fit``,
  a functional model: one positional ``inputs``, a dict by name or the first input's
  array), and non-array inputs default to the value they were translated with; the root
  takes ``training``;
- training (:func:`batch_norm_training`): a torch ``BatchNorm`` uses the batch's statistics
  in training mode, and on tensorflow moves its running statistics as torch does.
"""

from __future__ import annotations

import re
from typing import Any

__all__ = [
    "BN_TRAIN",
    "CHECK",
    "SHAPE_LIST",
    "batch_norm_training",
    "drops_out",
    "dynamic_sizes",
    "pass_training",
    "root_call",
    "serving_signature",
]

SHAPE_LIST = '''def shape_list(x):
    """The sizes of ``x``: Python ints where the graph knows them, else read with
    ``tf.shape`` (a ``keras.Input`` or a ``tf.function`` signature with ``None`` sizes)."""
    static = x.shape.as_list()
    if None not in static:
        return static
    dynamic = tf.shape(x, out_type=tf.int64)  # torch sizes are int64
    return [dynamic[i] if s is None else s for i, s in enumerate(static)]
'''

CHECK = '''def check(holds, message):
    """Raise where a decision the translation took does not hold; a decision on a size the
    graph knows only when it runs is checked then."""
    if tf.is_tensor(holds):
        tf.debugging.assert_equal(holds, True, message=message)
    elif not holds:
        raise ValueError(message)
'''

BN_TRAIN = {
    "tensorflow": '''def batch_norm_train(layer, x, axis, momentum, eps):
    """torch's BatchNorm in training mode: ``x`` normalised by the batch's statistics over
    every axis but ``axis`` (the channels); the running statistics move by ``momentum``."""
    rank = len(x.shape)
    axis %= rank
    mean, var = tf.nn.moments(x, [a for a in range(rank) if a != axis], keepdims=True)
    n = tf.cast(tf.size(x) // tf.shape(x)[axis], x.dtype)
    for stat, new in ((layer.running_mean, mean), (layer.running_var, var * n / (n - 1))):
        stat.assign((1 - momentum) * stat + momentum * tf.reshape(new, [-1]))
    shape = [-1 if a == axis else 1 for a in range(rank)]
    y = (x - mean) * tf.math.rsqrt(var + eps)
    if getattr(layer, "weight", None) is not None:
        y = y * tf.reshape(layer.weight, shape) + tf.reshape(layer.bias, shape)
    return y
''',
    "jax": '''def batch_norm_train(params, x, axis, eps):
    """torch's BatchNorm in training mode: ``x`` normalised by the batch's statistics over
    every axis but ``axis`` (the channels). A pure function: the running statistics in
    ``params`` stay as they are."""
    axis %= x.ndim
    axes = tuple(a for a in range(x.ndim) if a != axis)
    mean = jnp.mean(x, axes, keepdims=True)
    var = jnp.var(x, axes, keepdims=True)
    shape = [-1 if a == axis else 1 for a in range(x.ndim)]
    y = (x - mean) * lax.rsqrt(var + eps)
    if "weight" in params:
        y = y * params["weight"].reshape(shape) + params["bias"].reshape(shape)
    return y
''',
}

_SHAPE_READ = re.compile(r"^(\s*)([\w, ]+) = ([\w.\[\]'\"]+)\.shape$", re.M)
_GUARD = re.compile(r"^(\s*)if (\w+) != (.+?): raise ValueError\((.*)\)$", re.M)


def dynamic_sizes(body: str) -> tuple[str, list[str]]:
    """tensorflow: ``body`` with each size read by ``shape_list`` and each guard on a
    comparison as a ``check``; the helpers it now needs."""
    new = _SHAPE_READ.sub(lambda m: f"{m[1]}{m[2]} = shape_list({m[3]})", body)
    if new == body:
        return body, []
    new = _GUARD.sub(lambda m: f"{m[1]}check({m[2]} == {m[3]}, {m[4]})", new)
    return new, ["shape_list", "check"] if "check(" in new else ["shape_list"]


def _split_params(sig: str) -> tuple[list[str], list[str]]:
    """A parameter list as written -> (positional, keyword-only)."""
    parts = [p.strip() for p in sig.split(",") if p.strip()]
    pos: list[str] = []
    kw: list[str] = []
    seen_star = False
    for p in parts:
        if p == "/":
            continue
        if p == "*":
            seen_star = True
            continue
        (kw if seen_star else pos).append(p)
    return pos, kw


def root_call(body: str, keras: bool, dtypes: dict[str, str], dropout: bool) -> str:
    """The root's forward ``body`` (its first line ``def name(self or params, ...):``)
    taking its inputs as the target's users pass them, and ``training``. ``dtypes``: each
    array input's dtype, by name; ``dropout``: whether the torch model drops out in
    training (said in a comment: the eval graph it was translated from has no dropout)."""
    head, _, rest = body.partition("\n")
    open_at = head.index("(")
    pos, kw = _split_params(head[open_at + 1 : head.rindex(")")])
    lead = [p for p in pos[:1] if p in ("self", "params")]
    pos = pos[len(lead) :]
    statics = dict(re.findall(r"if (\w+) != (.+?): raise ValueError\('\1 must be", rest))
    kw = [f"{p}={statics[p]}" if p in statics else p for p in kw]
    lines = []
    arrays = [p for p in kw if "=" not in p]
    if keras and arrays and not pos:  # Keras (fit, a functional model) passes one positional
        kw = [p if "=" in p else f"{p}=None" for p in kw]
        pos = ["inputs=None"]
        lines = [
            "    if isinstance(inputs, dict):  # Keras: the inputs by name",
            *(f"        {a} = inputs.get({a!r}, {a})" for a in arrays),
            "    elif inputs is not None:  # Keras: one array, the first input",
            f"        {arrays[0]} = {_as_traced('inputs', dtypes.get(arrays[0], ''))}",
        ]
    if dropout:
        lines.append(
            "    # training: BatchNorm on the batch's statistics; torch's dropout is not "
            "written (the translation is of torch's eval graph)"
        )
    params = [*lead, *pos, "*", *kw, "training=False"]
    head = f"{head[: open_at + 1]}{', '.join(params)}):"
    doc, code = _split_doc(rest)
    return "\n".join([head, *doc, *lines, *code])


def serving_signature(specs: dict[str, tuple[str, int]]) -> str:
    """tensorflow: the root's default serving signature (``tf.saved_model.save`` traces
    it for a Keras model it saves): the array inputs by name, every size ``None``
    (``specs``: name -> (dtype, rank)); Keras's own would pass one float32 array."""
    items = ", ".join(
        f"{n!r}: tf.TensorSpec({[None] * rank!r}, tf.{dtype})" for n, (dtype, rank) in specs.items()
    )
    return "\n".join(
        [
            "",
            "@property",
            "def _default_save_signature(self):  # tf.saved_model: the inputs by name",
            f"    @tf.function(input_signature=[{{{items}}}])",
            "    def serving_default(inputs):",
            "        return self(inputs)",
            "",
            "    return serving_default",
        ]
    )


def _as_traced(name: str, dtype: str) -> str:
    """tensorflow: ``name`` in the integer dtype it was translated with (Keras traces a
    model's default serving signature with float32 inputs); as it is for another dtype."""
    if re.fullmatch(r"u?int\d+", dtype):
        return f"tf.cast({name}, tf.{dtype})"
    return name


def _split_doc(rest: str) -> tuple[list[str], list[str]]:
    """A function's body lines -> (its docstring's lines, the others)."""
    lines = rest.split("\n")
    if lines and lines[0].strip().startswith(('"""', "'''")):
        quote = lines[0].strip()[:3]
        end = 0
        if lines[0].strip().count(quote) < 2:
            end = next(i for i in range(1, len(lines)) if quote in lines[i])
        return lines[: end + 1], lines[end + 1 :]
    return [], lines


def drops_out(root: Any) -> bool:
    """Whether a torch model has a ``Dropout`` layer that drops in training."""
    return any(
        type(m).__module__.startswith("torch.nn.modules.dropout") and getattr(m, "p", 0) > 0
        for m in root.modules()
    )


def is_batch_norm(module: Any) -> bool:
    """A torch ``BatchNorm`` that keeps running statistics (its eval graph reads them)."""
    cls = type(module)
    return (
        cls.__module__.startswith("torch.nn.modules.batchnorm")
        and cls.__name__.startswith("BatchNorm")
        and bool(getattr(module, "track_running_stats", False))
    )


def batch_norm_training(module: Any, body: str, keras: bool) -> str | None:
    """``body``, a torch BatchNorm's eval forward, with a training branch (batch
    statistics); None where ``module`` is no BatchNorm it is written for."""
    if not is_batch_norm(module) or module.momentum is None or not body:
        return None
    # the channels: last where the eval graph broadcasts the (C,) statistics as they are
    # (the layout pass made the input channels-last), else torch's axis 1
    axis = 1 if re.search(r"reshape|expand_dims|None\]", body) else -1
    head, _, rest = body.partition("\n")
    doc, code = _split_doc(rest)
    indent = "    "
    if keras:
        head = head[: head.rindex(")")] + ", training=False):"
        call = f"batch_norm_train(self, input, {axis}, {module.momentum!r}, {module.eps!r})"
    else:
        sig = head[head.index("(") + 1 : head.rindex(")")]
        sep = ", " if "*" in sig.split(", ") else ", *, "
        head = f"{head[: head.rindex(')')]}{sep}training=False):"
        call = f"batch_norm_train(params, input, {axis}, {module.eps!r})"
    if not re.search(r"\binput\b", head):
        return None
    branch = [
        f"{indent}if training:  # the batch's statistics, as torch in train mode",
        f"{indent}    return {call}",
    ]
    return "\n".join([head, *doc, *branch, *code])


def pass_training(head: str) -> str:
    """jax: a function's first line taking ``training`` (keyword-only) to pass on."""
    sig = head[head.index("(") + 1 : head.rindex(")")]
    if re.search(r"\btraining\b", sig):
        return head
    sep = ", " if "*" in sig.split(", ") else ", *, "
    return f"{head[: head.rindex(')')]}{sep}training=False):"
