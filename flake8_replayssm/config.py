"""Lint settings: target release, platform, code selection, extra model knowledge.

One :class:`LintConfig` feeds every entry point.  It is built from command-line
options (CLI or flake8) over ``[tool.flake8-replayssm]`` in the nearest
``pyproject.toml``; precedence is explicit option > pyproject > built-in default.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Iterable, Mapping

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

#: codes that only run when enabled (speculative: a finding about what we cannot see)
OFF_BY_DEFAULT = frozenset({"RSM201"})
PLATFORMS = ("cuda", "rocm", "xpu")
#: how arguments the linter cannot see (``"$@"``, ``$EXTRA_ARGS``, ``**kwargs``) are read:
#: "closed" assumes they add nothing that changes the verdict (DESIGN.md, "judge what is
#: written"); "open" assumes they may hold any option, so no finding depends on them
EXTRA_ARGS_MODES = ("closed", "open")
#: the GPU generation SGLang launches are judged for; None: both (a code only if it holds for both)
GPUS = ("hopper", "blackwell")


class ConfigError(Exception):
    """A setting that cannot be used; the CLI exits 2 with this message."""


@dataclass(frozen=True)
class LintConfig:
    vllm_version: str | None = None
    #: where vllm_version came from, for --verbose, JSON and SARIF
    vllm_version_source: str = "explicit option"
    platform: str = "cuda"
    select: tuple[str, ...] = ("RSM",)
    ignore: tuple[str, ...] = ()
    enable: tuple[str, ...] = ()
    extra_models: Mapping[str, str] = field(default_factory=dict)
    model_dirs: tuple[Path, ...] = ()
    #: where the project's pins are looked up (pyproject, requirements, locks)
    project_root: Path | None = None
    #: "closed" or "open": see EXTRA_ARGS_MODES
    extra_args: str = "closed"
    #: the SGLang release SGLang launches are judged for, and where that came from
    sglang_version: str | None = None
    sglang_version_source: str = "explicit option"
    #: "hopper" or "blackwell" (SGLang switches the decode backend on Blackwell); None: both
    gpu: str | None = None
    #: also list every launch seen and the launch-looking lines none covers (--show-launches)
    inventory: bool = False

    def is_enabled(self, code: str) -> bool:
        """flake8-like: the longest matching prefix of select/ignore wins."""
        if code in OFF_BY_DEFAULT and not any(code.startswith(p) for p in self.enable) \
                and not any(p == code for p in self.select):
            return False
        selected = max((len(p) for p in self.select + self.enable if code.startswith(p)), default=-1)
        ignored = max((len(p) for p in self.ignore if code.startswith(p)), default=-1)
        return selected > ignored

    def merged(self, **overrides: Any) -> LintConfig:
        return replace(self, **{k: v for k, v in overrides.items() if v is not None})


def split_codes(value: str | Iterable[str] | None) -> tuple[str, ...]:
    if value is None:
        return ()
    items = value.split(",") if isinstance(value, str) else list(value)
    return tuple(item.strip().upper() for item in items if item and item.strip())


def load_pyproject(path: Path) -> dict[str, Any]:
    """The ``[tool.flake8-replayssm]`` table of ``path`` (empty if absent)."""
    try:
        with open(path, "rb") as fh:
            data = tomllib.load(fh)
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise ConfigError(f"{path}: {exc}") from None
    table = data.get("tool", {}).get("flake8-replayssm", {})
    if not isinstance(table, dict):
        raise ConfigError(f"{path}: [tool.flake8-replayssm] must be a table")
    return table


def config_from_table(table: Mapping[str, Any], root: Path) -> LintConfig:
    """Read the pyproject table: keys as in the README."""
    def get(*names: str) -> Any:
        for name in names:
            if name in table:
                return table[name]
        return None

    platform = get("platform") or "cuda"
    if platform not in PLATFORMS:
        raise ConfigError(f"platform must be one of {', '.join(PLATFORMS)}, not {platform!r}")
    extra = get("extra-models", "extra_models") or {}
    if not isinstance(extra, dict) or not all(isinstance(v, str) for v in extra.values()):
        raise ConfigError("extra-models must map model ids (or globs) to architecture names")
    dirs = get("model-dirs", "model_dirs") or []
    version = get("vllm-version", "vllm_version")
    extra_args = get("extra-args", "extra_args") or "closed"
    if extra_args not in EXTRA_ARGS_MODES:
        raise ConfigError(f"extra-args must be one of {', '.join(EXTRA_ARGS_MODES)}, not {extra_args!r}")
    sglang_version = get("sglang-version", "sglang_version")
    gpu = get("gpu")
    if gpu is not None and gpu not in GPUS:
        raise ConfigError(f"gpu must be one of {', '.join(GPUS)}, not {gpu!r}")
    return LintConfig(
        vllm_version=str(version) if version is not None else None,
        vllm_version_source=f"vllm-version in {root / 'pyproject.toml'}",
        platform=platform,
        select=split_codes(get("select")) or ("RSM",),
        ignore=split_codes(get("ignore")),
        enable=split_codes(get("enable")),
        extra_models=dict(extra),
        model_dirs=tuple((root / d) for d in dirs),
        project_root=root,
        extra_args=extra_args,
        sglang_version=str(sglang_version) if sglang_version is not None else None,
        sglang_version_source=f"sglang-version in {root / 'pyproject.toml'}",
        gpu=gpu,
    )


#: files that mark a project's root when there is no pyproject.toml
ROOT_MARKERS = (".git", ".hg", "requirements.txt", "requirements.in", "uv.lock", "poetry.lock",
                "setup.cfg", "tox.ini")


def find_project_root(start: Path) -> Path:
    """The nearest folder at or above ``start`` with a pyproject.toml or another root marker."""
    for folder in [start, *start.parents]:
        if (folder / "pyproject.toml").is_file() or any((folder / m).exists() for m in ROOT_MARKERS):
            return folder
    return start


def project_config(start: Path) -> LintConfig:
    """The configuration of the project ``start`` is in (defaults if none)."""
    root = find_project_root(start.resolve())
    pyproject = root / "pyproject.toml"
    if not pyproject.is_file():  # pins may still be in requirements or lock files at the root
        return LintConfig(project_root=root)
    return config_from_table(load_pyproject(pyproject), root)
