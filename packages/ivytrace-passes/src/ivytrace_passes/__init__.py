"""ivytrace-passes: pure ``Graph -> Graph`` rewrites over the ivytrace IR, and a pipeline
that records each pass in the graph's history.

Passes (each a :class:`GraphPass`: call it with a graph, get a graph; ``.apply`` also
returns a note saying what it did):

- :func:`prune`: dead-code elimination;
- :func:`cache_arrays`: compute the parts that do not depend on the call once, as
  constants (the seeds' ``array_caching=True``);
- :func:`bake_generators`: random draws -> the values drawn while tracing
  (``include_generators=False``);
- :func:`rewrite_stateful`: read-after-write forwarding and dead writes on attributes;
- :func:`cse`: common-subexpression elimination;
- :func:`fold_size_arithmetic`, :func:`fold_array_identities`: arithmetic that says
  nothing (``n + 0``, ``i + 0`` of an index array, a wrap of indices never negative);
- :func:`freeze_externals`: reads of live objects -> constants (before saving).

Per-op facts (views, in-place ops, random ops) live in tables in :mod:`.rules`.
No ML framework is imported here: one is imported only when a pass runs its ops
(:func:`cache_arrays`, :func:`interpret`).
"""

from .caching import cache_arrays
from .core import GraphPass, PassOutcome, graph_pass
from .cse import cse
from .generators import BakeError, bake_generators
from .identities import fold_array_identities
from .interpret import interpret
from .pipeline import PassEntry, PassError, default_pipeline, iter_pipeline, run_pipeline
from .prune import prune
from .sizes import fold_size_arithmetic
from .stateful import FreezeError, freeze_externals, rewrite_stateful

__all__ = [
    "BakeError",
    "FreezeError",
    "GraphPass",
    "PassEntry",
    "PassError",
    "PassOutcome",
    "bake_generators",
    "cache_arrays",
    "cse",
    "default_pipeline",
    "fold_array_identities",
    "fold_size_arithmetic",
    "freeze_externals",
    "graph_pass",
    "interpret",
    "iter_pipeline",
    "prune",
    "rewrite_stateful",
    "run_pipeline",
]
