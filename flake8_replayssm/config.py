"""Lint settings as every part of the linter reads them: one :class:`LintConfig`.

One :class:`LintConfig` feeds every entry point and every engine.  How a setting is
written and checked is :mod:`flake8_replayssm.settings` (one table of keys); where the
settings of a file come from (and in which order) is
:func:`flake8_replayssm.project.settings_for`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Iterable, Mapping

#: codes that only run when enabled (speculative: a finding about what we cannot see)
OFF_BY_DEFAULT = frozenset({"RSM201"})
PLATFORMS = ("cuda", "rocm", "xpu")
#: how arguments the linter cannot see (``"$@"``, ``$EXTRA_ARGS``, ``**kwargs``) are read:
#: "closed" assumes they add nothing that changes the verdict (DESIGN.md, "judge what is
#: written"); "open" assumes they may hold any option, so no finding depends on them
EXTRA_ARGS_MODES = ("closed", "open")
#: the GPU generation SGLang launches are judged for; unset: both (a code only if it holds for both)
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
    #: also list every launch seen and the launch-looking lines none covers (--show-launches)
    inventory: bool = False
    #: the SGLang release SGLang launches are judged for, and where that came from
    sglang_version: str | None = None
    sglang_version_source: str = "explicit option"
    #: "hopper" or "blackwell" (SGLang switches the decode backend on Blackwell); None: both
    gpu: str | None = None

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
    items = re.split(r"[,\s]+", value) if isinstance(value, str) else list(value)
    return tuple(item.strip().upper() for item in items if item and item.strip())
