"""A 7B Llama-architecture model built on torch's meta device, translated to source.

Each target runs in a fresh subprocess (so one target's imports and peak do not count
against the other's): build ``LlamaForCausalLM`` (hidden 4096, intermediate 11008, 32
layers, 32 heads, vocab 32000) under ``torch.device("meta")`` (its rotary embedding, whose
``inv_freq`` no checkpoint holds, outside it), then ``ivytrace.transpile(model,
target=..., kwargs=..., output_dir=...)``, which writes the package's source and no weights.
Prints wall time and peak RSS per target: the child's own high-water mark, ``VmHWM`` of
``/proc/self/status``. Not ``getrusage(RUSAGE_SELF).ru_maxrss``: Linux carries the RSS of
the process that forked the child over ``exec`` into it (the kernel saves the old address
space's high-water mark into the process's ``maxrss``), so under a 3 GiB pytest worker a
child that never used 2 GiB read 2.4-3.2 GiB.

    uv run python scripts/meta_llama_7b.py [--targets tensorflow jax] [--out DIR]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import textwrap

CHILD = textwrap.dedent(
    """
    import json, sys, time
    t0 = time.perf_counter()
    import ivytrace
    import torch
    import transformers as tr

    def peak_rss_mb():
        # this process's own high-water mark (ru_maxrss would include the parent's RSS at fork)
        with open("/proc/self/status") as f:
            line = next(ln for ln in f if ln.startswith("VmHWM:"))
        return int(line.split()[1]) / 1024

    target, out = sys.argv[1], sys.argv[2]
    config = tr.LlamaConfig(
        hidden_size=4096, intermediate_size=11008, num_hidden_layers=32,
        num_attention_heads=32, num_key_value_heads=32, vocab_size=32000,
    )
    t_import = time.perf_counter() - t0
    with torch.device("meta"):
        model = tr.LlamaForCausalLM(config).eval()
    model.model.rotary_emb = type(model.model.rotary_emb)(config)
    n_params = sum(p.numel() for p in model.parameters())
    t1 = time.perf_counter()
    result = ivytrace.transpile(
        model, source="torch", target=target, output_dir=out,
        kwargs={"input_ids": torch.zeros(1, 2, dtype=torch.long), "use_cache": False},
    )
    t_transpile = time.perf_counter() - t1
    files = sorted(p.name for p in result.package.iterdir())
    print(json.dumps({
        "target": target, "params": n_params, "import_s": t_import,
        "transpile_s": t_transpile, "total_s": time.perf_counter() - t0,
        "peak_rss_mb": peak_rss_mb(),
        "model_py_bytes": len((result.package / "model.py").read_bytes()),
        "files": files, "package": str(result.package),
    }))
    """
)


def measure(target: str, out: str) -> dict:
    """One target's run, in a fresh interpreter."""
    proc = subprocess.run(
        [sys.executable, "-c", CHILD, target, out], capture_output=True, text=True, timeout=1200
    )
    if proc.returncode != 0:
        raise RuntimeError(f"{target} failed:\\n{proc.stderr[-4000:]}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--targets", nargs="+", default=["tensorflow", "jax"])
    ap.add_argument("--out", default=None, help="where the packages go (default: a temp dir)")
    opts = ap.parse_args()
    out = opts.out or tempfile.mkdtemp(prefix="meta_llama_7b_")
    rows = [measure(t, out) for t in opts.targets]
    print(f"7B Llama on the meta device ({rows[0]['params'] / 1e9:.2f}B parameters) -> source")
    print(f"{'target':<12}{'transpile s':>12}{'total s':>10}{'peak RSS MB':>13}{'model.py KB':>13}")
    for r in rows:
        print(
            f"{r['target']:<12}{r['transpile_s']:>12.1f}{r['total_s']:>10.1f}"
            f"{r['peak_rss_mb']:>13.0f}{r['model_py_bytes'] / 1024:>13.1f}"
        )
    print(f"packages in {out}: {', '.join(rows[0]['files'])}")


if __name__ == "__main__":
    main()
