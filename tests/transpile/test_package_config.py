"""A model built from a config is written as one (issue 20): its classes take the config
and build their layers from it (``Linear(config.hidden_size, self.all_head_size)``), the
config's fields the constructors read are the package's ``CONFIG``, and another config
builds other layers. The sizes' origins are recorded by building the model again from a
config whose numbers remember where they came from (``modulegen.configdata``), not by
matching equal values. Real transformers models (random weights), tensorflow packages."""

from __future__ import annotations

import random
import re
import sys
import warnings

import numpy as np
import pytest
import torch
from transpile_support import import_package

import ivytrace_transpile as it

tr = pytest.importorskip("transformers")


def _bert():
    cfg = tr.BertConfig(
        vocab_size=101,
        hidden_size=48,
        num_hidden_layers=2,
        num_attention_heads=6,
        intermediate_size=37,
        max_position_embeddings=64,
    )
    torch.manual_seed(0)
    return tr.BertModel(cfg).eval()


@pytest.fixture(scope="module")
def bert_package(tmp_path_factory):
    model = _bert()
    ids = torch.randint(0, 101, (2, 7), generator=torch.Generator().manual_seed(1))
    mask = torch.ones(2, 7, dtype=torch.long)
    mask[1, 5:] = 0
    rng_before = torch.get_rng_state()
    tc = it.transpile(
        model,
        target="tensorflow",
        kwargs={"input_ids": ids, "attention_mask": mask},
        output_dir=False,
    )
    assert torch.equal(torch.get_rng_state(), rng_before)
    path = tc.save(tmp_path_factory.mktemp("config"), name="bert_config_pkg")
    return model, path


def _class(source: str, name: str) -> str:
    m = re.search(rf"^class {name}\(.*?(?=^class |\Z)", source, flags=re.M | re.S)
    assert m, name
    return m.group(0)


def test_classes_take_the_config(bert_package):
    model, path = bert_package
    source = (path / "model.py").read_text()
    root = _class(source, "BertModel")
    assert "def __init__(self, config=None, weights=True, **kwargs):" in root
    assert "BertEncoder(config, name='encoder')" in root
    attention = _class(source, "BertSelfAttention")
    assert "def __init__(self, config, **kwargs):" in attention
    # the attributes as torch's constructor defines them, read by name
    defined = {
        "self.attention_head_size = int(config.hidden_size / self.num_attention_heads)",
        "self.all_head_size = self.num_attention_heads * self.attention_head_size",
    }
    assert all(line in attention for line in defined), attention
    assert "Linear(config.hidden_size, self.all_head_size, name='query')" in attention
    assert "Linear(config.intermediate_size, config.hidden_size" in _class(source, "BertOutput")
    embeddings = _class(source, "BertEmbeddings")
    assert "Embedding(config.vocab_size, config.hidden_size" in embeddings
    # buffers made from config sizes: arange(...).expand((1, -1)), zeros(that.size())
    for buffer in ("position_ids", "token_type_ids"):
        want = f"self.{buffer} = self.add_weight((1, config.max_position_embeddings), "
        assert want in embeddings, embeddings
    # the data: the fields read, with the model's values
    pkg = import_package(path)
    mod = sys.modules.get("bert_config_pkg.model") or pkg.model
    expect = {
        k: getattr(model.config, k)
        for k in (
            "hidden_size",
            "intermediate_size",
            "max_position_embeddings",
            "num_attention_heads",
            "type_vocab_size",
            "vocab_size",
        )
    }
    assert mod.CONFIG == expect


def test_package_answers_like_torch(bert_package):
    model, path = bert_package
    pkg = import_package(path)
    ids = torch.randint(0, 101, (3, 5), generator=torch.Generator().manual_seed(2))
    mask = torch.ones(3, 5, dtype=torch.long)
    mask[0, 3:] = 0
    with torch.no_grad():
        want = model(input_ids=ids, attention_mask=mask).last_hidden_state.numpy()
    with warnings.catch_warnings(record=True) as said:
        warnings.simplefilter("always")
        net = pkg.BertModel()  # its own config: nothing to say
    assert not [w for w in said if "differs" in str(w.message)]
    got = net(input_ids=ids.numpy(), attention_mask=mask.numpy())
    got = got["last_hidden_state"] if isinstance(got, dict) else got.last_hidden_state
    np.testing.assert_allclose(np.asarray(got), want, atol=2e-5, rtol=1e-4)


def test_another_config_builds_other_layers(bert_package):
    _, path = bert_package
    pkg = import_package(path)
    mod = pkg.model if hasattr(pkg, "model") else sys.modules["bert_config_pkg.model"]
    other = {**mod.CONFIG, "hidden_size": 60, "num_attention_heads": 5, "intermediate_size": 29}
    # the forward keeps the translated sizes (a reshape to heads of 8): said, not silent
    with pytest.warns(UserWarning, match=r"differs .* \['hidden_size', 'intermediate_size'"):
        net = pkg.BertModel(config=other, weights=False)
    layer = net.encoder.layer[0]
    assert tuple(layer.intermediate.dense.weight.shape) == (60, 29)
    assert layer.attention.self.attention_head_size == 12
    assert tuple(layer.attention.self.query.weight.shape) == (60, 60)
    assert tuple(net.embeddings.word_embeddings.weight.shape)[1] == 60
    other["max_position_embeddings"] = 80
    with pytest.warns(UserWarning, match="max_position_embeddings"):
        net = pkg.BertModel(config=other, weights=False)
    assert tuple(net.embeddings.position_ids.shape) == (1, 80)
    # a transformers config object is read by its fields
    cfg = tr.BertConfig(**{**other, "num_hidden_layers": 2})
    with pytest.warns(UserWarning, match="num_attention_heads"):
        net = pkg.BertModel(config=cfg, weights=False)
    assert tuple(net.pooler.dense.weight.shape) == (60, 60)


def test_the_frameworks_are_left_as_they_were(bert_package):
    model, _ = bert_package
    modeling = sys.modules[type(model).__module__]
    assert "int" not in vars(modeling)  # int is the builtin again in transformers' code
    assert sys.getprofile() is None
    assert type(model.config.hidden_size) is int
    assert next(model.parameters()).device.type == "cpu"


class Widths(torch.nn.Module):
    """Built from a config, but its constructor draws a width: built again, it does not
    come out alike, so the package keeps the widths it saw."""

    def __init__(self, config):
        super().__init__()
        self.config = config
        self.lin = torch.nn.Linear(config.width, random.randint(3, 9))

    def forward(self, x):
        return self.lin(x)


class Plain(torch.nn.Module):
    def __init__(self, width):
        super().__init__()
        self.lin = torch.nn.Linear(width, 5)

    def forward(self, x):
        return self.lin(x)


@pytest.mark.parametrize("case", ["drawn", "plain"])
def test_literals_where_the_build_cannot_be_read(case, tmp_path):
    random.seed(0)
    net = Widths(tr.PretrainedConfig(width=4)) if case == "drawn" else Plain(4)
    if case == "drawn":
        random.seed(5)  # the second build draws another width
    tc = it.transpile(net.eval(), target="tensorflow", args=(torch.randn(2, 4),), output_dir=False)
    source = (tc.save(tmp_path, name=f"{case}_pkg") / "model.py").read_text()
    assert "CONFIG" not in source and "config." not in source
    assert "Linear(4, " in source


@pytest.mark.slow
def test_sizes_handed_to_a_constructor(tmp_path):
    """ResNet's stages are handed their widths (``ResNetStage(config, in_channels,
    out_channels)``) without keeping them as attributes: the arguments ``__init__`` was
    handed give their origins (``config.hidden_sizes[0]``)."""
    cfg = tr.ResNetConfig(
        embedding_size=8, hidden_sizes=[8, 16, 24, 32], depths=[1, 2, 1, 1], layer_type="bottleneck"
    )
    torch.manual_seed(0)
    model = tr.ResNetModel(cfg).eval()
    x = torch.randn(2, 3, 32, 32)
    tc = it.transpile(model, target="tensorflow", args=(x,), output_dir=False)
    path = tc.save(tmp_path, name="resnet_config_pkg")
    encoder = _class((path / "model.py").read_text(), "ResNetEncoder")
    assert "in_channels=config.hidden_sizes[1]" in encoder, encoder
    assert "out_channels=config.hidden_sizes[3]" in encoder, encoder
    pkg = import_package(path)
    y = torch.randn(1, 3, 40, 40)
    with torch.no_grad():
        want = model(y).last_hidden_state.numpy()
    got = pkg.ResNetModel()(y.numpy())
    got = got["last_hidden_state"] if isinstance(got, dict) else got.last_hidden_state
    np.testing.assert_allclose(np.asarray(got), want, atol=1e-4)


def test_expressions_are_written_as_python_reads_them():
    """Origins written back as text evaluate to the number they stand for (operator
    precedence, a minus sign, int() of a quotient, an item of a list field)."""
    from ivytrace_transpile.modulegen.configdata import ConfigBuild, Origin, render

    a, b = Origin(8, ("config", "a")), Origin(3, ("config", "b"))
    c = Origin(5, ("item", ("config", "c"), 1))
    build = ConfigBuild(None)
    cases = [a - (b - 1), a - b - 1, a * (b + 1), a // b * b, a * (a // b), -(a + b),
             a + b * 2, (a + b) * 2, (a // b) * (a // b) + 1, a % b - c, 2 * (a - c)]  # fmt: skip
    for value in cases:
        text = render(value, build, {})
        got = eval(text, {"config": type("C", (), {"a": 8, "b": 3, "c": [0, 5]})})
        assert got == int(value), (text, int(value))
    assert render(a * (a // b), build, {("bin", "//", a.origin, b.origin): "self.q"}) == (
        "config.a * self.q"
    )
    assert build.read == {"a", "b", "c"}
