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

from ..config import EXTRA_ARGS_MODES, GPUS, PLATFORMS, LintConfig, split_codes

#: the ``workspace/configuration`` section (and the key a nested settings object may sit under)
SECTION = "replayssm"
#: milliseconds: changes closer together than this are linted once, at the end
DEFAULT_DEBOUNCE_MS = 200


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
    #: local model folders, relative ones resolved against the workspace folder
    model_dirs: tuple[Path, ...] = ()
    extra_models: Mapping[str, str] = field(default_factory=dict)
    debounce_ms: int = DEFAULT_DEBOUNCE_MS

    def cli_overrides(self) -> dict[str, object]:
        """The settings in the shape of the CLI's command-line overrides."""
        return {"vllm_version": self.vllm_version, "platform": self.platform,
                "select": self.select or None, "ignore": self.ignore, "enable": self.enable,
                "extra_args": self.extra_args, "sglang_version": self.sglang_version, "gpu": self.gpu}


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
    return replace(base, **values), problems


def _version(value: Any, root: str | None) -> str:
    from ..knowledge import is_version

    if not isinstance(value, str) or not is_version(value):
        raise ValueError(f"expected a version such as \"0.33.0\", not {value!r}")
    return value.strip()


def _one_of(choices: tuple[str, ...]):  # type: ignore[no-untyped-def]
    def read(value: Any, root: str | None) -> str:
        if value not in choices:
            raise ValueError(f"expected one of {', '.join(choices)}, not {value!r}")
        return str(value)
    return read


def _codes(value: Any, root: str | None) -> tuple[str, ...]:
    from ..rules import BY_CODE

    if not isinstance(value, (str, list)) or not all(isinstance(v, str) for v in value):
        raise ValueError("expected codes as a list or a comma-separated string")
    codes = split_codes(value)
    unknown = [c for c in codes if not any(code.startswith(c) for code in BY_CODE)]
    if unknown:
        raise ValueError(f"unknown code(s): {', '.join(unknown)}")
    return codes


def _dirs(value: Any, root: str | None) -> tuple[Path, ...]:
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ValueError("expected a list of folders")
    base = Path(root) if root else Path.cwd()
    return tuple(base / os.path.expanduser(v) for v in value)


def _models(value: Any, root: str | None) -> dict[str, str]:
    if not isinstance(value, Mapping) or not all(isinstance(v, str) for v in value.values()):
        raise ValueError("expected model ids (or globs) mapped to architecture names")
    return {str(k): v for k, v in value.items()}


def _milliseconds(value: Any, root: str | None) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value < 0:
        raise ValueError("expected a number of milliseconds (0 or more)")
    return int(value)


_READERS = {
    "vllmversion": ("vllm_version", _version),
    "platform": ("platform", _one_of(PLATFORMS)),
    "select": ("select", _codes),
    "ignore": ("ignore", _codes),
    "enable": ("enable", _codes),
    "extraargs": ("extra_args", _one_of(EXTRA_ARGS_MODES)),
    "sglangversion": ("sglang_version", _version),
    "gpu": ("gpu", _one_of(GPUS)),
    "modeldirs": ("model_dirs", _dirs),
    "extramodels": ("extra_models", _models),
    "debounce": ("debounce_ms", _milliseconds),
}


def config_for_document(path: str | None, settings: Settings, root: str | None) -> LintConfig:
    """The configuration one document is linted with: its project's files under the settings.

    The server's only way to a configuration (switch it here when file discovery
    and configuration move to their own module).  Raises ``ConfigError`` when the
    project's files say something that cannot be used.
    """
    from .. import cli

    config = cli.config_for(path or root or os.getcwd(), settings.cli_overrides())
    if settings.vllm_version:
        config = replace(config, vllm_version_source="the editor's vllmVersion setting")
    if settings.sglang_version:
        config = replace(config, sglang_version_source="the editor's sglangVersion setting")
    if settings.model_dirs or settings.extra_models:
        config = replace(config, model_dirs=config.model_dirs + settings.model_dirs,
                         extra_models={**config.extra_models, **settings.extra_models})
    cli._validate(config)
    return config


def forget_config_files() -> None:
    """Drop what was read from configuration and pin files (one of them changed)."""
    from .. import cli
    from ..target import project_pin

    cli._project_config_cached.cache_clear()
    cli._MERGED.clear()
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
