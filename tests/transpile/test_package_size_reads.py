"""A size read stays where the code made it (issue 20): the trace keeps one read of
``x.shape`` where both a child layer and its parent read it (or where the child's
translation read it first, as TensorFlow's ``Linear`` does), and the read lies in the
child's part of the trace. The written child returned that size as a second result and
the parent unpacked it (``lin, lin_1 = self.lin(x)``); now each reads its own, and a
child returns only what its forward returned. Real torch, tensorflow and jax; the
packages are written, imported and called at a new size."""

from __future__ import annotations

import re

import numpy as np
import pytest
import torch
from transpile_support import import_package

import ivytrace_transpile as it

TARGETS = ("tensorflow", "jax")


class AfterLinear(torch.nn.Module):
    """The parent reads ``x.shape[1]`` after its child took ``x`` (TensorFlow's linear
    read the sizes first)."""

    def __init__(self):
        super().__init__()
        self.lin = torch.nn.Linear(4, 4)

    def forward(self, x):
        h = self.lin(x)
        n = x.shape[1]
        return h[:, : n - 1] * n


class Proj(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = torch.nn.Linear(4, 4)

    def forward(self, x):
        b = x.shape[0]
        return self.lin(x).reshape(b, -1)


class BothRead(torch.nn.Module):
    """The child's own code and the parent read the same size of the same input."""

    def __init__(self):
        super().__init__()
        self.proj = Proj()

    def forward(self, x):
        h = self.proj(x)
        n = x.shape[0]
        return h * n


class CalledTwice(torch.nn.Module):
    """A layer called twice, the parent reading sizes of its first input in between."""

    def __init__(self):
        super().__init__()
        self.lin = torch.nn.Linear(4, 4)

    def forward(self, x):
        h = self.lin(x)
        h = self.lin(h + x.size(-1))
        return h * len(x)


CASES = {
    # model (its jax function is the case's name), the child's class (tensorflow) and
    # function (jax), its attribute
    "after_linear": (AfterLinear, ("Linear", "linear"), "lin"),
    "both_read": (BothRead, ("Proj", "proj"), "proj"),
    "called_twice": (CalledTwice, ("Linear", "linear"), "lin"),
}


def _caller(pkg, target):
    """The written package's model as a function of a numpy array."""
    if target == "tensorflow":
        import tensorflow as tf

        layer = getattr(pkg, pkg.__all__[0])()
        return lambda x: np.asarray(layer(tf.constant(x)))
    import jax.numpy as jnp

    params = pkg.load_params()
    return lambda x: np.asarray(pkg.forward(params, jnp.asarray(x)))


def _text(source: str, name: str, target: str) -> str:
    """The text of class (tensorflow) or function (jax) ``name`` of a model.py."""
    head = f"class {name}(" if target == "tensorflow" else f"def {name}("
    start = source.index(head)
    end = re.search(r"\n(?=\S)", source[start:])
    return source[start : start + end.start()] if end else source[start:]


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("case", sorted(CASES))
def test_a_child_returns_only_its_result(case, target, tmp_path):
    cls, names, attr = CASES[case]
    torch.manual_seed(0)
    net = cls().eval()
    tc = it.transpile(net, target=target, args=(torch.randn(2, 3, 4),), output_dir=False)
    path = tc.save(tmp_path, name=f"{case}_{target}_pkg")
    source = (path / "model.py").read_text()
    child = _text(source, names[target == "jax"], target)
    returns = re.findall(r"\n\s+return (.*)", child)
    one = [re.fullmatch(r"\w+", r) and not r.startswith("shape") for r in returns]
    assert returns and all(one), child  # one value, not a size
    parent = _text(source, cls.__name__ if target == "tensorflow" else case, target)
    if target == "tensorflow":
        callee = rf"self\.{attr}\("
    else:
        callee = rf"\b{names[1]}\(params\['{attr}'\]"
    calls = re.findall(rf"\n +([\w, ()]+) = {callee}", parent)
    assert calls and all(re.fullmatch(r"\w+", c) for c in calls), parent  # no unpacking
    if case == "called_twice":
        assert len(calls) == 2, parent  # both calls are calls of the one layer
    call = _caller(import_package(path), target)
    for shape in ((2, 3, 4), (3, 5, 4)):  # the traced size and a new one
        x = torch.randn(*shape)
        want = net(x).detach().numpy()
        np.testing.assert_allclose(call(x.numpy()), want, rtol=1e-5, atol=1e-5, err_msg=case)
