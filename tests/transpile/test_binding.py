"""Arguments bound the way torch binds them (``ivytrace_transpile.binding``): a rule gets a
node's call in one canonical form whatever spelling the user's code chose, and every rule
with a torch schema takes as many positional arguments as the schema has."""

from __future__ import annotations

import inspect

import numpy as np
import pytest
import torch

import ivytrace_transpile as it
from ivytrace_transpile.binding import bind, schema_params
from ivytrace_transpile.translate import to_target

# Rules that take fewer positional parameters than the op's torch schema (a positional call
# with every argument would not bind): known, each with why it is left so.
FEWER_POSITIONAL = {
    "torch.Tensor.svd": "svd(some, compute_uv): compute_uv=False is refused by the rule",
    "torch.svd": "as torch.Tensor.svd",
    "torch.nn.functional.elu_": "aten::elu_'s scale/input_scale: internal to the ELU family",
}


def _rule_positionals(rule):
    ps = list(inspect.signature(rule).parameters.values())[1:]  # cx
    var = any(p.kind is p.VAR_POSITIONAL for p in ps)
    n = sum(p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD) for p in ps)
    return n, var


def test_every_rule_takes_its_schemas_positional_arguments():
    fewer = {}
    for key in sorted(it.TORCH_RULES):
        overloads = [o for o in schema_params(key) if not any(p.name == "out" for p in o)]
        if not overloads:
            continue
        try:
            n, var = _rule_positionals(it.TORCH_RULES[key])
        except (TypeError, ValueError):
            continue
        if var:
            continue
        if all(sum(not p.kwarg_only for p in o) > n for o in overloads):
            fewer[key] = n
    assert set(fewer) <= set(FEWER_POSITIONAL), sorted(set(fewer) - set(FEWER_POSITIONAL))


def test_keywords_move_to_their_positions():
    rule = it.TORCH_RULES["torch.Tensor.baddbmm"]
    ((args, kwargs),) = bind("torch.Tensor.baddbmm", rule, ["x"], {"batch1": "a", "batch2": "b"})
    assert args == ["x", "a", "b"] and kwargs == {}
    # keyword-only parameters stay keywords
    ((args, kwargs),) = bind("torch.Tensor.baddbmm", rule, ["x", "a"], {"batch2": "b", "beta": 2})
    assert args == ["x", "a", "b"] and kwargs == {"beta": 2}
    # a Python-defined function binds by its own signature, not aten's
    sm = it.TORCH_RULES["torch.nn.functional.softmax"]
    ((args, kwargs),) = bind("torch.nn.functional.softmax", sm, ["x"], {"dim": 1})
    assert args == ["x", 1] and kwargs == {}
    # keywords past what the rule takes by position stay keywords (a loss wrapper's *a)
    loss = it.TORCH_RULES["torch.nn.functional.smooth_l1_loss"]
    ((args, kwargs),) = bind("torch.nn.functional.smooth_l1_loss", loss, ["x", "y"], {"beta": 0.5})
    assert args == ["x", "y"] and kwargs == {"beta": 0.5}
    # F.conv1d by keyword: the rule reads the weight as cx.ref_args[1]
    conv = it.TORCH_RULES["torch.nn.functional.conv1d"]
    ((args, kwargs),) = bind("torch.nn.functional.conv1d", conv, [], {"input": "x", "weight": "w"})
    assert args == ["x", "w"] and kwargs == {}


def test_numpy_spellings_are_torch_names():
    rule = it.TORCH_RULES["torch.Tensor.mean"]
    ((args, kwargs),) = bind("torch.Tensor.mean", rule, ["x"], {"axis": 1, "keepdims": True})
    assert args == ["x", 1, True] and kwargs == {}


def test_a_lone_int_for_a_list_of_ints():
    rule = it.TORCH_RULES["torch.Tensor.tile"]
    ((args, _),) = bind("torch.Tensor.tile", rule, ["x", 2], {})
    assert args == ["x", (2,)]


@pytest.mark.parametrize("target", ["tensorflow", "numpy"])
def test_torch_spellings_translate(target):
    def f(x, a, b):
        y = x.baddbmm(batch1=a, batch2=b)
        o = torch.ones(size=(2, 3, 3))
        t = x.transpose(dim0=1, dim1=2)
        return (y + o).tile(2), t, torch.transpose(x, dim0=0, dim1=2), x.mean(axis=1)

    g = torch.Generator().manual_seed(0)
    args = (
        torch.randn(2, 3, 3, generator=g),
        torch.randn(2, 3, 4, generator=g),
        torch.randn(2, 4, 3, generator=g),
    )
    tr = it.transpile(f, target=target, args=args)
    tgt = it.get_target(target)
    for got, ref in zip(tr(*[to_target(a, tgt) for a in args]), f(*args)):
        np.testing.assert_allclose(np.asarray(got), ref.numpy(), atol=1e-5)


# Rules whose positional parameter of some name sits at another position than in torch's
# schema (a positional call would hand the rule the wrong argument), each with why it is
# harmless. torch.batch_norm / torch.instance_norm were such (F.batch_norm's order, where
# aten puts weight and bias before the running statistics) and have their own rules now.
MOVED_POSITIONAL = {
    key: "dtype where F.softmax has _stacklevel: the rule casts to the node's output dtype"
    for key in (
        "torch.Tensor.log_softmax", "torch.Tensor.softmax", "torch.log_softmax",
        "torch.softmax", "torch.special.softmax",
    )
}  # fmt: skip


def test_no_rule_takes_a_schema_parameter_at_another_position():
    moved = {}
    for key in sorted(it.TORCH_RULES):
        overloads = [o for o in schema_params(key) if not any(p.name == "out" for p in o)]
        if not overloads:
            continue
        try:
            ps = list(inspect.signature(it.TORCH_RULES[key]).parameters.values())[1:]
        except (TypeError, ValueError):
            continue
        names = [p.name for p in ps if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
        best = None
        for o in overloads:
            pos = [p.name for p in o if not p.kwarg_only]
            swaps = [n for i, n in enumerate(pos) if n in names and names.index(n) != i]
            if best is None or len(swaps) < len(best):
                best = swaps
        if best:
            moved[key] = best
    assert set(moved) <= set(MOVED_POSITIONAL), {
        k: v for k, v in moved.items() if k not in MOVED_POSITIONAL
    }


def test_aten_order_batch_norm():
    g = torch.Generator().manual_seed(0)
    w, b, rm = (torch.rand(3, generator=g) + 0.5 for _ in range(3))
    rv = torch.rand(3, generator=g) + 0.5

    def f(x):
        return torch.batch_norm(x, w, b, rm, rv, False, 0.1, 1e-5, False)

    x = torch.randn(2, 3, 4, generator=g)
    tr = it.transpile(f, target="tensorflow", args=(x,))
    got = tr(to_target(torch.randn(3, 3, 5, generator=g), it.get_target("tensorflow")))
    assert np.asarray(got).shape == (3, 3, 5)
    x2 = torch.randn(2, 3, 4, generator=g)
    np.testing.assert_allclose(
        np.asarray(tr(to_target(x2, it.get_target("tensorflow")))), f(x2).numpy(), atol=1e-5
    )


def test_reading_a_signature_does_not_rebind_a_framework_namespace():
    """Importing ``tensorflow.nn`` by name rebinds ``tf.nn`` to another module object; done
    while a translation records, the tracer's wrappers sat on the old one and the target's
    ``tf.nn.conv2d`` went unrecorded (a tensorflow-source model translated to tensorflow was
    refused, depending on which test ran first)."""
    tf = pytest.importorskip("tensorflow")
    from ivytrace_transpile.binding import _python_params

    before = tf.nn
    assert _python_params("tensorflow.nn.conv2d") is not None
    assert tf.nn is before
