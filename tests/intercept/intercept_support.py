"""Helpers shared by the interceptor tests."""

from __future__ import annotations

from ivytrace_ir import DEFAULT_ALLOWLIST, PRIM_OPS, check_name, resolve


def ops(graph):
    """The ops of ``graph``'s nodes, in order."""
    return [n.op for n in graph.nodes]


def assert_names_resolve(graph):
    """Every recorded op name passes the load allowlist and resolves to a callable."""
    for n in graph.nodes:
        if n.op not in PRIM_OPS:
            check_name(n.op, DEFAULT_ALLOWLIST)
            resolve(n.op)
