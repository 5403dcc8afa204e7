"""SGLang's refusals AFTER argument resolution, read from each release's code.

The oracle (sglang_record.py) executes SGLang's argument code; what SGLang refuses
later (when the model runner builds the memory pools and the radix cache) needs a
GPU and the model's weights.  This module keeps those rules: for each one, the
releases it exists in, where it is (found in the release's own source by a piece
of its message, so the file and line are the release's, not a guess), SGLang's
exact message (the string literal of the ``raise`` / ``assert``, f-string fields
kept as ``{expr}``), and the condition, evaluated on what the real argument
resolution left (a record's ``resolved``) and the model's architecture.

    python3 scripts/conformance/sglang_post_resolution.py [--oracle-dir DIR]   # the rule list

A record whose launch asks for it (``post`` in the generator) gets ``post``:
``None`` (no rule refuses it), or ``{"rule", "error", "source"}``; its ``outcome``
stays what SGLang's executed argument code did.  Order: the model class lookup
(model loader), then the pools (DSPARK/DFLASH, the KDA ring, unified memory), then the
radix cache (MambaComponent).
"""

from __future__ import annotations

import argparse
import ast
import functools
import os
import re
import sys
from dataclasses import dataclass
from typing import Any, Callable

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import sglang_oracle  # noqa: E402

#: models whose config gives SGLang a ``mambaish_config`` (a hybrid Mamba / linear-attention
#: req-to-token pool): configs/hybrid_arch.py (0.5.23), model_runner.py mambaish_config (0.5.15)
MAMBAISH = frozenset({
    "Qwen3NextForCausalLM", "Qwen3_5ForConditionalGeneration", "Qwen3_5MoeForConditionalGeneration",
    "Qwen3_5ForCausalLM", "Qwen3_5MoeForCausalLM", "KimiLinearForCausalLM", "KimiK3ForConditionalGeneration",
    "NemotronHForCausalLM", "FalconH1ForCausalLM", "Lfm2ForCausalLM", "Lfm2MoeForCausalLM",
    "JetNemotronForCausalLM", "InternS2PreviewForConditionalGeneration",
})
#: GraniteMoeHybrid is mambaish only with Mamba layers (layer_types)
MAMBAISH_BY_LAYERS = frozenset({"GraniteMoeHybridForCausalLM"})
#: KDA models (kimi_linear_config in 0.5.17-0.5.18; hybrid_kda_config from 0.5.19)
KDA = frozenset({"KimiLinearForCausalLM", "KimiK3ForConditionalGeneration"})
#: architectures whose Transformers class reports is_backend_compatible() False (executed with
#: the transformers SGLang 0.5.15-0.5.21 pin, 5.12.1): the fallback for an unregistered one fails
TRANSFORMERS_NOT_BACKEND_COMPATIBLE = frozenset({
    "Qwen3_5ForCausalLM", "Qwen3NextForCausalLM", "Qwen3_5ForConditionalGeneration",
})
_EXTRA = ("extra_buffer", "extra_buffer_lazy")


def _key(version: str) -> tuple[int, ...]:
    return tuple(int(x) for x in sglang_oracle.base_release(version).split("."))


@dataclass(frozen=True)
class Rule:
    """One refusal after argument resolution."""

    id: str
    since: str
    #: a piece of SGLang's message that finds the raise/assert in the release's source
    anchor: str
    #: files (under sglang/srt) that hold it, in the order they are searched
    files: tuple[str, ...]
    #: when it refuses: (record's resolved values, architecture, has Mamba layers) -> bool
    when: Callable[[dict[str, Any], str, bool], bool]
    #: what the launch must hold for a linter to decide it (written for the spec)
    needs: str
    until: str | None = None

    def exists_in(self, release: str) -> bool:
        return _key(self.since) <= _key(release) and (self.until is None or _key(release) <= _key(self.until))


def _mambaish(arch: str, layers: bool) -> bool:
    return arch in MAMBAISH or (arch in MAMBAISH_BY_LAYERS and layers)


def _ring(r: dict[str, Any]) -> int:
    return int(r.get("linear_replayssm_cache_len") or 16)


def _kda_spec_pool(r: dict[str, Any], arch: str, layers: bool) -> bool:
    """The Mamba pool builds the spec-verify ring of a KDA model (any hybrid in 0.5.16)."""
    return bool(r.get("spec")) and (arch in KDA or _key(r["_release"]) < (0, 5, 17)) \
        and _mambaish(arch, layers) and not r.get("enable_unified_memory")


RULES: tuple[Rule, ...] = (
    Rule("unregistered_architecture", "0.5.15", "has no SGlang implementation and the Transformers",
         ("model_loader/utils.py",),
         lambda r, arch, layers: arch not in r["_registered"] and arch in TRANSFORMERS_NOT_BACKEND_COMPATIBLE,
         "the model's architecture, the release's registered architectures (EntryClass of "
         "sglang/srt/models/*.py; Qwen3_5ForCausalLM and Qwen3_5MoeForCausalLM from 0.5.17), "
         "--model-impl left at auto, and whether transformers' class is backend-compatible"),
    Rule("unified_memory_model", "0.5.15", "only supports hybrid Mamba and",
         ("model_executor/model_runner_kv_cache_mixin.py", "mem_cache/kv_cache_configurator.py"),
         lambda r, arch, layers: bool(r.get("enable_unified_memory")) and not _mambaish(arch, layers),
         "--enable-unified-memory (any spelling) and the model's architecture (and, for GraniteMoeHybrid, "
         "whether layer_types holds 'mamba'); hybrid sliding-window models are accepted too"),
    Rule("mamba_page_size", "0.5.15", "requires page_size=1 when mamba_extra_buffer is disabled",
         ("mem_cache/unified_cache_components/mamba_component.py",
          "mem_cache/unified_cache/components/mamba_component.py", "mem_cache/unified_cache/components/mamba.py"),
         lambda r, arch, layers: bool(r.get("uses_mamba_radix_cache")) and not r.get("disable_radix_cache")
         and r.get("mamba_radix_cache_strategy") not in _EXTRA and r.get("page_size") not in (None, 1),
         "the page size SGLang ends with (written, or chosen by a model override after the no_buffer "
         "checks), the resolved strategy, the radix cache, and whether the model uses the mamba radix cache"),
    Rule("kda_spec_ring_power_of_two", "0.5.16", "spec-verify ring length must be a power of two",
         ("mem_cache/memory_pool.py",),
         lambda r, arch, layers: _kda_spec_pool(r, arch, layers) and _ring(r) & (_ring(r) - 1) != 0,
         "the spec-verify flag, a KDA model (0.5.17+; any hybrid in 0.5.16, where the argument check "
         "refuses first), no unified memory, and --linear-replayssm-cache-len"),
    Rule("kda_spec_ring_too_small", "0.5.16", "spec-verify ring too small",
         ("mem_cache/memory_pool.py",),
         lambda r, arch, layers: _kda_spec_pool(r, arch, layers)
         and r.get("speculative_num_draft_tokens") is not None
         and _ring(r) < 2 * int(r["speculative_num_draft_tokens"]),
         "as above, and the number of draft tokens SGLang resolves (--speculative-num-draft-tokens, or "
         "the algorithm's default: 0.5.23 resolves NEXTN/EAGLE without it to num_steps + 1)"),
    Rule("dspark_dflash_needs_kda", "0.5.17", "DSPARK/DFLASH requires a KDA",
         ("mem_cache/kv_cache_configurator.py",),
         lambda r, arch, layers: bool(r.get("spec")) and _mambaish(arch, layers) and arch not in KDA
         and (r.get("speculative_algorithm") or "").upper() in ("DSPARK", "DFLASH")
         and not r.get("enable_unified_memory"),
         "the spec-verify flag, --speculative-algorithm DSPARK or DFLASH, a hybrid model that is not KDA, "
         "no unified memory"),
)


def _literal(node: ast.AST) -> str | None:
    """The text of a message expression: string constants and f-strings (fields as {expr})."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.JoinedStr):
        parts = []
        for value in node.values:
            if isinstance(value, ast.Constant):
                parts.append(str(value.value))
            elif isinstance(value, ast.FormattedValue):
                parts.append("{" + ast.unparse(value.value) + "}")
        return "".join(parts)
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        left, right = _literal(node.left), _literal(node.right)
        return left + right if left is not None and right is not None else None
    return None


@functools.lru_cache(maxsize=None)
def source_of(root: str, rule_id: str) -> dict[str, Any] | None:
    """{"file", "line", "kind", "message"} of ``rule_id`` in the release installed at ``root``."""
    rule = next(r for r in RULES if r.id == rule_id)
    for rel in rule.files:
        path = os.path.join(root, "sglang", "srt", rel)
        if not os.path.isfile(path):
            continue
        with open(path, encoding="utf-8") as fh:
            tree = ast.parse(fh.read())
        for node in ast.walk(tree):
            if isinstance(node, ast.Raise) and isinstance(node.exc, ast.Call) and node.exc.args:
                message, kind = _literal(node.exc.args[0]), ast.unparse(node.exc.func)
            elif isinstance(node, ast.Assert) and node.msg is not None:
                message, kind = _literal(node.msg), "AssertionError"
            else:
                continue
            if message and rule.anchor in message:
                return {"file": f"sglang/srt/{rel}", "line": node.lineno, "kind": kind, "message": message}
    return None


@functools.lru_cache(maxsize=None)
def registered_architectures(root: str) -> frozenset[str]:
    """``EntryClass`` names of sglang/srt/models/*.py (what ModelRegistry registers)."""
    names: set[str] = set()
    models = os.path.join(root, "sglang", "srt", "models")
    for dirpath, _, files in os.walk(models):
        for name in files:
            if not name.endswith(".py"):
                continue
            with open(os.path.join(dirpath, name), encoding="utf-8") as fh:
                text = fh.read()
            for match in re.finditer(r"^EntryClass\s*=\s*(\[[^\]]*\]|[\w.]+)", text, re.M):
                names.update(re.findall(r"[A-Za-z_]\w*", match.group(1)))
    return frozenset(names)


def _architecture(record: dict[str, Any]) -> tuple[str | None, bool]:
    resolved = record.get("resolved") or {}
    model = resolved.get("model_path")
    for folder, config in record.get("models", {}).items():
        if model in (None, folder):
            return config["architectures"][0], "mamba" in config.get("layer_types", [])
    return None, False


def post_outcome(record: dict[str, Any], root: str) -> dict[str, Any] | None:
    """The first post-resolution refusal of an accepted record (rules in SGLang's order:
    model class lookup, pools, radix cache), or None."""
    if record["outcome"] != "ok" or not record.get("resolved"):
        return None
    arch, layers = _architecture(record)
    if arch is None:
        return None
    resolved = dict(record["resolved"], _release=record["release"], _registered=registered_architectures(root))
    order = ("unregistered_architecture", "dspark_dflash_needs_kda", "kda_spec_ring_power_of_two",
             "kda_spec_ring_too_small", "unified_memory_model", "mamba_page_size")
    for rule_id in order:
        rule = next(r for r in RULES if r.id == rule_id)
        if rule.exists_in(record["release"]) and rule.when(resolved, arch, layers):
            source = source_of(root, rule_id)
            return {"rule": rule_id, "error": source["message"] if source else None,
                    "source": f"{source['file']}:{source['line']}" if source else None}
    return None


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--oracle-dir", default="/work/cache/sglang-oracle")
    ns = ap.parse_args()
    releases = sglang_oracle.RELEASES + sglang_oracle.POST_RELEASES
    for rule in RULES:
        print(f"## {rule.id} (from {rule.since}{' to ' + rule.until if rule.until else ''})")
        print(f"needs: {rule.needs}")
        for release in releases:
            if not rule.exists_in(release):
                continue
            source = source_of(os.path.join(ns.oracle_dir, f"sglang-{release}"), rule.id)
            if source is None:
                print(f"- {release}: not found")
            else:
                print(f"- {release}: {source['file']}:{source['line']} {source['kind']}: {source['message']!r}")
        print()


if __name__ == "__main__":
    main()
