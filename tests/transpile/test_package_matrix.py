"""Issue 20's matrix: the written packages of ResNet, BERT, GPT-2 and ViT (model_zoo's
small configs) on tensorflow and jax, used as a TensorFlow / JAX engineer would use them,
in a process where torch cannot be imported.

One child process per (model, target) runs every check of that pair (startup and imports
are the expensive part); the parent translates, computes torch's answers and compares.
Checks (what test_outputs.py already covers, new batch sizes and target gradients on the
zoo's eval graphs and a checkpoint of a small conv net, is not repeated here):

- ``new_inputs``: another batch size and length (text: an all-ones mask);
- ``padded_mask`` (text models): a mask with zeros at the ends of rows;
- ``batch_1`` and ``length_1`` (length for the text models only);
- tensorflow: ``none_inputs`` (a functional ``keras.Model`` on ``keras.Input`` with
  ``None`` sizes), ``saved_model`` (a ``tf.function`` serving signature with ``None``
  sizes, saved and loaded back), ``fit`` (one Keras ``fit`` step moves the weights),
  ``keras_round_trip`` (``.keras`` save and ``load_model``);
- jax: ``jit_grad``: ``jax.jit(jax.grad(loss))`` over the whole ``load_params()`` pytree;
- ``training_arg``: the root's ``call`` (tensorflow) / ``forward`` (jax) takes ``training``
  (issue 20: ``call(..., training=False)``; Keras drops a ``training=`` its ``call`` does not
  take without a word);
- ``train_step``: one SGD step in the target, called with ``training=True`` where it takes
  it and the package's ``DROPOUT = False``, equals torch's step in train mode with every
  dropout off (batch norm on batch statistics): the output after the step, on the same
  inputs;
- ``convert``: ``convert.from_torch`` on a full torch checkpoint (every ``state_dict`` key,
  another seed) and the package on it computes that checkpoint's model.

A check that fails today is ``xfail(strict=True)`` with its cause, so a fix shows as a pass.
"""

from __future__ import annotations

import copy
import inspect
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest
import torch
from transpile_support import sibling_module

import ivytrace as ivy

MODELS = ("resnet", "bert", "gpt2", "vit")
TEXT = ("bert", "gpt2")
COMMON = ("new_inputs", "batch_1", "training_arg", "train_step", "convert")
ONLY = {
    "tensorflow": ("none_inputs", "saved_model", "fit", "keras_round_trip"),
    "jax": ("jit_grad",),
}


def checks(model: str, target: str) -> tuple[str, ...]:
    text = ("padded_mask", "length_1") if model in TEXT else ()
    return COMMON + text + ONLY[target]


def _inputs(model: str):
    """(build, inputs(batch, length), output field); GPT-2 takes a mask here too."""
    zoo = sibling_module("model_zoo")
    build, inputs, field = zoo.MODELS[model]
    if model == "gpt2":
        return build, lambda b, s: {**zoo.text(b, s), "use_cache": False}, field
    return build, inputs, field


def _padded(x: dict) -> dict:
    mask = x["attention_mask"].clone()
    mask[0, -4:] = 0
    mask[1, -1:] = 0
    return {**x, "attention_mask": mask}


def _train_copy(model: torch.nn.Module) -> torch.nn.Module:
    """``model`` in train mode with every dropout off (batch norm on batch statistics)."""
    net = copy.deepcopy(model).train()
    for m in net.modules():
        if isinstance(m, torch.nn.Dropout):
            m.p = 0.0
        for attr in ("dropout", "attention_dropout", "dropout_prob"):
            if isinstance(getattr(m, attr, None), float):
                setattr(m, attr, 0.0)
    return net


_LR = 1e-2

_CHILD = inspect.getsource(sibling_module("test_outputs")._open_package) + textwrap.dedent(
    """
    import inspect, json, sys, traceback
    from importlib import import_module
    sys.modules["torch"] = None  # importing torch now raises ImportError
    import numpy as np
    out_dir, target, name, field, spec = sys.argv[1:6]
    spec = json.loads(spec)
    statics, shapes = spec["statics"], spec["shapes"]
    sys.path.insert(0, out_dir)
    pkg = __import__(name)
    if target == "tensorflow":
        import keras
        import tensorflow as tf
    else:
        import jax
        import jax.numpy as jnp

    def pick(y):
        return y[field] if isinstance(y, dict) else y

    def make(weights=None):  # the Keras model the package is named after
        cls = getattr(pkg, pkg.__doc__.split()[0])
        return cls() if weights is None else cls(weights=weights)

    def plain(kw, w, weights=None):
        state, _, call = _open_package(pkg, target, weights)
        return pick(call(state, **kw, **statics))

    def none_inputs(kw, w):
        layer = make()
        ins = {k: keras.Input(shape=tuple(shapes[k][1:]), dtype=str(v.dtype), name=k) for k, v in kw.items()}
        model = keras.Model(ins, pick(layer(**ins, **statics)))
        return model({k: tf.constant(v) for k, v in kw.items()})

    def saved_model(kw, w):
        layer, keys = make(), sorted(kw)
        specs = [tf.TensorSpec(shapes[k], tf.as_dtype(kw[k].dtype), name=k) for k in keys]

        @tf.function(input_signature=specs)
        def serve(*args):
            return {"out": pick(layer(**dict(zip(keys, args)), **statics))}

        holder = tf.Module()
        holder.layer = layer
        tf.saved_model.save(holder, f"{out_dir}/saved", signatures={"serving_default": serve})
        loaded = tf.saved_model.load(f"{out_dir}/saved")
        return loaded.signatures["serving_default"](**{k: tf.constant(v) for k, v in kw.items()})["out"]

    def fit(kw, w):
        layer = make()
        layer.compile(optimizer=keras.optimizers.SGD(0.01), loss={field: "mse"})
        before = [np.asarray(v) for v in layer.trainable_variables]
        batch = len(next(iter(kw.values())))
        layer.fit(kw, {field: np.zeros(w.shape, "float32")}, batch_size=batch, epochs=1, verbose=0)
        after = [np.asarray(v) for v in layer.trainable_variables]
        assert any(not np.array_equal(a, b) for a, b in zip(after, before)), "fit moved no weight"
        return None

    def keras_round_trip(kw, w):
        layer = make()
        tkw = {k: tf.constant(v) for k, v in kw.items()}
        before = np.asarray(pick(layer(**tkw, **statics)))
        layer.save(f"{out_dir}/{name}.keras")
        loaded = keras.models.load_model(f"{out_dir}/{name}.keras")
        after = np.asarray(pick(loaded(**tkw, **statics)))
        assert np.allclose(after, before, rtol=0, atol=1e-6), float(np.max(np.abs(after - before)))
        return after

    def jit_grad(kw, w):
        params = pkg.load_params()

        def loss(p):
            return jnp.sum(pick(pkg.forward(p, **kw, **statics)) * w)

        grads = jax.jit(jax.grad(loss))(params)
        leaves = jax.tree_util.tree_leaves(grads)
        assert leaves and all(bool(jnp.all(jnp.isfinite(g))) for g in leaves)
        return None

    def takes_training():
        fn = make().call if target == "tensorflow" else pkg.forward
        return "training" in inspect.signature(fn).parameters

    def training_arg(kw, w):
        where = "call" if target == "tensorflow" else "forward"
        assert takes_training(), f"the root's {where}() takes no training argument"
        return None

    def train_step(kw, w):
        lr = spec["lr"]
        mode = {"training": True} if takes_training() else {}
        written = import_module(f"{name}.model")
        if hasattr(written, "DROPOUT"):  # trains with batch statistics, without dropout
            written.DROPOUT = False
        if target == "tensorflow":
            layer = make()
            tkw = {k: tf.constant(v) for k, v in kw.items()}
            with tf.GradientTape() as tape:
                loss = tf.reduce_sum(pick(layer(**tkw, **statics, **mode)) * w)
            grads = tape.gradient(loss, layer.trainable_variables)
            pairs = [(g, v) for g, v in zip(grads, layer.trainable_variables) if g is not None]
            keras.optimizers.SGD(lr).apply_gradients(pairs)
            return pick(layer(**tkw, **statics, **mode))
        params = pkg.load_params()
        leaves, tree = jax.tree_util.tree_flatten(params)
        floats = [i for i, v in enumerate(leaves) if jnp.issubdtype(jnp.asarray(v).dtype, jnp.floating)]

        def run(values):
            new = list(leaves)
            for i, v in zip(floats, values):
                new[i] = v
            return pick(pkg.forward(jax.tree_util.tree_unflatten(tree, new), **kw, **statics, **mode))

        values = [leaves[i] for i in floats]
        grads = jax.grad(lambda vs: jnp.sum(run(vs) * w))(values)
        return run([v - lr * g for v, g in zip(values, grads)])

    def convert(kw, w):
        mine = f"{out_dir}/mine.safetensors"
        import_module(f"{name}.convert").from_torch(f"{out_dir}/torch_checkpoint.safetensors", mine)
        return plain(kw, w, mine)

    results = {}
    for check in spec["checks"]:
        saved = np.load(f"{out_dir}/{check}.in.npz")
        kw = {k: saved[k] for k in saved.files if k != "weight"}
        w = saved["weight"] if "weight" in saved.files else None
        fn = globals().get(check, plain)
        try:
            y = fn(kw, w)
            if y is not None:
                np.save(f"{out_dir}/{check}.out.npy", np.asarray(y))
            results[check] = None
        except Exception as e:  # reported per check, the others go on
            tb = traceback.extract_tb(e.__traceback__)[-1]
            results[check] = f"{type(e).__name__}: {str(e)[:400]} (at {tb.name}, {tb.filename.rsplit('/', 1)[-1]}:{tb.lineno})"
    loaded = sorted(m for m, mod in sys.modules.items() if mod is not None and m.split(".")[0] in ("torch", "ivytrace"))
    print(json.dumps({"results": results, "loaded": loaded}))
    """
)


def _numpy(x: dict) -> dict:
    return {k: v.numpy() for k, v in x.items() if isinstance(v, torch.Tensor)}


def run_matrix(model: str, target: str, out: Path, names: tuple[str, ...]) -> dict:
    """Translate ``model`` to ``target`` (batch 2, length 7), run the checks ``names`` on
    the written package in one torch-less child; check -> (error or None, got, want, tol)."""
    from safetensors.torch import save_file

    build, inputs, field = _inputs(model)
    torch.manual_seed(0)
    net = build().eval()
    pkg = ivy.transpile(net, target=target, kwargs=inputs(2, 7)).save(out, name=f"{model}_{target}")
    statics = {k: v for k, v in inputs(2, 7).items() if not isinstance(v, torch.Tensor)}
    torch.manual_seed(1)
    cases = {
        "new_inputs": inputs(3, 11),
        "padded_mask": _padded(inputs(3, 11)) if model in TEXT else None,
        "batch_1": inputs(1, 9),
        "length_1": inputs(2, 1),
    }
    want: dict[str, np.ndarray | None] = {}
    tol: dict[str, float] = {}
    for name in names:
        x = cases.get(name) or cases["new_inputs"]
        with torch.no_grad():
            ref = net(**x)[field].numpy()
        arrays = _numpy(x)
        weight = np.random.default_rng(2).standard_normal(ref.shape).astype("float32")
        if name == "train_step":
            train = _train_copy(net)
            a, b = train(**x)[field], train(**x)[field]
            assert torch.equal(a, b)  # deterministic: dropout is off
            (a * torch.from_numpy(weight)).sum().backward()
            torch.optim.SGD(train.parameters(), lr=_LR).step()
            with torch.no_grad():
                ref = train(**x)[field].numpy()
        if name == "convert":
            torch.manual_seed(5)  # another model of the same class: other weights
            other = build().eval()
            state = {k: v.detach().clone().contiguous() for k, v in other.state_dict().items()}
            save_file(state, str(out / "torch_checkpoint.safetensors"))
            with torch.no_grad():
                ref = other(**x)[field].numpy()
        if name in ("fit", "jit_grad", "train_step"):
            arrays["weight"] = weight
        np.savez(out / f"{name}.in.npz", **arrays)
        want[name] = None if name in ("fit", "jit_grad", "training_arg") else ref
        tol[name] = 1e-4 * max(1.0, float(np.max(np.abs(ref))))
    x = cases["new_inputs"]
    shapes = {  # Keras / signature shapes: every size None but an image's channels, and
        # ViT's image size (the model takes one)
        k: [None, *v.shape[1:]] if model == "vit" else
        [None, v.shape[1], *[None] * (v.ndim - 2)] if v.dtype.is_floating_point else
        [None] * v.ndim
        for k, v in x.items() if isinstance(v, torch.Tensor)
    }  # fmt: skip
    spec = {"checks": list(names), "statics": statics, "shapes": shapes, "lr": _LR}
    proc = subprocess.run(
        [sys.executable, "-c", _CHILD, str(out), target, pkg.name, field, json.dumps(spec)],
        capture_output=True,
        text=True,
        timeout=600,
        # TensorFlow's oneDNN filter gradient of a plain tf.nn.conv2d fails at random on
        # this CPU ('could not create a primitive descriptor for the reorder primitive',
        # once a heap corruption; measured on a 1x1 stride-2 conv with no package code)
        env={**os.environ, "TF_ENABLE_ONEDNN_OPTS": "0"},
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    report = json.loads(proc.stdout.strip().splitlines()[-1])
    assert report["loaded"] == []  # neither torch nor ivytrace in the child
    got = {}
    for name, error in report["results"].items():
        path = out / f"{name}.out.npy"
        got[name] = (error, np.load(path) if path.exists() else None, want[name], tol[name])
    print(json.dumps({f"{model}/{target}": report["results"]}, indent=1))  # pytest -rP
    return got


@pytest.fixture(scope="module")
def matrix(tmp_path_factory):
    """(model, target) -> that pair's results, each pair run once for the module."""
    done: dict[tuple[str, str], dict] = {}

    def get(model: str, target: str) -> dict:
        if (model, target) not in done:
            out = tmp_path_factory.mktemp(f"{model}_{target}")
            done[model, target] = run_matrix(model, target, out, checks(model, target))
        return done[model, target]

    return get


def _assert(result) -> None:
    error, got, want, tol = result
    assert error is None, error
    if want is not None:
        assert got is not None and got.shape == want.shape, None if got is None else got.shape
        np.testing.assert_allclose(got, want, rtol=0, atol=tol)


# Failing today (check, model, target) -> the cause, as measured on HEAD. (A padded mask
# works: transformers asks whether a graph tracer runs before it decides on the mask's values,
# and ivytrace says yes, ivytrace_intercept.compiling. Length 1 works: the guard on
# sdpa_attention_forward's 'q_length > 1 and attention_mask is None' traces the same graph
# either way and is dropped, ivytrace_intercept.idleguards.)
XFAIL: dict[tuple[str, str, str], str] = {}


def _params():
    out = []
    for model in MODELS:
        for target in ("tensorflow", "jax"):
            for check in checks(model, target):
                # one pair stays in the fast run: ViT on jax translates in seconds
                marks = [] if (model, target) == ("vit", "jax") else [pytest.mark.slow]
                reason = XFAIL.get((check, model, target))
                if reason:
                    marks.append(pytest.mark.xfail(strict=True, reason=reason))
                out.append(pytest.param(model, target, check, marks=marks))
    return out


@pytest.mark.filterwarnings("ignore::UserWarning")
@pytest.mark.parametrize(("model", "target", "check"), _params())
def test_package_matrix(matrix, model, target, check):
    """One check of one written package in the torch-less child (see the module docstring)."""
    _assert(matrix(model, target)[check])
