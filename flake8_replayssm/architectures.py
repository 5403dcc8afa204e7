"""Resolve a model reference from a vLLM launch to its ``architectures[0]``.

vLLM decides whether ``--use-replayssm`` is allowed from the *architecture* in
the model's ``config.json``, not from the model's name. The linter never
downloads anything, so it answers the same question from shipped data
(``data/architectures.toml``, generated from the reviewed reference table by
``scripts/build_architectures.py``) and from local checkpoints it can read.

Precision matters more than recall: a wrong architecture turns a valid launch
into a false RSM001. So every step below only answers when the evidence is
specific, and everything else resolves to "unknown" (``architecture=None``),
which the rules treat as "check only what holds for every architecture".

Resolution order (first hit wins):

1. ``extra_models`` from the user's configuration (exact id, then globs);
2. a local directory with a ``config.json`` (explicit paths, paths relative to
   the launch file's directory, ``<model_dir>/<id>``);
3. the model table, exactly, then case-insensitively (the Hub treats repo ids
   case-insensitively, and scripts do spell them differently);
4. the table entry of the base model after stripping one quantization suffix,
   or the original of a known re-quantizer's re-upload;
5. the safe name patterns (Nemotron-H, Nemotron-3, Puzzle, Kimi Linear/K3);
6. otherwise unknown. GGUF and MLX repos are always unknown: vLLM does not read
   an HF ``config.json`` for them.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from fnmatch import fnmatchcase
from functools import cache
from pathlib import Path
from types import MappingProxyType
from typing import Any, Literal

from .data_files import read_data
from .files import inside_project, is_inside, read_bounded
from .model import Span
from .unchecked import NotChecked, not_followed

__all__ = [
    "KIND_ATTENTION_FREE",
    "KIND_HYBRID",
    "KIND_TRANSFORMER",
    "Resolution",
    "architecture_family",
    "architecture_kind",
    "local_config",
    "resolve_model",
]

How = Literal[
    "table",
    "table-casefold",
    "quantized-base",
    "pattern",
    "config.json",
    "user",
    "unknown",
]

KIND_HYBRID = "hybrid"
KIND_ATTENTION_FREE = "attention_free"
KIND_TRANSFORMER = "transformer"

#: A config.json larger than this is not a model config; do not read it.
_MAX_CONFIG_BYTES = 4 * 1024 * 1024

#: Characters that never occur in a model id or a sane path, but do occur in
#: shell variables, format strings, templates and globs. A launch holding one of
#: these was not written with a literal model, so there is nothing to resolve.
_PLACEHOLDER_CHARS = frozenset("${}`<>%*?|;&()\"'\\")

#: Hugging Face ``org/name`` (or a bare legacy ``name``), ASCII only.
_HF_ID = re.compile(r"[A-Za-z0-9][\w.-]*(?:/[\w.-]+)?", re.ASCII)

_GGUF = re.compile(r"(?:^|[-_.])gguf(?:$|[-_.])", re.IGNORECASE)
_MLX = re.compile(r"(?:^|[-_.])mlx(?:$|[-_.])", re.IGNORECASE)
_MLX_ORGS = frozenset({"mlx-community"})

_EXPLICIT_PATH_PREFIXES = ("/", "./", "../", "~")


@dataclass(frozen=True)
class Resolution:
    """What a model reference resolves to, and how we know.

    ``architecture`` is ``None`` when the reference cannot be resolved
    statically; ``how`` says which step answered (for ``--verbose`` and JSON
    output) and ``detail`` is human text: the evidence, or why it is unknown.
    """

    architecture: str | None
    how: How
    detail: str

    @property
    def known(self) -> bool:
        """True when an architecture was found."""
        return self.architecture is not None


@dataclass(frozen=True)
class _Entry:
    model_id: str
    architecture: str
    source: str
    confidence: str

    def describe(self) -> str:
        if self.confidence == "exact":
            return f"model table ({self.source})"
        return f"model table, {self.confidence} ({self.source})"


@dataclass(frozen=True)
class _Rule:
    name: str
    orgs: frozenset[str]  # casefolded, requantizers included
    regex: re.Pattern[str]
    architecture: str
    evidence: str


@dataclass(frozen=True)
class _Data:
    models: Mapping[str, _Entry]
    folded: Mapping[str, _Entry]
    by_name: Mapping[str, tuple[_Entry, ...]]  # casefolded repo name -> rows
    requantizers: frozenset[str]  # casefolded
    suffixes: tuple[str, ...]  # casefolded, longest first
    exclude: tuple[str, ...]  # casefolded substrings
    rules: tuple[_Rule, ...]
    kinds: Mapping[str, str]
    labels: Mapping[str, str]


def _load_toml() -> dict[str, Any]:
    """The shipped data file, parsed (zip-safe; kept parsed between runs)."""
    return read_data("data/architectures.toml")


@cache
def _data() -> _Data:
    """Parse and index the data file once per process."""
    raw = _load_toml()
    models: dict[str, _Entry] = {}
    folded: dict[str, _Entry] = {}
    by_name: dict[str, list[_Entry]] = {}
    for model_id, row in raw["models"].items():
        entry = _Entry(model_id, row["arch"], row.get("src", ""), row.get("conf", "exact"))
        models[model_id] = entry
        folded[model_id.casefold()] = entry
        by_name.setdefault(model_id.partition("/")[2].casefold(), []).append(entry)

    requantizers = frozenset(org.casefold() for org in raw["requantizers"]["orgs"])
    suffixes = tuple(
        sorted((s.casefold() for s in raw["quantization"]["suffixes"]), key=len, reverse=True)
    )
    patterns = raw["patterns"]
    rules = tuple(
        _Rule(
            name=rule["name"],
            orgs=frozenset(org.casefold() for org in rule["orgs"]) | requantizers,
            regex=re.compile(rule["regex"], re.IGNORECASE),
            architecture=rule["architecture"],
            evidence=rule["evidence"],
        )
        for rule in patterns["rule"]
    )
    kinds: dict[str, str] = {}
    labels: dict[str, str] = {}
    for family in raw["families"].values():
        for arch in family["architectures"]:
            kinds[arch] = family["kind"]
            labels[arch] = family["label"]
    return _Data(
        models=MappingProxyType(models),
        folded=MappingProxyType(folded),
        by_name=MappingProxyType({k: tuple(v) for k, v in by_name.items()}),
        requantizers=requantizers,
        suffixes=suffixes,
        exclude=tuple(s.casefold() for s in patterns["exclude"]),
        rules=rules,
        kinds=MappingProxyType(kinds),
        labels=MappingProxyType(labels),
    )


def _unknown(detail: str) -> Resolution:
    return Resolution(None, "unknown", detail)


# --------------------------------------------------------------------------
# Steps
# --------------------------------------------------------------------------


def _from_user(model: str, extra_models: Mapping[str, str]) -> Resolution | None:
    """User configuration wins: the user has seen the checkpoint, we have not.

    Exact keys first, then case-insensitive keys, then glob keys in the order
    given (matched case-insensitively, like Hub ids). Empty or non-string
    values are ignored rather than trusted.
    """
    usable = {
        k: v
        for k, v in extra_models.items()
        if isinstance(k, str) and isinstance(v, str) and v.strip()
    }
    if model in usable:
        return Resolution(usable[model].strip(), "user", f"user configuration: {model!r}")
    folded = model.casefold()
    for key, arch in usable.items():
        if key.casefold() == folded:
            return Resolution(arch.strip(), "user", f"user configuration: {key!r}")
    for key, arch in usable.items():
        if any(ch in key for ch in "*?[") and fnmatchcase(folded, key.casefold()):
            return Resolution(arch.strip(), "user", f"user configuration pattern {key!r}")
    return None


def _readable_here(path: Path, model_dirs: Sequence[Path]) -> bool:
    """A model folder named in a launch is read only inside the project (the root that
    :func:`flake8_replayssm.lint.lint_text` confines reads to) or inside a configured model
    folder: the launch's author chose the path, and what the file says is printed."""
    return inside_project(str(path)) or any(is_inside(str(path), str(folder)) for folder in model_dirs)


def _config_json(directory: Path, shown: str, model_dirs: Sequence[Path]) -> tuple[Any, str | None]:
    """(the parsed ``config.json`` of a local checkpoint, None) or (None, why it was not read).

    Never raises: a launch file may point at a directory that exists only on
    the serving node, at a half-downloaded checkpoint, or outside the project.
    """
    config = directory / "config.json"
    try:
        if not _readable_here(directory, model_dirs) or not _readable_here(config, model_dirs):
            return None, f"local path {shown} is outside the project and the model folders: not read"
        if not directory.exists():
            return None, f"local path {shown} does not exist here"
        if not directory.is_dir():
            return None, f"local path {shown} is not a model directory"
        if not config.is_file():
            return None, f"{shown} has no config.json (Mistral-format or incomplete checkpoint?)"
        return json.loads(read_bounded(str(config), _MAX_CONFIG_BYTES)), None  # regular files only, bounded
    except NotChecked as exc:
        _not_read(config, exc.reason)
        return None, f"{shown}/config.json not read: {exc.reason}"
    except (RecursionError, MemoryError):
        _not_read(config, "nested too deeply to read safely")
        return None, f"cannot read {shown}/config.json: nested too deeply"
    except (OSError, ValueError) as exc:
        return None, f"cannot read {shown}/config.json: {type(exc).__name__}"


def _not_read(config: Path, reason: str) -> None:
    """RSM900 at a model's config.json that is there but past a bound: the launches that name
    the model are judged with it unknown, and the file says why (never "clean" in silence)."""
    not_followed(Span(1, 0, 1, 0, source=str(config)), f"model config.json {reason}")


def _read_config_dir(directory: Path, shown: str, model_dirs: Sequence[Path]) -> Resolution:
    """``architectures[0]`` of a local checkpoint; unknown on any problem."""
    data, why_not = _config_json(directory, shown, model_dirs)
    if why_not is not None:
        return _unknown(why_not)
    archs = data.get("architectures") if isinstance(data, dict) else None
    if (
        not isinstance(archs, list)
        or not archs
        or not isinstance(archs[0], str)
        or not archs[0].strip()
    ):
        return _unknown(f"{shown}/config.json has no usable 'architectures' list")
    return Resolution(archs[0].strip(), "config.json", f"{shown}/config.json architectures[0]")


def _is_explicit_path(model: str) -> bool:
    return model.startswith(_EXPLICIT_PATH_PREFIXES) or model in {".", ".."}


def _explicit_dir(model: str, base_dir: Path | None) -> Path | None:
    """Filesystem location of an explicit path, or None if it cannot be formed."""
    try:
        path = Path(model).expanduser()
    except RuntimeError:  # ``~user`` with an unknown user / no home directory
        return None
    if not path.is_absolute() and base_dir is not None:
        path = base_dir / path
    return path


def _implicit_dir(model: str, model_dirs: Sequence[Path], base_dir: Path | None) -> Path | None:
    """Find a local directory that a non-path-looking reference names, if any.

    vLLM loads a local directory when one exists under the given name, so
    ``models/foo`` next to the launch file or ``<model_dir>/<id>`` is what runs.
    """
    roots = ([base_dir] if base_dir is not None else []) + [Path(d) for d in model_dirs]
    for root in roots:
        candidate = root / model
        try:
            if candidate.is_dir():
                return candidate
        except (OSError, ValueError):
            continue
    return None


def _local_dir(model: str, model_dirs: Sequence[Path], base_dir: Path | None) -> tuple[Path, str] | Resolution | None:
    """The local directory ``model`` names and how to show it; unknown when it is local but
    cannot be used; None when the reference is not local.

    An explicit path (``/``, ``./``, ``../``, ``~``) is always local: if it does
    not exist here it is unknown, never looked up as a Hub id.
    """
    if model.casefold().endswith(".gguf"):
        return _unknown(f"{model} is a GGUF file: vLLM takes the architecture from GGUF metadata")
    if _is_explicit_path(model):
        path = _explicit_dir(model, base_dir)
        if path is None:
            return _unknown(f"cannot expand local path {model}")
        return path, model
    local = _implicit_dir(model, model_dirs, base_dir)
    return (local, str(local)) if local is not None else None


def _from_local(model: str, model_dirs: Sequence[Path], base_dir: Path | None) -> Resolution | None:
    """Resolve local files and directories; None when the reference is not local."""
    found = _local_dir(model, model_dirs, base_dir)
    if found is None or isinstance(found, Resolution):
        return found
    return _read_config_dir(*found, model_dirs)


def local_config(model: str, *, model_dirs: Sequence[Path] = (), base_dir: Path | None = None) -> dict[str, Any] | None:
    """The ``config.json`` of the local checkpoint ``model`` names, read as :func:`resolve_model`
    reads it (the same folder, the same confinement and bounds); None when there is none."""
    found = _local_dir(model, model_dirs, base_dir)
    if found is None or isinstance(found, Resolution):
        return None
    data, _ = _config_json(*found, model_dirs)
    return data if isinstance(data, dict) else None


def _not_loadable_repo(model: str) -> str | None:
    """Why a repo has no config.json that vLLM would read, or None."""
    org, _, name = model.rpartition("/")
    if _GGUF.search(name):
        return f"{model} is a GGUF checkpoint: vLLM takes the architecture from GGUF metadata"
    if org.casefold() in _MLX_ORGS or _MLX.search(name):
        return f"{model} is an MLX checkpoint, which vLLM does not load"
    return None


def _lookup(data: _Data, model_id: str) -> tuple[_Entry, bool] | None:
    """Table entry for ``model_id``; the flag is True for an exact-case hit."""
    entry = data.models.get(model_id)
    if entry is not None:
        return entry, True
    entry = data.folded.get(model_id.casefold())
    if entry is not None:
        return entry, False
    return None


def _strip_suffix(name: str, suffixes: Sequence[str]) -> str | None:
    """Return the repo name without its (longest) quantization suffix, if any."""
    folded = name.casefold()
    for suffix in suffixes:
        if folded.endswith(suffix) and len(name) > len(suffix):
            return name[: -len(suffix)]
    return None


def _from_quantized_base(data: _Data, org: str, name: str, base: str | None) -> Resolution | None:
    """Quantized variants and re-uploads keep the base model's architectures.

    Same org: strip one suffix and look the base id up. A known re-quantizer
    (RedHatAI, unsloth, ...) re-publishes another org's model under the same
    name, possibly with a suffix; accept that only when the name maps to a
    single architecture in the table.
    """
    if base is not None and org:
        found = _lookup(data, f"{org}/{base}")
        if found is not None:
            entry = found[0]
            return Resolution(
                entry.architecture,
                "quantized-base",
                f"quantized variant of {entry.model_id}: {entry.describe()}",
            )
    if org.casefold() not in data.requantizers:
        return None
    for candidate in (name, base):
        if candidate is None:
            continue
        entries = data.by_name.get(candidate.casefold(), ())
        archs = {e.architecture for e in entries}
        if len(archs) == 1:
            entry = entries[0]
            return Resolution(
                entry.architecture,
                "quantized-base",
                f"{org} re-upload of {entry.model_id}: {entry.describe()}",
            )
    return None


def _from_patterns(data: _Data, org: str, name: str, base: str | None) -> Resolution | None:
    """Safe name patterns; anchored, org-restricted, with trap exclusions."""
    if not org:
        return None
    folded_name = name.casefold()
    if any(bad in folded_name for bad in data.exclude):
        return None
    folded_org = org.casefold()
    candidates = [name] if base is None else [name, base]
    for rule in data.rules:
        if folded_org in rule.orgs and any(rule.regex.fullmatch(c) for c in candidates):
            return Resolution(
                rule.architecture, "pattern", f"name pattern {rule.name} ({rule.evidence})"
            )
    return None


# --------------------------------------------------------------------------
# Public API
# --------------------------------------------------------------------------


def resolve_model(
    model: str,
    *,
    extra_models: Mapping[str, str] = MappingProxyType({}),
    model_dirs: Sequence[Path] = (),
    base_dir: Path | None = None,
) -> Resolution:
    """Resolve a model reference as written in a launch to ``architectures[0]``.

    ``model`` is the literal string (HF id or local path). ``extra_models`` maps
    exact ids or fnmatch globs to architectures (user configuration).
    ``model_dirs`` are directories holding local checkpoints as
    ``<model_dir>/<id>``. ``base_dir`` is the directory of the file holding the
    launch; relative paths are resolved against it (against the current
    directory when it is None). Never raises for any string input.
    """
    if not isinstance(model, str) or not model:
        return _unknown("no literal model reference")

    user = _from_user(model, extra_models)
    if user is not None:
        return user

    if any(ch.isspace() or ch in _PLACEHOLDER_CHARS or not ch.isprintable() for ch in model):
        return _unknown(f"{model!r} is not a literal model id (placeholder or template)")

    local = _from_local(model, model_dirs, base_dir)
    if local is not None:
        return local

    reason = _not_loadable_repo(model)
    if reason is not None:
        return _unknown(reason)

    if not _HF_ID.fullmatch(model):
        return _unknown(
            f"{model} is neither a Hugging Face model id nor an existing local directory"
        )

    data = _data()
    found = _lookup(data, model)
    if found is not None:
        entry, exact_case = found
        if exact_case:
            return Resolution(entry.architecture, "table", entry.describe())
        return Resolution(
            entry.architecture, "table-casefold", f"{entry.describe()}, listed as {entry.model_id}"
        )

    org, _, name = model.rpartition("/")
    base = _strip_suffix(name, data.suffixes)
    quantized = _from_quantized_base(data, org, name, base)
    if quantized is not None:
        return quantized

    pattern = _from_patterns(data, org, name, base)
    if pattern is not None:
        return pattern

    return _unknown(f"{model} is not in the model table and matches no safe name pattern")


def architecture_kind(architecture: str) -> str:
    """``"hybrid"``, ``"attention_free"`` (pure SSM) or ``"transformer"``.

    Rules need this because vLLM's defaults differ for Mamba-style models
    (prefix caching, mamba cache mode) even when ReplaySSM is rejected.
    Unlisted architectures are ordinary transformers.
    """
    return _data().kinds.get(architecture, KIND_TRANSFORMER)


def architecture_family(architecture: str) -> str | None:
    """Human label of a Mamba-related family (e.g. ``"Nemotron-H"``), else None."""
    return _data().labels.get(architecture)
