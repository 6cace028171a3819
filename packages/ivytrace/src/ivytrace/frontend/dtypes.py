"""Frontend dtypes: ``ivytrace.float32`` and friends are :class:`Dtype` strings that
compare equal to their names and to every framework's dtype of that name."""

from __future__ import annotations

from ._common import DTYPE_NAMES, Dtype

__all__ = [
    "DTYPE_NAMES",
    "Dtype",
    "bfloat16",
    "bool_",
    "complex64",
    "complex128",
    "float16",
    "float32",
    "float64",
    "int8",
    "int16",
    "int32",
    "int64",
    "uint8",
    "uint16",
    "uint32",
    "uint64",
]

bool_ = Dtype("bool")
int8 = Dtype("int8")
int16 = Dtype("int16")
int32 = Dtype("int32")
int64 = Dtype("int64")
uint8 = Dtype("uint8")
uint16 = Dtype("uint16")
uint32 = Dtype("uint32")
uint64 = Dtype("uint64")
bfloat16 = Dtype("bfloat16")
float16 = Dtype("float16")
float32 = Dtype("float32")
float64 = Dtype("float64")
complex64 = Dtype("complex64")
complex128 = Dtype("complex128")

FLOAT_DTYPES = (bfloat16, float16, float32, float64)
INT_DTYPES = (int8, int16, int32, int64, uint8, uint16, uint32, uint64)
