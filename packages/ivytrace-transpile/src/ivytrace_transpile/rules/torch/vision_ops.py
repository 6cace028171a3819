"""torchvision's registered operators (``torch.ops.torchvision.*``, named by the tracer
since a library's computing operators resolve like aten's): non-maximum suppression,
and the JPEG operators refused by name."""

from __future__ import annotations

from .._common import cast_to
from ..registry import rule

__all__: list[str] = []


@rule("torch.ops.torchvision.nms", "torch.ops.torchvision.nms.default")
def _nms(cx, boxes, scores, iou_threshold):
    keep = cx.target.non_max_suppression(boxes, scores, float(iou_threshold))
    return cast_to(cx, keep, cx.out_dtype())


@rule("torch.ops.image.encode_jpeg", "torch.ops.image.decode_jpeg")
def _jpeg(cx, *args, **kwargs):
    raise NotImplementedError(
        f"{cx.node.op} runs libjpeg (lossy compression and decoding of bytes); no target has "
        "an array op that reproduces it, so it is not translated: apply it in torch before "
        "or after the translated function"
    )
