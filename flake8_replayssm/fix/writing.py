"""Writing a fixed file without harming it.

``fix`` rewrites files in checkouts, images and shared volumes, sometimes as root.
A fixed file must be the same file with only the edits changed:

- a symlink stays a symlink: its target is fixed when it is inside the project,
  otherwise the file is refused;
- a file with several hard links is edited in place (every link sees the fix),
  never split into a new file behind one link;
- owner, group and mode are kept; if the owner cannot be kept (not root), the
  setuid/setgid bits are dropped rather than left on a file now owned by us;
- a read-only file is refused unless ``--force``;
- a file that changed since it was read is not overwritten (checked right before
  the replace);
- the new bytes come from :meth:`flake8_replayssm.files.Decoded.encode`, so every
  byte outside the edits is the byte that was read.

Every refusal is a :class:`WriteRefused` with a one-line reason.
"""

from __future__ import annotations

import os
import stat
import tempfile

from ..files import MAX_SOURCE_BYTES, is_inside, read_bounded
from ..unchecked import NotChecked


class WriteRefused(Exception):
    """The fixed text was not written; the message says why."""


def _same_file_as_read(path: str, original: bytes, before: os.stat_result) -> None:
    try:
        now = os.stat(path)
        data = read_bounded(path, MAX_SOURCE_BYTES)
    except (OSError, NotChecked) as exc:
        raise WriteRefused(f"cannot read it again before writing ({exc})") from None
    if (now.st_ino, now.st_dev) != (before.st_ino, before.st_dev) or data != original:
        raise WriteRefused("it changed while it was being fixed; not overwritten (run fix again)")


def target_of(path: str, project_root: str) -> str:
    """The file to write for ``path``: itself, or a symlink's target inside the project."""
    if not os.path.islink(path):
        return path
    real = os.path.realpath(path)
    if not is_inside(real, project_root):
        raise WriteRefused(f"it is a symlink to {real}, outside the project; fix that file itself")
    return real


def write_fixed(path: str, original: bytes, new: bytes, *, project_root: str, force: bool = False) -> None:
    """Replace the content of ``path`` (read as ``original``) with ``new``."""
    target = target_of(path, project_root)
    try:
        before = os.stat(target)
    except OSError as exc:
        raise WriteRefused(f"cannot stat it ({exc.strerror})") from None
    mode = stat.S_IMODE(before.st_mode)
    if not stat.S_ISREG(before.st_mode):
        raise WriteRefused("not a regular file")
    if not mode & stat.S_IWUSR and not force:
        raise WriteRefused("it is read-only; use --force to write it anyway (its mode is kept)")
    _same_file_as_read(target, original, before)
    if before.st_nlink > 1:
        _write_in_place(target, new)
    else:
        _replace(target, new, before)


def _write_in_place(target: str, new: bytes) -> None:
    """Every hard link keeps seeing the same (now fixed) file."""
    try:
        fd = os.open(target, os.O_WRONLY)
    except OSError as exc:
        raise WriteRefused(f"cannot open it for writing ({exc.strerror})") from None
    try:
        with os.fdopen(fd, "wb", closefd=False) as fh:
            fh.write(new)
            fh.flush()
            os.ftruncate(fd, len(new))
            os.fsync(fd)
    finally:
        os.close(fd)


def _replace(target: str, new: bytes, before: os.stat_result) -> None:
    """Write a temporary file beside the target with its owner and mode, then rename it over."""
    directory = os.path.dirname(os.path.abspath(target))
    try:
        fd, tmp = tempfile.mkstemp(prefix=".replayssm-fix-", dir=directory)
    except OSError as exc:
        raise WriteRefused(f"cannot create a file beside it ({exc.strerror})") from None
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(new)
            fh.flush()
            os.fsync(fh.fileno())
        mode = stat.S_IMODE(before.st_mode)
        try:
            if hasattr(os, "chown"):
                os.chown(tmp, before.st_uid, before.st_gid)
        except OSError:  # not root: the file is ours now, so it must not keep setuid/setgid
            mode &= ~(stat.S_ISUID | stat.S_ISGID)
        os.chmod(tmp, mode)  # after chown, which clears the setuid bits
        os.replace(tmp, target)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
