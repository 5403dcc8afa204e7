"""The editor's settings for the server, and the one place a document gets its configuration.

Settings arrive as ``initializationOptions`` and, later, from
``workspace/configuration`` (section ``replayssm``) or a
``workspace/didChangeConfiguration`` push.  They play the role of the CLI's
options: they win over the project's files (``[tool.flake8-replayssm]`` and the
pins), which are still read per document exactly as ``replayssm-lint check``
reads them.  Keys may be written camelCase (``vllmVersion``, the LSP habit) or
as in pyproject (``vllm-version``); a bad value is reported and left out, never
fatal.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Mapping

from ..config import LintConfig
from ..settings import SETTINGS, check_value

#: the ``workspace/configuration`` section (and the key a nested settings object may sit under)
SECTION = "replayssm"
#: milliseconds: changes closer together than this are linted once, at the end
DEFAULT_DEBOUNCE_MS = 200
#: a longer wait is no debounce: diagnostics would stop following the edits
MAX_DEBOUNCE_MS = 10_000


@dataclass(frozen=True)
class Settings:
    """What the editor asked for; empty means "as the project's files say"."""

    vllm_version: str | None = None
    platform: str | None = None
    select: tuple[str, ...] = ()
    ignore: tuple[str, ...] = ()
    enable: tuple[str, ...] = ()
    extra_args: str | None = None
    #: the SGLang release and GPU generation SGLang launches are judged for
    sglang_version: str | None = None
    gpu: str | None = None
    cuda: str | None = None
    #: local model folders, relative ones resolved against the workspace folder
    model_dirs: tuple[Path, ...] = ()
    extra_models: Mapping[str, str] = field(default_factory=dict)
    debounce_ms: int = DEFAULT_DEBOUNCE_MS
    extend_select: tuple[str, ...] = ()
    extend_ignore: tuple[str, ...] = ()
    #: each code's page (``{code}``), the diagnostics' ``codeDescription`` link
    docs_url: str | None = None
    #: how a range of releases the project gives is judged: "all" its releases, or the "newest"
    ranges: str | None = None

    def overrides(self) -> dict[str, object]:
        """The settings as :func:`flake8_replayssm.project.settings_for` overrides (unset ones left out)."""
        values = {"vllm_version": self.vllm_version, "platform": self.platform, "select": self.select,
                  "ignore": self.ignore, "enable": self.enable, "extra_args": self.extra_args,
                  "extra_models": dict(self.extra_models), "sglang_version": self.sglang_version,
                  "gpu": self.gpu, "cuda": self.cuda, "extend_select": self.extend_select,
                  "extend_ignore": self.extend_ignore,
                  "docs_url": self.docs_url, "ranges": self.ranges}
        out: dict[str, object] = {name: value for name, value in values.items() if value}
        if self.vllm_version:
            out["vllm_version_source"] = "the editor's vllmVersion setting"
        if self.sglang_version:
            out["sglang_version_source"] = "the editor's sglangVersion setting"
        return out


def _key(name: str) -> str:
    return re.sub(r"[-_]", "", name).lower()


def read_settings(raw: Any, root: str | None, base: Settings | None = None) -> tuple[Settings, list[str]]:
    """Settings from an editor's JSON object over ``base``, and what was wrong with it (left out).

    Only the keys the object has change ``base``: an editor that answers
    ``workspace/configuration`` with an empty section keeps ``initializationOptions``.
    """
    base = base or Settings()
    if isinstance(raw, Mapping) and isinstance(raw.get(SECTION), Mapping):
        raw = raw[SECTION]
    if raw is None:
        return base, []
    if not isinstance(raw, Mapping):
        return base, [f"settings must be an object, not {type(raw).__name__}"]
    problems: list[str] = []
    values: dict[str, Any] = {}
    for name, value in raw.items():
        reader = _READERS.get(_key(str(name)))
        if reader is None:
            problems.append(f"unknown setting {name!r}")
            continue
        if value is None:
            continue
        attr, read = reader
        try:
            values[attr] = read(value, root)
        except ValueError as exc:
            problems.append(f"{name}: {exc}")
        except Exception as exc:  # any other value an editor can send: that setting is left out, never fatal
            problems.append(f"{name}: unusable value ({type(exc).__name__})")
    return replace(base, **values), problems


def _setting(key: str):  # type: ignore[no-untyped-def]
    """The reader of a pyproject key: the same validation as every other source of settings."""
    def read(value: Any, root: str | None) -> Any:
        return check_value(key, value, Path(root) if root else Path.cwd())
    return read


def _milliseconds(value: Any, root: str | None) -> int:
    # JSON's 1e400 is Python's infinity, and NaN compares false to everything
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value <= MAX_DEBOUNCE_MS:
        raise ValueError(f"expected a number of milliseconds from 0 to {MAX_DEBOUNCE_MS}")
    return int(value)


#: every setting of settings.SETTINGS that Settings holds, plus the server's own
_READERS = {_key(key): (spec.field, _setting(key)) for key, spec in SETTINGS.items()
            if spec.field in Settings.__dataclass_fields__}
_READERS["debounce"] = ("debounce_ms", _milliseconds)


def config_for_document(path: str | None, settings: Settings, root: str | None) -> LintConfig:
    """The configuration one document is linted with: its project's files under the settings.

    The server's only way to a configuration, through the one the CLI and flake8
    use (:func:`flake8_replayssm.project.settings_for`).  Raises ``ConfigError`` when
    the project's files say something that cannot be used.
    """
    from ..project import settings_for

    config = settings_for(path or root or os.getcwd(), settings.overrides())
    if settings.model_dirs:
        config = replace(config, model_dirs=config.model_dirs + settings.model_dirs)
    return config


def forget_config_files() -> None:
    """Drop what was read from configuration and pin files (one of them changed)."""
    from ..project import clear_caches
    from ..target import project_pin

    clear_caches()
    project_pin.cache_clear()


#: files whose change can change a verdict: re-read them and re-lint the open documents
CONFIG_FILE_GLOBS = ("**/pyproject.toml", "**/setup.cfg", "**/tox.ini", "**/.flake8",
                     "**/requirements*.txt", "**/requirements*.in", "**/constraints.txt",
                     "**/*.lock", "**/pylock.toml", "**/*.yaml", "**/*.yml", "**/config.json")


def is_config_file(path: str) -> bool:
    """Whether a change of ``path`` can change a verdict (``CONFIG_FILE_GLOBS`` by name)."""
    import fnmatch

    name = os.path.basename(path)
    return any(fnmatch.fnmatch(name, glob.rsplit("/", 1)[-1]) for glob in CONFIG_FILE_GLOBS)
