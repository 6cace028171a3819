"""Re-specialisation: a translation made from example inputs meets, at a new input, a
decision of the user's code that goes the other way (a failed guard); it traces the
source again there, translates, validates and keeps the new specialisation beside the
first (``retrace=True``, the default), up to a limit per input structure; ``retrace=False``
raises ``GuardFailure`` as a single translation does. Real torch, torchvision and target
frameworks; no mocks."""

from __future__ import annotations

import importlib
import sys
import warnings

import numpy as np
import pytest
import torch
import torchvision.transforms.v2.functional  # noqa: F401  (loaded before center_crop's trace)

import ivytrace_transpile as it
from ivytrace_ir import GuardFailure
from ivytrace_transpile.specialize import RetraceLimitError, RetraceWarning
from ivytrace_transpile.translate import to_target

TARGETS = ("numpy", "tensorflow", pytest.param("jax", marks=pytest.mark.slow))


def squeezed(x):
    return x.squeeze() * 2  # the dims squeeze drops are a decision on the sizes


def _count(tc) -> int:
    return len(tc.specialisations)


def _run(tc, target, *xs):
    tgt = it.get_target(target)
    return np.asarray(tc(*[to_target(x, tgt) for x in xs]))


@pytest.mark.parametrize("target", TARGETS)
def test_squeeze_respecialises_at_a_size_that_is_no_longer_one(target):
    a, b = torch.randn(1, 3), torch.randn(2, 3)
    tc = it.transpile(squeezed, target=target, args=(a,))
    np.testing.assert_allclose(_run(tc, target, a), squeezed(a).numpy(), rtol=1e-6)
    with pytest.warns(RetraceWarning) as record:
        got = _run(tc, target, b)
    np.testing.assert_allclose(got, squeezed(b).numpy(), rtol=1e-6)
    assert got.shape == (2, 3)
    msg = str(record[0].message)
    assert "x.shape[0] == 1 (was True when traced)" in msg, msg
    assert "test_retrace.py" in msg and "x.squeeze()" in msg, msg  # the user's line
    assert _count(tc) == 2
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no new trace: the first one answers again
        np.testing.assert_allclose(_run(tc, target, a), squeezed(a).numpy(), rtol=1e-6)
        np.testing.assert_allclose(_run(tc, target, b), squeezed(b).numpy(), rtol=1e-6)
    assert _count(tc) == 2 and "2 specialisation(s)" in repr(tc)


@pytest.mark.parametrize("target", ["numpy", "tensorflow"])
def test_retrace_false_raises_the_guard_failure(target):
    tc = it.transpile(squeezed, target=target, args=(torch.randn(1, 3),), retrace=False)
    with pytest.raises(GuardFailure) as info:
        _run(tc, target, torch.randn(2, 3))
    assert not isinstance(info.value, RetraceLimitError)
    assert _count(tc) == 1


def center_crop(img):
    # the import inside the function is found by the code rewrite (pycode._imported); the
    # module must be loaded when the trace starts (it is: imported at the top of this file),
    # as a module first imported during a trace is not rewritten (its sizes are guarded)
    from torchvision.transforms.v2 import functional as F

    return F.center_crop(img, [4, 4])


@pytest.mark.parametrize("target", TARGETS)
def test_torchvision_center_crop_stays_one_translation_at_new_sizes(target):
    """torchvision computes the crop's offsets with int(round((h - ch) / 2.0)); the trace's
    code rewrite reaches torchvision through the import inside ``center_crop`` and keeps the
    offsets tracked, so one translation answers square, wide and tall images."""
    tc = it.transpile(center_crop, target=target, args=(torch.rand(3, 8, 8),))
    with warnings.catch_warnings():
        warnings.simplefilter("error", RetraceWarning)
        for hw in ((8, 8), (8, 11), (13, 8), (5, 9)):
            img = torch.rand(3, *hw)
            np.testing.assert_allclose(_run(tc, target, img), center_crop(img).numpy())
    assert _count(tc) == 1


def by_length(x):
    n = x.shape[0]
    if n == 1:
        return x
    if n == 2:
        return x + 1
    if n == 3:
        return x + 2
    return x * 3


def test_the_limit_names_the_decision_that_keeps_changing():
    tc = it.transpile(by_length, target="numpy", args=(torch.randn(1, 3),), retrace=3)
    with pytest.warns(RetraceWarning):
        for n in (2, 3):
            x = torch.randn(n, 3)
            np.testing.assert_allclose(_run(tc, "numpy", x), by_length(x).numpy(), rtol=1e-6)
    assert _count(tc) == 3
    with pytest.raises(RetraceLimitError) as info:
        _run(tc, "numpy", torch.randn(4, 3))
    msg = str(info.value)
    assert isinstance(info.value, GuardFailure)
    assert "3 specialisations are held" in msg, msg
    assert "x.shape[0] == 1" in msg and "if n == 1:" in msg, msg
    assert "retrace=" in msg  # what would make it work
    assert _count(tc) == 3
    assert it.transpile(by_length, target="numpy", args=(torch.randn(1, 3),)).retrace_limit == 8


def test_retrace_takes_a_bool_or_a_count():
    with pytest.raises(ValueError, match="retrace="):
        it.transpile(squeezed, target="numpy", args=(torch.randn(1, 3),), retrace=0)


def reshaped(x):
    return x.squeeze().reshape(3)


def test_inputs_the_source_rejects_give_a_guard_failure_not_a_torch_error():
    tc = it.transpile(reshaped, target="numpy", args=(torch.randn(1, 3),))
    with pytest.warns(RetraceWarning), pytest.raises(GuardFailure) as info:
        _run(tc, "numpy", torch.randn(2, 3))
    assert "not inputs the code takes" in str(info.value)
    assert "RuntimeError" in str(info.value)  # what torch said
    assert _count(tc) == 1


class Head(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = torch.nn.Linear(3, 4)

    def forward(self, x):
        return self.fc(x).squeeze(0)  # squeeze(0) keeps dim 0 unless it is 1


def _head_translated(target):
    """A seeded ``Head``, inputs at batch 1 and 2, and its translation traced at batch 1."""
    torch.manual_seed(0)
    m = Head().eval()
    a, b = torch.randn(1, 3), torch.randn(2, 3)
    return m, a, b, it.transpile(m, target=target, args=(a,))


@pytest.mark.parametrize(
    "target", ["numpy", "tensorflow", pytest.param("jax", marks=pytest.mark.slow)]
)
def test_a_module_keeps_one_set_of_weights_across_specialisations(target):
    m, a, b, tc = _head_translated(target)
    with pytest.warns(RetraceWarning):
        got = _run(tc, target, b)
    with torch.no_grad():
        np.testing.assert_allclose(got, m(b).numpy(), rtol=1e-5, atol=1e-6)
    (_, first), (_, second) = tc.specialisations
    assert first.params is second.params is tc.params  # one dict, one set
    key = next(k for k in tc.params if k.endswith("bias"))
    tc.params[key] = tc.params[key] + 1  # an edit reaches every specialisation
    with torch.no_grad():
        np.testing.assert_allclose(_run(tc, target, a), m(a).numpy() + 1, rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(_run(tc, target, b), m(b).numpy() + 1, rtol=1e-5, atol=1e-6)


_OTHER_VALUE = r"weight 'fc\.weight' into another layout or value"


@pytest.mark.parametrize(
    "target", ["numpy", "tensorflow", pytest.param("jax", marks=pytest.mark.slow)]
)
def test_a_torch_weight_edited_before_a_new_specialisation_is_refused(target):
    m, _, b, tc = _head_translated(target)
    kept = m.fc.weight.detach().clone()
    with torch.no_grad():
        m.fc.weight[0, 0] += 1.0  # the conversion at b would disagree with the first one
    with pytest.warns(RetraceWarning), pytest.raises(it.TranspileError, match=_OTHER_VALUE):
        _run(tc, target, b)
    with torch.no_grad():
        m.fc.weight.copy_(kept)  # the same bytes again: the weights can be shared
    with pytest.warns(RetraceWarning):
        got = _run(tc, target, b)
    with torch.no_grad():
        np.testing.assert_allclose(got, m(b).numpy(), rtol=1e-5, atol=1e-6)


def test_a_keras_class_keeps_its_variables_across_specialisations():
    import tensorflow as tf

    TFHead = it.transpile(Head, target="tensorflow", output_dir=False)
    torch.manual_seed(0)
    layer = TFHead()
    a, b = torch.randn(1, 3), torch.randn(2, 3)
    with torch.no_grad():
        ref_a, ref_b = layer._module(a).numpy(), layer._module(b).numpy()
    np.testing.assert_allclose(np.asarray(layer(tf.constant(a.numpy()))), ref_a, rtol=1e-5)
    names = sorted(v.path for v in layer.weights)
    with pytest.warns(RetraceWarning):
        got = layer(tf.constant(b.numpy()))
    np.testing.assert_allclose(np.asarray(got), ref_b, rtol=1e-5, atol=1e-6)
    assert sorted(v.path for v in layer.weights) == names  # no second set of variables
    bias = next(v for v in layer.weights if v.path.endswith("bias"))
    bias.assign(bias + 1.0)  # fine-tuning reaches both specialisations
    np.testing.assert_allclose(np.asarray(layer(tf.constant(a.numpy()))), ref_a + 1, rtol=1e-5)
    np.testing.assert_allclose(np.asarray(layer(tf.constant(b.numpy()))), ref_b + 1, rtol=1e-5)


def picked(x, idx):
    return x.index_select(0, idx).squeeze()


@pytest.mark.slow
def test_jax_int32_indices_reach_torch_as_the_int64_it_traced():
    import jax.numpy as jnp

    x = torch.randn(4, 3)
    tc = it.transpile(picked, target="jax", args=(x, torch.tensor([2])))
    idx = torch.tensor([0, 3])
    with pytest.warns(RetraceWarning):
        got = tc(jnp.asarray(x.numpy()), jnp.asarray(idx.numpy().astype(np.int32)))
    np.testing.assert_allclose(np.asarray(got), picked(x, idx).numpy(), rtol=1e-6)
    assert [tr.source.inputs[1].spec.dtype for _, tr in tc.specialisations] == ["int64"] * 2


def test_the_written_package_raises_naming_the_decision_at_another_specialisation(tmp_path):
    a, b = torch.randn(1, 3), torch.randn(2, 3)
    tc = it.transpile(squeezed, target="numpy", args=(a,))
    with pytest.warns(RetraceWarning):
        _run(tc, "numpy", b)
    path = tc.save(tmp_path, name="squeezed_pkg")
    readme = (path / "README.md").read_text()
    assert "## Specialisations" in readme and "x.shape[0] == 1" in readme, readme
    sys.path.insert(0, str(tmp_path))
    try:
        pkg = importlib.import_module("squeezed_pkg")
        np.testing.assert_allclose(pkg.forward(b.numpy()), squeezed(b).numpy(), rtol=1e-6)
        with pytest.raises(ValueError) as info:  # the other specialisation: never answered
            pkg.forward(a.numpy())
    finally:
        sys.path.remove(str(tmp_path))
        sys.modules.pop("squeezed_pkg", None)
        sys.modules.pop("squeezed_pkg.model", None)
    msg = str(info.value)
    assert "x.shape[0] == 1" in msg and "float32[1, 3]" in msg, msg


def test_under_tf_function_a_new_specialisation_is_made_eagerly_first():
    import tensorflow as tf

    tc = it.transpile(squeezed, target="tensorflow", args=(torch.randn(1, 3),))
    compiled = tf.function(lambda x: tc(x))
    b = torch.randn(2, 3)
    with pytest.raises(Exception, match=r"call the translation once outside tf\.function"):
        compiled(tf.constant(b.numpy()))  # symbolic inputs: torch cannot run on them
    assert _count(tc) == 1
    with pytest.warns(RetraceWarning):
        tc(tf.constant(b.numpy()))  # once eagerly: the specialisation is kept...
    got = compiled(tf.constant(b.numpy()))  # ...and tf.function's new trace uses it
    np.testing.assert_allclose(np.asarray(got), squeezed(b).numpy(), rtol=1e-6)


@pytest.mark.slow
def test_under_jax_jit_a_new_specialisation_is_made_eagerly_first():
    import jax
    import jax.numpy as jnp

    tc = it.transpile(squeezed, target="jax", args=(torch.randn(1, 3),))
    compiled = jax.jit(lambda x: tc(x))
    b = torch.randn(2, 3)
    with pytest.raises(GuardFailure, match=r"call the translation once outside jax\.jit"):
        compiled(jnp.asarray(b.numpy()))
    with pytest.warns(RetraceWarning):
        tc(jnp.asarray(b.numpy()))
    np.testing.assert_allclose(np.asarray(compiled(jnp.asarray(b.numpy()))), squeezed(b).numpy())
