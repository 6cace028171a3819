"""One class (tensorflow) or function (jax, numpy) per torch module class.

:func:`render_modules` writes a translated module as source that keeps the torch model's
shape: each module's code is emitted from its own part of the trace (``structure.py``)
by the one standalone emitter (``ivytrace_compile.standalone``), and calls its child
layers (``self.fc1(x)``) or functions (``linear(params["fc1"], x)``) where forward did.

- tensorflow: a ``keras.layers.Layer`` subclass per module class. Its constructor makes
  its own weights (``add_weight``, named by the torch attribute, in the target's layout)
  and its child layers under the torch attribute names (a container's children as a
  list); ``call`` is the module's forward.
- jax and numpy: a pure function per module class, ``name(params, *inputs)``, where
  ``params`` is the module's part of a nested dict keyed by the torch attribute names:
  the weights of ``state_dict`` key ``"encoder.layer.0.attention.query.weight"`` are at
  ``params["encoder"]["layer"]["0"]["attention"]["query"]["weight"]``. Plain functions
  of a pytree rather than Flax NNX objects: ``jax.jit``, ``jax.grad`` and
  ``NamedSharding`` take the params as they are, nothing is mutable, and the package
  needs jax alone (the params are what a Flax ``apply`` would be handed).

Instances of one torch class whose code or weight shapes differ (a conv with stride 2
beside one with stride 1) become numbered variants (``Conv2d``, ``Conv2d_v1``; jax and
numpy ``conv2d``, ``conv2d_1``): each class
is written for the instances it serves, with the literals they share.

The modules: ``job`` (what :func:`render_modules` takes and gives), ``writer`` (the walk
of the module calls, each call's forward written from its part of the trace), ``weights``
(the weights a class makes and the constructor parameters their shapes are written with),
``templates`` (a class's text with its numbers taken out, and the loops over alike layers),
``emit`` (instances grouped into classes or functions and their text), ``naming``.
"""

from __future__ import annotations

from ..structure import hoist_layout_moves, module_calls
from .emit import choose_classes
from .job import ModuleJob, ModuleSource
from .naming import snake_case
from .writer import Writer

__all__ = ["ModuleJob", "ModuleSource", "render_modules", "snake_case"]


def render_modules(job: ModuleJob) -> ModuleSource:
    """The classes (tensorflow) or functions (jax, numpy) for the translated module of
    ``job``."""
    w = Writer(job)
    top = module_calls(job.graph, job.root)
    hoist_layout_moves(job.graph, top)
    name = w.write(top, None)
    name = choose_classes(w)
    if w.keras:  # every class serialisable (.keras files); Keras records their arguments
        names = ", ".join(n for n, t in w.texts.items() if t)
        w.texts["__register__"] = (
            f"for cls in ({names}{',' if ', ' not in names else ''}):\n"
            "    keras.saving.register_keras_serializable(__name__)(cls)\n"
        )
    ints = [k for k, a in job.arrays.items() if a.dtype.kind in "biu"]
    if ints and not w.keras:  # integer buffers: read from BUFFERS, not params (load_params)
        make = "jnp.asarray" if job.target == "jax" else "np.asarray"
        w.helpers["BUFFERS"] = (
            "BUFFERS = {  # integer buffers (no parameters): by torch key\n"
            f"    k: {make}(v) for k, v in load_file(WEIGHTS).items() if k in {tuple(ints)!r}\n"
            "}\n"
        )
    texts = {n: t for n, t in w.texts.items() if t}
    outputs = {i.group.name: i.outputs for i in w.instances if i.group is not None}
    return ModuleSource(
        name,
        "\n\n".join(texts.values()),
        tuple(w.imports),
        dict(w.constants),
        dict(w.helpers),
        dict(w.names.renamed),
        texts,
        outputs,
    )
