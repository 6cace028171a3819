"""The size check looks at moved sizes on the meta device first (``metaretrace.on_meta``):
no arithmetic where the graph does not depend on the sizes, a real retrace wherever that
look cannot settle it, and the user's arrays as they were."""

from __future__ import annotations

import torch

import ivytrace as ivy


def _devices_seen(fn):
    """``fn`` wrapped to note the device each call's first computed array is on."""
    seen: list[tuple[tuple[int, ...], str]] = []

    def wrapped(x):
        y = x * 2
        seen.append((tuple(x.shape), y.device.type))
        return fn(x, y)

    return wrapped, seen


def test_a_graph_that_does_not_depend_on_sizes_is_checked_without_computing():
    def body(x, y):
        pos = torch.arange(x.shape[1], device=x.device)  # the device, as transformers passes it
        return (y + pos).softmax(-1).sum(0)

    fn, seen = _devices_seen(body)
    x = torch.randn(3, 5)
    graph = ivy.trace_graph(fn, args=(x,), check_sizes=True)
    assert seen[0] == ((3, 5), "cpu")
    assert seen[1:], "the size check did not look at moved sizes"
    assert all(device == "meta" for _, device in seen[1:]), seen  # no real retrace
    other = torch.randn(4, 7)
    assert torch.allclose(graph(other), body(other, other * 2))


def test_a_move_the_meta_look_cannot_settle_is_traced_for_real_and_pinned():
    """``.item()`` needs a value: the look fails, the real retrace finds the baked
    ``range``, and the size is pinned as before."""

    def body(x, y):
        scale = y.abs().max().item()  # a value: no meta answer
        return torch.stack([y[i] * scale for i in range(x.shape[0])])  # range(n): baked

    fn, seen = _devices_seen(body)
    x = torch.randn(3, 2)
    graph = ivy.trace_graph(fn, args=(x,), check_sizes=True)
    assert ("meta" in {d for _, d in seen[1:]}) and ("cpu" in {d for _, d in seen[1:]}), seen
    try:
        graph(torch.randn(4, 2))
    except Exception as exc:  # the pin: a guard naming the size
        assert "shape[0]" in str(exc), exc
    else:
        raise AssertionError("a graph with a baked range(n) answered another size")


def test_writes_in_the_meta_look_leave_the_users_arrays_as_they_were():
    buf = torch.zeros(4)

    def body(x, y):
        out = torch.zeros(x.shape[0], 4)
        out.add_(buf)  # written in place: the same array comes back, as torch gives it
        out[:, 0] = y[:, 0]
        return out * x.shape[0]

    fn, seen = _devices_seen(body)
    x = torch.randn(3, 4)
    before = x.clone()
    graph = ivy.trace_graph(fn, args=(x,), check_sizes=True)
    assert [d for _, d in seen[1:]] and all(d == "meta" for _, d in seen[1:]), seen
    assert torch.equal(x, before) and torch.equal(buf, torch.zeros(4))
    other = torch.randn(5, 4)
    assert torch.allclose(graph(other), body(other, other * 2))
