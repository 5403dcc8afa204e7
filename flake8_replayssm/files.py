"""Every file the linter opens is read here: regular files only, never past a size bound.

A linter runs on pull requests from strangers.  A ``*.sh`` symlink to
``/dev/zero``, a FIFO in the tree or named by ``--config``, a 3 GB file: each
must give a clear "not checked" (RSM900) or a one-line error, never a hang, a
``MemoryError`` or a read of something outside the project.  So:

- :func:`read_bounded` opens without blocking (``O_NONBLOCK``: a FIFO with no
  writer does not wait), checks on the open descriptor that it is a regular
  file, and reads at most ``limit + 1`` bytes (``/proc`` files report size 0);
- :func:`decode` turns bytes into text *reversibly*, so ``fix`` can write back
  every byte outside its edits unchanged: a Python file's PEP 263 encoding
  (``# -*- coding: latin-1 -*-``) and UTF-8 BOM are honoured, and bytes that are
  not valid in the encoding are kept as private-use characters and restored on
  :meth:`Decoded.encode`;
- :func:`confined_to` / :func:`inside_project` keep ``--config FILE`` reads
  (named inside linted files, so by whoever wrote them) inside the project.
"""

from __future__ import annotations

import codecs
import contextlib
import contextvars
import io
import os
import re
import stat
import sys
from dataclasses import dataclass
from typing import BinaryIO, Iterator

from .unchecked import NotChecked

#: a linted file (larger files are reported as not checked)
MAX_SOURCE_BYTES = 5_000_000
#: settings files, pin files, ``--config`` YAML files, a model directory's config.json
MAX_SETTINGS_BYTES = 1_000_000

_NONBLOCK = getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0) | getattr(os, "O_BINARY", 0)


def _type_name(mode: int) -> str:
    for test, name in ((stat.S_ISDIR, "a directory"), (stat.S_ISFIFO, "a FIFO"), (stat.S_ISSOCK, "a socket"),
                       (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device")):
        if test(mode):
            return name
    return "not a regular file"


def _megabytes(size: int) -> str:
    return f"{size / 1_000_000:.1f} MB"


def read_bounded(path: str, limit: int = MAX_SOURCE_BYTES) -> bytes:
    """The bytes of the regular file ``path``; :class:`NotChecked` (kind "file") otherwise."""
    return read_with_identity(path, limit)[0]


def read_with_identity(path: str, limit: int = MAX_SOURCE_BYTES) -> tuple[bytes, os.stat_result]:
    """:func:`read_bounded`, and the file's ``fstat`` taken on the descriptor it was read from:
    ``fix`` compares it (device, inode, size, mtime) with the file it is about to replace."""
    try:
        fd = os.open(path, os.O_RDONLY | _NONBLOCK)
    except FileNotFoundError:
        raise NotChecked("no such file", kind="file") from None
    except PermissionError:
        raise NotChecked("unreadable (permission denied)", kind="file") from None
    except OSError as exc:
        raise NotChecked(f"unreadable ({exc.strerror or exc})", kind="file") from None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise NotChecked(f"not a regular file ({_type_name(info.st_mode)})", kind="file")
        if info.st_size > limit:
            raise NotChecked(f"too large ({_megabytes(info.st_size)}; the limit is {_megabytes(limit)})",
                             kind="file")
        with os.fdopen(os.dup(fd), "rb") as fh:
            return _read_at_most(fh, limit), info
    except OSError as exc:
        raise NotChecked(f"unreadable ({exc.strerror or exc})", kind="file") from None
    finally:
        os.close(fd)


def _read_at_most(fh: BinaryIO, limit: int) -> bytes:
    data = fh.read(limit + 1)
    if data is None:  # a non-blocking stream with nothing in it
        data = b""
    if len(data) > limit:
        raise NotChecked(f"too large (more than {_megabytes(limit)}, the limit)", kind="file")
    return data


def read_stdin(limit: int = MAX_SOURCE_BYTES) -> bytes:
    """Standard input, at most ``limit`` bytes; NotChecked when it is closed or larger."""
    stream = sys.stdin
    buffer = getattr(stream, "buffer", None) if stream is not None else None
    if buffer is None:
        raise NotChecked("standard input is closed", kind="file")
    try:
        return _read_at_most(buffer, limit)
    except (OSError, ValueError) as exc:  # a closed descriptor reads as EBADF or "I/O on closed file"
        raise NotChecked(f"standard input is unreadable ({exc})", kind="file") from None


def is_binary(data: bytes) -> bool:
    return b"\0" in data[:8192]


# ---------------------------------------------------------------------------
# Text, reversibly
# ---------------------------------------------------------------------------

#: undecodable bytes 0x80-0xFF are kept as U+F780-U+F7FF while the text is linted and fixed
_PUA_BASE = 0xF700
_HAS_PUA = re.compile("[\uf780-\uf7ff]")
_HAS_SURROGATE = re.compile("[\udc80-\udcff]")
_SURROGATES = {0xDC00 + b: _PUA_BASE + b for b in range(0x80, 0x100)}
_BACK = {v: k for k, v in _SURROGATES.items()}
_BOM = codecs.BOM_UTF8


@dataclass(frozen=True)
class Decoded:
    """A file's text and how to turn an edited text back into bytes.

    ``lossless`` is False when :meth:`encode` of the unedited text would not give
    the original bytes back; ``fix`` refuses to write such a file.
    """

    text: str
    encoding: str = "utf-8"
    bom: bool = False
    lossless: bool = True

    def encode(self, text: str) -> bytes:
        if _HAS_PUA.search(text):
            text = text.translate(_BACK)
        raw = text.encode(self.encoding, "surrogateescape")
        return (_BOMS.get(self.encoding, _BOM) if self.bom else b"") + raw


#: UTF-16 and UTF-32 files carry a byte order mark (UTF-32 LE's starts with UTF-16 LE's: first)
_WIDE_BOMS = ((codecs.BOM_UTF32_LE, "utf-32-le"), (codecs.BOM_UTF32_BE, "utf-32-be"),
              (codecs.BOM_UTF16_LE, "utf-16-le"), (codecs.BOM_UTF16_BE, "utf-16-be"))
_BOMS = {encoding: bom for bom, encoding in _WIDE_BOMS}


def _wide_encoding(data: bytes) -> str | None:
    """The UTF-16/UTF-32 encoding ``data`` declares with its byte order mark, if any."""
    for bom, encoding in _WIDE_BOMS:
        if data.startswith(bom):
            return encoding
    return None


def text_bytes(data: bytes) -> bytes:
    """``data`` as the byte-level screens (binary test, trigger needles) should see it: a
    UTF-16/UTF-32 file with a byte order mark as UTF-8 (its NUL bytes are not binary)."""
    encoding = _wide_encoding(data)
    if encoding is None:
        return data
    return data[len(_BOMS[encoding]):].decode(encoding, "replace").encode("utf-8", "replace")


def _python_encoding(data: bytes) -> str:
    """PEP 263: the ``coding`` declaration in the first two lines, else UTF-8."""
    from tokenize import detect_encoding

    try:
        encoding, _ = detect_encoding(io.BytesIO(data).readline)
    except SyntaxError:  # an unknown codec or a BOM that contradicts the declaration
        return "utf-8"
    return "utf-8" if encoding == "utf-8-sig" else encoding


#: the UTF-8 lead bytes of the private-use characters the mapping above uses (U+F780-U+F7FF)
_PUA_UTF8 = (b"\xef\x9e", b"\xef\x9f")


def _declares_encoding(body: bytes) -> bool:
    """Whether an ASCII Python source names an encoding (PEP 263) in its first two lines: a
    codec such as UTF-7 or UTF-16 reads ASCII bytes as other characters."""
    first = body.find(b"\n")
    second = body.find(b"\n", first + 1) if first >= 0 else -1
    return b"coding" in (body if second < 0 else body[:second])


def decode(data: bytes, kind: str | None = None) -> Decoded:
    """The text of ``data`` (a file of ``kind``), reversible with :meth:`Decoded.encode`."""
    wide = _wide_encoding(data)
    if wide is not None:
        text = data[len(_BOMS[wide]):].decode(wide, "replace")
        decoded = Decoded(text, wide, True)
        return decoded if decoded.encode(text) == data else Decoded(text, wide, True, lossless=False)
    bom = data.startswith(_BOM)
    body = data[len(_BOM):] if bom else data
    if body.isascii() and (kind != "python" or not _declares_encoding(body)):
        return Decoded(body.decode("ascii"), "utf-8", bom)  # the common case: nothing to map back
    encoding = _python_encoding(data) if kind == "python" else "utf-8"
    if encoding == "utf-8" and _PUA_UTF8[0] not in body and _PUA_UTF8[1] not in body:
        try:
            return Decoded(body.decode("utf-8"), "utf-8", bom)  # valid UTF-8 round-trips as it is
        except UnicodeDecodeError:
            pass  # bytes that are not UTF-8: the mapping below keeps them
    try:
        text = body.decode(encoding, "surrogateescape")
    except (LookupError, UnicodeError):
        encoding, text = "utf-8", body.decode("utf-8", "surrogateescape")
    if _HAS_PUA.search(text):  # the mapping would be ambiguous: lint it, never write it
        return Decoded(body.decode(encoding, "replace"), encoding, bom, lossless=False)
    decoded = Decoded(text.translate(_SURROGATES) if _HAS_SURROGATE.search(text) else text, encoding, bom)
    try:
        same = decoded.encode(decoded.text) == data
    except UnicodeError:
        same = False
    return decoded if same else Decoded(decoded.text, encoding, bom, lossless=False)


# ---------------------------------------------------------------------------
# Staying inside the project
# ---------------------------------------------------------------------------

_ROOT: contextvars.ContextVar[str | None] = contextvars.ContextVar("replayssm_project_root", default=None)


def is_inside(path: str, root: str) -> bool:
    """Whether ``path``, with every symlink resolved, is ``root`` or below it."""
    real, base = os.path.realpath(path), os.path.realpath(root)
    return real == base or real.startswith(base.rstrip(os.sep) + os.sep)


@contextlib.contextmanager
def confined_to(root: str) -> Iterator[None]:
    """Files named inside linted text (``--config FILE``) are read only below ``root``.

    :func:`flake8_replayssm.lint.lint_text` (every entry point) lints inside this;
    outside it (a test building a launch by hand) nothing is confined.
    """
    token = _ROOT.set(root)
    try:
        yield
    finally:
        _ROOT.reset(token)


def inside_project(path: str) -> bool:
    """Whether a file named inside a linted text may be read (see :func:`confined_to`)."""
    root = _ROOT.get()
    return root is None or is_inside(path, root)
