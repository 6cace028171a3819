"""The eight transformers models translated to TensorFlow and JAX (and NumPy for ResNet
and BERT), checked against torch on the traced inputs and on a new batch size and
sequence length / image size: max abs error <= 1e-4."""

from __future__ import annotations

import importlib.util
import pathlib

import numpy as np
import pytest
import torch

import ivytrace as ivy
import ivytrace_transpile as it
from ivytrace_transpile.translate import to_target

_spec = importlib.util.spec_from_file_location(
    "model_zoo", pathlib.Path(__file__).with_name("model_zoo.py")
)
zoo = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(zoo)

pytestmark = [pytest.mark.slow, pytest.mark.filterwarnings("ignore::UserWarning")]

CASES = [(m, t) for m in zoo.MODELS for t in ("tensorflow", "jax")]
CASES += [("resnet", "numpy"), ("bert", "numpy")]


@pytest.mark.parametrize(("name", "target"), CASES)
def test_model_translates_and_matches_torch_on_new_shapes(name, target):
    build, inputs, field = zoo.MODELS[name]
    torch.manual_seed(0)
    model = build().eval()
    tm = ivy.transpile(model, target=target, kwargs=inputs(2, 7))
    assert all(c.ok for c in tm.translation.checks)
    tgt = it.get_target(target)
    roots = {op.split(".")[0] for op in tm.graph.ops}
    assert roots <= {target, "operator", "ivytrace", "builtins", "math"}, roots
    for batch, seq in ((2, 7), (3, 11)):
        x = inputs(batch, seq)
        with torch.no_grad():
            want = model(**x)
        got = tm(
            **{k: to_target(v, tgt) if isinstance(v, torch.Tensor) else v for k, v in x.items()}
        )
        assert type(got).__name__ == type(want).__name__  # out.logits still works
        err = float(np.max(np.abs(np.asarray(getattr(got, field)) - getattr(want, field).numpy())))
        assert err <= 1e-4, (name, target, batch, seq, err)
