"""SGLang's per-model overrides on Blackwell: the attention backend and page size they choose.

With ``--attention-backend`` unset, SGLang's model-specific adjustments pick the attention
backend (and for some models the page size and the radix-cache strategy) on SM100, and the
mamba radix-cache resolution (S3) and the ``no_buffer`` asserts then run on those values:
Qwen3-Next / Qwen3.5 with EAGLE get ``trtllm_mha`` with 64-token pages, so ``auto`` resolves to
``extra_buffer`` even with the overlap scheduler off, while a written ``--page-size 64`` is
replaced by 1; Nemotron-H from 0.5.19 gets ``trtllm_mha`` (R7 under ``no_buffer``).  Which
override applies, and what each branch sets, is data (``[[model_overrides]]`` and
``[[sm100_default_attention]]`` of data/sglang.toml, with their source per release); this
module only evaluates it for one scenario.
"""

from __future__ import annotations

from typing import Any

from .knowledge import Release

_GPU = {"hopper": "Hopper", "blackwell": "Blackwell"}


def sm100_default(facts: dict[str, Any], release: Release) -> str:
    """SGLang's generic attention backend on SM100 for an MHA model (get_default_attn_backend)."""
    holds = release.sm100_trtllm is not None and release.sm100_trtllm(facts)
    return "trtllm_mha" if holds else "flashinfer"


def _default_attention(inputs: dict[str, Any]) -> str:
    """SGLang's attention backend for an MHA model when neither the launch nor an override
    chooses one: fa3 on Hopper (no speculative tree, pages of 1), the SM100 default on
    Blackwell, else flashinfer (get_default_attn_backend)."""
    if inputs["gpu"] == "blackwell":
        return inputs["sm100_default"]
    chain = inputs["topk"] is None or (inputs["topk"] == 1 and inputs["page_size"] in (None, 1))
    return "fa3" if chain else "flashinfer"


def apply(d: dict[str, Any], arch: str, release: Release, notes: dict[str, str]) -> dict[str, Any]:
    """``d`` (one scenario's dimension values) with what the model's override sets.

    Adds ``final_page_size`` (the page size the server ends with, which the Mamba radix cache
    checks at startup), ``auto_strategy`` (what ``auto`` becomes, when the override says) and
    ``sm100_default``; ``attention_backend`` and ``page_size`` become what the checks read.
    """
    algorithm = d["spec_algorithm"]
    inputs = {"gpu": d["gpu"], "attention_backend": d["attention_backend"], "page_size": d["page_size"],
              "strategy_given": d["strategy_given"], "radix_disabled": d["radix_disabled"], "topk": d["topk"],
              "spec_algorithm_raw": algorithm, "spec_algorithm": (algorithm or "").upper()}
    # SGLang's SM100 default matters on SM100 only (and costs a condition per scenario)
    inputs["sm100_default"] = sm100_default(inputs, release) if d["gpu"] == "blackwell" else None
    out = dict(d, final_page_size=d["page_size"], auto_strategy=None, sm100_default=inputs["sm100_default"],
               override="", attention_resolved=d["attention_backend"] or _default_attention(inputs))
    if d["blackwell_unknown"] is not None:  # a model whose Blackwell choice the linter does not model
        backend, page = d["blackwell_unknown"]
        return dict(out, attention_backend=backend, page_size=page, final_page_size=page,
                    attention_resolved=backend or out["attention_resolved"])
    override = next((o for o in release.overrides if arch in o.archs and o.when(inputs)), None)
    case = next((c for c in override.cases if c.when(inputs)), None) if override is not None else None
    if override is None or case is None:
        return out
    backend = case.attention_backend or d["attention_backend"]
    page = d["page_size"]
    if case.page_size is not None:
        page = case.page_size
    elif case.default_page_size is not None and page is None:
        page = case.default_page_size
    gpu = _GPU.get(d["gpu"], d["gpu"])
    chose = f"attention backend {backend}" + (f" with page size {page}" if page is not None else "")
    said = f"on {gpu} without --attention-backend, SGLang's model override for {arch} ({override.id}) chooses {chose}"
    if page != d["page_size"] and d["page_size"] is not None:
        said += f" (replacing --page-size {d['page_size']})"
    if override.after_checks:
        notes["final_page_size"] = said + ", after the no_buffer checks"
        return dict(out, final_page_size=page, override=override.id)
    notes["attention_backend"] = notes["page_size"] = notes["attention_resolved"] = said
    return dict(out, attention_backend=backend, page_size=page, final_page_size=page,
                auto_strategy=case.auto_strategy, override=override.id, attention_resolved=backend)
