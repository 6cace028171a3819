"""The transformers sweep (``hf_sweep.py``) against its ledger ``hf_ledger.json``: each
architecture is built from its tiny config, traced and translated to tensorflow and jax
with a padded attention mask, checked on the traced shape and on a new batch size and
length with other padding, and its verdicts must equal the ledger's (a regression and an
improvement both fail; update with the command the failure prints)."""

from __future__ import annotations

import os
import zlib

import pytest
from transpile_support import sibling_module

hf = sibling_module("hf_sweep")
LEDGER = hf.load_ledger()
SUBSET = 12
"""The default run checks the architectures whose name hashes to 0 modulo ``SUBSET``
(about one in twelve, stable as the ledger grows) and BERT, GPT-2 and Llama always;
``IVYTRACE_SWEEPS=all`` checks every one."""
_ALWAYS = ("bert:BertModel", "gpt2:GPT2Model", "llama:LlamaModel")


def _selected() -> list[str]:
    names = sorted(LEDGER)
    if os.environ.get("IVYTRACE_SWEEPS") == "all":
        return names
    return [n for n in names if zlib.crc32(n.encode()) % SUBSET == 0 or n in _ALWAYS]


UPDATE = "update the ledger: scripts/hf_sweep_report.py --write-ledger --arch {arch}"


@pytest.mark.slow
@pytest.mark.filterwarnings("ignore")
@pytest.mark.parametrize("arch", _selected())
def test_architecture_verdicts_match_the_ledger(arch):
    model_type, class_name = arch.split(":")
    rec = hf.run_case(hf.Case(model_type, class_name))
    assert rec["built"], f"{arch} no longer builds: {rec.get('why')}"
    now, want = hf.ledger_entry(rec), LEDGER[arch]
    changed = {c: (want.get(c), now.get(c)) for c in hf.COLUMNS if want.get(c) != now.get(c)}
    details = {c: rec.get(f"{c}_detail", "")[:300] for c in changed}
    assert not changed, f"{arch}: ledger -> now {changed}\n{details}\n" + UPDATE.format(arch=arch)


def test_ledger_figures():
    """The ledger (read, not re-run) covers at least 100 architectures and holds no
    silently wrong answer, the tracer's own column included (FunnelModel's graph was
    wrong at a new length until the size check looked at constants shaped like a size)."""
    assert len(LEDGER) >= 100, len(LEDGER)
    for col in hf.COLUMNS:
        wrong = sorted(a for a, v in LEDGER.items() if v.get(col) == "wrong")
        assert not wrong, f"{col}: silently wrong on {wrong}"


@pytest.mark.slow
@pytest.mark.filterwarnings("ignore")
def test_funnel_at_a_new_length_answers_right_or_refuses():
    """FunnelModel builds its relative positions from ``list(range(seq_len))`` in library
    code: the constants it passes to ``torch.arange`` are the traced length's. The default
    ``trace_graph`` (``check_sizes="auto"``) must see that (a constant shaped like a size)
    and pin the length: a new length raises ``GuardFailure`` instead of answering with the
    traced length's positions (it answered wrongly, max abs err 0.38, before)."""
    import copy

    import torch

    import ivytrace as ivy
    from ivytrace_ir import GuardFailure

    case = hf.Case("funnel", "FunnelModel")
    model = hf.build(case)
    traced, other = hf.make_inputs(model, 2, 7, 0), hf.make_inputs(model, 3, 11, 1)
    with torch.no_grad():
        graph = ivy.trace_graph(model, kwargs=copy.deepcopy(traced))
        for x in (traced, other):
            want = model(**copy.deepcopy(x)).last_hidden_state
            try:
                got = graph(**copy.deepcopy(x))["last_hidden_state"]
            except GuardFailure as exc:
                assert x is other, f"the traced inputs are refused: {exc}"
                assert "input_ids.shape[1]" in str(exc), str(exc)
                continue
            torch.testing.assert_close(got, want, rtol=1e-4, atol=1e-4)
