"""The packaged data files (``data/*.toml``), parsed once and kept parsed between runs.

Parsing the TOML was the largest single cost of a short run (about 14 ms of a
one-file check): the CLI in a pre-commit hook and every flake8 worker process pay it.
So the parsed value is kept, as :mod:`marshal` bytes, in a cache folder, the way black
and mypy keep theirs, under a name made of the data file's checksums and size and the
interpreter's version: a changed data file or another Python never reads a stale
entry, and an entry whose own checksum does not match (cut short, damaged) is parsed
again and replaced.  The checksum guards against accidents, not people: an entry or a
folder that another user owns or could write is not used at all.

The folder is ``$FLAKE8_REPLAYSSM_CACHE_DIR`` if set (empty: no cache), else
``$XDG_CACHE_HOME/flake8-replayssm`` or ``~/.cache/flake8-replayssm``, and only when that
is an absolute path (otherwise there is no cache).  A cache that
cannot be read or written (read-only home, full disk, a hostile file in its place)
is only slower: the TOML is parsed, never an error.
"""

from __future__ import annotations

import marshal
import os
import stat
import sys
import zlib
from typing import Any

CACHE_ENV = "FLAKE8_REPLAYSSM_CACHE_DIR"
#: an entry larger than this is not ours (the data files parse to well under 1 MB)
MAX_ENTRY_BYTES = 8 * 1024 * 1024
#: an entry starts with its payload's CRC-32: a cut-short or damaged entry is never read
_CHECK_BYTES = 4


def cache_dir() -> str | None:
    """Where parsed data files are kept (None: nowhere).

    Only an absolute folder: a relative one would be made inside whatever folder the run
    starts in, the checked-out tree of a pull request included (``./~/.cache`` when
    ``HOME`` is unset and the user has no home).  A relative ``XDG_CACHE_HOME`` is ignored,
    as the XDG base directory specification says.
    """
    chosen = os.environ.get(CACHE_ENV)
    if chosen is not None:
        return chosen if os.path.isabs(chosen) else None
    xdg = os.environ.get("XDG_CACHE_HOME", "")
    if os.path.isabs(xdg):
        return os.path.join(xdg, "flake8-replayssm")
    home = os.path.expanduser("~")  # "~" itself when there is no home to expand to
    return os.path.join(home, ".cache", "flake8-replayssm") if os.path.isabs(home) else None


def read_data(name: str) -> dict[str, Any]:
    """The parsed content of the TOML file ``name`` shipped with the package (a path relative to
    the package: ``data/launchers.toml``, ``engines/vllm/data/releases.toml``)."""
    raw = _data_bytes(name)
    folder = cache_dir()
    entry = None
    if folder is not None and _usable_folder(folder):
        digest = f"{zlib.crc32(raw):08x}{zlib.adler32(raw):08x}{len(raw):x}"
        entry = os.path.join(folder, f"{name.replace('/', '+')}.{digest}.py{sys.version_info[0]}{sys.version_info[1]}"
                                     f"m{marshal.version}")
        cached = _load(entry)
        if cached is not None:
            return cached
    value = _parse(raw)
    if entry is not None:
        _store(entry, value)
    return value


def _data_bytes(name: str) -> bytes:
    """The file's bytes: from the package's folder, or through importlib.resources when the
    package is not a folder (a zip); the folder is the common case and skips that import."""
    try:
        with open(os.path.join(os.path.dirname(__file__), *name.split("/")), "rb") as fh:
            return fh.read()
    except OSError:
        from importlib import resources

        return resources.files(__package__).joinpath(*name.split("/")).read_bytes()


def _parse(raw: bytes) -> dict[str, Any]:
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover
        import tomli as tomllib
    return tomllib.loads(raw.decode("utf-8"))


def _private(info: os.stat_result) -> bool:
    """Owned by this user and writable by no one else: an entry (or folder) another user could
    have written is never read, since it decides verdicts (ssh's rule for its own files)."""
    if not hasattr(os, "getuid"):  # pragma: no cover - no owners to compare (Windows)
        return True
    return info.st_uid == os.getuid() and not info.st_mode & (stat.S_IWGRP | stat.S_IWOTH)


def _usable_folder(folder: str) -> bool:
    """The folder is ours, or does not exist yet (it is then made private by ``_store``)."""
    try:
        info = os.stat(folder)
    except FileNotFoundError:
        return True
    except OSError:
        return False
    return stat.S_ISDIR(info.st_mode) and _private(info)


def _checksum(payload: bytes) -> bytes:
    return zlib.crc32(payload).to_bytes(_CHECK_BYTES, "big")


def _load(entry: str) -> dict[str, Any] | None:
    """The entry's value, or None for a missing, foreign, truncated or damaged entry."""
    try:
        fd = os.open(entry, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0))
    except OSError:
        return None
    try:
        with os.fdopen(fd, "rb") as fh:
            info = os.fstat(fh.fileno())
            if not stat.S_ISREG(info.st_mode) or info.st_size > MAX_ENTRY_BYTES or not _private(info):
                return None
            data = fh.read(MAX_ENTRY_BYTES + 1)
        check, payload = data[:_CHECK_BYTES], data[_CHECK_BYTES:]
        if _checksum(payload) != check:
            return None  # written by someone else, or cut short
        value = marshal.loads(payload)
    except (OSError, EOFError, ValueError, TypeError):
        return None
    return value if isinstance(value, dict) else None


def _store(entry: str, value: dict[str, Any]) -> None:
    """Write ``entry`` atomically (a reader sees the old entry, none, or the whole new one)."""
    try:
        payload = marshal.dumps(value)
    except ValueError:  # a value marshal cannot hold (a TOML date): parse it every time
        return
    import tempfile

    folder = os.path.dirname(entry)
    try:
        os.makedirs(folder, mode=0o700, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=".tmp-", dir=folder)
    except OSError:
        return
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(_checksum(payload) + payload)
        os.replace(tmp, entry)
    except OSError:
        try:
            os.unlink(tmp)
        except OSError:
            pass
