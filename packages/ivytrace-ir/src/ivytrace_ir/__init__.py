"""ivytrace-ir: the shared, serialisable graph IR every ivytrace package meets at.

Imports no ML framework: a framework is imported only when a name that lives in it is
resolved (:func:`resolve`) or a constant of it is converted.
"""

from .archive import load, save
from .arrays import ADAPTERS, ArrayAdapter, framework_of, from_numpy, spec_of, to_numpy
from .codec import GraphFileError, SaveError, UnsafeGraphError, dumps_structure
from .graph import (
    FORMAT_VERSION,
    PRIM_OPS,
    External,
    Graph,
    GraphBuilder,
    GraphMeta,
    GuardFailure,
    Node,
    NodeMeta,
    PassRecord,
    iter_arg_leaves,
    map_arg,
)
from .printing import Namer, format_graph, format_node, format_spec, to_dot, to_networkx
from .pytree import (
    LEAF,
    TreeDef,
    build_container,
    flatten,
    is_structseq,
    qualified_name,
    unflatten,
)
from .resolve import DEFAULT_ALLOWLIST, Allowlist, OpNameError, check_name, owner_of, resolve
from .safety import DEFAULT_CONTAINER_MODULES
from .values import (
    Arg,
    Const,
    Constant,
    Dim,
    ObjectSpec,
    Opaque,
    ScalarSpec,
    SourceLoc,
    Spec,
    Symbol,
    TensorSpec,
    Value,
)
from .verify import VerifyError, verify

__all__ = [
    "ADAPTERS",
    "DEFAULT_ALLOWLIST",
    "DEFAULT_CONTAINER_MODULES",
    "FORMAT_VERSION",
    "LEAF",
    "PRIM_OPS",
    "Allowlist",
    "Arg",
    "ArrayAdapter",
    "Const",
    "Constant",
    "Dim",
    "External",
    "Graph",
    "GraphBuilder",
    "GraphFileError",
    "GraphMeta",
    "GuardFailure",
    "Namer",
    "Node",
    "NodeMeta",
    "ObjectSpec",
    "OpNameError",
    "Opaque",
    "PassRecord",
    "SaveError",
    "ScalarSpec",
    "SourceLoc",
    "Spec",
    "Symbol",
    "TensorSpec",
    "TreeDef",
    "UnsafeGraphError",
    "Value",
    "VerifyError",
    "build_container",
    "check_name",
    "dumps_structure",
    "flatten",
    "format_graph",
    "format_node",
    "format_spec",
    "framework_of",
    "from_numpy",
    "is_structseq",
    "iter_arg_leaves",
    "load",
    "map_arg",
    "owner_of",
    "qualified_name",
    "resolve",
    "save",
    "spec_of",
    "to_dot",
    "to_networkx",
    "to_numpy",
    "unflatten",
    "verify",
]
