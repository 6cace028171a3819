"""A size formatted into text that only reaches a log record is not guarded
(``ivytrace_intercept.logtext``): LED pads the sequence to the attention window and logs
``f"Input ids are automatically padded from {seq_len} to {seq_len + padding_len}"``; the
text guard held the length at its traced value. Text used any other way stays guarded."""

from __future__ import annotations

import logging

import pytest
import torch

import ivytrace as ivy

logger = logging.getLogger("ivytrace.tests.logged_sizes")


def logs_its_length(x):
    n = x.shape[1]
    pad = -n % 4
    logger.warning(f"padded from {n} to {n + pad} (window {4})")
    return torch.nn.functional.pad(x, (0, pad)).view(x.shape[0], -1, 4).sum(-1)


def test_a_size_in_a_log_message_is_not_guarded(caplog):
    graph = ivy.trace_graph(logs_its_length, args=(torch.randn(2, 7),))
    assert "padded from 7 to 8" in caplog.text  # the record is still written
    for shape in ((2, 7), (3, 11), (1, 5)):
        x = torch.randn(*shape)
        assert torch.allclose(graph(x), logs_its_length(x))


def keyed_by_text(x):
    n = x.shape[1]
    scale = {"7": 2.0}.get(f"{n}", 3.0)  # the text selects a value: guarded
    logger.info(f"n is {n}")
    return x * scale


def logged_with_a_keyword(x):
    n = x.shape[1]
    logger.warning(f"n is {n}", stacklevel=1)  # not matched: guarded, as before
    return x * 2


@pytest.mark.parametrize("fn", [keyed_by_text, logged_with_a_keyword])
def test_text_used_otherwise_is_guarded(fn):
    graph = ivy.trace_graph(fn, args=(torch.randn(2, 7),))
    with pytest.raises(ivy.GuardFailure, match="turned into text"):
        graph(torch.randn(2, 9))
