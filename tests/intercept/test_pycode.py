"""Code run while tracing keeps ``int()``, ``float()``, ``math.sqrt`` and float literals left
of a size tracked (``ivytrace_intercept.pycode``), in the user's code and in library code it
calls (real torchvision), and the process is left as it was: every ``__code__`` is put back
when the trace ends, also when it raises, and rewritten code answers plain values exactly as
the original does."""

from __future__ import annotations

import math
import types

import pytest
import torch
from intercept_support import assert_names_resolve, ops

import ivytrace as ivy
from ivytrace_intercept import pycode, trace
from ivytrace_intercept.pycode import reachable_functions, rewrite_code

F = pytest.importorskip("torchvision.transforms.v2.functional")
geometry = pytest.importorskip("torchvision.transforms.v2.functional._geometry")

STARTPOINTS = [[0, 0], [15, 0], [15, 15], [0, 15]]
ENDPOINTS = [[1, 2], [14, 0], [13, 15], [2, 13]]

LIBRARY = {
    # torchvision's _center_crop_compute_crop_anchor: int(round((h - crop) / 2.0))
    "center_crop": (lambda x: F.center_crop(x, [4, 4]), (9, 11), [(13, 10), (20, 31), (4, 4)]),
    "five_crop": (lambda x: F.five_crop(x, [3, 4])[4], (9, 11), [(13, 10), (6, 7)]),
    # _affine_grid: (1.0 - ow) * 0.5 and 0.5 * w, float literals left of sizes
    "affine": (
        lambda x: F.affine(x, angle=30.0, translate=[2, 1], scale=0.9, shear=[5.0, 0.0]),
        (16, 20),
        [(20, 24), (7, 33)],
    ),
    "rotate": (lambda x: F.rotate(x, 30.0), (16, 20), [(20, 24), (9, 12)]),
    "rotate_expand": (lambda x: F.rotate(x, 90.0, expand=True), (16, 20), [(20, 24)]),
    "perspective": (
        lambda x: F.perspective(x, STARTPOINTS, ENDPOINTS),
        (16, 16),
        [(20, 24), (12, 30)],
    ),
}


@pytest.mark.parametrize("name", sorted(LIBRARY))
def test_torchvision_sizes_stay_tracked_at_new_image_sizes(name):
    fn, traced_at, others = LIBRARY[name]
    graph = ivy.trace_graph(fn, args=(torch.rand(1, 3, *traced_at),))
    assert_names_resolve(graph.ir)
    for hw in others:
        x = torch.rand(1, 3, *hw)
        got, want = graph(x), fn(x)
        assert got.shape == want.shape, (hw, got.shape, want.shape)
        torch.testing.assert_close(got, want)


def test_center_crop_offset_is_a_graph_node_not_a_guard():
    graph = ivy.trace_graph(LIBRARY["center_crop"][0], args=(torch.rand(1, 3, 9, 11),)).ir
    names = ops(graph)
    assert names.count("builtins.round") == 2, graph
    guards = [n for n in graph.nodes if n.op == "ivytrace.guard"]
    assert all("int()" not in (n.meta.note or "") for n in guards), graph


def _codes(functions):
    return {id(f): f.__code__ for f in functions}


def test_every_code_is_put_back_after_the_trace_and_after_an_error():
    fn = LIBRARY["center_crop"][0]
    reached = reachable_functions(fn)
    anchor = geometry._center_crop_compute_crop_anchor
    assert any(f is anchor for f in reached)
    before = _codes(reached)
    trace(fn, (torch.rand(1, 3, 9, 11),))
    assert _codes(reached) == before
    assert all(a is b for a, b in zip(_codes(reached).values(), before.values()))

    def fails(x):
        F.center_crop(x, [4, 4])
        raise ValueError("boom")

    with pytest.raises(ValueError, match="boom"):
        trace(fails, (torch.rand(1, 3, 9, 11),))
    assert all(f.__code__ is before[id(f)] for f in reached)


def plain_values(s, n, x):
    return (
        int(s, 16), int(), int(x), int("7"), float(), float("inf"), float(n), float(s.upper() and 3),  # noqa: UP018
        isinstance(n, int), isinstance(x, float), 0.5 * n, 1.0 - n, 2.0 / n, 0.5 < n, 1.5 == x,
        math.sqrt(x), math.pi, [int, float][0](x), int(x) is int(x) or True,
    )  # fmt: skip


def test_rewritten_code_answers_plain_values_as_the_original():
    new = rewrite_code(plain_values.__code__, plain_values.__globals__)
    assert new is not None and new is not plain_values.__code__
    rewritten = types.FunctionType(new, plain_values.__globals__)
    for args in (("1f", 3, 2.5), ("a", 7, 9.0), ("0", -4, 0.25)):
        got, want = rewritten(*args), plain_values(*args)
        assert got == want
        assert [type(v) for v in got] == [type(v) for v in want]


def test_isinstance_and_attribute_uses_of_int_are_not_rewritten():
    def uses(x):
        return isinstance(x, int), torch.int, int.from_bytes(b"\x01", "big")

    new = rewrite_code(uses.__code__, uses.__globals__)
    assert new is None


def _codes_of(modules):
    """Every code object of the functions (and the code nested in them) of ``modules``."""
    out, seen = [], set()

    def walk(code):
        if id(code) not in seen:
            seen.add(id(code))
            out.append(code)
            for c in code.co_consts:
                if isinstance(c, types.CodeType):
                    walk(c)

    for mod in modules:
        for v in vars(mod).values():
            for f in (v, *vars(v).values()) if isinstance(v, type) else (v,):
                f = getattr(f, "__func__", f)
                if isinstance(f, types.FunctionType):
                    walk(f.__code__)
    return out


@pytest.mark.skipif(pycode._CACHES is None, reason="the rewrite knows 3.11's bytecode only")
def test_global_sites_found_without_decoding_equal_the_decoded_ones():
    """The scan finds ``LOAD_GLOBAL`` sites by their opcode byte (no full decode); on the
    code of libraries full of globals, ``EXTENDED_ARG`` prefixes and attribute reads they
    are exactly the sites the instruction-by-instruction decode finds."""
    import argparse
    import email.message
    import json.decoder

    import transformers.modeling_utils
    import transformers.models.bert.modeling_bert

    # and a function naming 300 globals before ``int``, ``math`` and ``len``: their name
    # indices need an EXTENDED_ARG
    names = " + ".join(f"g{i}" for i in range(300))
    src = f"def wide(x):\n    y = {names}\n    return int(x) + math.sqrt(x) + len(y)\n"
    scope: dict = {}
    exec(compile(src, "<wide>", "exec"), scope)
    codes = [*_codes_of([
        argparse, email.message, json.decoder, transformers.modeling_utils,
        transformers.models.bert.modeling_bert, torch.nn.functional,
    ]), scope["wide"].__code__]  # fmt: skip
    assert len(codes) > 1000
    key = ("kind", "start", "units", "arg")
    wide = 0
    for code in codes:
        decoded = [
            tuple(getattr(s, k) for k in key)
            for s in pycode._decoded_sites(code)
            if s.kind != "literal"
        ]
        found = [tuple(getattr(s, k) for k in key) for s in pycode._global_sites(code.co_code)]
        assert found == decoded, code
        wide += any(units > 6 for _, _, units, _ in found)  # an EXTENDED_ARG prefix read
    assert wide, "no site with an EXTENDED_ARG prefix was compared"
