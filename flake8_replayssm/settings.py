"""How each setting is written and checked: one table of keys, one validator each.

The same key is written ``key`` in [tool.flake8-replayssm], ``replayssm-key`` in
flake8's [flake8] section, ``--key`` on replayssm-lint's command line and
``--replayssm-key`` on flake8's.  TOML gives typed values, INI files and command
lines give text; every validator takes both and raises ValueError with a message
that completes "<file>: <key> = <value>: ...".
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Mapping

from .config import EXTRA_ARGS_MODES, GPUS, PLATFORMS, RANGE_READINGS, ConfigError, LintConfig, split_codes
from .release_sets import is_spec


def _text(value: Any) -> str:
    if not isinstance(value, str):
        raise ValueError(f"expected a string, not {type(value).__name__}")
    return value.strip()


def _releases(engine: str, example: str, later: str) -> Callable[[Any, Path], str]:
    """A release or a set of releases (:mod:`.release_sets`): ``0.33.0``, ``0.30.0,0.33.0``,
    ``>=0.30``, ``all``, ``latest``; a TOML number is refused (``0.30`` would read as ``0.3``)."""
    def read(value: Any, root: Path) -> str:
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            raise ValueError(f"a TOML number, not text (0.30 would read as 0.3): quote it, "
                             f"e.g. {engine.lower()}-version = \"{example}\"")
        if isinstance(value, (list, tuple)) and value and all(isinstance(item, str) for item in value):
            value = ",".join(value)  # a TOML list of releases
        text = _text(value)
        if not is_spec(text):
            raise ValueError(f"not {engine} version or set of releases (expected e.g. {example}, "
                             f"{later},{example}, '>={later}', all or latest)")
        return text
    return read


def _cuda_version(value: Any, root: Path) -> str:
    text = str(value).strip()
    if not re.fullmatch(r"\d{2}(\.\d+)?", text):
        raise ConfigError(f"cuda: {value!r} is not a CUDA version (expected e.g. 12.9 or 13)")
    return text


def _one_of(choices: tuple[str, ...]) -> Callable[[Any, Path], str]:
    def read(value: Any, root: Path) -> str:
        text = _text(value)
        if text not in choices:
            raise ValueError(f"must be one of {', '.join(choices)}")
        return text
    return read


def _codes(value: Any, root: Path) -> tuple[str, ...]:
    from .rules import BY_CODE

    if isinstance(value, str):
        codes = split_codes(value)
    elif isinstance(value, (list, tuple)) and all(isinstance(item, str) for item in value):
        codes = split_codes(value)
    else:
        raise ValueError("expected a list of codes such as [\"RSM201\"] (or a comma-separated string)")
    unknown = [c for c in codes if not any(code.startswith(c) for code in BY_CODE)]
    if unknown:
        raise ValueError(f"unknown code{'s' if len(unknown) > 1 else ''} {', '.join(unknown)} "
                         "(see replayssm-lint explain --all)")
    return codes


_ARCHITECTURE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")


def _model_map(value: Any, root: Path) -> dict[str, str]:
    if isinstance(value, str):  # INI and command line: "org/a=Arch, org/b-*=Arch"
        pairs = [item.partition("=") for item in re.split(r"[,\n]", value) if item.strip()]
        if any(not sep for _, sep, _ in pairs):
            raise ValueError("expected model=Architecture pairs, e.g. my-org/nano-ft=NemotronHForCausalLM")
        value = {model.strip(): arch.strip() for model, _, arch in pairs}
    if not isinstance(value, dict):
        raise ValueError("expected a table of model id (or glob) = architecture name")
    for model, arch in value.items():
        if not isinstance(arch, str) or not _ARCHITECTURE.match(arch) or not str(model).strip():
            raise ValueError(f"{model!r} = {arch!r}: expected a model id (or glob) mapped to an "
                             "architecture class name such as NemotronHForCausalLM")
    return dict(value)


def _dirs(value: Any, root: Path) -> tuple[Path, ...]:
    if isinstance(value, str):
        value = [item.strip() for item in value.split(",") if item.strip()]
    if not isinstance(value, (list, tuple)) or not all(isinstance(item, str) for item in value):
        raise ValueError("expected a list of folders such as [\"models\"]")
    return tuple(root / item for item in value)


def _anchored(pattern: str, root: Path) -> str:
    """A glob with a ``/`` is relative to the folder of the file that sets it (the current
    folder on a command line), as ruff reads it, unless it starts with ``*`` (``*/gen/*``:
    anywhere); a bare name matches a file's or folder's name anywhere."""
    import os

    negated, body = (pattern[:1], pattern[1:]) if pattern.startswith("!") else ("", pattern)
    body = body.strip()
    if "/" not in body.rstrip("/"):
        return negated + body.rstrip("/")
    if body.startswith("*"):
        return negated + body
    return negated + os.path.normpath(os.path.join(root, body))


def _globs(value: Any, root: Path) -> tuple[str, ...]:
    if isinstance(value, str):
        value = [item for item in re.split(r"[,\n]", value) if item.strip()]
    if not isinstance(value, (list, tuple)) or not all(isinstance(item, str) and item.strip() for item in value):
        raise ValueError("expected a list of globs such as [\"build\", \"docs/generated/*\"]")
    return tuple(_anchored(item, root) for item in value)


def _per_file_ignores(value: Any, root: Path) -> tuple[tuple[str, tuple[str, ...]], ...]:
    """A TOML table ``{"glob" = ["RSM201"]}``, or flake8's text ``glob:CODE,CODE glob2:CODE``."""
    if isinstance(value, str):
        table: dict[str, list[str]] = {}
        current = None
        for token in re.split(r"[\s,]+", value):
            if ":" in token:
                current, _, codes = token.rpartition(":")
                if not current:
                    raise ValueError(f"{token!r}: expected glob:CODE")
                table.setdefault(current, []).extend([codes] if codes else [])
            elif token:
                if current is None:
                    raise ValueError(f"{token!r}: a code before any glob (expected glob:CODE,CODE)")
                table[current].append(token)
        value = table
    if not isinstance(value, dict):
        raise ValueError("expected a table of glob = [codes], e.g. {\"tests/*\" = [\"RSM201\"]}")
    out = []
    for pattern, codes in value.items():
        if not str(pattern).strip():
            raise ValueError("an empty glob")
        out.append((_anchored(str(pattern), root), _codes(codes, root)))
    return tuple(out)


def _boolean(value: Any, root: Path) -> bool:
    if isinstance(value, bool):
        return value
    text = _text(value).lower()
    if text in ("true", "yes", "on", "1"):
        return True
    if text in ("false", "no", "off", "0"):
        return False
    raise ValueError("expected true or false")


def _url(value: Any, root: Path) -> str:
    from urllib.parse import urlsplit

    text = _text(value)
    if urlsplit(text).scheme not in ("http", "https", "file") or any(c.isspace() for c in text):
        raise ValueError("expected an http(s) or file URL, with {code} where the code goes "
                         "(or a base URL: CODE.md is added)")
    return text


@dataclass(frozen=True)
class Key:
    """One setting: the :class:`LintConfig` field it fills and how a written value is read."""

    field: str
    read: Callable[[Any, Path], Any]
    help: str
    #: a setting of the directory walk (the CLI and the configuration files; flake8 walks itself)
    walk: bool = False
    #: a switch: ``--key`` / ``--no-key`` on the command line rather than ``--key VALUE``
    switch: bool = False


SETTINGS: dict[str, Key] = {
    "vllm-version": Key("vllm_version", _releases("a vLLM", "0.33.0", "0.30.0"),
                        "vLLM release(s) to judge for: 0.33.0, a list 0.30.0,0.33.0, a range '>=0.30', all or "
                        "latest (default: image tag, install command, pins, installed, newest)"),
    "platform": Key("platform", _one_of(PLATFORMS), f"platform vLLM runs on: {', '.join(PLATFORMS)} "
                                                    "(default: cuda)"),
    "select": Key("select", _codes, "codes or prefixes to report (default: RSM)"),
    "ignore": Key("ignore", _codes, "codes or prefixes to leave out"),
    "enable": Key("enable", _codes, "off-by-default codes to turn on (RSM201)"),
    "extra-models": Key("extra_models", _model_map, "extra model=Architecture pairs (ids or globs)"),
    "model-dirs": Key("model_dirs", _dirs, "local model folders: <dir>/<id>/config.json gives the architecture"),
    "extra-args": Key("extra_args", _one_of(EXTRA_ARGS_MODES),
                      "unseen extra arguments (\"$@\", $EXTRA_ARGS, **kwargs): 'closed' (default) assumes "
                      "they add no ReplaySSM option; 'open' reports nothing that depends on them"),
    "sglang-version": Key("sglang_version", _releases("an SGLang", "0.5.23", "0.5.20"),
                          "SGLang release(s) to judge SGLang launches for, in the forms of --vllm-version "
                          "(default: image tag, install command, pins, installed, newest)"),
    "ranges": Key("ranges", _one_of(RANGE_READINGS),
                  "how a range of releases (vllm>=0.30 in a pin, an image tag an ARG without default leaves "
                  "open) is judged: all (every known release it admits; default) or newest"),
    "gpu": Key("gpu", _one_of(GPUS), "GPU generation SGLang launches run on: hopper, blackwell (default: "
                                     "judged for each; a code that holds on one only names it)"),
    "cuda": Key("cuda", _cuda_version, "CUDA version SGLang launches run with, e.g. 12.9 or 13 (default: the "
                                       "image tag's -cu129, else judged for 12 and 13)"),
    "extend-select": Key("extend_select", _codes, "codes or prefixes to report on top of select "
                                                  "(RSM201 turns that off-by-default code on)"),
    "extend-ignore": Key("extend_ignore", _codes, "codes or prefixes to leave out, on top of ignore"),
    "per-file-ignores": Key("per_file_ignores", _per_file_ignores,
                            "codes to leave out per file: GLOB:CODE[,CODE] GLOB:CODE... (a glob with a / "
                            "is relative to the current folder)"),
    "exclude": Key("exclude", _globs, "comma-separated globs of paths a directory walk skips (replaces the "
                                      "configuration's exclude)", walk=True),
    "extend-exclude": Key("extend_exclude", _globs, "comma-separated globs of paths to skip, on top of exclude",
                          walk=True),
    "respect-gitignore": Key("respect_gitignore", _boolean,
                             "skip what the git work tree's .gitignore files ignore in a directory walk "
                             "(default: on; files named on the command line are always checked)",
                             walk=True, switch=True),
    "docs-url": Key("docs_url", _url, "each code's documentation page, {code} for the code (SARIF helpUri, the "
                                      "language server's links; default: the repository's docs/rules/)"),
}
#: list settings that add up across sources (command line, INI, pyproject) instead of replacing
ACCUMULATING = frozenset({"ignore", "enable", "extend-select", "extend-ignore", "per-file-ignores",
                          "extend-exclude"})


def check_value(key: str, value: Any, root: Path) -> Any:
    """The value of setting ``key`` written as ``value``; ValueError says what is wrong with it."""
    return SETTINGS[key].read(value, root)


def read_setting(key: str, value: Any, where: str, root: Path) -> tuple[str, Any]:
    """(LintConfig field, value) for ``key = value`` written in ``where``; ConfigError otherwise."""
    spec = SETTINGS.get(key.replace("_", "-"))
    if spec is None:
        raise ConfigError(f"{where}: unknown setting {key!r} (known: {', '.join(SETTINGS)})")
    try:
        return spec.field, check_value(key.replace("_", "-"), value, root)
    except ValueError as exc:
        shown = value if isinstance(value, str) else repr(value)
        raise ConfigError(f"{where}: {key} = {shown}: {exc}") from None


def read_settings(table: Mapping[str, Any], where: str, root: Path) -> dict[str, Any]:
    """LintConfig field -> value for every entry of a settings table (each one validated)."""
    read = dict(read_setting(str(key), value, where, root) for key, value in table.items())
    for folder in read.get("model_dirs", ()):
        _inside_project(folder, where, root)
    return read


def _inside_project(folder: Path, where: str, root: Path) -> None:
    """A ``model-dirs`` folder written in a settings file stays inside the project: the file
    comes with the files it checks (a pull request can change it), and a folder it names is
    read and its ``config.json`` contents shown in messages (README, Threat model). The
    command line, flake8's options and the editor's settings are the user's own and may name
    any folder."""
    try:
        inside = folder.resolve().is_relative_to(root.resolve())
    except (OSError, RuntimeError, ValueError):
        inside = False
    if not inside:
        raise ConfigError(f"{where}: model-dirs = {str(folder)!r}: a settings file may name only "
                          f"folders inside its project ({root}); give other folders with --model-dirs")


def config_from_table(table: Mapping[str, Any], root: Path, where: str = "pyproject.toml") -> LintConfig:
    """A [tool.flake8-replayssm] table as a LintConfig (keys as in the README)."""
    fields = read_settings(table, where, root)
    if "select" in fields and not fields["select"]:
        fields.pop("select")
    if fields.get("vllm_version"):
        fields["vllm_version_source"] = f"vllm-version in {where}"
    if fields.get("sglang_version"):
        fields["sglang_version_source"] = f"sglang-version in {where}"
    return LintConfig(project_root=root, **fields)
