"""Never silently wrong: the classes of silently wrong answers the sweeps found, each with
a real op translated to tensorflow, jax and numpy and called at NEW shapes and values
against torch. Each answer is within tolerance, or the call refuses by name (an ivytrace
error such as ``GuardFailure``) -- never a wrong number.

- an untracked alias of a traced tensor (``x.as_subclass(cls)``, torchvision's
  ``tv_tensors.Image(x)``) was captured as a constant: the output kept the example's data;
- a count reduced by a correction below zero (``var`` of an empty tensor): torch divides
  by ``max(0, n - correction)``;
- a rule read the example's output shapes (``linalg.lstsq``'s residuals);
- a size used as a Python count in a target's code (``range(k)`` over a weight's kernel
  size in the numpy convolution), which Python reads without asking the tracked int.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch

import ivytrace_transpile as it
from ivytrace_ir import GuardFailure
from ivytrace_transpile.translate import to_target

TARGETS = ("tensorflow", pytest.param("jax", marks=pytest.mark.slow), "numpy")


def _check(fn, example, new, target, *, atol=1e-4):
    """``fn`` translated on ``example``; on ``new`` it answers as torch does or refuses."""
    tr = it.transpile(fn, target=target, args=example, retrace=False)  # one translation
    tgt = it.get_target(target)
    with torch.no_grad():
        ref = fn(*new)
    try:
        got = tr(*[to_target(t, tgt) for t in new])
    except GuardFailure:
        return "refused"
    refs, gots = _leaves(ref), _leaves(got)
    assert len(refs) == len(gots)
    for r, g in zip(refs, gots):
        g = np.asarray(g)
        r = r.detach().numpy()
        assert g.shape == r.shape, (g.shape, r.shape)
        np.testing.assert_allclose(g, r, atol=atol, rtol=1e-4, equal_nan=True)
    return "right"


def _leaves(x):
    if isinstance(x, tuple | list):
        return [leaf for item in x for leaf in _leaves(item)]
    return [x]


@pytest.mark.parametrize("target", TARGETS)
def test_untracked_alias_is_the_traced_tensor(target):
    tv_tensors = pytest.importorskip("torchvision.tv_tensors")

    def to_image(x):
        return tv_tensors.Image(x) * 2  # Image(x): torch.as_tensor(x).as_subclass(Image)

    got = _check(to_image, (torch.rand(3, 16, 16),), (torch.rand(3, 20, 24),), target)
    assert got == "right"


@pytest.mark.parametrize("target", TARGETS)
def test_as_subclass_output(target):
    class Tagged(torch.Tensor):
        pass

    def f(x):
        return (x + 1).as_subclass(Tagged)

    assert _check(f, (torch.rand(2, 3),), (torch.rand(4, 5),), target) == "right"


@pytest.mark.parametrize("target", TARGETS)
def test_variance_of_too_few_elements_is_nan(target):
    def f(x):
        return torch.var(x, True), torch.std_mean(x, True)

    # traced on 5 x 5; called on an empty tensor and on one element: torch gives nan
    for new in (torch.rand(0, 5), torch.rand(1, 1)):
        assert _check(f, (torch.rand(5, 5),), (new,), target) == "right"


@pytest.mark.parametrize("target", TARGETS)
def test_variance_with_large_correction(target):
    def f(x):
        return torch.var(x, dim=1, correction=3)

    assert _check(f, (torch.rand(4, 6),), (torch.rand(3, 2),), target) == "right"


@pytest.mark.parametrize("target", ["tensorflow", "numpy"])
def test_lstsq_residuals_follow_the_sizes_not_the_example(target):
    def f(a, b):
        return torch.linalg.lstsq(a, b, driver="gels")

    g = torch.Generator().manual_seed(0)
    wide = (torch.randn(2, 3, generator=g), torch.randn(2, 3, generator=g))
    tall = (torch.randn(4, 3, generator=g), torch.randn(4, 3, generator=g))
    # traced with m < n (no residuals): at m > n the residuals come from the tracked sizes
    # (k * (m > n) as 0/1 arithmetic, not a guard), so one translation answers both
    assert _check(f, wide, tall, target, atol=1e-3) == "right"
    # traced with m > n: residuals computed, at a new m
    tall2 = (torch.randn(6, 3, generator=g), torch.randn(6, 3, generator=g))
    assert _check(f, tall, tall2, target, atol=1e-3) == "right"


@pytest.mark.parametrize("target", TARGETS)
def test_conv_kernel_size_is_not_baked(target):
    def f(x, w):
        return torch.nn.functional.conv1d(x, w), torch.nn.functional.conv1d(x, w, padding="same")

    g = torch.Generator().manual_seed(0)
    example = (torch.randn(2, 3, 8, generator=g), torch.randn(4, 3, 3, generator=g))
    same_kernel = (torch.randn(2, 3, 11, generator=g), torch.randn(4, 3, 3, generator=g))
    assert _check(f, example, same_kernel, target, atol=1e-3) == "right"
    bigger_kernel = (torch.randn(2, 3, 9, generator=g), torch.randn(4, 3, 5, generator=g))
    _check(f, example, bigger_kernel, target, atol=1e-3)  # right or refused, never wrong


@pytest.mark.parametrize("target", TARGETS)
def test_strided_grouped_conv1d(target):
    """A strided depthwise Conv1d (speech encoders' downsampling): tensorflow's depthwise
    conv takes equal strides only, and a 1-d conv runs as 2-d over a unit height."""

    def f(x, w, wg):
        conv = torch.nn.functional.conv1d
        return conv(x, w, stride=2, padding=2, groups=8), conv(x, wg, stride=3, groups=2)

    g = torch.Generator().manual_seed(0)
    w, wg = torch.randn(8, 1, 5, generator=g), torch.randn(8, 4, 3, generator=g)
    example = (torch.randn(2, 8, 11, generator=g), w, wg)
    new = (torch.randn(3, 8, 16, generator=g), w, wg)
    assert _check(f, example, new, target, atol=1e-3) == "right"


# -- writes the op's name does not announce --------------------------------------------------
# ``F.batch_norm`` in training mode updates the running statistics it is given (without
# moving torch's version counters: the op facts' ``STAT_WRITES`` say so), and
# ``F.embedding(..., max_norm=)`` renormalises rows of its weight in place (the version
# counter shows it). A translation computes without writing into arrays: where the code
# reads the written array afterwards it would read the old values, so it refuses by name.


def _bn_then_read(x, rm, rv):
    y = torch.nn.functional.batch_norm(x, rm, rv, training=True)
    return y + rm.sum()


def _embedding_then_read(i, w):
    y = torch.nn.functional.embedding(i, w, max_norm=1.0)
    return y.sum() + w.sum()


@pytest.mark.parametrize("target", TARGETS)
def test_a_write_read_afterwards_is_refused_by_name(target):
    x = torch.rand(4, 3)
    with pytest.raises(it.TranspileError) as err:
        it.transpile(_bn_then_read, target=target, args=(x, torch.zeros(3), torch.ones(3)))
    msg = str(err.value)
    assert "batch_norm" in msg and "_bn_then_read" in msg and "rm.sum()" in msg, msg
    assert "argument 1 and argument 2" in msg, msg
    w = torch.randn(5, 3) * 3
    with pytest.raises(it.TranspileError, match=r"embedding.*argument 1.*w\.sum\(\)"):
        it.transpile(_embedding_then_read, target=target, args=(torch.tensor([0, 2]), w))


def _bn_only(x, rm, rv):
    return torch.nn.functional.batch_norm(x, rm, rv, training=True) * 2


@pytest.mark.parametrize("target", TARGETS)
def test_a_write_nothing_reads_translates(target):
    """Nothing after the batch norm reads the statistics: its output (batch statistics) is
    all the function gives, and that translates."""
    assert (
        _check(
            _bn_only,
            (torch.rand(4, 3), torch.zeros(3), torch.ones(3)),
            (torch.rand(6, 3) * 5, torch.rand(3), torch.rand(3) + 1),
            target,
        )
        == "right"
    )


def _two_bns(x, rm, rv):
    """A module applied twice in training mode: the second batch norm reads the statistics
    the first updated, but only to update them again (its output is batch statistics)."""
    y = torch.nn.functional.batch_norm(x, rm, rv, training=True)
    return torch.nn.functional.batch_norm(y * 2, rm, rv, training=True)


def _two_bns_then_eval(x, rm, rv):
    y = _two_bns(x, rm, rv)
    return torch.nn.functional.batch_norm(y, rm, rv, training=False)


@pytest.mark.parametrize("target", TARGETS)
def test_a_training_batch_norm_reading_stats_only_to_update_them_translates(target):
    args = (torch.rand(4, 3), torch.zeros(3), torch.ones(3))
    new = (torch.rand(6, 3) * 5, torch.rand(3), torch.rand(3) + 1)
    assert _check(_two_bns, args, new, target) == "right"
    with pytest.raises(it.TranspileError, match=r"batch_norm.*reads it afterwards"):
        it.transpile(_two_bns_then_eval, target=target, args=args)


def test_the_traced_graph_keeps_a_write_nothing_reads():
    """The compiled graph replays the running-statistics update even though nothing reads
    what batch norm returns (it is an effect, not dead code)."""
    import ivytrace as ivy

    def f(x, rm, rv):
        torch.nn.functional.batch_norm(x, rm, rv, training=True)
        return x * 2

    x = torch.rand(4, 3)
    g = ivy.trace_graph(f, args=(x, torch.zeros(3), torch.ones(3)))
    rm, want = torch.zeros(3), torch.zeros(3)
    g(x, rm, torch.ones(3))
    f(x, want, torch.ones(3))
    assert torch.count_nonzero(want) and torch.allclose(rm, want)
