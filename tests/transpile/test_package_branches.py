"""Decisions become code (issue 20): where the user's code took a Python decision on a
size (``if seq_len == 1:``) and the translation holds a specialisation for each way it
went (``examples=``, or a retrace when a guard failed), the written package holds them
all as branches of the class (tensorflow) or function (jax) that took the decision,
written as the size test it was, with no guard left. Real torch, tensorflow and jax; the
packages are written, imported and called."""

from __future__ import annotations

import re
import warnings

import numpy as np
import pytest
import torch
from transpile_support import import_package

import ivytrace_transpile as it
from ivytrace_transpile.specialize import RetraceWarning

TARGETS = ("tensorflow", "jax")


class Inner(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = torch.nn.Linear(4, 4)

    def forward(self, x):
        seq_len = x.shape[1]
        if seq_len == 1:
            return self.lin(x)[:, 0]
        return self.lin(x).mean(1)


class OneDecision(torch.nn.Module):
    """The decision in a child: only ``Inner`` branches."""

    def __init__(self):
        super().__init__()
        self.inner = Inner()
        self.out = torch.nn.Linear(4, 2)

    def forward(self, x):
        return self.out(torch.relu(self.inner(x)))


class TwoDecisions(torch.nn.Module):
    """Two decisions in the root's own forward: three specialisations, nested."""

    def __init__(self):
        super().__init__()
        self.lin = torch.nn.Linear(4, 4)
        self.out = torch.nn.Linear(4, 2)

    def forward(self, x):
        seq_len = x.shape[1]
        if seq_len == 1:
            return self.out(self.lin(x)[:, 0])
        h = self.lin(x)
        if seq_len > 4:
            h = h[:, :4] * 2
        return self.out(h.mean(1))


class Block(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.inner = Inner()
        self.norm = torch.nn.LayerNorm(4)

    def forward(self, x):
        return self.norm(self.inner(x))


class Nested(torch.nn.Module):
    """The decision two levels down: only ``Inner`` branches, ``Block`` and the root not."""

    def __init__(self):
        super().__init__()
        self.block = Block()
        self.head = torch.nn.Linear(4, 2)

    def forward(self, x):
        return self.head(self.block(x))


CASES = {
    # model, the example sequence lengths, new lengths (one per branch)
    "one": (OneDecision, (3, 1), (5, 1)),
    "two": (TwoDecisions, (3, 1, 6), (2, 1, 7)),
    "nested": (Nested, (1, 3), (1, 4)),
}


def _model(cls):
    torch.manual_seed(0)
    return cls().eval()


def _caller(pkg, target):
    """The written package's model as a function of a numpy array."""
    if target == "tensorflow":
        import tensorflow as tf

        layer = getattr(pkg, pkg.__all__[0])()
        return lambda x: np.asarray(layer(tf.constant(x))), layer
    params = pkg.load_params()
    if target == "numpy":
        return lambda x: np.asarray(pkg.forward(params, x)), params
    import jax
    import jax.numpy as jnp

    jitted = jax.jit(pkg.forward)
    return lambda x: np.asarray(jitted(params, jnp.asarray(x))), params


def _written(case, target, tmp_path):
    cls, lengths, _ = CASES[case]
    net = _model(cls)
    examples = [(torch.randn(2, n, 4),) for n in lengths]
    tc = it.transpile(net, target=target, examples=examples, output_dir=False)
    assert len(tc.specialisations) == len(lengths)
    path = tc.save(tmp_path, name=f"{case}_{target}_pkg")
    return net, path


def _class_text(source: str, name: str, target: str) -> str:
    """The text of class (tensorflow) or function (jax) ``name`` of a model.py."""
    head = f"class {name}(" if target == "tensorflow" else f"def {name}("
    start = source.index(head)
    end = re.search(r"\n(?=\S)", source[start:])
    return source[start : start + end.start()] if end else source[start:]


@pytest.mark.parametrize("target", [*TARGETS, "numpy"])
@pytest.mark.parametrize("case", sorted(CASES))
def test_package_answers_every_specialisation(case, target, tmp_path):
    net, path = _written(case, target, tmp_path)
    source = (path / "model.py").read_text()
    assert "the translated code assumes" not in source, source  # no guard left
    assert "check(" not in source and "raise ValueError" not in source.split("def load")[0]
    pkg = import_package(path)
    call, _ = _caller(pkg, target)
    _, lengths, new = CASES[case]
    for n in (*lengths, *new):
        x = torch.randn(2, n, 4)
        want = net(x).detach().numpy()
        np.testing.assert_allclose(call(x.numpy()), want, rtol=1e-5, atol=1e-5, err_msg=f"{n}")


@pytest.mark.parametrize("target", TARGETS)
def test_the_branch_reads_as_the_size_test_in_the_class_that_decided(target, tmp_path):
    _, path = _written("nested", target, tmp_path)
    source = (path / "model.py").read_text()
    names = ("Inner", "Block", "Nested") if target == "tensorflow" else ("inner", "block", "nested")
    inner, block, root = (_class_text(source, n, target) for n in names)
    assert "shape, seq_len, shape_2 = " in inner, inner  # the size by the user's name
    if target == "tensorflow":
        assert "return branch(seq_len == 1, when_seq_len_eq_1, unless_seq_len_eq_1)" in inner
        assert "def branch(holds, then, otherwise):" in source
    else:
        assert "\n    if seq_len == 1:\n" in inner, inner
    for text in (block, root):  # their bodies are one in every specialisation
        body = text.split("def call(")[-1]
        assert "seq_len" not in body and "branch(" not in body and "if " not in body, text
    readme = (path / "README.md").read_text()
    assert "## Specialisations" in readme and "holds every specialisation" in readme, readme
    assert "(float32[2, 1, 4])" in readme and "(float32[2, 3, 4])" in readme, readme
    assert "guard checks raise" not in readme, readme
    assert "- `x.shape[1] == 1` at " in readme and "if seq_len == 1:" in readme, readme


@pytest.mark.parametrize("target", TARGETS)
def test_two_decisions_nest(target, tmp_path):
    _, path = _written("two", target, tmp_path)
    root = _class_text(
        (path / "model.py").read_text(),
        "TwoDecisions" if target == "tensorflow" else "two_decisions",
        target,
    )
    if target == "tensorflow":
        outer = root.index("return branch(seq_len == 1, ")
        inner = root.index("return branch(seq_len > 4, ")
        assert root.index("def unless_seq_len_eq_1():") < inner < outer, root
    else:
        assert re.search(r"\n    if seq_len == 1:\n(.*\n)*    if seq_len > 4:\n", root), root


def test_tf_function_with_none_sizes_runs_both_branches(tmp_path):
    import tensorflow as tf

    net, path = _written("one", "tensorflow", tmp_path)
    layer = import_package(path).OneDecision()
    fn = tf.function(layer, input_signature=[tf.TensorSpec([None, None, 4], tf.float32)])
    for n in (1, 3, 6):  # one concrete function, the branch taken when the graph runs
        x = torch.randn(2, n, 4)
        np.testing.assert_allclose(
            fn(tf.constant(x.numpy())).numpy(), net(x).detach().numpy(), rtol=1e-5, atol=1e-5
        )
    assert len(fn._list_all_concrete_functions()) == 1
    import keras

    inp = keras.Input(shape=(None, 4))  # a functional model over None sizes: tf.cond too
    model = keras.Model(inp, layer(inp))
    for n in (1, 3):
        x = torch.randn(2, n, 4)
        got = model.predict(x.numpy(), verbose=0)
        np.testing.assert_allclose(got, net(x).detach().numpy(), rtol=1e-5, atol=1e-5)


def test_a_retrace_is_written_as_a_branch(tmp_path):
    """The issue's example: translated at one size, called at one where the decision goes
    the other way (a retrace), saved: both specialisations are in the package."""
    import tensorflow as tf

    net = _model(OneDecision)
    tc = it.transpile(net, target="tensorflow", args=(torch.randn(2, 3, 4),), output_dir=False)
    with pytest.warns(RetraceWarning):
        tc(tf.random.normal((2, 1, 4)))
    path = tc.save(tmp_path, name="retraced_pkg")
    source = (path / "model.py").read_text()
    assert "branch(seq_len == 1, " in source and "check(" not in source, source
    readme = (path / "README.md").read_text()
    assert "`x.shape[1] == 1` at " in readme and "holds every specialisation" in readme, readme
    call, _ = _caller(import_package(path), "tensorflow")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for n in (1, 3):
            x = torch.randn(2, n, 4)
            np.testing.assert_allclose(
                call(x.numpy()), net(x).detach().numpy(), rtol=1e-5, atol=1e-5
            )


def test_one_specialisation_is_written_as_before(tmp_path):
    """Examples that all go one way: no branch, the guard kept (it is the decision)."""
    net = _model(OneDecision)
    tc = it.transpile(
        net,
        target="jax",
        examples=[(torch.randn(2, 3, 4),), (torch.randn(2, 5, 4),)],
        output_dir=False,
    )
    source = (tc.save(tmp_path, name="one_way_pkg") / "model.py").read_text()
    assert "\n    if seq_len == 1:" not in source, source
    assert "\n    if eq != False: raise ValueError(" in source, source


def test_examples_take_dicts_and_refuse_other_forms():
    net = _model(OneDecision)
    x1, x3 = torch.randn(2, 1, 4), torch.randn(2, 3, 4)
    tc = it.transpile(
        net,
        target="jax",
        examples=[{"args": (x1,)}, {"args": [x3], "kwargs": {}}],
        output_dir=False,
    )
    assert [s for s, _ in tc.specialisations] == ["(float32[2, 1, 4])", "(float32[2, 3, 4])"]
    with pytest.raises(
        TypeError, match=r"examples\[0\] is an array.*examples=\[\(x1,\), \(x2,\)\]"
    ):
        it.transpile(net, target="jax", examples=[x1], output_dir=False)
    with pytest.raises(TypeError, match=r"examples\[1\] is a dict with wrong keys \['arg'\]"):
        it.transpile(net, target="jax", examples=[(x1,), {"arg": (x3,)}], output_dir=False)
    with pytest.raises(TypeError, match="non-empty list"):
        it.transpile(net, target="jax", examples=x1, output_dir=False)
    with pytest.raises(TypeError, match=r"a class's instances translate"):
        it.transpile(OneDecision, target="jax", examples=[(x1,)], output_dir=False)


class ValueDecision(torch.nn.Module):
    """A decision on an array's value: a tensor condition (tf.cond, lax.cond)."""

    def __init__(self, join: bool = True):
        super().__init__()
        self.lin = torch.nn.Linear(4, 4)
        self.join = join

    def forward(self, x, mask):
        h = self.lin(x)
        if mask.all():
            return h.sum(1) if self.join else h.sum(1).to(torch.int32)
        return (h * mask[..., None]).sum(1)


_FULL, _PART = torch.ones(2, 3), torch.tensor([[1.0, 1, 0], [1, 0, 0]])


def _value_package(target, tmp_path, join=True):
    torch.manual_seed(0)
    net = ValueDecision(join).eval()
    x = torch.randn(2, 3, 4)
    tc = it.transpile(net, target=target, examples=[(x, _FULL), (x, _PART)], output_dir=False)
    path = tc.save(tmp_path, name=f"value_{target}_{join}_pkg")
    return net, path


@pytest.mark.parametrize("target", [*TARGETS, "numpy"])
def test_a_decision_on_a_value_branches_on_a_tensor(target, tmp_path):
    net, path = _value_package(target, tmp_path)
    source = (path / "model.py").read_text()
    assert "the translated code assumes" not in source, source
    pkg = import_package(path)
    x = torch.randn(2, 3, 4)
    cases = [(m, net(x, m).detach().numpy()) for m in (_FULL, _PART)]
    if target == "tensorflow":
        import tensorflow as tf

        assert "return branch(tf.cast(reduce_all, tf.bool), when_mask_all, " in source
        layer = pkg.ValueDecision()
        spec = [tf.TensorSpec([None, None, 4]), tf.TensorSpec([None, None])]
        runs = (layer, tf.function(layer, input_signature=spec))
        call = [lambda a, m, f=f: f(tf.constant(a), tf.constant(m)).numpy() for f in runs]
    elif target == "jax":
        import jax

        assert "return branch(jnp.all(astype, axis=None, keepdims=False), when_mask_all" in source
        params = pkg.load_params()
        call = [
            lambda a, m, f=f: np.asarray(f(params, a, m))
            for f in (pkg.forward, jax.jit(pkg.forward))
        ]
    else:
        assert "\n    if bool(all_1):\n" in source, source
        params = pkg.load_params()
        call = [lambda a, m: pkg.forward(params, a, m)]
    for run in call:  # eagerly, and where the value is known only when the code runs
        for m, want in cases:
            np.testing.assert_allclose(run(x.numpy(), m.numpy()), want, rtol=1e-5, atol=1e-5)


def test_branches_tf_cond_cannot_join_are_decided_when_known(tmp_path):
    """One branch gives int32, the other float32: no tf.cond. Eagerly the package answers
    both; inside a tf.function the decision raises, naming it."""
    import tensorflow as tf

    net, path = _value_package("tensorflow", tmp_path, join=False)
    source = (path / "model.py").read_text()
    assert "if decided(tf.cast(reduce_all, tf.bool), " in source, source
    layer = import_package(path).ValueDecision()
    x = torch.randn(2, 3, 4)
    for m in (_FULL, _PART):
        got = layer(tf.constant(x.numpy()), tf.constant(m.numpy())).numpy()
        np.testing.assert_allclose(got, net(x, m).detach().numpy(), rtol=1e-5, atol=1e-5)
    fn = tf.function(layer)
    with pytest.raises(ValueError, match=r"the decision mask\.all\(\) is known only when"):
        fn(tf.constant(x.numpy()), tf.constant(_FULL.numpy()))


class Unrolled(torch.nn.Module):
    """A loop over a size unrolled before the decision: the specialisations differ
    before it, so they cannot be one package."""

    def __init__(self):
        super().__init__()
        self.lin = torch.nn.Linear(4, 4)

    def forward(self, x):
        h = self.lin(x)
        acc = h[:, 0]
        for i in range(1, x.shape[1]):
            acc = acc + h[:, i]
        if x.shape[1] == 1:
            return acc
        return acc * 2


def test_specialisations_that_cannot_be_one_package_keep_the_guard(tmp_path):
    torch.manual_seed(0)
    net = Unrolled().eval()
    examples = [(torch.randn(2, n, 4),) for n in (3, 1)]
    tc = it.transpile(net, target="jax", examples=examples, output_dir=False)
    path = tc.save(tmp_path, name="unrolled_pkg")
    source = (path / "model.py").read_text()
    assert "if eq != True: raise ValueError(" in source and "if shape_1 == 1" not in source
    readme = (path / "README.md").read_text()
    assert "This package holds the one for (float32[2, 1, 4])" in readme, readme
    assert "They could not be written as one package: unrolled: its specialisations " in readme
    assert "- `x.shape[1] == 1` (was False when first traced) at " in readme, readme
    x = torch.randn(2, 1, 4)
    pkg = import_package(path)
    params = pkg.load_params()
    np.testing.assert_allclose(
        np.asarray(pkg.forward(params, x.numpy())), net(x).detach().numpy(), rtol=1e-5, atol=1e-5
    )
    with pytest.raises(ValueError, match=r"x\.shape\[1\] == 1"):
        pkg.forward(params, torch.randn(2, 3, 4).numpy())
