"""Graph pages opened in headless Chromium: the seeds' first example, a small module with
groups, a ResNet-50, and two graphs side by side."""

from __future__ import annotations

import dataclasses
import time

import numpy as np
import pytest
import torch
from selenium.webdriver.common.by import By
from viz_support import console_problems, count, fetched_resources, open_page, record

import ivytrace as ivy
import ivytrace_ir as ir
from ivytrace import viz


def seed_fn(x, y):
    z = x**y
    print(z)  # not in the graph
    k = x * y  # noqa: F841 - never reaches the output: pruned
    return z


def seed_graph():
    return ivy.trace_graph(seed_fn, args=(torch.tensor([1.0, 2, 3]), torch.tensor([2.0, 3, 4])))


def test_seed_example_page_draws_every_node_offline(browser, artifacts, tmp_path):
    graph = seed_graph()
    out = tmp_path / "seed.html"
    assert graph.to_html(out) == out
    assert [p.name for p in tmp_path.iterdir()] == ["seed.html"]  # nothing beside it
    html = out.read_text()
    assert "src=" not in html and '<link rel="stylesheet"' not in html

    seconds = open_page(browser, out)
    assert console_problems(browser) == []
    assert fetched_resources(browser) == []
    assert count(browser, ".ivt-node[data-ir]") == len(graph.ir.nodes) == 1
    assert count(browser, ".ivt-node[data-kind=input]") == len(graph.ir.inputs) == 2
    assert count(browser, ".ivt-node[data-kind=output]") == 1
    node = browser.find_element(By.CSS_SELECTOR, ".ivt-node[data-ir='0']")
    assert "fw-torch" in node.get_attribute("class")
    assert "Tensor.__pow__" in node.text and "f32[3]" in node.text

    node.click()  # the details panel shows the call and the user's source line
    details = browser.find_element(By.CSS_SELECTOR, ".ivt-details").text
    assert "torch.Tensor.__pow__(x, y)" in details
    assert "z = x**y" in details and "test_graph_page.py" in details
    browser.save_screenshot(str(artifacts / "seed_graph.png"))
    record("seed_graph", page_bytes=out.stat().st_size, load_seconds=round(seconds, 3))


def test_ir_graph_and_notebook_view():
    graph = seed_graph()
    page = viz.graph_html(graph.ir)  # an IR graph works as well
    assert "ivt-data" in page and "Tensor.__pow__" in page
    cell = graph._repr_html_()
    assert cell.startswith("<iframe srcdoc=") and "&lt;!DOCTYPE html&gt;" in cell
    assert "<script>" not in cell  # all of the page is escaped into the attribute


class Block(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = torch.nn.Linear(4, 4)
        self.norm = torch.nn.LayerNorm(4)

    def forward(self, x):
        return x + torch.relu(self.norm(self.proj(x)))


class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.blocks = torch.nn.Sequential(Block(), Block())
        self.head = torch.nn.Linear(4, 2)

    def forward(self, x):
        return self.head(self.blocks(x))


def _paths_by_op(graph) -> dict[str, list[str]]:
    by_op: dict[str, list[str]] = {}
    for node, path in zip(graph.nodes, viz.module_paths(graph)):
        by_op.setdefault(node.op, []).append(".".join(path))
    return by_op


def test_module_paths_are_the_recorded_module_calls():
    """A torch module's trace records the module call each node ran in (NodeMeta.scope):
    the page draws a node there, the residual add of block 1 in block 1."""
    by_op = _paths_by_op(ivy.trace_graph(Net().eval(), args=(torch.randn(3, 4),)).ir)
    assert by_op["torch.nn.functional.linear"] == ["blocks.0.proj", "blocks.1.proj", "head"]
    assert by_op["torch.nn.functional.layer_norm"] == ["blocks.0.norm", "blocks.1.norm"]
    assert by_op["torch.relu"] == ["blocks.0", "blocks.1"]
    assert by_op["torch.Tensor.add"] == ["blocks.0", "blocks.1"]


def test_module_paths_follow_the_parameter_reads_without_scopes():
    graph = ivy.trace_graph(Net().eval(), args=(torch.randn(3, 4),)).ir
    graph = graph.replace(
        nodes=tuple(
            dataclasses.replace(n, meta=dataclasses.replace(n.meta, scope=())) for n in graph.nodes
        )
    )
    by_op = _paths_by_op(graph)
    assert by_op["torch.nn.functional.linear"] == ["blocks.0.proj", "blocks.1.proj", "head"]
    assert by_op["torch.nn.functional.layer_norm"] == ["blocks.0.norm", "blocks.1.norm"]
    # a parameter-free op goes to the module around the one that fed it
    assert by_op["torch.relu"] == ["blocks.0", "blocks.1"]
    # a residual add: in block 0 the skip is the graph's input (no module); in block 1 it
    # comes from block 0, so the add goes to the innermost module holding both branches
    assert by_op["torch.Tensor.add"] == ["blocks.0", "blocks"]


def test_groups_collapse_expand_and_search(browser, tmp_path):
    graph = ivy.trace_graph(Net().eval(), args=(torch.randn(3, 4),))
    out = graph.to_html(tmp_path / "net.html")
    open_page(browser, out)
    total = len(graph.ir.nodes)
    assert count(browser, ".ivt-node[data-ir]") == total  # small: everything drawn
    clusters = {
        e.get_attribute("data-group")
        for e in browser.find_elements(By.CSS_SELECTOR, ".ivt-cluster")
    }
    assert {"blocks", "blocks.0", "blocks.1", "blocks.0.proj", "head"} <= clusters

    browser.find_element(By.CSS_SELECTOR, ".ivt-fit").click()  # the whole graph in view
    label = browser.find_element(By.CSS_SELECTOR, ".ivt-cluster[data-group='blocks.0'] text")
    label.click()  # collapse blocks.0
    group = browser.find_element(By.CSS_SELECTOR, ".ivt-group[data-group='blocks.0']")
    inside = int(group.get_attribute("data-count"))
    assert count(browser, ".ivt-node[data-ir]") == total - inside
    group.click()  # and open it again
    assert count(browser, ".ivt-node[data-ir]") == total

    browser.find_element(By.CSS_SELECTOR, ".ivt-collapse-all").click()
    assert count(browser, ".ivt-node[data-ir]") < total
    search = browser.find_element(By.CSS_SELECTOR, ".ivt-search")
    search.send_keys("linear")
    n_linear = sum(op == "torch.nn.functional.linear" for op in graph.ir.ops)
    assert browser.find_element(By.CSS_SELECTOR, ".ivt-hits").text == f"{n_linear} matches"
    assert count(browser, ".ivt-group.match") >= 1  # collapsed groups holding a match
    search.send_keys("\n")  # the first match: its groups open, it is selected
    selected = browser.find_element(By.CSS_SELECTOR, ".ivt-node.selected")
    assert selected.get_attribute("data-ir") == str(
        graph.ir.ops.index("torch.nn.functional.linear")
    )
    assert "blocks.0.proj" in browser.find_element(By.CSS_SELECTOR, ".ivt-details").text
    assert console_problems(browser) == []


def test_side_by_side_with_mapping_and_checks(browser, artifacts, tmp_path):
    def np_fn(x, y):
        return np.power(x, y)

    source = seed_graph()
    target = ivy.trace_graph(np_fn, args=(np.ones(3, np.float32), np.ones(3, np.float32)))
    out = source.to_html(
        tmp_path / "pair.html",
        compare=target,
        mapping={0: [0]},
        compare_annotations={0: 1.5e-7},
    )
    open_page(browser, out)
    assert console_problems(browser) == []
    panes = browser.find_elements(By.CSS_SELECTOR, ".ivt-pane")
    assert len(panes) == 2
    assert len(panes[0].find_elements(By.CSS_SELECTOR, ".ivt-node[data-ir]")) == 1
    assert len(panes[1].find_elements(By.CSS_SELECTOR, ".ivt-node.fw-numpy[data-ir]")) == 1
    rows = browser.find_elements(By.CSS_SELECTOR, ".ivt-anntable tr.pick")
    assert len(rows) == 1 and "max abs error 1.5e-07" in rows[0].text
    panes[0].find_element(By.CSS_SELECTOR, ".ivt-node[data-ir='0']").click()
    linked = panes[1].find_elements(By.CSS_SELECTOR, ".ivt-node.linked")
    assert [e.get_attribute("data-ir") for e in linked] == ["0"]
    browser.save_screenshot(str(artifacts / "side_by_side.png"))


def test_bad_annotations_are_refused():
    graph = seed_graph()
    with pytest.raises(IndexError, match="node 5"):
        viz.graph_html(graph, annotations={5: "no such node"})
    with pytest.raises(ValueError, match="compare="):
        viz.graph_html(graph, mapping={0: 0})
    with pytest.raises(TypeError, match="expected an ivytrace graph"):
        viz.graph_html(object())


@pytest.mark.slow
def test_resnet50_page(browser, artifacts, tmp_path):
    transformers = pytest.importorskip("transformers")
    model = transformers.ResNetForImageClassification(transformers.ResNetConfig()).eval()
    graph = ivy.trace_graph(model, args=(torch.randn(1, 3, 224, 224),))
    nodes = len(graph.ir.nodes)
    assert nodes > 1000

    start = time.perf_counter()
    out = graph.to_html(tmp_path / "resnet50.html")
    write_seconds = time.perf_counter() - start
    load_seconds = open_page(browser, out)
    assert console_problems(browser) == []
    assert fetched_resources(browser) == []
    # it opens as an overview: module groups collapsed, a readable number of boxes
    drawn = count(browser, ".ivt-node, .ivt-group")
    assert 20 < drawn <= 200
    assert count(browser, ".ivt-group") > 0
    browser.save_screenshot(str(artifacts / "resnet50_overview.png"))

    # every node, module reads included, once everything is opened
    browser.find_element(By.CSS_SELECTOR, ".ivt-plumbing input").click()
    start = time.perf_counter()
    browser.find_element(By.CSS_SELECTOR, ".ivt-expand-all").click()
    expand_seconds = time.perf_counter() - start
    assert count(browser, ".ivt-node[data-ir]") == nodes
    assert count(browser, ".ivt-group") == 0
    conv = sum(op == "torch.nn.functional.conv2d" for op in graph.ir.ops)
    assert conv == 53  # ResNet-50
    assert count(browser, ".ivt-node[data-ir][data-kind=op].fw-torch") >= conv
    assert count(browser, ".ivt-node[data-kind=guard]") == len(graph.ir.guards)
    assert console_problems(browser) == []
    record(
        "resnet50",
        nodes=nodes,
        page_bytes=out.stat().st_size,
        write_seconds=round(write_seconds, 3),
        load_seconds=round(load_seconds, 3),
        expand_all_seconds=round(expand_seconds, 3),
    )
    assert isinstance(graph.ir, ir.Graph)
