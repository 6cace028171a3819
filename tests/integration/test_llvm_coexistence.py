"""tensorflow and torch's triton each bundle LLVM; with ivytrace imported, one process
holds both in either import order (``ivytrace._llvm``).

Each case runs in a fresh interpreter: the clash aborts the process, and which library
loads first is decided once per process.
"""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
import textwrap

import pytest

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(
        not hasattr(os, "RTLD_DEEPBIND")
        or any(
            importlib.util.find_spec(m) is None for m in ("tensorflow", "triton", "transformers")
        ),
        reason="needs glibc, tensorflow, triton and transformers",
    ),
]

_BUILD_AND_COMPILE = """
import sys
assert "triton._C.libtriton" not in sys.modules  # triton loads after tensorflow below
assert "tensorflow" in sys.modules

import torch
import transformers

config = transformers.BertConfig(
    num_hidden_layers=1, hidden_size=32, num_attention_heads=2, intermediate_size=37
)
model = transformers.BertModel(config).eval()
with torch.no_grad():
    out = model(torch.tensor([[1, 2, 3]])).last_hidden_state
assert out.shape == (1, 3, 32), out.shape

def f(x):
    return torch.sin(x) * 2 + 1

x = torch.arange(4.0)
got = torch.compile(f)(x)
torch.testing.assert_close(got, f(x))

# triton's own LLVM still works: parse and generate code through it
import triton._C.libtriton as libtriton
libtriton.llvm.init_targets()
ir = "define i32 @add(i32 %a, i32 %b) {\\n  %c = add i32 %a, %b\\n  ret i32 %c\\n}\\n"
ptx = libtriton.llvm.translate_to_asm(ir, "nvptx64-nvidia-cuda", "sm_80", "", [], False, False, False)
assert ".visible .func" in ptx, ptx

# and so does tensorflow's
import tensorflow as tf
assert float(tf.reduce_sum(tf.constant([1.0, 2.0]))) == 3.0
print("COEXIST-OK")
"""

TENSORFLOW_FIRST = "import tensorflow\nimport ivytrace\n" + _BUILD_AND_COMPILE
IVYTRACE_FIRST = "import ivytrace\nimport torch\nimport transformers\nimport tensorflow\n" + (
    _BUILD_AND_COMPILE
)
WITHOUT_IVYTRACE = "import tensorflow\n" + _BUILD_AND_COMPILE.replace(
    "import sys\n", "import sys\nassert 'ivytrace' not in sys.modules\n", 1
)


@pytest.fixture(scope="module")
def inductor_cache(tmp_path_factory):
    """One inductor cache for the three scripts (and every xdist worker: the base
    temporary directory's parent is the run's): they compile the same function, and
    only the first compile (15-40 s on two cores) says nothing the others do not."""
    path = tmp_path_factory.getbasetemp().parent / "inductor-cache"
    path.mkdir(exist_ok=True)
    return path


def _run(script: str, tmp_path, cache) -> subprocess.CompletedProcess[str]:
    env = {
        **os.environ,
        "TF_CPP_MIN_LOG_LEVEL": "3",
        "TORCHINDUCTOR_CACHE_DIR": str(cache),
        "CUDA_VISIBLE_DEVICES": "",
    }
    return subprocess.run(
        [sys.executable, "-c", textwrap.dedent(script)],
        capture_output=True,
        text=True,
        timeout=600,
        env=env,
        cwd=tmp_path,
    )


@pytest.mark.parametrize(
    "script", [TENSORFLOW_FIRST, IVYTRACE_FIRST], ids=["tensorflow-first", "ivytrace-first"]
)
def test_tensorflow_and_triton_in_one_process(script, tmp_path, inductor_cache):
    done = _run(script, tmp_path, inductor_cache)
    assert done.returncode == 0 and "COEXIST-OK" in done.stdout, done.stderr[-4000:]


def test_without_ivytrace_the_process_aborts(tmp_path, inductor_cache):
    # The control: the same script with no ivytrace dies in LLVM. If this starts to
    # pass, tensorflow and triton no longer clash and ivytrace._llvm may go.
    done = _run(WITHOUT_IVYTRACE, tmp_path, inductor_cache)
    assert done.returncode != 0, "tensorflow then triton no longer aborts without ivytrace"
    in_llvm = "LLVM ERROR" in done.stderr or "registered more than once" in done.stderr
    assert in_llvm, done.stderr[-4000:]
