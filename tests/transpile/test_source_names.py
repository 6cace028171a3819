"""Issue 20, bodies that read like code: values are named after the user's variables where
the user's line assigns them (``scores = q @ k.T`` is written ``scores = ...``), in the
written packages and in ``compile_graph``'s code. Only the value the assignment binds is
named (the outer call of a line with several); names stay unique, off builtins, module
aliases, the package's own functions and the parameters; a line that cannot be read
leaves the names the ops give. The code must still compute what torch computes."""

from __future__ import annotations

import re

import numpy as np
import pytest
import torch

import ivytrace as ivy
import ivytrace_transpile as it
from ivytrace_compile._sourcenames import SourceReader, name_hints
from ivytrace_ir import LEAF, GraphBuilder, NodeMeta, SourceLoc, TensorSpec
from ivytrace_transpile.translate import to_target

TARGETS = ("tensorflow", "jax")


class Attention(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.q = torch.nn.Linear(8, 8)
        self.k = torch.nn.Linear(8, 8)

    def forward(
        self,
        x,
    ):
        """A multi-line signature and blank lines between the statements."""
        query = self.q(x)

        key = self.k(x)

        scores = query @ key.T
        weights = torch.softmax(scores, -1)
        return weights @ x


def _helper(t):
    return torch.tanh(t) * 2


class Clashes(torch.nn.Module):
    """Assignments to names that would shadow a builtin, a module alias, a parameter; a
    line with two calls; a user function's result; a list of results."""

    def __init__(self) -> None:
        super().__init__()
        self.fc = torch.nn.Linear(6, 6)

    def forward(self, x):
        input = torch.relu(x)  # a builtin
        tf = input * 2  # the tensorflow alias
        jnp = tf + 1  # the jax.numpy alias
        x = self.fc(jnp)  # the parameter
        outer = torch.sigmoid(self.fc(x))  # two calls: the outer one is `outer`
        wrapped = _helper(self.fc(outer))  # the result is the helper's, not self.fc's
        parts = [p * 3 for p in wrapped.chunk(2, dim=-1)]  # a list: no one value
        a, b = parts[0].chunk(2, dim=-1)
        multi = torch.cat(
            [a, b, parts[1]],
            dim=-1,
        )
        return multi


def _assigned(text: str) -> set[str]:
    """The names assigned in ``text`` (each of a tuple target too)."""
    found = set()
    for lhs in re.findall(r"^\s*([\w, ]+?) = ", text, flags=re.M):
        found.update(p.strip() for p in lhs.split(","))
    return found


def _written(net, target, tmp_path, *args):
    tc = ivy.transpile(net, source="torch", target=target, args=args)
    pkg = tc.save(tmp_path)
    return tc, (pkg / "model.py").read_text()


@pytest.mark.parametrize("target", TARGETS)
def test_the_written_package_names_values_after_the_users_variables(tmp_path, target):
    net = Attention().eval()
    _, text = _written(net, target, tmp_path, torch.randn(4, 8))
    body = text.split("def call(" if target == "tensorflow" else "def attention(", 1)[1]
    for name in ("query", "key", "scores", "weights"):
        assert re.search(rf"^\s*{name} = ", body, flags=re.M), (name, body)
    assert re.search(r"^\s*scores = \S+\(query, ", body, flags=re.M), body


def test_compiled_code_names_values_after_the_users_variables():
    net = Attention().eval()
    x = torch.randn(4, 8)
    g = ivy.trace_graph(net, args=(x,))
    assert re.search(r"^\s*scores = \w+\.matmul\(", g.source, flags=re.M), g.source
    assert re.search(r"^\s*weights = softmax\(scores, ", g.source, flags=re.M), g.source
    torch.testing.assert_close(g(x), net(x))


@pytest.mark.parametrize("target", TARGETS)
def test_names_that_would_shadow_take_a_suffix_and_inner_calls_keep_op_names(tmp_path, target):
    net = Clashes().eval()
    x = torch.randn(3, 6)
    tc, text = _written(net, target, tmp_path, x)
    root = "def call(self, x" if target == "tensorflow" else "def clashes(params, x"
    body = text.split(root, 1)[1].split("\n\n\n", 1)[0]
    names = _assigned(body)
    # never a builtin, an alias or the parameter: the next free name
    assert {"input", "tf", "jnp", "x"}.isdisjoint(names), body
    assert {"input_1", "tf_1", "jnp_1", "x_1"} <= names, body
    assert "outer" in names and "multi" in names, body
    # the inner call of a line with two is not what the line binds
    fc_calls = re.findall(r"^\s*(\w+) = (?:self\.fc|linear)\(", body, flags=re.M)
    assert "outer" not in fc_calls and "wrapped" not in fc_calls, body
    assert "x_1" in fc_calls, body
    # a list of results, an element of it: neither is the list's name
    assert "parts" not in names, body
    # the code computes what torch does
    out = tc(to_target(x, it.get_target(target)))
    np.testing.assert_allclose(np.asarray(out), net(x).detach().numpy(), atol=1e-5)


def test_a_name_of_the_packages_own_function_is_not_taken(tmp_path):
    class Inner(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.w = torch.nn.Parameter(torch.randn(4, 4))

        def forward(self, x):
            return x @ self.w

    class Outer(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.inner = Inner()

        def forward(self, x):
            inner = self.inner(x)  # the jax package's function for Inner is `inner`
            return inner + 1

    _, text = _written(Outer().eval(), "jax", tmp_path, torch.randn(2, 4))
    # the local takes the next name; the function keeps its own
    assert "\ndef inner(params, " in text, text
    assert re.search(r"^    inner_1 = inner\(params\['inner'\], x\)$", text, flags=re.M), text


def _graph_at(loc: SourceLoc):
    spec = TensorSpec("torch", "float32", (2,))
    b = GraphBuilder("f")
    x = b.add_input(spec, "x")
    (y,) = b.add_node("torch.tanh", (x,), out_specs=(spec,), meta=NodeMeta(source=loc))
    return b.build((y,), LEAF), y


def test_a_line_that_cannot_be_read_as_traced_names_nothing(tmp_path):
    src = tmp_path / "user.py"
    src.write_text("def f(x):\n    hidden = torch.tanh(x)\n    return hidden\n")
    good = SourceLoc(str(src), 2, "f", "hidden = torch.tanh(x)")
    graph, y = _graph_at(good)
    assert name_hints(graph) == {y.id: "hidden"}
    for loc in (
        SourceLoc(str(src), 2, "f", "other = torch.tanh(x)"),  # the file changed since
        SourceLoc(str(tmp_path / "missing.py"), 2, "f", "hidden = torch.tanh(x)"),
        SourceLoc(str(src), 99, "f", ""),
    ):
        graph, _ = _graph_at(loc)
        assert name_hints(graph) == {}
    bad = tmp_path / "bad.py"
    bad.write_text("def f(x):\n    hidden = torch.tanh(x\n")
    graph, _ = _graph_at(SourceLoc(str(bad), 2, "f", "hidden = torch.tanh(x"))
    assert name_hints(graph, SourceReader()) == {}


_TRICKY = """\
class M:
    def forward(
        self,
        x,
    ):
        \"\"\"Doc.
left edge\"\"\"

        def inner(t):
            return t

        hidden = inner(
            x
        )

        if x:
            a, (b, c) = x
        tail = [t for t in x]
        return hidden
"""


def test_statements_are_found_across_blank_lines_and_multi_line_code(tmp_path):
    src = tmp_path / "tricky.py"
    src.write_text(_TRICKY)
    reader = SourceReader()

    def at(line):
        code = _TRICKY.splitlines()[line - 1].strip()
        return reader.statement(SourceLoc(str(src), line, "forward", code))

    hidden = at(12)
    assert hidden is not None and hidden.targets == ("hidden",) and hidden.single
    assert at(13) == hidden and at(14) == hidden  # a multi-line statement's other lines
    assert at(10).targets is None  # ``return t``, in the nested def: a scope of its own
    assert at(10).scope != hidden.scope and at(10).scope[0] == 9
    assert at(17).targets is None  # a nested tuple target: not named
    assert at(18).targets is None  # a list: not one value
    assert at(16).key != at(17).key  # an ``if`` header is a statement of its own


class _Part(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.fc = torch.nn.Linear(8, 8)

    def forward(self, hidden, width):
        return self.fc(hidden)[:, :width] * 2


class _Whole(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.part = _Part()

    def forward(self, x):
        half = x.shape[1] // 2
        return self.part(x, half)


@pytest.mark.parametrize("target", TARGETS)
def test_a_number_handed_to_a_forward_is_named_by_its_parameter(tmp_path, target):
    net = _Whole().eval()
    tc, text = _written(net, target, tmp_path, torch.randn(2, 8))
    head = "def call(self, hidden, *, width)" if target == "tensorflow" else "def part(params,"
    assert head in text, text
    # the parent's size is named by its line, handed on by the child's parameter
    call = (
        re.escape("(params['part'], x, width=half)") + "|" + re.escape("self.part(x, width=half)")
    )
    assert re.search(call, text), text
    assert "floordiv" not in text, text  # the op that computed it named it before
    assert "# return self.part(x, half)" in text, text  # the child call's own line
    for batch in (3, 5):
        x = torch.randn(batch, 8)
        out = tc(to_target(x, it.get_target(target)))
        np.testing.assert_allclose(np.asarray(out), net(x).detach().numpy(), atol=1e-5)


class Sizes(torch.nn.Module):
    """Sizes read as one tuple and named by the lines that take it apart; a slice of the
    tuple is not the call's items."""

    def forward(self, x, y):
        input_shape = x.size()
        batch_size = input_shape[0]
        seq_length = input_shape[-1]
        flat = x.reshape(batch_size * seq_length, -1)
        lead = y.shape[:-1]
        first, second = lead
        return flat * seq_length, y.reshape(first * second, -1)


@pytest.mark.parametrize("target", TARGETS)
def test_the_items_of_a_size_tuple_are_named_by_the_lines_that_take_it_apart(tmp_path, target):
    net = Sizes().eval()
    x, y = torch.randn(2, 3), torch.randn(2, 5, 3)
    tc, text = _written(net, target, tmp_path, x, y)
    assert re.search(r"^\s*batch_size, seq_length = ", text, flags=re.M), text
    # y.shape[:-1]: the slice's items are not the shape read's (first is no name of it)
    assert not re.search(r"^\s*first, second\b", text, flags=re.M), text
    for new in ((torch.randn(4, 7), torch.randn(3, 2, 5)),):
        got = tc(*(to_target(t, it.get_target(target)) for t in new))
        want = net(*new)
        for g, w in zip(got, want, strict=True):
            np.testing.assert_allclose(np.asarray(g), w.numpy(), atol=1e-5)


def test_item_names_that_disagree_are_left_out():
    src = (  # a, b = s names items 0 and 1; s[0] and s[1] name them again, otherwise
        "def f(x):\n    s = x.size()\n    a, b = s\n    c = s[0]\n    d = s[1]\n    return a\n"
    )
    import ast

    from ivytrace_compile._sourcenames import _item_names

    names = _item_names(ast.parse(src).body[0].body)
    assert names == {"s": {0: None, 1: None}}
