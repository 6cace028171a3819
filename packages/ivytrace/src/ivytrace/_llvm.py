"""The LLVM guard now lives in :mod:`ivytrace_intercept._llvm` (installed when
``ivytrace_intercept`` is imported, so importing it alone after tensorflow is protected
too); this name is kept for code that imported it from here."""

from ivytrace_intercept._llvm import _LIBTRITON, _TritonDeepBind, install

__all__ = ["install"]
_ = (_LIBTRITON, _TritonDeepBind)
