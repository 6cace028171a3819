"""General library code as a yardstick: torchvision's ``transforms.v2.functional`` and
``ops`` public functions, translated to tensorflow, jax and numpy.

Each public function is called on small inputs chosen by its parameters' names (an image
``(3, 16, 16)`` in [0, 1], a video, a mask, boxes and keypoints with their format and
canvas size, ROI boxes, ...; the other required arguments from :data:`STATIC`). The
function of its tensor arguments (the rest held as constants) is translated with
:func:`ivytrace_transpile.transpile` on these inputs, then called on them and on NEW
inputs (another image size, another number of boxes) and compared with torch (the rule
of :func:`ivytrace_transpile.translate.compare_output`, through ``opdb_sweep.compare``).
Verdicts per (function, target) as in ``opdb_sweep``: ``right``, ``refused: <reason>``,
``wrong``, ``crash``. Functions that draw random numbers, take or give PIL images, or
register kernels are not judged, nor those torch itself rejects with these inputs. The
expected verdicts are ``vision_ledger.json``; ``test_vision_sweep.py`` checks them.
"""

from __future__ import annotations

import copy
import importlib.util
import inspect
import json
import sys
import time
import warnings
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any

__all__ = [
    "LEDGER",
    "ORIENTED",
    "STATIC",
    "TARGETS",
    "functions",
    "make_case",
    "run_function",
    "sweep",
]

TARGETS = ("tensorflow", "jax", "numpy")
LEDGER = Path(__file__).with_name("vision_ledger.json")
CASE_SECONDS = 120

SKIP = {
    # random, PIL, registration, not array functions
    "gaussian_noise", "gaussian_noise_image", "gaussian_noise_video", "pil_to_tensor",
    "to_pil_image", "to_tensor", "register_kernel", "InterpolationMode", "is_pure_tensor",
    "to_grayscale", "drop_block2d", "drop_block3d", "stochastic_depth",
    "get_size_bounding_boxes", "get_size_keypoints",  # read a tv_tensor's canvas_size
}  # fmt: skip

STATIC: dict[str, Any] = {
    "brightness_factor": 1.4, "contrast_factor": 0.7, "gamma": 1.3, "hue_factor": 0.2,
    "saturation_factor": 1.5, "sharpness_factor": 2.0, "angle": 30.0, "translate": [2, 1],
    "scale": 0.9, "shear": [5.0, 0.0], "output_size": [8, 8], "top": 2, "left": 3,
    "height": 8, "width": 9, "i": 2, "j": 3, "h": 4, "w": 5, "size": [10, 12],
    "kernel_size": [3, 3], "mean": [0.5, 0.4, 0.3], "std": [0.2, 0.3, 0.4], "padding": [1, 2],
    "permutation": [2, 0, 1], "startpoints": [[0, 0], [15, 0], [15, 15], [0, 15]],
    "endpoints": [[1, 2], [14, 0], [13, 15], [2, 13]], "bits": 4, "threshold": 0.5,
    "quality": 75, "num_samples": 2, "iou_threshold": 0.5, "min_size": 1.0,
    "in_fmt": "xyxy", "out_fmt": "cxcywh",
}  # fmt: skip
"""The value of each required non-array parameter, by name."""

_FUNCTIONAL = "torchvision.transforms.v2.functional"

ORIENTED = frozenset({
    "F.resize", "F.resize_image", "F.resize_mask", "F.resize_video",
    "F.rotate", "F.rotate_image", "F.rotate_mask", "F.rotate_video",
})  # fmt: skip
"""Functions whose code decides on the image's orientation: torchvision's
``_compute_resized_output_size`` compares ``w <= h`` (portrait or square vs landscape) to
pick the short and long edges, and ``rotate_image`` compares ``shape[-1] == shape[-2]`` (a
transpose fast path at 90 and 270 degrees, asked at every angle but 0 and 180). For these a
new input of the same kind keeps the orientation, so they are traced at a landscape image
``(16, 20)`` (not the square ``(16, 16)`` of the other functions, which is the boundary case
of the comparison) and called again at the landscape ``(20, 24)``. The decision is still a
guard of the translation: a portrait (or square) image is refused by name (GuardFailure),
not answered.

The sizes torchvision passes through ``int()`` (``_center_crop_compute_crop_anchor``'s
``int(round((h - crop) / 2.0))``) and float literals (``_affine_grid``'s ``(1.0 - ow) *
0.5``, ``0.5 * w``) stay tracked: the tracer rewrites the calls and literals of the code it
runs (``ivytrace_intercept.pycode``)."""


def _opdb() -> Any:
    name = "opdb_sweep"
    if name not in sys.modules:
        spec = importlib.util.spec_from_file_location(
            name, Path(__file__).with_name("opdb_sweep.py")
        )
        assert spec is not None and spec.loader is not None
        mod = importlib.util.module_from_spec(spec)
        sys.modules[name] = mod
        spec.loader.exec_module(mod)
    return sys.modules[name]


def functions() -> list[tuple[str, Callable[..., Any]]]:
    """(label, function) of every public function judged: ``F.<name>`` for
    ``transforms.v2.functional``, ``ops.<name>`` for ``torchvision.ops``."""
    import torchvision.ops as ops
    import torchvision.transforms.v2.functional as F

    out = []
    for prefix, mod in (("F", F), ("ops", ops)):
        for name in sorted(dir(mod)):
            f = getattr(mod, name)
            if name.startswith("_") or name in SKIP or not inspect.isfunction(f):
                continue
            out.append((f"{prefix}.{name}", f))
    return out


# ---------------------------------------------------------------- inputs by parameter name
def _boxes(g: Any, n: int, canvas: tuple[int, int]) -> Any:
    import torch

    h, w = canvas
    xy = torch.rand(n, 2, generator=g) * torch.tensor([w / 2, h / 2])
    wh = torch.rand(n, 2, generator=g) * torch.tensor([w / 2, h / 2]) + 1
    return torch.cat([xy, xy + wh], dim=1)


def _canvas(label: str, shape_id: int) -> tuple[int, int]:
    """The image size of input ``shape_id`` (see :data:`ORIENTED`)."""
    if shape_id == 0:
        return (16, 20) if label in ORIENTED else (16, 16)
    return (20, 24)


def _tensor_for(name: str, g: Any, shape_id: int, hw: tuple[int, int] | None = None) -> Any:
    """The array a parameter called ``name`` gets (None: not an array parameter)."""
    import torch

    hw = hw or _canvas("", shape_id)
    n = 5 if shape_id == 0 else 7
    if name in ("inpt", "image"):
        return torch.rand(3, *hw, generator=g)
    if name == "video":
        return torch.rand(4, 3, *hw, generator=g)
    if name == "mask":
        return (torch.rand(1, *hw, generator=g) > 0.5).to(torch.uint8)
    if name == "masks":
        return torch.rand(n, *hw, generator=g) > 0.7
    if name in ("bounding_boxes", "bounding_box", "boxes", "boxes1"):
        return _boxes(g, n, hw)
    if name == "boxes2":
        return _boxes(g, n + 1, hw)
    if name in ("keypoints", "key_points"):
        return torch.rand(n, 2, generator=g) * torch.tensor([hw[1], hw[0]])
    if name == "scores":
        return torch.rand(n, generator=g)
    if name == "idxs":
        return torch.arange(n) % 2
    if name in ("inputs", "targets"):
        return torch.rand(n, 3, generator=g)
    if name == "displacement":
        return torch.randn(1, *hw, 2, generator=g) * 0.05
    if name == "v":
        return torch.rand(3, STATIC["h"], STATIC["w"], generator=g)
    return None


def make_case(label: str, fn: Callable[..., Any], shape_id: int) -> tuple[dict, dict] | None:
    """(array arguments, constant arguments) by parameter name for ``fn`` at input shape
    ``shape_id`` (0: the traced one, 1: the new one); None when a required parameter has
    no value here."""
    import torch
    from torchvision.tv_tensors import BoundingBoxFormat

    g = torch.Generator().manual_seed(shape_id)
    params = inspect.signature(fn).parameters
    arrays: dict[str, Any] = {}
    consts: dict[str, Any] = {}
    hw = _canvas(label, shape_id)
    for name, p in params.items():
        if p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD):
            continue
        required = p.default is inspect.Parameter.empty
        if label.startswith("ops.") and name in ("input",):
            arrays[name] = _ops_input(label, g, shape_id)
            continue
        if label.startswith("ops.") and name == "boxes" and "roi" in label:
            arrays[name] = _rois(g, shape_id)
            continue
        if label == "ops.deform_conv2d" and name in ("offset", "weight"):
            arrays[name] = _deform(name, g, shape_id)
            continue
        if name == "canvas_size":
            consts[name] = (16, 16)  # the boxes' canvas: a constant of the function
            continue
        if name in ("format", "old_format") and "bounding" in label:
            consts[name] = BoundingBoxFormat.XYXY
            continue
        if name == "new_format":
            consts[name] = BoundingBoxFormat.CXCYWH
            continue
        if name == "clamping_mode":
            consts[name] = "hard"
            continue
        if name == "inpt" and ("keypoints" in label or "bounding" in label):
            arrays[name] = _tensor_for(
                "keypoints" if "keypoints" in label else "boxes", g, shape_id
            )
            continue
        if name == "inpt" and label in ("F.get_num_frames", "F.uniform_temporal_subsample"):
            arrays[name] = _tensor_for("video", g, shape_id)
            continue
        if name == "displacement" and ("keypoints" in label or "bounding" in label):
            arrays[name] = _tensor_for(name, g, 0)  # sized by the constant canvas
            continue
        if name == "boxes2" and label.endswith("_loss"):
            arrays[name] = _tensor_for("boxes1", g, shape_id)
            continue
        if name == "output_size" and "roi" in label:
            consts[name] = 2
            continue
        if name == "size" and label == "ops.clip_boxes_to_image":
            consts[name] = hw
            continue
        t = _tensor_for(name, g, shape_id, hw)
        if t is not None and (required or name == "inpt"):
            arrays[name] = t
        elif required:
            if name not in STATIC:
                return None
            consts[name] = STATIC[name]
    return arrays, consts


def _ops_input(label: str, g: Any, shape_id: int) -> Any:
    import torch

    hw = (8, 8) if shape_id == 0 else (10, 12)
    chans = 8 if label.startswith("ops.ps_roi") else (2 if "deform" in label else 3)
    return torch.rand(1 if "deform" in label else 2, chans, *hw, generator=g)


def _rois(g: Any, shape_id: int) -> Any:
    import torch

    k = 3 if shape_id == 0 else 4
    xy = torch.rand(k, 2, generator=g) * 4
    return torch.cat([(torch.arange(k) % 2).float()[:, None], xy, xy + 3], dim=1)


def _deform(name: str, g: Any, shape_id: int) -> Any:
    import torch

    hw = (6, 6) if shape_id == 0 else (8, 10)
    if name == "offset":
        return torch.randn(1, 18, *hw, generator=g) * 0.5
    return torch.randn(4, 2, 3, 3, generator=g)


# ---------------------------------------------------------------- one function
def run_function(label: str, fn: Callable[..., Any], target: str) -> Any:
    """The verdict of ``fn`` on ``target`` (an ``opdb_sweep.Verdict``), or None when torch
    rejects the inputs made for it."""
    ops = _opdb()
    v = ops.Verdict(label, target)
    t0 = time.perf_counter()
    try:
        with warnings.catch_warnings(), ops._deadline(CASE_SECONDS):
            warnings.simplefilter("ignore")
            ok = _run(label, fn, target, v, ops)
    except ops._Timeout:
        v.record("crash", "timeout", f"over {CASE_SECONDS} s")
        ok = True
    v.seconds = time.perf_counter() - t0
    return v if ok else None


def _inputs(label: str, fn: Callable[..., Any]) -> tuple[list[str], dict, list[list[Any]]] | None:
    cases = [make_case(label, fn, i) for i in (0, 1)]
    if cases[0] is None or cases[1] is None:
        return None
    names = list(cases[0][0])
    return names, cases[0][1], [[c[0][n] for n in names] for c in cases]


def _run(label: str, fn: Callable[..., Any], target: str, v: Any, ops: Any) -> bool:
    import torch

    import ivytrace_transpile as it
    from ivytrace_transpile.translate import to_target

    made = _inputs(label, fn)
    if made is None:
        return False
    names, consts, groups = made

    def call(*ts: Any) -> Any:
        return fn(**dict(zip(names, ts)), **consts)

    call.__name__ = label.replace(".", "_")
    for attempt in (groups, _as_uint8(names, groups)):
        refs = []
        with torch.no_grad():
            for ts in attempt:
                try:
                    refs.append(call(*copy.deepcopy(ts)))
                except Exception:
                    refs.append(None)
        if refs[0] is not None:
            groups = attempt
            break
    else:
        return False
    tgt = it.get_target(target)
    try:
        tr = it.transpile(call, target=target, args=tuple(copy.deepcopy(groups[0])), retrace=False)
    except Exception as exc:
        if ops._is_ivytrace_error(exc):
            v.record("refused", ops.short_reason(exc), f"transpile: {exc}"[:500])
        else:
            v.record("crash", ops._crash_reason(exc, "transpile"), f"{exc}"[:500])
        return True
    for i, (ts, ref) in enumerate(zip(groups, refs)):
        if ref is None:
            continue
        v.samples += 1
        where = "call" if i == 0 else "new shape"
        try:
            got = tr(*[to_target(t, tgt) for t in ts])
        except Exception as exc:
            if ops._is_ivytrace_error(exc):
                v.record("refused", f"{where}: {ops.short_reason(exc)}", f"{exc}"[:500])
            else:
                v.record("crash", ops._crash_reason(exc, where), f"{exc}"[:500])
            continue
        why = ops.compare(ref, got)
        if why:
            v.record("wrong", "", f"{where}: {why}")
    return True


def _as_uint8(names: list[str], groups: list[list[Any]]) -> list[list[Any]]:
    """The inputs with images and videos as uint8 (for functions that take only those)."""
    import torch

    return [
        [
            (t * 255).to(torch.uint8) if n in ("inpt", "image", "video") else t
            for n, t in zip(names, ts)
        ]
        for ts in groups
    ]


# ---------------------------------------------------------------- the sweep
def sweep(
    targets: Iterable[str] = TARGETS,
    *,
    names: Iterable[str] | None = None,
    chunk: tuple[int, int] | None = None,
    jsonl: str | Path | None = None,
) -> Iterator[Any]:
    """Verdicts function by function (all, the ``names`` given as labels such as
    ``F.rotate``, or every ``chunk[1]``-th from ``chunk[0]``), each appended to ``jsonl``
    as it comes."""
    import torch

    import ivytrace  # noqa: F401 - installs the triton/tensorflow LLVM fix before both load
    import ivytrace_transpile as it

    targets = tuple(targets)
    for t in targets:
        it.get_target(t)
    torch.set_num_threads(1)
    wanted = set(names) if names else None
    out = open(jsonl, "a") if jsonl else None
    try:
        chosen = functions()
        if chunk is not None:
            chosen = chosen[chunk[0] :: chunk[1]]
        for label, fn in chosen:
            if wanted is not None and label not in wanted:
                continue
            for t in targets:
                v = run_function(label, fn, t)
                if v is None:
                    break
                if out:
                    out.write(json.dumps(v.as_json()) + "\n")
                    out.flush()
                yield v
    finally:
        if out:
            out.close()


def load_ledger(path: str | Path = LEDGER) -> dict[str, dict[str, str]]:
    return _opdb().load_ledger(path)
