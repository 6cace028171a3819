"""The torch interceptor on its own: what a raw trace records, and what it leaves behind."""

from __future__ import annotations

import os
import subprocess
import sys
import warnings

import pytest
import torch
import torch.nn.functional as F
from intercept_support import ops

from ivytrace_intercept import TraceError, trace
from ivytrace_ir import Value


def test_shape_values_are_tracked_not_baked():
    def fn(x):
        n = x.shape[0]
        return x[: n // 2].reshape(n // 2, -1)

    g = trace(fn, (torch.ones(4, 3),)).graph
    assert "operator.floordiv" in ops(g)
    getitem = next(n for n in g.nodes if n.op == "torch.Tensor.__getitem__")
    stop = getitem.args[1].stop
    assert isinstance(stop, Value), "the slice bound must be computed by the graph"


def test_generators_are_flagged_and_their_draws_kept():
    def fn(x):
        a = torch.randint(0, 100, size=[1])
        return x * a + torch.rand([1])

    res = trace(fn, (torch.ones(3),))
    gens = [n for n in res.graph.nodes if n.meta.generator]
    assert [n.op for n in gens] == ["torch.randint", "torch.rand"]
    for n in gens:
        assert n.outputs[0].id in res.drawn


def test_dropout_draws_only_when_training():
    def fn(x, training):
        return F.dropout(x, 0.5, training=training)

    assert trace(fn, (torch.ones(3), True)).graph.nodes[0].meta.generator
    assert not trace(fn, (torch.ones(3), False)).graph.nodes[0].meta.generator


def test_in_place_ops_are_effects_on_a_new_version():
    def fn(x):
        y = x.clone()
        y.add_(1)
        y[0] = 5.0
        return y

    g = trace(fn, (torch.zeros(3),)).graph
    add_, setitem = g.nodes[1], g.nodes[2]
    assert add_.meta.mutates == (0,) and add_.meta.effect
    assert setitem.op == "torch.Tensor.__setitem__" and setitem.meta.mutates == (0,)
    assert g.outputs[0] == setitem.outputs[0]


def test_module_parameters_are_read_from_the_module_not_baked():
    model = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.ReLU(), torch.nn.Linear(4, 2))
    g = trace(model, (torch.ones(2, 3),)).graph
    assert not any(isinstance(c.data, torch.nn.Parameter) for c in g.constants)
    assert [e.name for e in g.externals] == ["self"]
    reads = [n.args[1] for n in g.nodes if n.op == "ivytrace.getitem"]
    assert reads.count("weight") == 2 and reads.count("bias") == 2
    assert g.arg_names == ("input",)


def test_stateful_writes_are_recorded_as_effects():
    class Box:
        pass

    box = Box()

    def fn(b, x):
        b.seen = x + 1
        return x * 2

    g = trace(fn, (box, torch.ones(2)), arg_stateful_idxs=[[0]]).graph
    writes = [n for n in g.nodes if n.op == "ivytrace.setattr"]
    assert len(writes) == 1 and writes[0].args[1] == "seen" and writes[0].meta.effect
    assert type(box) is Box


def test_unnameable_callables_are_refused_with_the_user_line():
    def private(x):
        return torch._C._nn.gelu(x)  # reachable only through a private path

    try:
        g = trace(private, (torch.ones(2),)).graph
    except TraceError as exc:
        assert "test_torch_recording.py" in str(exc)
    else:  # torch exposes this object publicly too: then it has a public name
        assert not g.nodes[0].op.startswith("torch._")


def _double(a: torch.Tensor) -> torch.Tensor:
    return a * 2


with warnings.catch_warnings():  # torch.jit.script is deprecated, but still used
    warnings.simplefilter("ignore", FutureWarning)
    _scripted_double = torch.jit.script(_double)  # runs without torch's function mode


def _disabled_torch_function(x):
    with torch._C.DisableTorchFunction():
        return x * 3


def test_a_scripted_function_is_recorded_through_its_python_body():
    """While ivytrace traces, torch.compiler.is_exporting() answers True (as under
    torch.export), and torch runs a TorchScript function's Python original: its ops are
    recorded, not refused as a tensor made by an unrecorded path."""

    def fn(x):
        return _scripted_double(x) + 1

    result = trace(fn, (torch.ones(3),))
    assert [n.op for n in result.graph.nodes] == ["torch.Tensor.mul", "torch.Tensor.add"]
    assert torch._C._len_torch_function_stack() == 0


@pytest.mark.parametrize("make", [_disabled_torch_function])
@pytest.mark.parametrize("use", ["call", "output"])
def test_a_tensor_made_by_an_unrecorded_path_is_never_a_silent_constant(make, use):
    def fn(x):
        y = make(x)
        return y + 1 if use == "call" else y

    with pytest.raises(TraceError) as info:
        trace(fn, (torch.ones(3),))
    message = str(info.value)
    assert "made while tracing" in message and "not record" in message
    assert "test_torch_recording.py" in message, "the error names the user's line"
    if use == "call":
        assert "torch.Tensor.add" in message, "the error names the op that would bake it"
        assert "return y + 1" in message
    assert torch._C._len_torch_function_stack() == 0, "nothing is left pushed"
    from torch.utils._python_dispatch import _get_current_dispatch_mode_stack

    assert not _get_current_dispatch_mode_stack()


def test_tensors_from_before_the_trace_stay_constants_and_new_ones_made_inside_do_not():
    table = torch.arange(3.0)
    made_before = table * 2  # made outside the trace: a constant, as before

    def fn(x):
        fresh = torch.ones(3) * 5  # recorded calls: computed by the graph
        return x + made_before + fresh

    g = trace(fn, (torch.ones(3),)).graph
    assert [c.data for c in g.constants] == [made_before]
    assert "torch.ones" in ops(g)


def test_structured_results_are_one_node_with_named_outputs():
    g = trace(lambda x: x.max(1).values + x.topk(2, dim=1)[1].sum(), (torch.randn(3, 4),)).graph
    assert not g.constants
    node = next(n for n in g.nodes if n.op == "torch.Tensor.max")
    assert node.out_tree.keys == ("values", "indices") and len(node.outputs) == 2
    assert node.out_tree.type is torch.return_types.max


def test_the_traced_function_is_the_users_code_even_inside_a_workspace_package():
    """``ivytrace demo`` traces a function that lives in the ivytrace package: its lines
    are the user's, not skipped like ivytrace's own frames."""
    import ivytrace_intercept

    path = os.path.join(os.path.dirname(ivytrace_intercept.__file__), "demo_like.py")
    namespace: dict = {"torch": torch}
    exec(compile("def fn(x):\n    return x * 2\n", path, "exec"), namespace)
    g = trace(namespace["fn"], (torch.ones(2),)).graph
    src = g.nodes[0].meta.source
    assert src.file == path and src.line == 2 and src.function == "fn"


def test_the_demo_names_its_own_lines():
    out = subprocess.run(
        [sys.executable, "-m", "ivytrace.cli", "demo"],
        capture_output=True,
        text=True,
        timeout=300,
        check=True,
    ).stdout
    assert "# cli.py:" in out and "in <module>" not in out
