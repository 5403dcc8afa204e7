"""Which files are linted, and with which settings: one place for check, fix, flake8, the API and the LSP.

**Settings of a file** (:func:`settings_for`, the one entry point), highest first:

1. the command line: ``replayssm-lint`` flags, or flake8's ``--replayssm-*`` options
   (flake8 itself merges its command line over its config files);
2. ``replayssm-*`` keys of the ``[flake8]`` section in ``setup.cfg``, ``tox.ini`` or
   ``.flake8`` (the first such file from the file's folder up to its project root,
   flake8's own order), so the CLI and flake8 read the same settings;
3. ``[tool.flake8-replayssm]`` in the project's ``pyproject.toml``;
4. the defaults.

``ignore`` and ``enable`` add up over the sources; every other key is taken from the
highest source that sets it.  Every value is validated by its entry in
:data:`flake8_replayssm.settings.SETTINGS`; a bad one is a :class:`ConfigError` naming
the key and the file, never a traceback and never silently dropped.

**Files**: :func:`iter_files` walks directories (skipping tool folders, ``--exclude``
globs, and symlinks that lead out of the project), :func:`lint_file` reads one file
through :mod:`flake8_replayssm.files` (bounded, regular files only) and reports what it
could not read as RSM900.
"""

from __future__ import annotations

import configparser
import os
import sys
from functools import lru_cache
from pathlib import Path
from typing import Any, Callable, Iterator, Mapping, Sequence, TypeVar

from . import engines
from .config import ConfigError, LintConfig, glob_matches
from .files import MAX_SETTINGS_BYTES, decode, is_binary, is_inside, read_bounded, text_bytes
from .lint import FileResult, contains_trigger, detect_kind, lint_text
from .settings import ACCUMULATING, SETTINGS, read_setting, read_settings
from .unchecked import NotChecked

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

#: the engines whose target release is a setting (``<engine>-version``)
ENGINES = engines.NAMES

SKIP_DIRS = frozenset({".git", ".hg", ".svn", ".venv", "venv", "env", ".env", "node_modules",
                       "__pycache__", ".tox", ".nox", ".mypy_cache", ".pytest_cache", ".ruff_cache",
                       "site-packages", ".eggs"})
#: files that mark a project's root when there is no pyproject.toml
ROOT_MARKERS = (".git", ".hg", "requirements.txt", "requirements.in", "uv.lock", "poetry.lock",
                "setup.cfg", "tox.ini")
#: where flake8 keeps its settings, in the order flake8 looks at them
INI_FILES = ("setup.cfg", "tox.ini", ".flake8")
INI_PREFIX = "replayssm-"

Overrides = Mapping[str, Any]


# ---------------------------------------------------------------------------
# Settings
# ---------------------------------------------------------------------------

def find_project_root(start: Path) -> Path:
    """The nearest folder at or above ``start`` with a pyproject.toml or another root marker.

    ``os.path`` tests, not ``Path`` ones: a folder we may not read answers "no", it
    does not raise ``PermissionError``.
    """
    def marked(folder: Path) -> Path | None:
        return folder if any(os.path.exists(folder / marker) for marker in ("pyproject.toml", *ROOT_MARKERS)) \
            else None

    return _nearest(start, marked, _ROOTS) or start


_T = TypeVar("_T")
#: folder -> the nearest root marker at or above it (None: none), until :func:`clear_caches`
_ROOTS: dict[Path, Path | None] = {}
#: project root -> folder -> the flake8 settings file that applies to it
_INIS: dict[Path, dict[Path, Path | None]] = {}


def _nearest(start: Path, found_here: Callable[[Path], _T | None], memo: dict[Path, _T | None],
             last: Path | None = None) -> _T | None:
    """The first ``found_here(folder)`` that is not None from ``start`` up (to ``last``, else to
    the filesystem's root), remembered for every folder passed: a walk asks for each folder of
    a tree, and walking each one up to the top again was quadratic in the tree's depth."""
    passed = []
    folder = start
    while True:
        if folder in memo:
            found = memo[folder]
            break
        passed.append(folder)
        found = found_here(folder)
        if found is not None or folder == last or folder.parent == folder:
            break
        folder = folder.parent
    if len(memo) > 1 << 16:
        memo.clear()
    memo.update(dict.fromkeys(passed, found))
    return found


def _read_settings_file(path: Path) -> str:
    try:
        data = read_bounded(str(path), MAX_SETTINGS_BYTES)
    except NotChecked as exc:
        raise ConfigError(f"{path}: {exc.reason}") from None
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise ConfigError(f"{path}: not UTF-8 text (byte {data[exc.start]:#04x} at offset {exc.start})") from None


def pyproject_table(path: Path) -> dict[str, Any]:
    """The ``[tool.flake8-replayssm]`` table of a pyproject.toml (empty if absent)."""
    try:
        data = tomllib.loads(_read_settings_file(path))
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: invalid TOML: {exc}") from None
    except (RecursionError, MemoryError):  # tomllib recurses per nesting level
        raise ConfigError(f"{path}: nested too deeply to read (arrays or tables inside each other)") from None
    tool = data.get("tool", {})
    if not isinstance(tool, dict):
        raise ConfigError(f"{path}: `tool` must be a table ([tool]), not {type(tool).__name__}")
    table = tool.get("flake8-replayssm", {})
    if not isinstance(table, dict):
        raise ConfigError(f"{path}: [tool.flake8-replayssm] must be a table, not {type(table).__name__}")
    return table


def ini_table(path: Path) -> dict[str, str] | None:
    """The ``replayssm-*`` keys of the ``[flake8]`` section (None: the file has no such section)."""
    parser = configparser.RawConfigParser()
    try:
        parser.read_string(_read_settings_file(path), source=str(path))
    except configparser.Error as exc:
        raise ConfigError(f"{path}: invalid INI file: {str(exc).splitlines()[0]}") from None
    if not parser.has_section("flake8"):
        return None
    return {key[len(INI_PREFIX):]: value for key, value in parser.items("flake8")
            if key.startswith(INI_PREFIX)}


def _ini_file(folder: Path, root: Path) -> Path | None:
    """The flake8 settings file that applies to ``folder``: the first with a [flake8] section,
    from ``folder`` up to ``root``."""
    def here(directory: Path) -> Path | None:
        for name in INI_FILES:
            candidate = directory / name
            if os.path.lexists(candidate) and "[flake8]" in _read_settings_file(candidate):
                return candidate
        return None

    if len(_INIS) > 1 << 10:
        _INIS.clear()
    return _nearest(folder, here, _INIS.setdefault(root, {}), last=root)


def flake8_ini(folder: Path) -> Path | None:
    """The flake8 settings file for ``folder`` (up to its project root), if any."""
    return _ini_file(folder, find_project_root(folder))


def _signature(*paths: Path | None) -> tuple[tuple[str, int, int], ...]:
    out = []
    for path in paths:
        try:
            info = os.stat(path) if path is not None else None
        except OSError:
            info = None
        if info is not None:
            out.append((str(path), info.st_mtime_ns, info.st_size))
    return tuple(out)


def _combine(fields: dict[str, Any], new: Mapping[str, Any]) -> None:
    """Lay ``new`` over ``fields``: ignore/enable add up, extra models merge, the rest replaces."""
    accumulating = {SETTINGS[key].field for key in ACCUMULATING}
    for name, value in new.items():
        if value is None:
            continue
        if name in accumulating:
            fields[name] = tuple(fields.get(name, ())) + tuple(value)
        elif name == "extra_models":
            fields[name] = {**fields.get(name, {}), **value}
        else:
            fields[name] = value


@lru_cache(maxsize=256)
def _project_fields(root: Path, ini: Path | None, signature: tuple[Any, ...]) -> tuple[tuple[str, Any], ...]:
    """The settings of a project's files (pyproject, then INI over it); cached per file versions."""
    fields: dict[str, Any] = {}
    pyproject = root / "pyproject.toml"
    if os.path.lexists(pyproject):  # not only regular files: a FIFO here is an error, not a hang
        table = pyproject_table(pyproject)
        read = read_settings(table, f"{pyproject} [tool.flake8-replayssm]", root)
        for engine in ENGINES:
            if f"{engine}_version" in read:
                read[f"{engine}_version_source"] = f"{engine}-version in {pyproject}"
        _combine(fields, read)
    if ini is not None:
        table = ini_table(ini) or {}
        read = read_settings(table, f"{ini} [flake8] {INI_PREFIX}*", ini.parent)
        for engine in ENGINES:
            if f"{engine}_version" in read:
                read[f"{engine}_version_source"] = f"{INI_PREFIX}{engine}-version in {ini}"
        _combine(fields, read)
    return tuple(fields.items())


def settings_for(path: str | os.PathLike[str] | None = None, overrides: Overrides | None = None, *,
                 flake8_ini: bool = True) -> LintConfig:
    """The settings that apply to the file ``path`` (None or ``-``: the current directory).

    The project's ``per-file-ignores`` that match ``path`` are added to ``ignore``.
    ``overrides`` are LintConfig fields from a command line (see
    :func:`command_line_overrides`); they win over every file.  ``flake8_ini=False``
    leaves out flake8's INI files (the flake8 plugin gets those values from flake8,
    which also honours ``--isolated`` and ``--config``).  Raises
    :class:`ConfigError` with a one-line message for any invalid setting.  Settings
    files are re-read when they change; where they are is remembered per folder until
    :func:`clear_caches` (the LSP server calls it when a settings file changes).
    """
    raw = os.fspath(path) if path is not None else "-"
    if raw in ("-", "stdin"):
        folder = Path.cwd()
    else:
        absolute = Path(os.path.abspath(raw))
        folder = absolute if os.path.isdir(absolute) else absolute.parent
    root, ini = _where_settings_are(folder, flake8_ini)
    signature = _signature(root / "pyproject.toml", ini)
    key = (root, ini, signature, repr(sorted((overrides or {}).items())))
    config = _CONFIGS.get(key)
    if config is None:
        fields = dict(_project_fields(root, ini, signature))
        _combine(fields, overrides or {})
        config = LintConfig(project_root=root, **fields)
        validate(config)
        if len(_CONFIGS) > 4096:
            _CONFIGS.clear()
        _CONFIGS[key] = config
    return config.for_file(raw) if raw not in ("-", "stdin") else config


_CONFIGS: dict[tuple[Any, ...], LintConfig] = {}


@lru_cache(maxsize=4096)
def _where_settings_are(folder: Path, flake8_ini: bool) -> tuple[Path, Path | None]:
    """(project root, flake8 settings file) of a folder; cached until :func:`clear_caches`."""
    root = find_project_root(folder)
    return root, (_ini_file(folder, root) if flake8_ini else None)


def validate(config: LintConfig) -> None:
    """Checks that need the whole configuration (the target release must be usable).

    Only an explicit release needs an engine's release table; without one nothing is
    loaded here, so a run over files without a launch never reads the knowledge data.
    """
    for engine in engines.all_engines():
        engine.check_settings(config)  # raises ConfigError for releases it cannot judge


def command_line_overrides(values: Mapping[str, Any], *, prefix: str = "--",
                           root: Path | None = None) -> dict[str, Any]:
    """LintConfig fields from a command line's option values (keyed like SETTINGS, unset: None).

    Each value is validated like any other setting; the error names the option.
    """
    out: dict[str, Any] = {}
    for key, value in values.items():
        if value is None or value == "":
            continue
        name, read = read_setting(key, value, "command line", root or Path.cwd())
        if key in {f"{engine}-version" for engine in ENGINES}:
            out[key.replace("-", "_") + "_source"] = f"{prefix}{key}"
        out[name] = read
    return out


def clear_caches() -> None:
    """Forget settings read so far (one run of the CLI reads each settings file once; the
    language server calls this when a settings file appears, changes or goes)."""
    _project_fields.cache_clear()
    _where_settings_are.cache_clear()
    _CONFIGS.clear()
    _ROOTS.clear()
    _INIS.clear()


# ---------------------------------------------------------------------------
# Files
# ---------------------------------------------------------------------------

def _excluded(path: str, excludes: Sequence[str]) -> bool:
    """Whether an exclude glob matches ``path`` (:func:`flake8_replayssm.config.glob_matches`)."""
    return any(glob_matches(pattern, path) for pattern in excludes)


def iter_files(paths: Sequence[str], excludes: Sequence[str] = (), notes: list[str] | None = None,
               unreadable: list[NotChecked] | None = None, *,
               settings: Callable[[str], LintConfig] | None = None) -> Iterator[str]:
    """Every file to lint under ``paths``, in a stable order.

    A path named on the command line is used as given (unless an exclude glob matches
    it).  Inside a walked directory, symlinks that lead out of the project (the root
    the settings search finds, or the directory walked) are not followed, and
    ``notes`` says so for ``--verbose``; a directory that cannot be listed (too deep
    for the system's path length too) is added to ``unreadable`` (reported as RSM900).
    ``settings`` gives each named path's settings: their ``exclude``/``extend-exclude``
    globs are skipped too, and, with ``respect-gitignore`` (the default), what git
    ignores in its work tree (:mod:`flake8_replayssm.gitignore`).
    """
    def on_error(exc: OSError) -> None:
        if unreadable is not None:
            unreadable.append(NotChecked(f"directory not read ({exc.strerror or exc})", kind="file",
                                         path=exc.filename or ""))

    for top in paths:
        config = settings(top) if settings is not None else None
        skip = tuple(excludes) + (config.walk_excludes if config is not None else ())
        if not os.path.isdir(top):
            if not _excluded(top, skip):
                yield top
            continue
        from .gitignore import GitIgnore

        ignore = GitIgnore(top) if config is None or config.respect_gitignore else None
        ignore = ignore if ignore is not None and ignore.active else None
        boundary = str(find_project_root(Path(os.path.realpath(top))))
        for dirpath, dirnames, filenames in _walk(top, on_error):
            if ignore is not None:
                ignore.enter(dirpath)
            kept = []
            for name, is_link in dirnames:
                full = os.path.join(dirpath, name)
                if name in SKIP_DIRS or _excluded(full, skip) or (ignore is not None and ignore.ignored(full, True)):
                    continue
                if is_link:  # never followed; say so when it leaves
                    if notes is not None and not is_inside(full, boundary):
                        notes.append(f"{full}: symlink out of the project, not followed")
                    continue
                kept.append(name)
            dirnames[:] = [(name, False) for name in kept]
            for name, is_link in filenames:
                full = os.path.join(dirpath, name)
                if _excluded(full, skip) or (ignore is not None and ignore.ignored(full, False)):
                    continue
                if is_link and not is_inside(full, boundary):
                    if notes is not None:
                        notes.append(f"{full}: symlink out of the project, not followed")
                    continue
                yield full


def path_problems(paths: Sequence[str]) -> dict[str, str]:
    """Named paths that cannot be checked at all -> why (they do not exist, or may not be read).

    Each is an error line of its own and the run goes on with the other paths (exit 2 at
    the end), as ruff and flake8 go on past a missing file.  A file found *inside* a walked
    directory that cannot be read is RSM900 instead, like every file we could not check.
    """
    problems = {}
    for path in paths:
        if path == "-":
            continue
        if not os.path.lexists(path):
            problems[path] = "no such file or directory" + (  # `replayssm-lint check -- --vllm-version X`
                " (after `--` every argument is a file name: put options before it, or in pyproject.toml)"
                if path.startswith("-") else "")
        elif os.path.isdir(path) and not os.access(path, os.R_OK | os.X_OK) \
                or not os.path.isdir(path) and os.path.exists(path) and not os.access(path, os.R_OK):
            problems[path] = "permission denied"
    return problems


Entries = list[tuple[str, bool]]


def _walk(top: str, on_error: Callable[[OSError], None]) -> Iterator[tuple[str, Entries, Entries]]:
    """``os.walk(top)`` top-down, as ``(folder, [(name, is_symlink)] of its folders, of its other
    entries)``, both sorted; the caller prunes the folders list in place.

    Iterative, with a stack of folders: Python 3.10 and 3.11's ``os.walk`` recurses once per
    level, so a tree a few thousand folders deep ended the run with a ``RecursionError``
    (and each name it yielded passed up through every level above it).
    """
    stack = [top]
    while stack:
        folder = stack.pop()
        try:
            with os.scandir(folder) as listing:
                entries = list(listing)
        except OSError as exc:
            on_error(exc)
            continue
        dirs: Entries = []
        others: Entries = []
        for entry in entries:
            try:
                is_dir = entry.is_dir()  # a symlink to a folder counts, as in os.walk
            except OSError:
                is_dir = False
            try:
                is_link = entry.is_symlink()
            except OSError:
                is_link = False
            (dirs if is_dir else others).append((entry.name, is_link))
        dirs.sort()
        others.sort()
        yield folder, dirs, others
        stack.extend(os.path.join(folder, name) for name, is_link in reversed(dirs) if not is_link)


def lint_file(path: str, config: LintConfig | Callable[[], LintConfig],
              kind: str | None = None, *, inventory: bool = False) -> FileResult | None:
    """Lint one file; None when it is not a file of a kind we read.

    ``config`` may be a function, called only for files that need linting (finding a
    file's settings costs more than rejecting the file).  A file of a kind we read
    that cannot be read (too large, not a regular file, unreadable, binary with a
    trigger token) gives one RSM900 finding instead of silence.  ``inventory``: files
    without a trigger token are read too when they mention vLLM (``--show-launches``).
    """
    kind = kind or detect_kind(path)
    if kind is None and "." in os.path.basename(path):
        return None  # only extension-less files can be shell scripts by their shebang

    def settings() -> LintConfig:
        return config() if callable(config) else config

    try:
        data = read_bounded(path)
        screened = text_bytes(data)  # UTF-16/32 with a byte order mark: screened as its text
        if is_binary(screened):
            if kind is None or not contains_trigger(screened):
                return None if kind is None else FileResult([], [])
            raise NotChecked("binary file (NUL bytes)", kind="file")
    except NotChecked as exc:
        if kind is None:
            return None
        found = exc.finding(path)
        return FileResult([], [found] if settings().is_enabled(found.code) else [])
    if not contains_trigger(screened, kind):  # most files stop here, undecoded
        # ...unless every launch is to be listed, clean ones too (--show-launches)
        if not inventory or not (any(p.encode() in screened for p in engines.programs())
                                 or b"engine_kwargs" in screened):
            return FileResult([], []) if kind else None
    text = decode(data, kind).text
    kind = kind or detect_kind(path, text)
    if kind is None:
        return None
    try:
        return lint_text(text, kind, settings(), path=path)
    except ConfigError:
        raise
    except MemoryError:  # too large to check here: not checked, never an internal error
        found = NotChecked("the linter ran out of memory checking it", kind="file").finding(path)
        return FileResult([], [found] if settings().is_enabled(found.code) else [])
    except Exception as exc:  # a bug of ours must not hide the other files' findings
        return FileResult([], [], error=f"{path}: internal error: {type(exc).__name__}: {exc}")


def guess_kind(text: str) -> str:
    """The kind of an unnamed text (stdin without ``--stdin-filename``), from its content."""
    import ast
    import warnings

    head = text.lstrip("\ufeff")
    lines = [line.strip() for line in head.splitlines()]
    first = next((line for line in lines if line and not line.startswith("#")), "")
    if head.startswith("#!"):
        return "shell" if detect_kind("stdin", head) == "shell" else "python"
    if head.lstrip().startswith("{") and '"cells"' in head:
        return "notebook"
    if first.startswith(("FROM ", "ARG ")) and " import " not in first:
        return "dockerfile"
    if _looks_like_yaml(head):
        return "yaml"
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            ast.parse(head)
        return "python"
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        pass
    if any(line.startswith("```") for line in lines):
        return "markdown"
    words = first.split()
    if words and (words[0] in ("vllm", "python", "python3", "docker", "export", "set", "srun", "nohup", "env",
                               "uv", "exec", "if", "for", "cd") or "=" in words[0]):
        return "shell"
    return "python"


def _looks_like_yaml(text: str) -> bool:
    """A YAML stream of mappings or sequences (a lone scalar is any text at all)."""
    import yaml

    try:
        loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
        documents = [doc for doc in yaml.compose_all(text, Loader=loader) if doc is not None]
    except Exception:
        return False
    return bool(documents) and all(getattr(doc, "id", "") in ("mapping", "sequence") for doc in documents)
