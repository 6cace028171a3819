"""Make the helpers shared by test folders (``golden_support``) importable as top-level
modules (pytest runs with ``--import-mode=importlib``, which puts no test folder on
``sys.path``)."""

import os
import sys
from pathlib import Path

# transpile writes each class or module it translates into ./Translated_Outputs/ unless told
# not to: the suite does not litter the checkout (tests of that default unset this)
os.environ.setdefault("IVYTRACE_NO_OUTPUTS", "1")

_HERE = str(Path(__file__).resolve().parent)
if _HERE not in sys.path:
    sys.path.insert(0, _HERE)

# Under pytest-xdist (the README's command runs `-n 2`) each worker is one of as many
# processes as there are cores: a torch pool of one thread per core only contends with the
# other workers (the op_db sweep spent half its CPU so). Set before any test imports torch;
# child processes the tests start inherit it. An explicit OMP_NUM_THREADS wins.
if os.environ.get("PYTEST_XDIST_WORKER"):
    os.environ.setdefault("OMP_NUM_THREADS", "1")

# XLA compiles every eager jax op once per shape, and the suite's programs (tiny arrays, a few
# calls each) mostly run once: compiled as ivytrace_transpile compiles its own one-off
# validation runs (targets/jax.py's options: no LLVM optimisation, no fusion emitters, one
# codegen split), the jax target's share of the op_db ledger takes about a third less CPU
# (measured 10.0 -> 6.6 s on 24 ops) and gives the same verdicts on all 632 ops. Values stay
# IEEE (XLA's fast math is off either way). Set before jax or tensorflow starts XLA; child
# processes inherit it; a flag the caller set in XLA_FLAGS wins.
_XLA_TEST_FLAGS = {
    "xla_backend_optimization_level": "0",
    "xla_llvm_disable_expensive_passes": "true",
    "xla_cpu_use_fusion_emitters": "false",
    "xla_cpu_parallel_codegen_split_count": "1",
}
_given = os.environ.get("XLA_FLAGS", "").split()
_named = {f.lstrip("-").split("=")[0] for f in _given}
os.environ["XLA_FLAGS"] = " ".join(
    _given + [f"--{k}={v}" for k, v in _XLA_TEST_FLAGS.items() if k not in _named]
)
