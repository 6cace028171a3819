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
from transpile_support import sibling_module

outputs_tests = sibling_module("test_outputs")


@pytest.fixture(scope="module", params=("tensorflow", "jax"))
def written(request, tmp_path_factory):
    target = request.param
    net, pkg = outputs_tests._write("conv_net", target, tmp_path_factory.mktemp(target))
    return target, net, outputs_tests._import(pkg)


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
