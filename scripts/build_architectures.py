#!/usr/bin/env python3
"""Generate ``flake8_replayssm/data/architectures.toml`` from the reference table.

The linter must know which ``architectures[0]`` vLLM will see for a model
reference, without network access. The facts live in the reference TSV
(``model-architectures.tsv``: ``model_id, architecture, source, confidence``),
which is researched and reviewed by hand; this script turns it into the compact
TOML file that ships inside the package, and adds the hand-curated sections
that are *data about names* rather than rows (safe name patterns, quantization
suffixes, architecture families). Those sections live here, as plain data, so
that a reviewer sees the whole knowledge base in two places: the TSV and this
file.

Before writing anything, the script checks the curated data against the table:
every safe pattern must agree with every table row it matches (a pattern that
would contradict a sourced row is a false-positive factory), and every pattern
must compile. Build errors exit with status 1.

Usage::

    python scripts/build_architectures.py --tsv PATH/TO/model-architectures.tsv
    python scripts/build_architectures.py --tsv ... --check   # CI: is the TOML current?

Stdlib only, so it runs anywhere the repository is checked out.
"""

from __future__ import annotations

import argparse
import csv
import hashlib
import json
import re
import sys
from dataclasses import dataclass
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent
OUTPUT = REPO_ROOT / "flake8_replayssm" / "data" / "architectures.toml"
DEFAULT_TSV = next(
    (p for p in (REPO_ROOT / "reference" / "model-architectures.tsv",
                 REPO_ROOT.parent / "shared" / "reference" / "model-architectures.tsv") if p.is_file()),
    REPO_ROOT / "reference" / "model-architectures.tsv",
)

EXPECTED_COLUMNS = ["model_id", "architecture", "source", "confidence"]
CONFIDENCES = {"exact", "inferred"}
SOURCE_MAX = 80

# --------------------------------------------------------------------------
# Hand-curated data (reference/model-architectures.md, sections 4 and 5).
# --------------------------------------------------------------------------

#: Orgs that re-upload or re-quantize other orgs' checkpoints and keep the
#: upstream ``architectures`` (model-architectures.md section 4, "Quantized /
#: mirrored variants"). ``neuralmagic`` is the former name of ``RedHatAI``;
#: ``TevunahAi`` appears in the table with a GPTQ re-quantization of Nemotron-3.
REQUANTIZERS: tuple[str, ...] = (
    "RedHatAI",
    "neuralmagic",
    "nm-testing",
    "unsloth",
    "TevunahAi",
)

#: Repo-name suffixes added by quantization/mirroring tools that keep the base
#: ``architectures``. Matched case-insensitively at the end of the repo name;
#: the longest match is stripped, once. ``-hf`` is deliberately absent: it marks
#: a *conversion* that changes the architecture (``glm-4-9b-chat`` is
#: ChatGLMModel, ``glm-4-9b-chat-hf`` is GlmForCausalLM). GGUF and MLX repos are
#: never stripped: they are excluded before this step.
QUANT_SUFFIXES: tuple[str, ...] = (
    # ModelOpt (NVIDIA)
    "-FP8",
    "-NVFP4",
    "-NVFP4-QAD",
    "-FP4-QAD",
    "-MXFP8",
    "-MXFP4",
    "-BF16",
    "-FP16",
    # llm-compressor (RedHatAI / nm-testing)
    "-FP8-dynamic",
    "-FP8-block",
    "-W4A16",
    "-W8A8",
    "-W8A16",
    "-W4A16-G128",
    "-quantized.w4a16",
    "-quantized.w8a8",
    "-quantized.w8a16",
    # AutoGPTQ / AutoAWQ / Qwen-style names
    "-GPTQ",
    "-GPTQ-Int4",
    "-GPTQ-Int8",
    "-AWQ",
    "-AWQ-INT4",
    "-Int4",
    "-Int8",
    # bitsandbytes re-uploads (unsloth)
    "-bnb-4bit",
    "-unsloth-bnb-4bit",
)

#: Substrings (case-insensitive) that disqualify a repo name from every safe
#: pattern: vision-language and omni variants use the non-ReplaySSM
#: NemotronH_Nano_VL_V2 class, GGUF/MLX repos have no usable config.json, and
#: ``-Eagle`` repos are speculative-decoding drafts, not the target model.
PATTERN_EXCLUDE: tuple[str, ...] = ("vl", "omni", "gguf", "mlx", "-eagle")


@dataclass(frozen=True)
class Pattern:
    """One positive name pattern from model-architectures.md section 4."""

    name: str
    orgs: tuple[str, ...]
    regex: str
    architecture: str
    evidence: str


#: Positive patterns that held on every sourced ID. Each regex is matched
#: (full match, case-insensitive) against the repo name only, i.e. the part
#: after ``org/``; the org must be in ``orgs`` or in REQUANTIZERS.
PATTERNS: tuple[Pattern, ...] = (
    Pattern(
        name="Nemotron-H",
        orgs=("nvidia",),
        regex=r"Nemotron-H-\d+B-(Base-8K|Reasoning-128K|Instruct-128K)(-FP8)?",
        architecture="NemotronHForCausalLM",
        evidence="Nemotron-H 4B/8B/47B/56B checkpoints (transformers nemotron_h docs, TRT-LLM)",
    ),
    Pattern(
        name="Nemotron-Nano-2 (text)",
        orgs=("nvidia",),
        regex=r"(NVIDIA-)?Nemotron-Nano-(9B|12B)-v2(-Base)?(-FP8|-NVFP4)?",
        architecture="NemotronHForCausalLM",
        evidence="NVIDIA-Nemotron-Nano-9B-v2 config.json (llmrun.dev); VL variants excluded",
    ),
    Pattern(
        name="Nemotron-3 Nano/Super/Ultra",
        orgs=("nvidia",),
        regex=r"NVIDIA-Nemotron-3-(Nano|Super|Ultra)-\d+B-A\d+B(-Base)?(-BF16|-FP8|-NVFP4)?",
        architecture="NemotronHForCausalLM",
        evidence="TRT-LLM maps Nemotron-3 Nano/Super/Ultra to NemotronHForCausalLM",
    ),
    Pattern(
        name="Nemotron-3 Nano (vLLM blog spelling)",
        orgs=("nvidia",),
        regex=r"NVIDIA-Nemotron-Nano-3-\d+B-A\d+B(-Base)?(-BF16|-FP8|-NVFP4)?",
        architecture="NemotronHForCausalLM",
        evidence="misspelling used in the vLLM Nemotron-3-Nano blog post",
    ),
    Pattern(
        name="Nemotron-3 Puzzle",
        orgs=("nvidia",),
        regex=r"NVIDIA-Nemotron-Labs-3-Puzzle-.+",
        architecture="NemotronHPuzzleForCausalLM",
        evidence="vLLM registry key NemotronHPuzzleForCausalLM (model_type nemotron_h_puzzle)",
    ),
    Pattern(
        name="Kimi Linear",
        orgs=("moonshotai",),
        regex=r"Kimi-Linear-48B-A3B-(Base|Instruct)",
        architecture="KimiLinearForCausalLM",
        evidence="vLLM test registry / docs rows for Kimi-Linear-48B-A3B",
    ),
    Pattern(
        name="Kimi-K3",
        orgs=("moonshotai",),
        regex=r"Kimi-K3",
        architecture="KimiK3ForConditionalGeneration",
        evidence="vLLM test registry key KimiK3ForConditionalGeneration",
    ),
)


@dataclass(frozen=True)
class Family:
    """Architectures that share a layer structure, for ``architecture_kind``."""

    key: str
    label: str
    kind: str  # "hybrid" | "attention_free"
    architectures: tuple[str, ...]


KINDS = {"hybrid", "attention_free"}

#: Mamba-related / linear-attention architectures (registry keys as they appear
#: in config.json ``architectures``). Every architecture not listed here is an
#: ordinary transformer. ``attention_free`` is vLLM's IsAttentionFree (pure
#: SSM); ``hybrid`` is vLLM's IsHybrid (SSM or linear-attention layers mixed
#: with attention). ``MambaModel`` / ``Mamba2Model`` are what vLLM assigns to
#: original mamba_ssm-format checkpoints (model-architectures.md section 5).
FAMILIES: tuple[Family, ...] = (
    Family(
        "nemotron_h", "Nemotron-H", "hybrid", ("NemotronHForCausalLM", "NemotronHPuzzleForCausalLM")
    ),
    Family(
        "nemotron_h_vl",
        "Nemotron-H VL/Omni",
        "hybrid",
        (
            "NemotronH_Nano_VL_V2",
            "NemotronH_Nano_Omni_Reasoning_V3",
            "NemotronH_Super_Omni_Reasoning_V3",
            "NemotronH_Omni_Reasoning_V3",
        ),
    ),
    Family("kimi_linear", "Kimi Linear", "hybrid", ("KimiLinearForCausalLM",)),
    Family("kimi_k3", "Kimi-K3", "hybrid", ("KimiK3ForConditionalGeneration",)),
    Family("mamba", "Mamba", "attention_free", ("MambaForCausalLM", "MambaModel")),
    Family("mamba2", "Mamba-2", "attention_free", ("Mamba2ForCausalLM", "Mamba2Model")),
    Family("falcon_mamba", "Falcon-Mamba", "attention_free", ("FalconMambaForCausalLM",)),
    Family("falcon_h1", "Falcon-H1", "hybrid", ("FalconH1ForCausalLM",)),
    Family("jamba", "Jamba", "hybrid", ("JambaForCausalLM", "JambaForSequenceClassification")),
    Family("zamba2", "Zamba2", "hybrid", ("Zamba2ForCausalLM",)),
    Family("bamba", "Bamba", "hybrid", ("BambaForCausalLM",)),
    Family("granite_hybrid", "Granite 4.0 hybrid", "hybrid", ("GraniteMoeHybridForCausalLM",)),
    Family(
        "lfm2",
        "LFM2",
        "hybrid",
        ("Lfm2ForCausalLM", "Lfm2MoeForCausalLM", "Lfm2VlForConditionalGeneration"),
    ),
    Family("qwen3_next", "Qwen3-Next", "hybrid", ("Qwen3NextForCausalLM",)),
    Family(
        "qwen3_5",
        "Qwen3.5",
        "hybrid",
        (
            "Qwen3_5ForConditionalGeneration",
            "Qwen3_5MoeForConditionalGeneration",
            "Qwen3_5ForCausalLM",
            "Qwen3_5MoeForCausalLM",
        ),
    ),
    Family("plamo2", "PLaMo 2", "hybrid", ("Plamo2ForCausalLM",)),
    Family("phi4_flash", "Phi-4-mini-flash", "hybrid", ("Phi4FlashForCausalLM",)),
    Family(
        "minimax_linear",
        "MiniMax-01/M1 (lightning attention)",
        "hybrid",
        (
            "MiniMaxText01ForCausalLM",
            "MiniMaxM1ForCausalLM",
            "MiniMaxVL01ForConditionalGeneration",
            "MiniMaxForCausalLM",
        ),
    ),
    Family(
        "minimax_m3",
        "MiniMax-M3 sparse",
        "hybrid",
        ("MiniMaxM3SparseForConditionalGeneration", "MiniMaxM3SparseForCausalLM"),
    ),
    Family("olmo_hybrid", "OLMo-Hybrid", "hybrid", ("OlmoHybridForCausalLM",)),
    Family("bailing_linear", "Bailing V2.5 (linear)", "hybrid", ("BailingMoeV2_5ForCausalLM",)),
)

# --------------------------------------------------------------------------
# Table handling
# --------------------------------------------------------------------------

#: Long source prefixes -> (short label, keep the rest of the path?). First
#: match wins, so more specific prefixes come first.
SOURCE_LABELS: tuple[tuple[str, str, bool], ...] = (
    ("vllm-project/vllm:tests/models/registry.py", "vLLM test registry", False),
    ("vllm-project/vllm:tests/models/", "vLLM tests", False),
    ("vllm-project/vllm:docs/models/supported_models.md", "vLLM docs", False),
    ("vllm-project/vllm-project.github.io:", "vLLM blog", False),
    ("vllm-project/recipes:", "vLLM recipes", True),
    ("NVIDIA/TensorRT-LLM:", "TensorRT-LLM docs", False),
    ("NVIDIA-NeMo/Megatron-Bridge:", "Megatron-Bridge docs", False),
    ("huggingface/transformers:docs/source/en/model_doc/", "transformers docs", True),
    ("pages:https://llmrun.dev/", "llmrun.dev", False),
    ("ibm-granite/granite-4.0-language-models:README.md", "granite-4.0 README", False),
    ("tiiuae/Falcon-H1:README.md", "Falcon-H1 README", False),
    ("state-spaces/mamba:README.md", "state-spaces/mamba README", False),
    ("vllm 0.33.0 wheel", "vLLM 0.33.0 wheel", False),
    ("pages:", "web page", True),
)


@dataclass(frozen=True)
class Row:
    """One TSV row."""

    model_id: str
    architecture: str
    source: str
    confidence: str


def short_source(source: str) -> str:
    """First source of a row, abbreviated and truncated for messages.

    The full provenance stays in the TSV; the package only needs enough to say
    where a verdict came from in ``--verbose`` output.
    """
    first = source.split(" | ", 1)[0].strip()
    first = re.sub(r"@[0-9a-f]{7,40}", "", first)
    # "row X" / "key X" repeat the architecture, which is stored anyway.
    first = re.sub(r" (row|key) [A-Za-z0-9_]+", "", first, count=1)
    first = re.sub(r" extras\['[^']*'\]", "", first)  # which registry entry: noise here
    for prefix, label, keep_path in SOURCE_LABELS:
        if first.startswith(prefix):
            path, _, tail = first.removeprefix(prefix).partition(" ")
            qualifier = path.removesuffix(".md") if keep_path else ""
            first = f"{label} {qualifier} {tail}"
            break
    first = " ".join(first.split())
    if len(first) > SOURCE_MAX:
        first = first[: SOURCE_MAX - 3].rstrip() + "..."
    return first


def read_rows(path: Path) -> list[Row]:
    """Read and validate the reference TSV."""
    with path.open(encoding="utf-8", newline="") as handle:
        reader = csv.reader(handle, delimiter="\t", quoting=csv.QUOTE_NONE)
        header = next(reader, None)
        if header != EXPECTED_COLUMNS:
            raise SystemExit(f"{path}: unexpected header {header!r}, want {EXPECTED_COLUMNS!r}")
        rows: list[Row] = []
        seen: dict[str, str] = {}
        for lineno, fields in enumerate(reader, start=2):
            if not fields or fields == [""]:
                continue
            if len(fields) != 4:
                raise SystemExit(f"{path}:{lineno}: expected 4 columns, got {len(fields)}")
            model_id, arch, source, confidence = (f.strip() for f in fields)
            if confidence not in CONFIDENCES:
                raise SystemExit(f"{path}:{lineno}: unknown confidence {confidence!r}")
            if not re.fullmatch(r"[A-Za-z0-9][\w.-]*/[\w.-]+", model_id, re.ASCII):
                raise SystemExit(f"{path}:{lineno}: not an org/name model id: {model_id!r}")
            if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", arch):
                raise SystemExit(f"{path}:{lineno}: not an architecture name: {arch!r}")
            folded = model_id.casefold()
            if folded in seen:
                raise SystemExit(
                    f"{path}:{lineno}: {model_id!r} duplicates {seen[folded]!r} "
                    "(case-insensitively)"
                )
            seen[folded] = model_id
            rows.append(Row(model_id, arch, source, confidence))
    return rows


def strip_quant_suffix(name: str) -> str | None:
    """Strip the longest known suffix, once (the same rule as the runtime)."""
    lowered = name.casefold()
    for suffix in sorted(QUANT_SUFFIXES, key=len, reverse=True):
        if lowered.endswith(suffix.casefold()) and len(name) > len(suffix):
            return name[: -len(suffix)]
    return None


def check_curated(rows: list[Row]) -> list[str]:
    """Validate the curated sections against the table; return error strings."""
    return check_patterns(rows) + check_families()


def check_patterns(rows: list[Row]) -> list[str]:
    """Every pattern compiles and agrees with every table row it would match."""
    errors: list[str] = []
    allowed_extra = {org.casefold() for org in REQUANTIZERS}
    for pattern in PATTERNS:
        try:
            compiled = re.compile(pattern.regex, re.IGNORECASE)
        except re.error as exc:
            errors.append(f"pattern {pattern.name!r} does not compile: {exc}")
            continue
        orgs = {org.casefold() for org in pattern.orgs} | allowed_extra
        for row in rows:
            org, name = row.model_id.split("/", 1)
            if org.casefold() not in orgs:
                continue
            if any(bad in name.casefold() for bad in PATTERN_EXCLUDE):
                continue
            candidates = [name]
            base = strip_quant_suffix(name)
            if base:
                candidates.append(base)
            if (
                any(compiled.fullmatch(c) for c in candidates)
                and row.architecture != pattern.architecture
            ):
                errors.append(
                    f"pattern {pattern.name!r} matches {row.model_id} "
                    f"but the table says {row.architecture}"
                )
    return errors


def check_families() -> list[str]:
    """Kinds are known, no architecture is in two families, patterns have one."""
    errors: list[str] = []
    archs: dict[str, str] = {}
    for family in FAMILIES:
        if family.kind not in KINDS:
            errors.append(f"family {family.key!r}: unknown kind {family.kind!r}")
        for arch in family.architectures:
            if arch in archs:
                errors.append(f"{arch} is in families {archs[arch]!r} and {family.key!r}")
            archs[arch] = family.key
    for pattern in PATTERNS:
        if pattern.architecture not in archs:
            errors.append(
                f"pattern {pattern.name!r} targets {pattern.architecture}, which has no family"
            )
    return errors


def suffix_conflicts(rows: list[Row]) -> list[str]:
    """Table rows whose suffix-stripped base is a row with another architecture.

    These are warnings, not errors: the exact row wins at runtime, but they show
    where the quantized-base fallback would have been wrong.
    """
    by_id = {row.model_id.casefold(): row for row in rows}
    notes: list[str] = []
    for row in rows:
        org, name = row.model_id.split("/", 1)
        base = strip_quant_suffix(name)
        if base is None:
            continue
        base_row = by_id.get(f"{org}/{base}".casefold())
        if base_row and base_row.architecture != row.architecture:
            notes.append(
                f"{row.model_id} ({row.architecture}) "
                f"vs base {base_row.model_id} ({base_row.architecture})"
            )
    return notes


# --------------------------------------------------------------------------
# TOML output (stdlib has no writer; the subset used here is tiny)
# --------------------------------------------------------------------------


def toml_str(value: str) -> str:
    """Quote as a TOML basic string (JSON string escapes are valid TOML escapes)."""
    return json.dumps(value, ensure_ascii=True)


def toml_literal(value: str) -> str:
    """Quote as a TOML literal string, for regexes (no escaping of backslashes)."""
    if "'" in value or "\n" in value:
        raise SystemExit(f"cannot write {value!r} as a TOML literal string")
    return f"'{value}'"


def toml_array(values: tuple[str, ...] | list[str]) -> str:
    """Format an inline array of strings."""
    return "[" + ", ".join(toml_str(v) for v in values) + "]"


def render(rows: list[Row], tsv_name: str, tsv_digest: str) -> str:
    """Produce the whole TOML document (deterministic, so --check can diff it)."""
    exact = sum(1 for r in rows if r.confidence == "exact")
    out: list[str] = [
        "# GENERATED FILE - do not edit by hand.",
        f"# Generated by scripts/build_architectures.py from {tsv_name}",
        f"# (sha256 {tsv_digest[:16]}...) plus the curated sections in that script",
        "# (patterns, quantization suffixes, families). Edit the TSV or the script",
        "# and re-run: python scripts/build_architectures.py --tsv PATH",
        "",
        "[meta]",
        f"source = {toml_str(tsv_name)}",
        f"source_sha256 = {toml_str(tsv_digest)}",
        f"rows = {len(rows)}",
        f"exact = {exact}",
        f"inferred = {len(rows) - exact}",
        "",
        "# model id -> { arch = config.json architectures[0], src = first source (short),",
        '#               conf = "inferred" when not exact; absent means "exact" }',
        "[models]",
    ]
    for row in rows:
        fields = [
            f"arch = {toml_str(row.architecture)}",
            f"src = {toml_str(short_source(row.source))}",
        ]
        if row.confidence != "exact":
            fields.append(f"conf = {toml_str(row.confidence)}")
        out.append(f"{toml_str(row.model_id)} = {{ {', '.join(fields)} }}")

    out += [
        "",
        "# Re-quantizing / mirroring orgs that keep the upstream architectures.",
        "[requantizers]",
        f"orgs = {toml_array(REQUANTIZERS)}",
        "",
        "# Repo-name suffixes stripped (longest first, once) for the quantized-base",
        "# fallback. Never applied to GGUF or MLX repos.",
        "[quantization]",
        f"suffixes = {toml_array(sorted(QUANT_SUFFIXES, key=lambda s: (-len(s), s.casefold())))}",
        "",
        "# Safe positive name patterns (model-architectures.md section 4). Full match,",
        "# case-insensitive, on the repo name after 'org/'; org must be one of `orgs`",
        "# or a requantizer; names containing any `exclude` substring never match.",
        "[patterns]",
        f"exclude = {toml_array(PATTERN_EXCLUDE)}",
    ]
    for pattern in PATTERNS:
        out += [
            "",
            "[[patterns.rule]]",
            f"name = {toml_str(pattern.name)}",
            f"orgs = {toml_array(pattern.orgs)}",
            f"regex = {toml_literal(pattern.regex)}",
            f"architecture = {toml_str(pattern.architecture)}",
            f"evidence = {toml_str(pattern.evidence)}",
        ]

    out += [
        "",
        "# Mamba-related architectures. Anything not listed is a plain transformer.",
    ]
    for family in FAMILIES:
        out += [
            "",
            f"[families.{family.key}]",
            f"label = {toml_str(family.label)}",
            f"kind = {toml_str(family.kind)}",
            f"architectures = {toml_array(family.architectures)}",
        ]
    return "\n".join(out) + "\n"


def validate_toml(text: str, rows: list[Row]) -> None:
    """Parse the output back (3.11+) and compare it with the input rows."""
    if sys.version_info < (3, 11):  # pragma: no cover - tomllib unavailable
        return
    import tomllib

    data = tomllib.loads(text)
    models = data["models"]
    if len(models) != len(rows):
        raise SystemExit(f"round-trip: {len(models)} models, expected {len(rows)}")
    for row in rows:
        if models[row.model_id]["arch"] != row.architecture:
            raise SystemExit(f"round-trip mismatch for {row.model_id}")
    for rule in data["patterns"]["rule"]:
        re.compile(rule["regex"])


def main(argv: list[str] | None = None) -> int:
    """Command-line entry point; returns the exit status."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n", 1)[0])
    parser.add_argument(
        "--tsv",
        type=Path,
        default=DEFAULT_TSV,
        help="reference table (default: reference/model-architectures.tsv in the repo)",
    )
    parser.add_argument("--output", type=Path, default=OUTPUT, help="TOML file to write")
    parser.add_argument("--check", action="store_true", help="exit 1 if the output is out of date")
    args = parser.parse_args(argv)

    if not args.tsv.is_file():
        parser.error(f"{args.tsv}: no such file (pass --tsv)")
    raw = args.tsv.read_bytes()
    rows = read_rows(args.tsv)
    errors = check_curated(rows)
    if errors:
        for error in errors:
            print(f"error: {error}", file=sys.stderr)
        return 1
    for note in suffix_conflicts(rows):
        print(
            f"note: quantized-base fallback would disagree (exact row wins): {note}",
            file=sys.stderr,
        )

    text = render(rows, args.tsv.name, hashlib.sha256(raw).hexdigest())
    validate_toml(text, rows)
    if args.check:
        current = args.output.read_text(encoding="utf-8") if args.output.is_file() else ""
        if current != text:
            print(f"{args.output} is out of date; re-run {Path(__file__).name}", file=sys.stderr)
            return 1
        return 0
    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_text(text, encoding="utf-8")
    exact = sum(1 for r in rows if r.confidence == "exact")
    print(
        f"wrote {args.output}: {len(rows)} models ({exact} exact, {len(rows) - exact} inferred), "
        f"{len(PATTERNS)} patterns, {len(QUANT_SUFFIXES)} suffixes, {len(FAMILIES)} families"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
