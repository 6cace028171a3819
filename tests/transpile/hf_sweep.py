"""Every transformers architecture a tiny config can be built for, traced and translated
with realistic inputs: a yardstick for the translation on code nobody tuned it for.

For each model type of the installed transformers (its base model class, and one head
class: sequence classification for encoders, causal LM for decoders, image
classification, CTC / audio classification), a tiny config is written from the config
class's own parameters (hidden size 32, 2 layers, 4 heads, vocabulary 99...). Inputs are
what users pass: ``input_ids`` with an ``attention_mask`` that HAS PADDING (rows padded at
the end by different amounts), ``token_type_ids`` where the model takes them,
``decoder_input_ids`` for encoder-decoders, pixel values, audio values or features.

Each architecture is traced (:func:`ivytrace.trace_graph`) and translated to tensorflow
and jax (:func:`ivytrace.transpile` with the inputs as ``kwargs``); every resulting
callable is called on the traced inputs AND on a new batch size and sequence length with
other padding, and compared with torch (the rule of
:func:`ivytrace_transpile.translate.compare_output`, through ``opdb_sweep.compare``).
Verdicts per (architecture, column): ``right``, ``refused: <reason>`` (an ivytrace error),
``wrong`` (an answer outside tolerance), ``crash`` (any other exception). Architectures
whose tiny config, model or torch forward cannot be built are listed as not built, not
judged. The expected verdicts are ``hf_ledger.json``; ``test_hf_sweep.py`` checks them.
"""

from __future__ import annotations

import contextlib
import copy
import importlib.util
import inspect
import json
import sys
import time
import warnings
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

__all__ = [
    "COLUMNS",
    "LEDGER",
    "Case",
    "cases",
    "dump_ledger",
    "ledger_entry",
    "load_ledger",
    "run_case",
    "sweep",
    "tiny_config",
]

COLUMNS = ("trace", "tensorflow", "jax")
LEDGER = Path(__file__).with_name("hf_ledger.json")
CASE_SECONDS = 240


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


# ---------------------------------------------------------------- tiny configs
TINY: dict[str, Any] = {
    "vocab_size": 99, "hidden_size": 32, "d_model": 32, "n_embd": 32, "dim": 32,
    "embed_dim": 32, "embedding_size": 32, "word_embed_proj_dim": 32, "d_embed": 32,
    "num_hidden_layers": 2, "n_layer": 2, "n_layers": 2, "num_layers": 2,
    "encoder_layers": 2, "decoder_layers": 2, "num_decoder_layers": 2,
    "num_attention_heads": 4, "n_head": 4, "n_heads": 4, "encoder_attention_heads": 4,
    "decoder_attention_heads": 4, "num_key_value_heads": 2, "num_kv_heads": 2,
    "intermediate_size": 64, "ffn_dim": 64, "encoder_ffn_dim": 64, "decoder_ffn_dim": 64,
    "d_ff": 64, "n_inner": 64, "hidden_dim": 64, "ffn_hidden_size": 64,
    "moe_intermediate_size": 32, "shared_expert_intermediate_size": 32,
    "head_dim": 8, "d_kv": 8, "d_head": 8, "rotary_dim": 4, "rotary_emb_base": 10000,
    "max_position_embeddings": 128, "n_positions": 128, "n_ctx": 128,
    "max_source_positions": 32, "max_target_positions": 64,
    "type_vocab_size": 2, "num_experts": 4, "num_local_experts": 4, "n_routed_experts": 4,
    "num_experts_per_tok": 2, "n_shared_experts": 1, "first_k_dense_replace": 1,
    "kv_lora_rank": 16, "q_lora_rank": 16, "qk_rope_head_dim": 8, "qk_nope_head_dim": 8,
    "v_head_dim": 8, "image_size": 32, "patch_size": 8, "num_channels": 3,
    "num_mel_bins": 16, "num_labels": 3, "pad_token_id": 0, "bos_token_id": 1,
    "eos_token_id": 2, "decoder_start_token_id": 1, "use_cache": False,
    "attention_window": 4, "conv_dim": [16, 16], "conv_stride": [5, 2], "conv_kernel": [10, 3],
    "num_conv_pos_embeddings": 16, "num_conv_pos_embedding_groups": 4,
    "proj_codevector_dim": 16, "codevector_dim": 16, "classifier_proj_size": 16,
    "tdnn_dim": [16, 16], "tdnn_kernel": [3, 3], "tdnn_dilation": [1, 2], "xvector_output_dim": 16,
    "emb_dim": 32, "src_vocab_size": 99, "tgt_vocab_size": 99, "num_latents": 8,
    "d_latents": 32,
}  # fmt: skip
"""Tiny values by config parameter name, passed where the config class takes them."""

_SHRINK_LISTS = {
    "depths", "depth", "num_block_repeats", "hidden_sizes", "num_heads", "embed_dims", "dims",
}  # fmt: skip


def tiny_config(config_cls: type, drop: Iterable[str] = ()) -> Any:
    """A config of ``config_cls`` with the tiny values of :data:`TINY` for the parameters
    its ``__init__`` names (but those in ``drop``, left at the class's default), and its
    per-stage lists (depths, hidden sizes, heads) cut to small values of the same length."""
    params = inspect.signature(config_cls.__init__).parameters
    kw = {k: v for k, v in TINY.items() if k in params and k not in drop}
    base = config_cls()
    for name in _SHRINK_LISTS:
        val = getattr(base, name, None) if name in params else None
        if isinstance(val, list | tuple) and val and all(isinstance(x, int) for x in val):
            n = len(val)
            kw[name] = {
                "depths": [1] * n,
                "depth": [1] * n,
                "num_block_repeats": [1] * n,
                "hidden_sizes": [16 * (i + 1) for i in range(n)],
                "embed_dims": [16 * (i + 1) for i in range(n)],
                "dims": [16 * (i + 1) for i in range(n)],
                "num_heads": [2] * n,
            }[name]
    if "embed_dim" in kw and isinstance(getattr(base, "depths", None), list | tuple):
        kw["embed_dim"] = 16  # swin-like: embed_dim doubles at each stage
        if "num_heads" in kw:
            kw["num_heads"] = [2] * len(base.depths)
        if "window_size" in params:
            kw["window_size"] = 2
        if "patch_size" in params:
            kw["patch_size"] = 4
    for name in params:
        sub = getattr(base, name, None) if name.endswith("_config") else None
        if sub is not None and hasattr(sub, "to_dict") and type(sub) is not config_cls:
            with contextlib.suppress(Exception):
                kw[name] = tiny_config(type(sub)).to_dict()
    try:
        return config_cls(**kw)
    except Exception:  # a field typed list[int] (one value per stage) given one number
        for name, v in list(kw.items()):
            val = getattr(base, name, None)
            if isinstance(v, int) and isinstance(val, list | tuple) and val:
                kw[name] = type(val)([v] * len(val))
        return config_cls(**kw)


# ---------------------------------------------------------------- the architectures
@dataclass(frozen=True)
class Case:
    """One architecture: its model type and the model class to build."""

    model_type: str
    class_name: str

    @property
    def name(self) -> str:
        return f"{self.model_type}:{self.class_name}"


_HEADS = (
    "MODEL_FOR_SEQUENCE_CLASSIFICATION_MAPPING_NAMES",
    "MODEL_FOR_CAUSAL_LM_MAPPING_NAMES",
    "MODEL_FOR_IMAGE_CLASSIFICATION_MAPPING_NAMES",
    "MODEL_FOR_CTC_MAPPING_NAMES",
    "MODEL_FOR_AUDIO_CLASSIFICATION_MAPPING_NAMES",
    "MODEL_FOR_SEQ_TO_SEQ_CAUSAL_LM_MAPPING_NAMES",
    "MODEL_FOR_MASKED_LM_MAPPING_NAMES",
    "MODEL_FOR_TOKEN_CLASSIFICATION_MAPPING_NAMES",
    "MODEL_FOR_QUESTION_ANSWERING_MAPPING_NAMES",
    "MODEL_FOR_SPEECH_SEQ_2_SEQ_MAPPING_NAMES",
    "MODEL_FOR_AUDIO_FRAME_CLASSIFICATION_MAPPING_NAMES",
    "MODEL_FOR_SEMANTIC_SEGMENTATION_MAPPING_NAMES",
    "MODEL_FOR_DEPTH_ESTIMATION_MAPPING_NAMES",
    "MODEL_FOR_MASKED_IMAGE_MODELING_MAPPING_NAMES",
    "MODEL_FOR_PRETRAINING_MAPPING_NAMES",
)
"""Head mappings in order of preference: each model type gets the first head class one
of them names (other than its base class)."""


def cases(heads: bool = True, base: bool = True) -> list[Case]:
    """Base model of every model type with a base class, then one head model each."""
    from transformers.models.auto import modeling_auto as ma

    first = [Case(t, c if isinstance(c, str) else c[0]) for t, c in ma.MODEL_MAPPING_NAMES.items()]
    out = sorted(first, key=lambda c: c.model_type) if base else []
    if heads:
        names = {c.model_type: c.class_name for c in first}
        seen: set[str] = set()
        for mapping in _HEADS:
            for t, c in getattr(ma, mapping, {}).items():
                c = c if isinstance(c, str) else c[0]
                if t in seen or t not in names or c == names[t]:
                    continue
                seen.add(t)
                out.append(Case(t, c))
    return out


def _base_class(model_type: str) -> str | None:
    from transformers.models.auto import modeling_auto as ma

    c = ma.MODEL_MAPPING_NAMES.get(model_type)
    return c if c is None or isinstance(c, str) else c[0]


def build(case: Case, probe: Callable[[Any], None] | None = None) -> Any:
    """The tiny model of ``case`` in eval mode, seeded, on which ``probe`` (a forward on
    the sweep's inputs) runs.

    The tiny values of :data:`TINY` do not fit every model together (a validator that
    wants as many key/value heads as heads, a rotary size that must equal the head size,
    a field typed as a list): where the config, the model or the probe fails, the values
    are tried again with one of them left at the class's default, in :data:`TINY`'s order,
    and the first that builds, stays small and runs is kept (deterministic: the same
    model every run). The first failure is raised when none does."""
    import torch
    import transformers
    from transformers.models.auto.configuration_auto import CONFIG_MAPPING

    config_cls = type(CONFIG_MAPPING[case.model_type]())
    cls = getattr(transformers, case.class_name)
    params = inspect.signature(config_cls.__init__).parameters
    drops: list[tuple[str, ...]] = [(), *((k,) for k in TINY if k in params)]
    first: Exception | None = None
    for drop in drops[: 1 + MAX_RETRIES]:
        try:
            config = tiny_config(config_cls, drop)
            with torch.device("meta"):
                size = sum(p.numel() for p in cls(config).parameters())
            if size > MAX_PARAMETERS:
                raise TooBig(f"{size} parameters with the tiny config")
            torch.manual_seed(0)
            model = cls(config).eval()
            _draw_zero_weights(model)
            if probe is not None:
                probe(model)
            return model
        except (ImportError, NoInputs) as exc:
            raise exc
        except Exception as exc:
            first = first or exc
    assert first is not None
    raise first


MAX_RETRIES = 40
"""At most this many configs with one tiny value left at its default are tried."""


class NoInputs(Exception):
    """The model takes none of the inputs the sweep makes."""


def _draw_zero_weights(model: Any) -> None:
    """Weights of two or more dimensions that the init leaves at exactly zero (routers,
    class and mask tokens, position tables) drawn small and random, seeded: a zero weight
    hides the computation it takes part in (a wrong position table answers right), and a
    zero router scores every expert alike, so top-k picks among ties whose order torch
    leaves unspecified. Trained weights are never exactly zero; zero biases stay."""
    import torch

    g = torch.Generator().manual_seed(1)
    with torch.no_grad():
        for _, p in sorted(model.named_parameters()):
            if p.dim() >= 2 and p.is_floating_point() and not p.any():
                p.copy_(0.02 * torch.randn(p.shape, generator=g, dtype=p.dtype))


MAX_PARAMETERS = 3_000_000
"""A model bigger than this with the tiny config is not built (a sub-config the tiny
values did not reach)."""


class TooBig(Exception):
    """The tiny config still gives a big model."""


# ---------------------------------------------------------------- inputs
def _padded_mask(batch: int, seq: int, pads: Iterable[int]) -> Any:
    import torch

    mask = torch.ones(batch, seq, dtype=torch.long)
    for row, pad in enumerate(pads):
        if pad:
            mask[row, seq - pad :] = 0
    return mask


def make_inputs(
    model: Any, batch: int, seq: int, seed: int, head: bool = False
) -> dict[str, Any] | None:
    """Realistic inputs for ``model`` at (batch, seq): token ids with a padded attention
    mask (other padding for each shape), token types where taken, decoder ids for
    encoder-decoders, pixels, audio. None when the model takes none of these.

    For a head model (``head``), each row's last real token is the end-of-sequence token,
    as a tokenizer writes it (BART's sequence classification reads the hidden state
    there), and a sequence-classification head of an encoder-decoder gets no decoder ids
    (it makes them from ``input_ids``, as its users call it)."""
    import torch

    cfg = model.config
    params = inspect.signature(model.forward).parameters
    g = torch.Generator().manual_seed(seed)
    out: dict[str, Any] = {}
    vocab = getattr(cfg, "vocab_size", None) or 99
    pad_id = getattr(cfg, "pad_token_id", None) or 0
    pads = [0, 2, 1, 3, 4][:batch] if seed == 0 else [3, 0, 5, 1, 2][:batch]
    if "input_ids" in params:
        ids = torch.randint(3, min(vocab, 99), (batch, seq), generator=g)
        mask = _padded_mask(batch, seq, pads)
        ids = torch.where(mask.bool(), ids, torch.full_like(ids, pad_id))
        eos = getattr(cfg, "eos_token_id", None)
        if head and isinstance(eos, int) and 0 <= eos < vocab:
            for row, pad in enumerate(pads):
                ids[row, seq - pad - 1] = eos
        out["input_ids"] = ids
        if "attention_mask" in params:
            out["attention_mask"] = mask
        if "token_type_ids" in params and (getattr(cfg, "type_vocab_size", 0) or 0) >= 2:
            tt = torch.zeros(batch, seq, dtype=torch.long)
            tt[:, seq // 2 :] = 1
            out["token_type_ids"] = tt * mask
        seq_cls = type(model).__name__.endswith("ForSequenceClassification")
        if (
            "decoder_input_ids" in params
            and getattr(cfg, "is_encoder_decoder", False)
            and not (head and seq_cls)
        ):
            out["decoder_input_ids"] = torch.randint(
                3, min(vocab, 99), (batch, seq - 2), generator=g
            )
    elif "pixel_values" in params:
        size = getattr(cfg, "image_size", 32)
        size = size[0] if isinstance(size, list | tuple) else size
        chans = getattr(cfg, "num_channels", 3)
        out["pixel_values"] = torch.randn(batch, chans, size, size, generator=g)
    elif "input_values" in params:
        length = 400 + 80 * seq
        out["input_values"] = torch.randn(batch, length, generator=g)
        if "attention_mask" in params:
            out["attention_mask"] = _padded_mask(batch, length, [p * 40 for p in pads])
    elif "input_features" in params:
        mels = getattr(cfg, "num_mel_bins", None) or getattr(cfg, "feature_size", 80)
        frames = 2 * getattr(cfg, "max_source_positions", 32)
        out["input_features"] = torch.randn(batch, mels, frames, generator=g)
        if "decoder_input_ids" in params and getattr(cfg, "is_encoder_decoder", False):
            out["decoder_input_ids"] = torch.randint(3, min(vocab, 99), (batch, seq), generator=g)
    else:
        return None
    if "use_cache" in params:
        out["use_cache"] = False
    return out


def _pixels(model: Any, batch: int, seed: int) -> dict[str, Any]:
    import torch

    cfg = getattr(model.config, "vision_config", None) or model.config
    size = getattr(cfg, "image_size", 32)
    size = size[0] if isinstance(size, list | tuple) else size
    g = torch.Generator().manual_seed(seed + 10)
    return {
        "pixel_values": torch.randn(batch, getattr(cfg, "num_channels", 3), size, size, generator=g)
    }


# ---------------------------------------------------------------- one architecture
def _target_kwargs(x: dict[str, Any], target: str) -> dict[str, Any]:
    import torch

    import ivytrace_transpile as it
    from ivytrace_transpile.translate import to_target

    tgt = it.get_target(target)
    return {k: to_target(v, tgt) if isinstance(v, torch.Tensor) else v for k, v in x.items()}


def _output(res: Any) -> Any:
    """A model output as a plain dict of its array fields (a ModelOutput is a dict)."""
    if isinstance(res, dict):
        return {k: v for k, v in res.items() if v is not None}
    if hasattr(res, "to_tuple"):
        return res.to_tuple()
    return res


def run_case(case: Case, columns: Iterable[str] = COLUMNS) -> dict[str, Any]:
    """{column: verdict entry} for one architecture (plus ``built``: False and ``why``
    when its tiny model cannot be built or run in torch)."""

    import ivytrace as ivy
    import ivytrace_transpile as it

    columns = tuple(columns)
    for c in columns:  # the target frameworks are loaded before any trace
        if c != "trace":
            it.get_target(c)
    ops = _opdb()
    record: dict[str, Any] = {"arch": case.name, "built": False}
    t0 = time.perf_counter()
    try:
        with ops._deadline(CASE_SECONDS):
            head = case.class_name != _base_class(case.model_type)
            ran: dict[str, Any] = {}
            model = build(case, lambda m: ran.update(_reference(m, head)))
            inputs, refs = ran["inputs"], ran["refs"]
    except ops._Timeout:
        record["why"] = "timeout building"
        return record
    except NoInputs:
        record["why"] = "takes no input_ids, pixel_values or audio"
        return record
    except Exception as exc:
        record["why"] = f"{type(exc).__name__}: {str(exc).strip()[:200]}"
        return record
    record["built"] = True
    record["build_seconds"] = round(time.perf_counter() - t0, 2)
    for col in columns:
        t1 = time.perf_counter()
        verdict, detail = _judge(model, col, inputs, refs, ivy, ops)
        record[col] = verdict
        record[f"{col}_detail"] = detail[:400]
        record[f"{col}_seconds"] = round(time.perf_counter() - t1, 2)
    return record


def _reference(model: Any, head: bool) -> dict[str, Any]:
    """The sweep's inputs for ``model`` at the traced and the new shape, and torch's
    outputs on them."""
    import torch

    shapes = [(2, 7, 0), (3, 11, 1)]
    inputs = [make_inputs(model, b, s, seed, head) for b, s, seed in shapes]
    if inputs[0] is None:
        raise NoInputs
    with torch.no_grad():
        try:
            refs = [_output(_seeded(model)(**copy.deepcopy(x))) for x in inputs]
        except Exception:
            if "pixel_values" not in inspect.signature(model.forward).parameters:
                raise
            # a text-image model (CLIP-like) wants both: add the image
            inputs = [{**x, **_pixels(model, len(x["input_ids"]), i)} for i, x in enumerate(inputs)]
            refs = [_output(_seeded(model)(**copy.deepcopy(x))) for x in inputs]
    return {"inputs": inputs, "refs": refs}


def _seeded(fn: Callable[..., Any]) -> Callable[..., Any]:
    """``fn`` called with torch's generator seeded the same every time: a model that draws
    in eval mode (ViTMAE's random masking) is compared with torch on the same draws (a
    trace replays torch's draws from its generator; a translation refuses them)."""
    import torch

    def call(*args: Any, **kwargs: Any) -> Any:
        torch.manual_seed(1234)
        return fn(*args, **kwargs)

    return call


def _judge(model, col, inputs, refs, ivy, ops) -> tuple[str, str]:
    import torch

    try:
        with ops._deadline(CASE_SECONDS), torch.no_grad():
            if col == "trace":
                fn: Callable[..., Any] = ivy.trace_graph(model, kwargs=copy.deepcopy(inputs[0]))

                def convert(x: dict[str, Any]) -> dict[str, Any]:
                    return copy.deepcopy(x)
            else:
                fn = ivy.transpile(
                    model,
                    source="torch",
                    target=col,
                    kwargs=copy.deepcopy(inputs[0]),
                    retrace=False,
                )

                def convert(x: dict[str, Any]) -> dict[str, Any]:
                    return _target_kwargs(x, col)
    except ops._Timeout:
        return "crash: timeout", f"over {CASE_SECONDS} s"
    except Exception as exc:
        return _classify(exc, "translate" if col != "trace" else "trace", ops)
    worst, detail = "right", ""
    for i, (x, ref) in enumerate(zip(inputs, refs)):
        where = "traced shape" if i == 0 else "new shape"
        try:
            with ops._deadline(CASE_SECONDS), torch.no_grad():
                got = _output(_seeded(fn)(**convert(x)))
        except ops._Timeout:
            return "crash: timeout", f"{where}: over {CASE_SECONDS} s"
        except Exception as exc:
            verdict, d = _classify(exc, where, ops)
            if verdict.startswith("crash") or worst == "right":
                worst, detail = verdict, d
            if verdict.startswith("crash"):
                break
            continue
        why = ops.compare(ref, got)
        if why:
            return "wrong", f"{where}: {why}"
    return worst, detail


def _classify(exc: BaseException, where: str, ops: Any) -> tuple[str, str]:
    if ops._is_ivytrace_error(exc):
        return f"refused: {where}: {ops.short_reason(exc)}", f"{type(exc).__name__}: {exc}"
    return f"crash: {ops._crash_reason(exc, where)}", f"{type(exc).__name__}: {exc}"


# ---------------------------------------------------------------- the sweep
def sweep(
    selected: Iterable[Case] | None = None,
    *,
    columns: Iterable[str] = COLUMNS,
    jsonl: str | Path | None = None,
    done: set[str] | None = None,
) -> Iterator[dict[str, Any]]:
    """Records of the architectures, one by one, appended to ``jsonl`` as they come;
    names in ``done`` are passed over (to resume a cut-off run)."""
    import torch

    import ivytrace  # noqa: F401 - installs the triton/tensorflow LLVM fix before both load
    import ivytrace_transpile as it

    cols = tuple(columns)
    for c in cols:
        if c != "trace":
            it.get_target(c)
    torch.set_num_threads(1)
    out = open(jsonl, "a") if jsonl else None
    try:
        with warnings.catch_warnings(), contextlib.redirect_stderr(sys.stdout):
            warnings.simplefilter("ignore")
            for case in selected if selected is not None else cases():
                if done and case.name in done:
                    continue
                rec = run_case(case, cols)
                _release()
                if out:
                    out.write(json.dumps(rec) + "\n")
                    out.flush()
                yield rec
    finally:
        if out:
            out.close()


def _release() -> None:
    """Drop what one architecture left behind (jax's compiled functions hold memory)."""
    import gc

    if "jax" in sys.modules:
        sys.modules["jax"].clear_caches()
    gc.collect()


def load_ledger(path: str | Path = LEDGER) -> dict[str, dict[str, str]]:
    p = Path(path)
    return json.loads(p.read_text()) if p.exists() else {}


def ledger_entry(rec: dict[str, Any]) -> dict[str, str]:
    return {c: rec[c] for c in COLUMNS if c in rec}


def dump_ledger(ledger: dict[str, dict[str, str]], path: str | Path = LEDGER) -> None:
    """Write the ledger sorted, one architecture a line."""
    _opdb().dump_ledger(ledger, path)
