"""Issue 20's training mode on a written package (a small conv net with BatchNorm, fast;
the four zoo models are in ``test_package_matrix.py``): ``training=True`` normalises by
the batch's statistics as torch's train mode does, and on tensorflow moves the running
statistics as torch does; the default (``training=False``) is torch's eval graph."""

from __future__ import annotations

import copy
from pathlib import Path

import numpy as np
import pytest
import torch
import torch.nn.functional as F
from transpile_support import import_package, sibling_module

import ivytrace as ivy

outputs_tests = sibling_module("test_outputs")


@pytest.fixture(scope="module", params=("tensorflow", "jax"))
def written(request, tmp_path_factory):
    target = request.param
    net, pkg = outputs_tests._write("conv_net", target, tmp_path_factory.mktemp(target))
    return target, net, import_package(pkg)


def _x(shape=(4, 3, 8, 8)):
    torch.manual_seed(3)
    return torch.randn(*shape)


def test_training_uses_the_batch_statistics_as_torch(written):
    target, net, pkg = written
    x = _x()
    train = copy.deepcopy(net).train()
    want = train(x).detach().numpy()
    with torch.no_grad():
        eval_want = net(x).numpy()
    if target == "tensorflow":
        import tensorflow as tf

        layer = pkg.ConvNet()
        got = np.asarray(layer(tf.constant(x.numpy()), training=True))
        got_eval = np.asarray(layer(tf.constant(x.numpy())))
        # the running statistics moved as torch's did in its one train-mode call
        for name in ("running_mean", "running_var"):
            mine = np.asarray(getattr(layer.bn, name))
            np.testing.assert_allclose(mine, getattr(train.bn, name).numpy(), atol=1e-5)
        eval_want = train.eval()(x).detach().numpy()  # eval on the moved statistics
    else:
        params = pkg.load_params()
        got = np.asarray(pkg.forward(params, x.numpy(), training=True))
        got_eval = np.asarray(pkg.forward(params, x.numpy()))
    assert not np.allclose(want, eval_want, atol=1e-3)  # the two modes differ here
    np.testing.assert_allclose(got, want, atol=1e-5)
    np.testing.assert_allclose(got_eval, eval_want, atol=1e-5)


def test_training_is_passed_down_and_jits(written):
    target, net, pkg = written
    if target != "jax":
        pytest.skip("Keras passes training down itself")
    import jax

    text = Path(pkg.__file__).with_name("model.py").read_text()
    assert "bn = batch_norm2d(params['bn'], conv, training=training)" in text
    x = _x().numpy()
    fn = jax.jit(pkg.forward, static_argnames="training")
    train = copy.deepcopy(net).train()
    np.testing.assert_allclose(
        np.asarray(fn(pkg.load_params(), x, training=True)),
        train(torch.from_numpy(x)).detach().numpy(),
        atol=1e-5,
    )


# ---- dropout (issue 20): the eval trace's dropout sites drop out in training


class _Block(torch.nn.Module):
    """A child with a functional dropout site: ``training`` and the key are passed down."""

    def __init__(self, p: float) -> None:
        super().__init__()
        self.fc = torch.nn.Linear(6, 16)
        self.p = p

    def forward(self, x):
        return F.dropout(torch.relu(self.fc(x)), self.p, training=self.training)


class DropNet(torch.nn.Module):
    """An MLP whose last op is an ``nn.Dropout`` (the kept values are checkable: the
    pre-dropout value is the eval output), ``inner``: the child's dropout rate."""

    def __init__(self, inner: float = 0.0, p: float = 0.3) -> None:
        super().__init__()
        # not "block": the jax function of _Block is block(), which a local of that name
        # would shadow in the written forward (a writer limitation, reported)
        self.hidden = _Block(inner)
        self.fc = torch.nn.Linear(16, 64)
        self.drop = torch.nn.Dropout(p)

    def forward(self, x):
        return self.drop(self.fc(self.hidden(x)))


P = 0.3


@pytest.fixture(scope="module", params=("tensorflow", "jax"))
def dropnets(request, tmp_path_factory):
    """(target, {name: (torch net, package)}): ``last`` drops out only at the end, ``both``
    in its child too."""
    target = request.param
    out = tmp_path_factory.mktemp(f"drop_{target}")
    nets = {}
    for name, inner in (("last", 0.0), ("both", 0.2)):
        torch.manual_seed(0)
        net = DropNet(inner, P).eval()
        tc = ivy.transpile(net, source="torch", target=target, args=(torch.randn(4, 6),))
        # a package name of its own: its model module is imported under it
        pkg = tc.save(out, name=f"drop_{name}_{target}")
        nets[name] = (net, import_package(pkg))
    return target, nets


class _Run:
    """The package's root called as its users call it: tensorflow's layer (its generator
    advances each call), jax's ``forward`` with ``rng=jax.random.key(seed)``."""

    def __init__(self, target, pkg):
        self.target, self.pkg = target, pkg
        if target == "tensorflow":
            (cls,) = (getattr(pkg, n) for n in pkg.__all__ if n == "DropNet")
            self.layer = cls()
        else:
            self.params = pkg.load_params()

    def __call__(self, x, training=False, seed=None):
        if self.target == "tensorflow":
            import tensorflow as tf

            return np.asarray(self.layer(tf.constant(x), training=training))
        import jax

        rng = None if seed is None else jax.random.key(seed)
        return np.asarray(self.pkg.forward(self.params, x, training=training, rng=rng))


def _scale(p):
    """torch's factor for kept values: ``noise.div_(1 - p)`` in float32."""
    return np.float32(1) / np.float32(1 - p)


def test_dropout_in_eval_is_torch_eval_and_in_training_is_torch_dropout(dropnets):
    target, nets = dropnets
    net, pkg = nets["last"]
    run = _Run(target, pkg)
    torch.manual_seed(1)
    x = torch.randn(256, 6)
    with torch.no_grad():
        want = net(x).numpy()
    got_eval = run(x.numpy())
    np.testing.assert_allclose(got_eval, want, atol=1e-5)  # eval: torch's eval graph
    np.testing.assert_array_equal(run(x.numpy(), training=False), got_eval)
    a, b = run(x.numpy(), True, seed=1), run(x.numpy(), True, seed=2)
    assert not np.array_equal(a == 0, b == 0)  # two draws, two masks
    assert np.all(got_eval != 0)  # a zero below is a dropped element
    for drawn in (a, b):
        zeros = float(np.mean(drawn == 0))
        assert abs(zeros - P) < 0.02, zeros  # 16384 elements: 4.5 sigma
        kept = drawn != 0
        # the kept values: the eval value times float32(1 / float32(1 - p)), bit for bit
        np.testing.assert_array_equal(drawn[kept], got_eval[kept] * _scale(P))
    # ... which is what torch's own train-mode dropout does to the same pre-dropout values
    with torch.no_grad():
        theirs = copy.deepcopy(net).train()(x).numpy()
    kept = theirs != 0
    assert abs(float(np.mean(~kept)) - P) < 0.02
    np.testing.assert_array_equal(theirs[kept], want[kept] * _scale(P))
    if target == "jax":  # the same key, the same mask; under jit too
        import jax

        np.testing.assert_array_equal(run(x.numpy(), True, seed=1), a)
        fn = jax.jit(pkg.forward, static_argnames="training")
        jitted = fn(run.params, x.numpy(), training=True, rng=jax.random.key(1))
        np.testing.assert_array_equal(np.asarray(jitted) == 0, a == 0)


def test_dropout_sites_in_children_draw_too(dropnets):
    """The child's functional dropout draws in training (Keras hands ``training`` down; jax
    passes ``training`` and a key of its own), so the kept values are no longer the eval
    values scaled; with ``DROPOUT = False`` training is the eval graph (no batch norm)."""
    target, nets = dropnets
    net, pkg = nets["both"]
    run = _Run(target, pkg)
    torch.manual_seed(1)
    x = torch.randn(256, 6).numpy()
    got_eval = run(x)
    with torch.no_grad():
        np.testing.assert_allclose(got_eval, net(torch.from_numpy(x)).numpy(), atol=1e-5)
    drawn = run(x, True, seed=3)
    kept = drawn != 0
    assert not np.allclose(drawn[kept], got_eval[kept] * _scale(P), atol=1e-4)
    text = Path(pkg.__file__).with_name("model.py").read_text()
    if target == "jax":
        assert "hidden = block(params['hidden'], x, training=training, rng=rng_for(rng, 1))" in text
    else:
        assert "def call(self, x, training=False):" in text  # the child's
    pkg.model.DROPOUT = False
    try:
        np.testing.assert_allclose(run(x, True, seed=3), got_eval, atol=0)
    finally:
        pkg.model.DROPOUT = True


def test_jax_training_without_a_key_raises(dropnets):
    target, nets = dropnets
    if target != "jax":
        pytest.skip("Keras layers own their generator")
    _, pkg = nets["last"]
    x = np.ones((2, 6), np.float32)
    with pytest.raises(ValueError, match=r"pass rng=jax\.random\.key\(seed\)"):
        pkg.forward(pkg.load_params(), x, training=True)


def test_one_training_step_without_dropout_is_torchs(dropnets):
    """One SGD step in the target with ``training=True`` and ``DROPOUT = False`` equals torch's
    step in train mode with every dropout's p set to 0 (the output after the step)."""
    target, nets = dropnets
    net, pkg = nets["both"]
    torch.manual_seed(4)
    x = torch.randn(8, 6)
    w = torch.randn(8, 64)
    lr = 0.05
    train = copy.deepcopy(net).train()
    train.drop.p = 0.0
    train.hidden.p = 0.0
    (train(x) * w).sum().backward()
    torch.optim.SGD(train.parameters(), lr=lr).step()
    with torch.no_grad():
        want = train(x).numpy()
    pkg.model.DROPOUT = False
    try:
        if target == "tensorflow":
            import keras
            import tensorflow as tf

            layer = _Run(target, pkg).layer
            xt, wt = tf.constant(x.numpy()), tf.constant(w.numpy())
            with tf.GradientTape() as tape:
                loss = tf.reduce_sum(layer(xt, training=True) * wt)
            grads = tape.gradient(loss, layer.trainable_variables)
            keras.optimizers.SGD(lr).apply_gradients(zip(grads, layer.trainable_variables))
            got = np.asarray(layer(xt, training=True))
        else:
            import jax
            import jax.numpy as jnp

            def loss(params):
                y = pkg.forward(params, x.numpy(), training=True)
                return jnp.sum(y * w.numpy())

            params = pkg.load_params()
            grads = jax.grad(loss)(params)
            params = jax.tree_util.tree_map(lambda p, g: p - lr * g, params, grads)
            got = np.asarray(pkg.forward(params, x.numpy(), training=True))
    finally:
        pkg.model.DROPOUT = True
    np.testing.assert_allclose(got, want, atol=1e-5)
