"""The pass-pipeline page: the graph after each pass, with what each pass removed,
merged or cached marked, checked against the passes' own records and in Chromium."""

from __future__ import annotations

import itertools

import pytest
import torch
from selenium.webdriver.common.by import By
from viz_support import console_problems, count, fetched_resources, open_page, record

import ivytrace as ivy
from ivytrace import viz
from ivytrace_passes import default_pipeline, run_pipeline


def fn(x, y):
    a = torch.tensor([2.0])  # a and b do not depend on the inputs: cached
    b = torch.tensor([2.0])
    p = x * y
    q = x * y  # the same call again: merged
    unused = x - y  # noqa: F841 - reaches no output: removed
    return x ** (a + b) + p + q


ARGS = (torch.tensor([1.0, 2, 3]), torch.tensor([2.0, 3, 4]))


def test_stages_end_in_the_graph_trace_graph_makes():
    stages = viz.trace_stages(fn, args=ARGS)
    assert [g.meta.history[-1].name for g in stages[1:]] == [
        "rewrite_stateful",
        "cse",
        "cache_arrays",
        "prune",
    ]
    traced = ivy.trace_graph(fn, args=ARGS).ir
    assert stages[-1].ops == traced.ops
    assert [r.name for r in stages[-1].meta.history] == [r.name for r in traced.meta.history]
    # running the same passes at once gives the same last graph as one at a time
    at_once = run_pipeline(stages[0], default_pipeline())
    assert at_once.ops == stages[-1].ops
    assert [(r.nodes_before, r.nodes_after) for r in at_once.meta.history] == [
        (r.nodes_before, r.nodes_after) for r in stages[-1].meta.history
    ]


def test_stage_views_say_what_each_pass_took_out():
    stages = viz.trace_stages(fn, args=ARGS)
    changes = [viz.stage_view(a, b, title="")["changes"] for a, b in itertools.pairwise(stages)]
    assert changes == [
        {"removed": 0, "merged": 0, "cached": 0},  # rewrite_stateful
        {"removed": 0, "merged": 1, "cached": 0},  # cse: the second x * y
        {"removed": 0, "merged": 0, "cached": 3},  # cache_arrays: two tensors and their sum
        {"removed": 1, "merged": 0, "cached": 0},  # prune: x - y
    ]
    cse_view = viz.stage_view(stages[1], stages[2], title="")
    merged = [n for n in cse_view["nodes"] if n.get("status") == "merged"]
    assert [n["op"] for n in merged] == ["torch.Tensor.mul"]
    # a dashed edge points from the merged call to the one that replaced it
    merge_edges = [e for e in cse_view["edges"] if e[3] == "merge"]
    assert len(merge_edges) == 1
    assert cse_view["nodes"][merge_edges[0][1]]["op"] == "torch.Tensor.mul"
    assert "status" not in cse_view["nodes"][merge_edges[0][1]]
    cache_view = viz.stage_view(stages[2], stages[3], title="")
    new = [n for n in cache_view["nodes"] if n.get("status") == "new"]
    assert [n["kind"] for n in new] == ["constant"]  # the cached a + b


def test_pipeline_page_in_the_browser(browser, artifacts, tmp_path):
    stages = viz.trace_stages(fn, args=ARGS)
    out = viz.pipeline_to_html(stages, tmp_path / "passes.html")
    assert [p.name for p in tmp_path.iterdir()] == ["passes.html"]
    seconds = open_page(browser, out)
    assert fetched_resources(browser) == []
    buttons = browser.find_elements(By.CSS_SELECTOR, ".ivt-stage-btn")
    assert len(buttons) == len(stages) == 5
    ghosts = ":is([data-status=removed], [data-status=merged], [data-status=cached])"
    for k, graph in enumerate(stages):
        buttons[k].click()
        stage = f".ivt-stage[data-stage='{k}']"
        drawn = count(browser, f"{stage} .ivt-node[data-ir]:not({ghosts})")
        assert drawn == len(graph.nodes), k
        if k:
            view = viz.stage_view(stages[k - 1], graph, title="")
            for status, n in view["changes"].items():
                assert count(browser, f"{stage} .ivt-node[data-status={status}]") == n
                chip = browser.find_element(By.CSS_SELECTOR, f".ivt-chip.st-{status}")
                assert chip.get_attribute("data-n") == str(n)
            record_ = graph.meta.history[-1]
            info = browser.find_element(By.CSS_SELECTOR, ".ivt-stage-info").text
            assert record_.name in info and record_.note in info
        if k == 3:
            browser.save_screenshot(str(artifacts / "pipeline_cache_arrays.png"))
    # hiding what the pass took out leaves exactly the graph after it
    buttons[2].click()
    browser.find_element(By.CSS_SELECTOR, ".ivt-stage[data-stage='2'] .ivt-ghosts input").click()
    assert count(browser, ".ivt-stage[data-stage='2'] .ivt-node[data-ir]") == len(stages[2].nodes)
    assert console_problems(browser) == []
    record("pipeline_small", page_bytes=out.stat().st_size, load_seconds=round(seconds, 3))


@pytest.mark.slow
def test_resnet50_pipeline_page(browser, artifacts, tmp_path):
    transformers = pytest.importorskip("transformers")
    model = transformers.ResNetForImageClassification(transformers.ResNetConfig()).eval()
    stages = viz.trace_stages(model, args=(torch.randn(1, 3, 224, 224),))
    out = viz.pipeline_to_html(stages, tmp_path / "resnet50_passes.html")
    seconds = open_page(browser, out)
    assert console_problems(browser) == []
    # the last stage is shown first; its every node is there once all is opened
    browser.find_element(By.CSS_SELECTOR, ".ivt-stage[data-stage='4'] .ivt-plumbing input").click()
    browser.find_element(By.CSS_SELECTOR, ".ivt-stage[data-stage='4'] .ivt-expand-all").click()
    assert count(browser, ".ivt-stage[data-stage='4'] .ivt-node[data-ir]") == len(stages[-1].nodes)
    assert console_problems(browser) == []
    record("resnet50_pipeline", page_bytes=out.stat().st_size, load_seconds=round(seconds, 3))
