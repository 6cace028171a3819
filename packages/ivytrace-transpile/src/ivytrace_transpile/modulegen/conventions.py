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
  in training mode, and on tensorflow moves its running statistics as torch does;
- dropout (:func:`dropout_sites`): where the torch code drops out (an ``nn.Dropout``, an
  ``F.dropout`` call), the eval trace's identity was kept as a site (the dropout rule's
  ``where(True, x, p)``), written here as ``dropout(...)``: the identity out of training, in
  training torch's dropout drawn from the target's generator (tensorflow: a
  ``tf.random.Generator`` each layer holding a site owns, ``dropout_rng``: not a Keras
  variable, so that a layer's variables stay torch's weights, as a ``keras.random.
  SeedGenerator``'s state would not; jax: the ``rng`` key passed down, folded in per site and
  per call). Not covered: a dropout decided in Python before
  the trace (transformers' ``scaled_dot_product_attention(..., dropout_p=p if training else
  0.0)``, a ``torch.dropout`` not called in eval mode: the eval trace has nothing there), and
  the channel-wise and alpha dropouts (``dropout2d``, ``alpha_dropout``...), whose sites raise
  in training rather than train without them.
"""

from __future__ import annotations

import re
from typing import Any

__all__ = [
    "BN_TRAIN",
    "CHECK",
    "DROPOUT",
    "SHAPE_LIST",
    "batch_norm_training",
    "dropout_sites",
    "dynamic_sizes",
    "pass_rng",
    "pass_training",
    "root_call",
    "serving_signature",
    "takes_training",
    "undrawn",
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

_DROPOUT_DOC = """torch's dropout where the torch module drops out: ``x`` as it is unless
    ``training`` (and ``DROPOUT``); else each element zeroed with probability ``rate`` and
    the others multiplied by ``1 / (1 - rate)`` (in ``x``'s dtype, as torch computes it), the
    mask drawn from {source}.
    A negative ``rate`` marks a dropout this package cannot draw (a mask per channel, alpha
    dropout): training there raises."""

_DROPOUT_FLAG = '''DROPOUT = True
"""False: no dropout in training (as torch with every dropout's ``p`` set to 0)."""


'''

DROPOUT = {
    "tensorflow": _DROPOUT_FLAG
    + f'''def dropout(layer, x, rate, training):
    """{_DROPOUT_DOC.format(source="``layer.dropout_rng``, a ``tf.random.Generator``")}"""
    if not training or not DROPOUT:
        return x
    if rate < 0:
        raise NotImplementedError(UNDRAWN[int(-rate) - 1])
    if rate >= 1:
        return x * 0
    keep = layer.dropout_rng.uniform(tf.shape(x)) >= rate
    scale = tf.constant(1, x.dtype) / tf.constant(1 - rate, x.dtype)
    return x * (tf.cast(keep, x.dtype) * scale)
''',
    "jax": _DROPOUT_FLAG
    + f'''def dropout(x, rate, training, rng):
    """{_DROPOUT_DOC.format(source="the key ``rng``")}"""
    if not training or not DROPOUT:
        return x
    if rate < 0:
        raise NotImplementedError(UNDRAWN[int(-rate) - 1])
    if rng is None:
        raise ValueError(
            "training=True drops out as torch does: pass rng=jax.random.key(seed), a new key "
            "each step (or set DROPOUT = False in this module to train without dropout)"
        )
    if rate >= 1:
        return x * 0
    keep = jax.random.bernoulli(rng, 1 - rate, x.shape)
    scale = jnp.asarray(1, x.dtype) / jnp.asarray(1 - rate, x.dtype)
    return x * (keep.astype(x.dtype) * scale)


def rng_for(rng, *place):
    """The key of one user of ``rng`` (a dropout site, a call passing it on): ``rng`` folded
    with its place in the code (and a loop's index), so that no two draw alike."""
    if rng is None:
        return None
    for k in place:
        rng = jax.random.fold_in(rng, k)
    return rng
''',
}
"""The written ``dropout`` helper (jax: and ``rng_for``) by target, after ``DROPOUT``."""

# the dropout rule's site: tensorflow's where(True, x, rate, name='dropout_<line>'), jax's
# where(<line>, x, rate) (a non-zero condition)
_SITE = {
    "tensorflow": re.compile(
        r"^(\s*)(\w+) = tf\.where\(True, (\w+), (-?[\d.e+-]+), name='dropout_\d+'\)$", re.M
    ),
    "jax": re.compile(r"^(\s*)(\w+) = jnp\.where\([1-9]\d*, (\w+), (-?[\d.e+-]+)\)$", re.M),
}


def dropout_sites(body: str, target: str) -> tuple[str, int]:
    """``body`` with each dropout site written as a call of ``dropout`` (tensorflow: with the
    layer's generator; jax: with ``rng`` folded with the site's number); the number of
    sites."""
    pat = _SITE.get(target)
    if pat is None:
        return body, 0
    count = 0

    def site(m: re.Match[str]) -> str:
        nonlocal count
        indent, out, x, rate = m.groups()
        if target == "tensorflow":
            call = f"dropout(self, {x}, {rate}, training)"
        else:
            call = f"dropout({x}, {rate}, training, rng_for(rng, {count}))"
        count += 1
        return f"{indent}{out} = {call}"

    return pat.sub(site, body), count


def undrawn(kinds: tuple[str, ...]) -> str:
    """The ``UNDRAWN`` messages the ``dropout`` helper raises with at a site it cannot draw
    (the dropout rule's ``-(1 + k)``: the k-th of ``kinds``)."""
    lines = [f'    "training through {k}: not written yet",' for k in kinds]
    return "\n".join(["UNDRAWN = (  # the dropouts a negative rate marks", *lines, ")", ""])


def takes_training(head: str) -> str:
    """tensorflow: a layer's ``call`` line taking ``training`` (Keras passes the outer call's
    down to a layer whose ``call`` takes it)."""
    if re.search(r"\btraining\b", head):
        return head
    return head[: head.rindex(")")] + ", training=False):"


def pass_rng(head: str) -> str:
    """jax: a function's first line taking ``rng`` (keyword-only, after ``training``)."""
    sig = head[head.index("(") + 1 : head.rindex(")")]
    if re.search(r"\brng\b", sig):
        return head
    sep = ", " if "*" in sig.split(", ") else ", *, "
    return f"{head[: head.rindex(')')]}{sep}rng=None):"


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


def root_call(body: str, keras: bool, dtypes: dict[str, str], rng: bool) -> str:
    """The root's forward ``body`` (its first line ``def name(self or params, ...):``)
    taking its inputs as the target's users pass them, and ``training``. ``dtypes``: each
    array input's dtype, by name; ``rng``: whether it takes ``rng`` (jax: the key its
    dropout sites draw from in training)."""
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
    params = [*lead, *pos, "*", *kw, "training=False", *(["rng=None"] * rng)]
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
