"""A Keras model (or ``tf.Module``) written as a torch (or jax, numpy) package (issue 21):
``transpile(model, source="tensorflow", target="torch", args=(x,), output_dir=tmp)``
writes a package whose root is a ``torch.nn.Module`` with its weights named by the Keras
variable paths (``conv1_conv/kernel`` -> ``conv1_conv.kernel``), run here in a child
process where tensorflow, keras and ivytrace cannot be imported, at the traced batch and a
new one, eagerly and under ``torch.compile`` (``jax.jit`` for jax), within 1e-4 of Keras."""

from __future__ import annotations

import itertools
import json
import os
import re
import subprocess
import sys
import textwrap

os.environ.setdefault("KERAS_BACKEND", "tensorflow")

import numpy as np
import pytest

tf = pytest.importorskip("tensorflow")
keras = pytest.importorskip("keras")
pytest.importorskip("torch")

import ivytrace_transpile as it  # noqa: E402
from ivytrace_transpile.outputs import render_package  # noqa: E402
from ivytrace_transpile.targets import get_target  # noqa: E402
from ivytrace_transpile.translate import to_target  # noqa: E402

_RNG = np.random.default_rng(0)

_CHILD = textwrap.dedent(
    """
    import importlib, importlib.abc, importlib.machinery, json, sys
    import numpy as np

    BLOCKED = ("tensorflow", "keras", "tf_keras", "ivytrace", "ivytrace_ir",
               "ivytrace_compile", "ivytrace_intercept", "ivytrace_passes",
               "ivytrace_transpile")

    class Block(importlib.abc.MetaPathFinder, importlib.abc.Loader):
        # importing a blocked module raises ImportError; its spec has no origin, so code
        # that only asks whether it is installed (torch._dynamo's skip list) goes on

        def find_spec(self, name, path=None, target=None):
            if name.split(".")[0] in BLOCKED:
                return importlib.machinery.ModuleSpec(name, self)
            return None

        def create_module(self, spec):
            raise ImportError(f"{spec.name} is blocked in this process")

        def exec_module(self, module):
            raise ImportError(f"{module.__name__} is blocked in this process")

    sys.meta_path.insert(0, Block())
    out_dir, name, target, backend = sys.argv[1:5]
    sys.path.insert(0, out_dir)
    pkg = importlib.import_module(name)
    data = np.load(f"{out_dir}/inputs.npz")
    report = {"errors": {}, "compiled": {}}

    def leaves(y):
        if isinstance(y, dict):
            return [v for k in sorted(y) for v in leaves(y[k])]
        if isinstance(y, (list, tuple)):
            return [v for x in y for v in leaves(x)]
        return [np.asarray(y.detach() if hasattr(y, "detach") else y, np.float64)]

    def err(got, key):
        want = [data[k] for k in sorted(data.files) if k.startswith(key + ".out")]
        got = leaves(got)
        assert len(got) == len(want), (len(got), len(want))
        return max(float(np.max(np.abs(g - w))) for g, w in zip(got, want))

    keys = sorted({k.split(".")[0] for k in data.files})
    if target == "torch":
        import torch

        root = getattr(pkg, [n for n in pkg.__all__ if n != "load_weights"][0])
        model = root().eval()
        report["parameters"] = sorted(k for k, _ in model.named_parameters())
        report["state_dict"] = sorted(model.state_dict())
        model.load_state_dict(model.state_dict())  # state_dict ready
        compiled = torch.compile(model, backend=backend) if backend != "none" else None
        with torch.no_grad():
            for key in keys:
                x = torch.from_numpy(data[key + ".in"])
                report["errors"][key] = err(model(x), key)
                if compiled is not None:
                    report["compiled"][key] = err(compiled(x), key)
    else:
        params = pkg.load_params()
        for key in keys:
            x = data[key + ".in"]
            report["errors"][key] = err(pkg.forward(params, x), key)
        if target == "jax" and backend != "none":
            import jax

            jitted = jax.jit(pkg.forward)
            for key in keys:
                report["compiled"][key] = err(jitted(params, data[key + ".in"]), key)
    report["loaded"] = sorted(m for m in sys.modules if m.split(".")[0] in BLOCKED)
    print(json.dumps(report))
    """
)


def run_package(out, name: str, target: str, cases: dict, backend: str = "aot_eager") -> dict:
    """Run package ``name`` under ``out`` in a child process that cannot import tensorflow,
    keras or ivytrace on each case's input (``cases``: key -> (input, [Keras outputs]))."""
    arrays = {}
    for key, (x, outs) in cases.items():
        arrays[f"{key}.in"] = x
        for i, y in enumerate(outs):
            arrays[f"{key}.out{i:03d}"] = np.asarray(y, np.float64)
    np.savez(out / "inputs.npz", **arrays)
    proc = subprocess.run(
        [sys.executable, "-c", _CHILD, str(out), name, target, backend],
        capture_output=True,
        text=True,
        timeout=1200,
        env={**os.environ, "PYTHONPATH": ""},
    )
    assert proc.returncode == 0, proc.stderr[-4000:]
    report = json.loads(proc.stdout.strip().splitlines()[-1])
    assert report["loaded"] == []
    return report


def _outs(y) -> list[np.ndarray]:
    if isinstance(y, dict):
        return [v for k in sorted(y) for v in _outs(y[k])]
    if isinstance(y, list | tuple):
        return [v for x in y for v in _outs(x)]
    return [np.asarray(y)]


def _small_cnn():
    inp = keras.Input((12, 12, 3))
    h = keras.layers.Conv2D(6, 3, padding="same", name="c1")(inp)
    h = keras.layers.BatchNormalization(name="bn")(h)
    h = keras.layers.ReLU(max_value=6.0)(h)
    h = keras.layers.DepthwiseConv2D(3, strides=2, padding="same", name="dw")(h)
    h = keras.layers.Conv2D(8, 1, activation="swish", name="pw")(h)
    h = keras.layers.LayerNormalization(name="ln")(h)
    h = keras.layers.GlobalAveragePooling2D()(h)
    out = keras.layers.Dense(3, name="fc")(h)
    return keras.Model(inp, out, name="small_cnn")


def _assert_no_settled_guards(text: str) -> None:
    """No guard is written twice in a row, and none on a size of a weight compared with a
    literal (``self.bias.shape[0] > 1``: the torch root makes and loads every weight at its
    table's shape)."""
    lines = [line.strip() for line in text.splitlines()]
    guards = [line for line in lines if line.startswith("if ") and "raise" in line]
    assert all(a != b for a, b in itertools.pairwise(guards)), "a guard written twice"
    for line in lines:
        m = re.fullmatch(r"(.+) = self\.[\w.]+\.shape", line)
        if m:
            for name in m.group(1).split(", "):
                assert not any(re.search(rf"= {name} [<>=!]+ \d+$", x) for x in lines), name


def _cases(model, shape, batches=(2, 5), scale=1.0):
    out = {}
    for b in batches:
        x = (_RNG.standard_normal((b, *shape)) * scale).astype(np.float32)
        y = model(x, training=False) if isinstance(model, keras.layers.Layer) else model(x)
        out[f"b{b}"] = (x, _outs(y))
    return out


@pytest.mark.parametrize("target", ["torch", "jax", "numpy"])
def test_a_keras_model_package_runs_without_tensorflow(tmp_path, target: str) -> None:
    model = _small_cnn()
    x = _RNG.standard_normal((2, 12, 12, 3)).astype(np.float32)
    tc = it.transpile(
        model, source="tensorflow", target=target, args=(tf.constant(x),), output_dir=tmp_path
    )
    pkg = tmp_path / f"small_cnn_{target}"
    text = (pkg / "model.py").read_text()
    assert "import tensorflow" not in text and "import keras" not in text
    assert "ivytrace" not in text
    report = run_package(tmp_path, pkg.name, target, _cases(model, (12, 12, 3)), "none")
    assert max(report["errors"].values()) < 1e-4, report["errors"]
    if target == "torch":  # a class per Keras layer with weights, called by the root
        for cls, attr in [("Conv2D", "c1"), ("BatchNormalization", "bn"), ("Dense", "fc")]:
            assert f"class {cls}(torch.nn.Module):" in text and f"self.{attr} = {cls}()" in text
            assert f"= self.{attr}(" in text
        assert "class DepthwiseConv2D(torch.nn.Module):" in text
        assert "class ReLU" not in text  # weightless layers are written inline
        _assert_no_settled_guards(text)
        keys = {w.path.replace("/", ".") for w in model.weights}
        assert set(report["state_dict"]) == keys  # every variable, by its Keras path
        trainable = {w.path.replace("/", ".") for w in model.trainable_weights}
        assert set(report["parameters"]) == trainable  # moving statistics are buffers
    again = render_package(tc)  # the files depend only on the translation
    assert again.text["model.py"] == text


def test_a_keras_package_under_torch_compile(tmp_path) -> None:
    """``torch.compile`` of the written module (``aot_eager``: no C compiler needed)."""
    model = _small_cnn()
    x = _RNG.standard_normal((2, 12, 12, 3)).astype(np.float32)
    it.transpile(model, target="torch", args=(tf.constant(x),), output_dir=tmp_path)
    report = run_package(tmp_path, "small_cnn_torch", "torch", _cases(model, (12, 12, 3)))
    assert max(report["compiled"].values()) < 1e-4, report["compiled"]


class _TfMlp(tf.Module):
    def __init__(self) -> None:
        super().__init__()
        self.w = tf.Variable(_RNG.standard_normal((4, 3)).astype(np.float32), name="w")
        self.b = tf.Variable(np.full(3, 0.1, np.float32), name="b", trainable=False)

    def __call__(self, x):
        return tf.nn.relu(tf.matmul(x, self.w) + self.b)


def test_a_tf_module_package(tmp_path) -> None:
    """A ``tf.Module``'s variables are named by attribute (they have no Keras path)."""
    module = _TfMlp()
    x = _RNG.standard_normal((2, 4)).astype(np.float32)
    it.transpile(module, target="torch", args=(tf.constant(x),), output_dir=tmp_path)
    (pkg,) = (p.name for p in tmp_path.iterdir() if p.name.endswith("_torch"))
    report = run_package(tmp_path, pkg, "torch", _cases(module, (4,)), "none")
    assert max(report["errors"].values()) < 1e-5
    assert report["state_dict"] == ["b", "w"] and report["parameters"] == ["w"]


def test_a_keras_package_for_tensorflow_is_refused(tmp_path) -> None:
    with pytest.raises(NotImplementedError, match="tensorflow package of a Keras model"):
        it.transpile(_small_cnn(), target="tensorflow", output_dir=tmp_path)


_MODELS = ["MobileNetV2", "ResNet50", "EfficientNetB0", "ConvNeXtTiny"]
_SIZE = 32  # the smallest input keras.applications accepts for these four


@pytest.fixture(
    scope="module",
    params=[(name, target) for name in _MODELS for target in ("torch", "jax")],
    ids=lambda p: f"{p[0]}-{p[1]}",
)
def application(request, tmp_path_factory):
    """A keras.applications model with random weights (``weights=None``, logits), 32x32,
    translated once at batch 2 (``retrace=False``) with its package written: (model,
    target, the in-process translation, the folder holding the package). The package test
    and the in-process one both judge this translation (they made one each before, the
    same model to the same target, at batch 2)."""
    name, target = request.param
    app = getattr(keras.applications, name)
    model = app(weights=None, input_shape=(_SIZE, _SIZE, 3), classifier_activation=None)
    x = (_RNG.random((2, _SIZE, _SIZE, 3)) * 255.0).astype(np.float32)
    out = tmp_path_factory.mktemp(f"{name}_{target}")
    tc = it.transpile(model, target=target, args=(tf.constant(x),), retrace=False, output_dir=out)
    return model, target, tc, out


@pytest.mark.slow
def test_keras_applications_packages(application) -> None:
    """keras.applications, traced at batch 2, run as a package without tensorflow at batch
    2 and 5, eagerly and compiled (``torch.compile(backend="aot_eager")``, ``jax.jit``)."""
    model, target, _, out = application
    cases = {}
    for b in (2, 5):
        xb = (_RNG.random((b, _SIZE, _SIZE, 3)) * 255.0).astype(np.float32)
        cases[f"b{b}"] = (xb, _outs(model(xb, training=False)))
    pkg = next(p.name for p in out.iterdir() if p.name.endswith(f"_{target}"))
    report = run_package(out, pkg, target, cases)
    # random-weight logits can be tiny (MobileNetV2's are ~1e-10): the error is judged
    # against them too, as the in-process translations are
    scale = min(1.0, max(float(np.max(np.abs(y[0]))) for _, y in cases.values()))
    assert max(report["errors"].values()) < 1e-4 * scale, report["errors"]
    assert max(report["compiled"].values()) < 1e-4 * scale, report["compiled"]
    if target == "torch":
        assert set(report["state_dict"]) == {w.path.replace("/", ".") for w in model.weights}


@pytest.mark.slow
def test_keras_applications_translate(application) -> None:
    """In process (moved here from test_keras_source.py to share the translation): logits
    (no softmax: random-weight logits are far from 1, so an error relative to them means
    something). Traced at batch 2 (at batch 1 with a 1x1 feature map Keras's ``ops.add``
    takes a residual for a bias and calls ``bias_add``: a size decision), checked at batch
    2 and 5 with ``retrace=False``: one translation answers both."""
    model, target, tc, _ = application
    read = set(tc.params)
    assert read <= {w.path for w in model.weights} and len(read) > 100
    for batch in (2, 5):
        x = (_RNG.random((batch, _SIZE, _SIZE, 3)) * 255.0).astype(np.float32)
        ref = np.asarray(model(x))
        got = tc(to_target(tf.constant(x), get_target(target)))
        got = got.detach().numpy() if hasattr(got, "detach") else np.asarray(got)
        assert got.shape == ref.shape
        err = float(np.max(np.abs(got.astype(np.float64) - ref.astype(np.float64))))
        rel = err / float(np.max(np.abs(ref)))
        assert err < 1e-4 and rel < 1e-4, (batch, err, rel)


def test_layers_alike_but_for_numbers_are_one_class() -> None:
    """Two layers' forwards that differ only in numbers (a channel count, a stride, the
    digits of a guard's message) are one class taking those numbers, named after the
    layers' Keras config (``input_shape_3``: the build config's input shape, ``strides``:
    both entries of it); each layer is made with its own, and its forward reads as it
    did."""
    from ivytrace_transpile.modulegen.flat import _layer_classes

    def forward(c: int, s: int) -> str:
        return (
            "def forward(self, x):\n"
            "    shape, shape_1, shape_2, shape_3 = x.shape\n"
            f"    if shape_3 != {c}: raise ValueError('traced with {c} {{}}')\n"
            f"    return (shape * {s}, ({s}, {s}), 7, 'same')\n"
        )

    configs = {
        "a": {"filters": 8, "strides": (2, 2), "strides_0": 2, "strides_1": 2, "input_shape_3": 3},
        "b": {"filters": 8, "strides": (1, 1), "strides_0": 1, "strides_1": 1, "input_shape_3": 64},
    }  # fmt: skip
    items = [("a", forward(3, 2)), ("b", forward(64, 1))]
    out = _layer_classes(items, {"kernel"}, configs)
    assert len(out) == 1
    text, made = out[0]
    assert made == {"a": "input_shape_3=3, strides=2", "b": "input_shape_3=64, strides=1"}
    assert "def __init__(self, input_shape_3, strides):" in text and "n0" not in text
    scope: dict[str, object] = {}
    exec("class L:\n" + textwrap.indent(text, "    "), scope)
    layer = scope["L"](input_shape_3=64, strides=1)
    assert layer.forward(np.zeros((5, 0, 0, 64))) == (5, (1, 1), 7, "same")
    with pytest.raises(ValueError, match=r"^traced with 64 \{\}$"):
        layer.forward(np.zeros((5, 0, 0, 3)))
    # forwards that differ otherwise stay classes of their own
    other = forward(3, 2).replace(" * ", " + ")
    assert len(_layer_classes([("a", forward(3, 2)), ("b", other)], set())) == 2


def test_constructor_parameters_without_a_config_are_named_by_what_they_feed() -> None:
    """Where no config value is the number (or the layer has no config), a constructor
    parameter is named after the argument it feeds (``F.conv2d``'s ``stride`` and
    ``groups``) or the size it is compared with; a name taken (a weight's, a builtin, a
    module alias, ``nn.Module``'s) gets a suffix, and names are unique."""
    from ivytrace_transpile.modulegen.flat import _layer_classes

    def forward(c: int, s: int, pad: int) -> str:
        return (
            "def forward(self, x):\n"
            "    shape, shape_1, shape_2, shape_3 = x.shape\n"
            f"    if shape_3 != {c}: raise ValueError('traced with {c}')\n"
            f"    y = F.conv2d(x, self.kernel, None, ({s}, 1), (0, 0), (1, 1), {c})\n"
            f"    return F.pad(y, [0, 0, 0, 0], mode='constant', value={pad}.5)\n"
        )

    items = [("a", forward(3, 2, 0)), ("b", forward(64, 1, 1))]
    ((text, made),) = _layer_classes(items, {"kernel"}, None)
    assert made == {"a": "input_shape_3=3, conv2d_stride_0=2, pad_value=0.5",
                    "b": "input_shape_3=64, conv2d_stride_0=1, pad_value=1.5"}  # fmt: skip
    assert "n0" not in text
    # config keys that are taken names: a weight's, a builtin's, an nn.Module attribute's
    configs = {
        "a": {"kernel": 3, "max": 2, "training": 0.5},
        "b": {"kernel": 64, "max": 1, "training": 1.5},
    }
    ((text, made),) = _layer_classes(items, {"kernel", "training"}, configs)
    assert made == {"a": "kernel_1=3, max_1=2, training_1=0.5",
                    "b": "kernel_1=64, max_1=1, training_1=1.5"}  # fmt: skip
    assert "def __init__(self, kernel_1, max_1, training_1):" in text


def _strided_model():
    inp = keras.Input((12, 12, 3))
    h = keras.layers.Conv2D(6, 1, strides=1, name="c1")(inp)
    h = keras.layers.LayerNormalization(epsilon=1e-3, name="ln1")(h)
    h = keras.layers.Conv2D(8, 1, strides=2, name="c2")(h)
    h = keras.layers.LayerNormalization(epsilon=1e-5, name="ln2")(h)
    h = keras.layers.GlobalAveragePooling2D()(h)
    out = keras.layers.Dense(3, name="fc")(h)
    return keras.Model(inp, out, name="strided")


def test_a_keras_package_names_constructor_parameters_after_the_config(tmp_path) -> None:
    """Two Conv2D layers of different strides (and input channels) are one class whose
    constructor takes ``strides`` and ``input_shape_3`` (Keras's names), two
    LayerNormalization layers of different ``epsilon`` one class taking ``epsilon`` (the
    constant it reads); the package still matches Keras eagerly and under
    ``torch.compile``, where tensorflow cannot be imported."""
    model = _strided_model()
    x = _RNG.standard_normal((2, 12, 12, 3)).astype(np.float32)
    it.transpile(model, target="torch", args=(tf.constant(x),), output_dir=tmp_path)
    text = (tmp_path / "strided_torch" / "model.py").read_text()
    init = re.search(
        r"class Conv2D\(torch.nn.Module\):\n.*?\n    def __init__\(self, (.*?)\):", text, re.S
    )
    assert init is not None and set(init.group(1).split(", ")) >= {"strides", "input_shape_3"}
    assert not re.search(r"\bn\d+\b", text)
    assert re.search(r"self\.c1 = Conv2D\(.*\bstrides=1\b", text)
    assert re.search(r"self\.c2 = Conv2D\(.*\bstrides=2\b", text)
    assert "self.ln1 = LayerNormalization(epsilon=CONSTANTS[" in text
    assert "(self.strides, self.strides)" in text  # F.conv2d's stride
    report = run_package(tmp_path, "strided_torch", "torch", _cases(model, (12, 12, 3)))
    assert max(report["errors"].values()) < 1e-4, report["errors"]
    assert max(report["compiled"].values()) < 1e-4, report["compiled"]


class Block(keras.layers.Layer):
    def __init__(self, filters: int, strides: int, **kwargs) -> None:
        super().__init__(**kwargs)
        self.conv = keras.layers.Conv2D(filters, 1, strides=strides)
        self.bn = keras.layers.BatchNormalization()

    def call(self, x, training=False):
        return keras.ops.relu(self.bn(self.conv(x), training=training))


class Stage(keras.layers.Layer):
    def __init__(self, **kwargs) -> None:
        super().__init__(**kwargs)
        self.blocks = [Block(6, 1), Block(8, 2)]

    def call(self, x, training=False):
        for block in self.blocks:
            x = block(x, training=training)
        return x


class NestedNet(keras.Model):
    def __init__(self) -> None:
        super().__init__()
        self.stem = keras.layers.Conv2D(4, 3, padding="same")
        self.stage = Stage()
        self.head = keras.layers.Dense(3)

    def call(self, x):
        return self.head(keras.ops.mean(self.stage(self.stem(x)), axis=(1, 2)))


def _built_torch_package(model, tmp_path):
    """``model`` built on a (2, 12, 12, 3) batch and written as a torch package: the
    package's name and its ``model.py``."""
    x = _RNG.standard_normal((2, 12, 12, 3)).astype(np.float32)
    model(x)
    it.transpile(model, target="torch", args=(tf.constant(x),), output_dir=tmp_path)
    (pkg,) = (p.name for p in tmp_path.iterdir() if p.name.endswith("_torch"))
    return pkg, (tmp_path / pkg / "model.py").read_text()


def test_a_subclassed_keras_model_writes_a_class_per_composite_layer(tmp_path) -> None:
    """A subclassed Keras model's layers are classes at their variables' Keras paths
    (``self.nested_net.conv2d = Conv2D()`` for ``nested_net/conv2d/kernel``), a layer holding layers
    with weights (a block, a stage of blocks in a list) a class of its own making and
    calling its sub-layers' classes, so the root's forward is calls, not the convolutions;
    the package matches Keras at two batches, eagerly and under ``torch.compile``, without
    tensorflow, with every variable by its Keras path."""
    model = NestedNet()
    pkg, text = _built_torch_package(model, tmp_path)
    classes = re.findall(r"^class (\w+)\(torch.nn.Module\):", text, re.M)
    assert {"Block", "Stage"} <= {re.sub(r"_\d+$", "", c) for c in classes}, classes
    stage = text[text.index("class Stage(") :]
    stage = stage[: stage.index("\n\n\nclass ")]
    assert re.search(r"self\.\w+ = Block(_\d+)?\(\)", stage)  # the stage makes its blocks
    assert re.search(r"= self\.\w+\(x\)", stage)  # and calls them
    root = text[text.index("class NestedNet(") :]
    assert "F.conv2d" not in root and "torch.rsqrt" not in root
    assert re.search(r"= self\.[\w.]+\.\w+\(", root)  # the root calls the stage's class
    report = run_package(tmp_path, pkg, "torch", _cases(model, (12, 12, 3)))
    assert max(report["errors"].values()) < 1e-4, report["errors"]
    assert max(report["compiled"].values()) < 1e-4, report["compiled"]
    assert set(report["state_dict"]) == {w.path.replace("/", ".") for w in model.weights}


class NamedBlock(keras.layers.Layer):
    def __init__(self, filters: int, strides: int, **kwargs) -> None:
        super().__init__(**kwargs)
        self.conv = keras.layers.Conv2D(filters, 1, strides=strides, name="conv")
        self.bn = keras.layers.BatchNormalization(name="bn")

    def call(self, x, training=False):
        return keras.ops.relu(self.bn(self.conv(x), training=training))


class NamedNet(keras.Model):
    def __init__(self) -> None:
        super().__init__()
        self.stem = keras.layers.Conv2D(4, 3, padding="same")
        self.blocks = [NamedBlock(6, 1), NamedBlock(8, 2), NamedBlock(8, 1)]
        self.head = keras.layers.Dense(3)

    def call(self, x):
        h = self.stem(x)
        for block in self.blocks:
            h = block(h)
        return self.head(keras.ops.mean(h, axis=(1, 2)))


def test_composite_layers_alike_but_for_numbers_are_one_class(tmp_path) -> None:
    """Blocks whose sub-layers have the same names (``conv``, ``bn``) and differ only in
    their numbers are one class taking those numbers, named after the block's Keras config
    (``NamedBlock(filters=8, strides=2, ...)``), which makes its sub-layers with them; the
    package matches Keras eagerly and under ``torch.compile``."""
    model = NamedNet()
    pkg, text = _built_torch_package(model, tmp_path)
    assert re.findall(r"^class (NamedBlock\w*)\(", text, re.M) == ["NamedBlock"]
    made = re.findall(r"= NamedBlock\((.*)\)$", text, re.M)
    assert len(made) == 3 and all("filters=" in m and "strides=" in m for m in made), made
    assert re.search(r"self\.conv = \w+\(.*strides=strides", text)  # __init__ passes them on
    report = run_package(tmp_path, pkg, "torch", _cases(model, (12, 12, 3)))
    assert max(report["errors"].values()) < 1e-4, report["errors"]
    assert max(report["compiled"].values()) < 1e-4, report["compiled"]
    assert set(report["state_dict"]) == {w.path.replace("/", ".") for w in model.weights}
