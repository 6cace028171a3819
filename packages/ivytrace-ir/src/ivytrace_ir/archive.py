"""Save and load a graph as one file.

The file is a zip archive holding ``graph.json`` (the structure, with a format version:
:mod:`.codec`) and one ``.npy`` member per constant array. Loading never unpickles
(``allow_pickle`` is off), checks every operation and symbol name against an allowlist
before anything is imported or run, and resolves container classes only inside allowed
module prefixes (:mod:`.safety`).
"""

from __future__ import annotations

import errno
import io
import json
import os
import tempfile
import zipfile
import zlib
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import numpy as np

from .arrays import _bf16_np, from_numpy, to_numpy
from .codec import Decoder, GraphFileError, SaveError, UnsafeGraphError, dumps_structure
from .graph import Graph
from .resolve import DEFAULT_ALLOWLIST, Allowlist
from .safety import DEFAULT_CONTAINER_MODULES, check_header, check_names
from .values import Constant, TensorSpec
from .verify import VerifyError, verify

__all__ = ["file_mode", "load", "save"]


def _array_bytes(c: Constant, i: int) -> bytes:
    data = c.data
    arr = data if isinstance(data, np.ndarray) else to_numpy(data, c.spec.framework)
    if c.spec.dtype == "bfloat16":
        arr = np.asarray(arr, order="C").view(np.uint16)
    if arr.dtype.hasobject:
        raise SaveError(f"constant $c{i} is an array of Python objects, which cannot be saved")
    buf = io.BytesIO()
    np.save(buf, np.asarray(arr, order="C"), allow_pickle=False)
    return buf.getvalue()


def file_mode() -> int:
    """The mode ``open()`` gives a new file: ``0o666`` less the process's umask. Files made by
    ``mkstemp`` (0600) or written by other libraries' writers get it set after, so that a
    saved graph or weights file is as readable as any other file the user writes. The umask
    is read from ``/proc`` where it is there; else set and restored at once."""
    try:
        with open("/proc/self/status", encoding="ascii") as fh:
            for line in fh:
                if line.startswith("Umask:"):
                    return 0o666 & ~int(line.split()[1], 8)
    except (OSError, ValueError):
        pass
    mask = os.umask(0o022)
    os.umask(mask)
    return 0o666 & ~mask


def save(graph: Graph, path: str | os.PathLike[str]) -> Path:
    """Write ``graph`` to ``path`` (one file); returns the path. Atomic: a failed save
    leaves no partial file behind."""
    path = Path(path)
    if not path.parent.is_dir():  # else mkstemp's error names its temporary file
        raise FileNotFoundError(
            errno.ENOENT, f"cannot write {path}: the folder {path.parent} does not exist"
        )
    structure = dumps_structure(graph)
    members = [(f"arrays/{i}.npy", _array_bytes(c, i)) for i, c in enumerate(graph.constants)]
    fd, tmp = tempfile.mkstemp(prefix=path.name + ".", suffix=".tmp", dir=path.parent or ".")
    try:
        with os.fdopen(fd, "wb") as fh, zipfile.ZipFile(fh, "w", zipfile.ZIP_DEFLATED) as zf:
            zf.writestr("graph.json", json.dumps(structure, indent=1, allow_nan=False))
            for name, blob in members:
                zf.writestr(name, blob)
        os.chmod(tmp, file_mode())  # mkstemp made it 0600
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise
    return path


# What reading a damaged zip member can raise: a bad CRC or header, a truncated stream,
# corrupt deflate data, a member flagged with an unsupported method or encryption.
_ZIP_ERRORS = (
    zipfile.BadZipFile,
    zlib.error,
    EOFError,
    OSError,
    KeyError,
    NotImplementedError,
    RuntimeError,
)


def _refuse_unless(data: bytes, magic: bytes, if_pickle: str, otherwise: str) -> None:
    """A pickle is refused (:class:`UnsafeGraphError`, ``if_pickle``), and so is anything
    that does not start with ``magic`` (:class:`GraphFileError`, ``otherwise``)."""
    if data[:1] == b"\x80":
        raise UnsafeGraphError(f"{if_pickle} (ivytrace never unpickles)")
    if not data.startswith(magic):
        raise GraphFileError(otherwise)


def _read_archive(path: Path) -> tuple[dict[str, Any], zipfile.ZipFile]:
    try:
        with open(path, "rb") as fh:
            head = fh.read(4)
    except IsADirectoryError:
        raise GraphFileError(f"{path}: is a directory, not an ivytrace graph file") from None
    _refuse_unless(
        head,
        b"PK",
        f"{path}: refused: this is a Python pickle, not an ivytrace graph file",
        f"{path}: not an ivytrace graph file (no zip header)",
    )
    try:
        zf = zipfile.ZipFile(path)
    except _ZIP_ERRORS as exc:
        raise GraphFileError(f"{path}: truncated or corrupt graph file ({exc})") from None
    names = zf.namelist()
    if "graph.json" not in names:
        zf.close()
        pickles = [n for n in names if n.endswith((".pkl", ".pickle"))]
        if pickles:
            raise UnsafeGraphError(
                f"{path}: refused: this archive holds a Python pickle ({pickles[0]}), as a "
                "torch.save file does; it is not an ivytrace graph file (ivytrace never unpickles)"
            )
        raise GraphFileError(f"{path}: not an ivytrace graph file (no graph.json in the archive)")
    try:
        raw = zf.read("graph.json")
    except _ZIP_ERRORS as exc:
        zf.close()
        raise GraphFileError(f"{path}: truncated or corrupt graph file ({exc})") from None
    try:
        structure = json.loads(raw)
    except (ValueError, RecursionError) as exc:
        zf.close()
        raise GraphFileError(
            f"{path}: corrupt graph file: graph.json is not JSON ({exc})"
        ) from None
    return structure, zf


def _read_constants(
    path: Path, zf: zipfile.ZipFile, dec: Decoder, entries: Any, native: bool
) -> tuple[Constant, ...]:
    """The constants' arrays, each an ``.npy`` member read with ``allow_pickle=False``."""
    constants = []
    for i, c in enumerate(entries):
        spec = dec.spec(c["spec"])
        if not isinstance(spec, TensorSpec):
            raise dec.bad(f"constant {i} is not an array")
        member = f"arrays/{i}.npy"
        try:
            blob = zf.read(member)
        except _ZIP_ERRORS as exc:
            raise GraphFileError(
                f"{path}: truncated or corrupt graph file: {member} unreadable ({exc})"
            ) from None
        _refuse_unless(
            blob,
            b"\x93NUMPY",
            f"{path}: refused: {member} is a Python pickle, not an .npy array",
            f"{path}: corrupt array {member}: not an .npy array",
        )
        try:
            arr = np.load(io.BytesIO(blob), allow_pickle=False)
        except ValueError as exc:
            if "pickle" in str(exc).lower():
                raise UnsafeGraphError(
                    f"{path}: refused: {member} holds a pickled object array (ivytrace never unpickles)"
                ) from None
            raise GraphFileError(f"{path}: corrupt array {member}: {exc}") from None
        if spec.shape is not None and tuple(arr.shape) != tuple(spec.shape):
            raise dec.bad(f"constant {i} has shape {arr.shape}, its spec says {spec.shape}")
        if spec.dtype == "bfloat16" and arr.dtype == np.uint16:
            arr = arr.view(_bf16_np())  # saved as raw 16-bit words
        constants.append(Constant(from_numpy(arr, spec) if native else arr, spec, c.get("name")))
    return tuple(constants)


def load(
    path: str | os.PathLike[str],
    *,
    allow: Allowlist = DEFAULT_ALLOWLIST,
    containers: Iterable[str] = DEFAULT_CONTAINER_MODULES,
    native: bool = True,
) -> Graph:
    """Read a graph written by :func:`save`.

    ``allow`` bounds which operation and symbol names are accepted; ``containers``
    bounds which module prefixes output classes may be rebuilt from (others become
    plain tuples and dicts). With ``native=True`` constants become arrays of their
    framework (importing it); otherwise they stay numpy arrays.
    """
    path = Path(path)
    s, zf = _read_archive(path)
    with zf:
        dec = Decoder(str(path), frozenset(containers))
        try:
            check_header(path, s)
            check_names(path, s, allow)
            graph = dec.graph(s, lambda: _read_constants(path, zf, dec, s["constants"], native))
        except GraphFileError:
            raise
        except (KeyError, TypeError, ValueError, IndexError, AttributeError, RecursionError) as exc:
            raise GraphFileError(
                f"{path}: corrupt graph file: {type(exc).__name__}: {exc}"
            ) from None
    try:
        verify(graph, allow)
    except VerifyError as exc:
        raise GraphFileError(f"{path}: graph does not verify: {exc}") from None
    return graph
