"""Writing a fixed file as a transaction: the fix is written whole, or the file is as it was.

``fix`` rewrites files in checkouts, images and shared volumes, sometimes as root, and in CI on
pull requests from strangers, whose files may be symlinks, hard links or be swapped while the
fix runs.  A fixed file must be the same file with only the edits changed, and no race, signal
or full disk may turn the write into a torn, lost or misplaced one:

- a symlink stays a symlink: its target is fixed when it is inside the project, otherwise the
  file is refused; so is a file whose folder is a symlink that leads out of the project;
- the folder is opened once (``O_NOFOLLOW`` on its last part, checked through
  ``/proc/self/fd`` to be the project's) and every later step names the file relative to that
  descriptor, so a folder swapped for a symlink afterwards changes nothing; the file itself is
  opened with ``O_NOFOLLOW``, so a file swapped for a symlink is refused, never written through;
- the file must still be the one that was read: same device, inode, size, mtime, mode and owner,
  and the same bytes, checked before anything is written and once more right before the rename
  (an edit saved meanwhile is never lost: "changed while it was being fixed");
- the new bytes go to a temporary file beside it (``O_EXCL``, mode 0600), are ``fsync``-ed, get
  the owner, group, mode and every extended attribute of the original (ACLs are the
  ``system.posix_acl_access`` attribute; attributes the folder's default ACL gave the temporary
  file and the original lacks are removed), and are renamed over it.  An attribute that cannot
  be kept refuses the write rather than dropping it.  If the owner cannot be kept (not root),
  setuid/setgid are dropped; if the group cannot be kept, the group loses the access it had
  (a group that never had it must not gain it), and a file with an ACL is refused;
- a file with several hard links is edited in place (every link sees the fix), never split into
  a new file behind one link, and only after the whole new content was written to a temporary
  file on the same filesystem: a full disk fails there, before a byte of the file changes.  The
  in-place write itself writes the growth past the old end first, so a disk that fills
  meanwhile still fails before the old bytes are touched (and is truncated back);
- SIGINT, SIGTERM and SIGHUP are deferred while a file is written: the step under way ends,
  the temporary file is removed and :class:`Interrupted` stops the run; any exception removes
  the temporary file too;
- a read-only file is refused unless ``--force``;
- the new bytes come from :meth:`flake8_replayssm.files.Decoded.encode`, so every byte outside
  the edits is the byte that was read.

A refusal (writing would harm the file) is a :class:`WriteRefused`; a write that was tried and
failed (a full disk, an I/O error) is a :class:`NotWritten`.  Both carry a one-line reason, and
both leave the file as it was.
"""

from __future__ import annotations

import contextlib
import errno
import os
import secrets
import signal
import stat
import threading
from typing import Any, Iterator

from ..files import is_inside

#: the temporary file's name starts with this (a dot file beside the one being fixed)
TEMP_PREFIX = ".replayssm-fix-"
#: signals deferred while a file is written (the ones a process can catch that stop it)
DEFERRED_SIGNALS = tuple(getattr(signal, name) for name in ("SIGINT", "SIGTERM", "SIGHUP") if hasattr(signal, name))
_CHANGED = "it changed while it was being fixed; not overwritten (run fix again)"
_NO_XATTR = {errno.ENOTSUP, errno.EOPNOTSUPP, getattr(errno, "ENOSYS", errno.ENOTSUP)}
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
_NONBLOCK = getattr(os, "O_NONBLOCK", 0)


class WriteRefused(Exception):
    """The fixed text was not written because writing it could harm the file; the message says why."""


class NotWritten(WriteRefused):
    """Writing was tried and failed (a full disk, an I/O error); the file is as it was."""


class Interrupted(BaseException):
    """A signal arrived while a file was written.  The temporary file is gone and the file is
    as it was (``written`` False) or fixed (the signal came after the rename); the run stops.
    A BaseException, like KeyboardInterrupt, so no ``except Exception`` swallows it."""

    def __init__(self, signum: int, written: bool = False) -> None:
        super().__init__(signum)
        self.signum = signum
        self.written = written

    @property
    def name(self) -> str:
        return signal.Signals(self.signum).name


class _Deferred:
    """The first deferred signal that arrived (None: none yet)."""

    signum: int | None = None

    def check(self, written: bool = False) -> None:
        if self.signum is not None:
            raise Interrupted(self.signum, written)


@contextlib.contextmanager
def _signals_deferred() -> Iterator[_Deferred]:
    """While inside, the deferred signals only note themselves; :meth:`_Deferred.check` acts on
    them between steps.  Signals the process ignores (``nohup``) stay ignored; outside the main
    thread (where handlers cannot be set) nothing is deferred."""
    deferred = _Deferred()
    previous: dict[int, Any] = {}

    def note(signum: int, frame: object) -> None:
        if deferred.signum is None:
            deferred.signum = signum

    try:
        if threading.current_thread() is threading.main_thread():
            for signum in DEFERRED_SIGNALS:
                if signal.getsignal(signum) is not signal.SIG_IGN:
                    previous[signum] = signal.signal(signum, note)
        yield deferred
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)


def _identity(info: os.stat_result) -> tuple[int, ...]:
    return (info.st_dev, info.st_ino, info.st_size, info.st_mtime_ns, info.st_mode, info.st_uid, info.st_gid)


def _failure(exc: OSError) -> str:
    if exc.errno in (errno.ENOSPC, getattr(errno, "EDQUOT", errno.ENOSPC)):
        return "no space left on the device" if exc.errno == errno.ENOSPC else "disk quota exceeded"
    return exc.strerror or str(exc)


def target_of(path: str, project_root: str) -> str:
    """The file to write for ``path``: itself, or a symlink's target inside the project.

    Refused when the file, with every symlink resolved (its own or a folder's), is outside
    the project.
    """
    real = os.path.realpath(path)
    if os.path.islink(path):
        if not is_inside(real, project_root):
            raise WriteRefused(f"it is a symlink to {real}, outside the project; fix that file itself")
        return real
    if not is_inside(real, project_root):
        raise WriteRefused(f"it is in {os.path.dirname(real)}, outside the project (through a symlinked "
                           "folder); fix that file itself")
    return os.path.join(os.path.realpath(os.path.dirname(os.path.abspath(path))), os.path.basename(path))


class _Folder:
    """The folder of the file being fixed, opened once; names are resolved relative to it."""

    def __init__(self, folder: str, project_root: str) -> None:
        self.path = folder
        self.fd: int | None = None
        if not {os.open, os.stat, os.replace, os.unlink, getattr(os, "chown", os.open)} <= os.supports_dir_fd:
            return  # no dir_fd here (not POSIX): full paths, checked the same way
        try:
            self.fd = os.open(folder, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | _NOFOLLOW | _CLOEXEC)
        except OSError as exc:
            raise WriteRefused(f"cannot open its folder ({exc.strerror})") from None
        opened = _descriptor_path(self.fd)
        if opened is not None and not is_inside(opened, project_root):
            self.close()
            raise WriteRefused(f"its folder was moved to {opened}, outside the project, while it was being fixed")

    def name(self, name: str) -> str:
        return name if self.fd is not None else os.path.join(self.path, name)

    def open(self, name: str, flags: int, mode: int = 0o777) -> int:
        return os.open(self.name(name), flags | _CLOEXEC, mode, dir_fd=self.fd)

    def lstat(self, name: str) -> os.stat_result:
        return os.stat(self.name(name), dir_fd=self.fd, follow_symlinks=False)

    def unlink(self, name: str) -> None:
        with contextlib.suppress(OSError):
            os.unlink(self.name(name), dir_fd=self.fd)

    def replace(self, source: str, destination: str) -> None:
        os.replace(self.name(source), self.name(destination), src_dir_fd=self.fd, dst_dir_fd=self.fd)

    def chown(self, name: str, uid: int, gid: int) -> None:
        os.chown(self.name(name), uid, gid, dir_fd=self.fd, follow_symlinks=False)

    def chmod(self, name: str, fd: int, mode: int) -> None:
        if os.chmod in os.supports_fd:
            os.chmod(fd, mode)
        else:  # pragma: no cover - no fchmod here (Windows)
            os.chmod(os.path.join(self.path, name), mode)

    def sync(self) -> None:
        """Make the rename durable (best effort: not every filesystem syncs a folder)."""
        if self.fd is not None:
            with contextlib.suppress(OSError):
                os.fsync(self.fd)

    def temporary(self, name: str) -> tuple[str, int]:
        """A new file beside ``name`` that no one else has opened (``O_EXCL``, mode 0600)."""
        for _ in range(16):
            temp = f"{TEMP_PREFIX}{name[:64]}.{secrets.token_hex(4)}"
            try:
                return temp, self.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW, 0o600)
            except FileExistsError:
                continue
            except OSError as exc:
                raise NotWritten(f"cannot create a file beside it ({_failure(exc)})") from None
        raise NotWritten("cannot create a file beside it (every name tried exists)")

    def close(self) -> None:
        if self.fd is not None:
            os.close(self.fd)
            self.fd = None


def _descriptor_path(fd: int) -> str | None:
    """Where an open folder really is (Linux's /proc), or None where that cannot be asked."""
    try:
        return os.readlink(f"/proc/self/fd/{fd}")
    except OSError:
        return None


def write_fixed(path: str, original: bytes, new: bytes, *, project_root: str, force: bool = False,
                identity: os.stat_result | None = None) -> None:
    """Replace the content of ``path`` (read as ``original``, with ``identity`` its ``fstat``
    then) with ``new``, or raise :class:`WriteRefused` / :class:`NotWritten` /
    :class:`Interrupted` with the file as it was."""
    target = target_of(path, project_root)
    folder = _Folder(os.path.dirname(target), project_root)
    name = os.path.basename(target)
    try:
        with _signals_deferred() as deferred:
            before, attributes = _as_read(folder, name, original, identity, force)
            if before.st_nlink > 1:
                _write_in_place(folder, name, original, new, before, deferred)
            else:
                _replace(folder, name, original, new, before, attributes, deferred)
            deferred.check(written=True)
    finally:
        folder.close()


def _open_as_read(folder: _Folder, name: str, original: bytes, expected: os.stat_result,
                  flags: int = os.O_RDONLY) -> int:
    """The file opened without following a symlink, checked to be the one read (identity and
    bytes); the caller closes it."""
    try:
        fd = folder.open(name, flags | _NOFOLLOW | _NONBLOCK)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise WriteRefused("it was replaced by a symlink while it was being fixed; not written") from None
        if exc.errno == errno.ENOENT:
            raise WriteRefused("it was removed or renamed while it was being fixed; not written") from None
        raise WriteRefused(f"cannot open it again before writing ({exc.strerror})") from None
    try:
        if _identity(os.fstat(fd)) != _identity(expected) or _read_all(fd, len(original) + 1) != original:
            raise WriteRefused(_CHANGED)
    except BaseException:
        os.close(fd)
        raise
    return fd


def _read_all(fd: int, limit: int) -> bytes:
    chunks, size = [], 0
    os.lseek(fd, 0, os.SEEK_SET)
    while size < limit:
        chunk = os.read(fd, min(limit - size, 1 << 20))
        if not chunk:
            break
        chunks.append(chunk)
        size += len(chunk)
    return b"".join(chunks)


def _as_read(folder: _Folder, name: str, original: bytes, identity: os.stat_result | None,
             force: bool) -> tuple[os.stat_result, dict[str, bytes]]:
    """The file as it is now, checked to be the regular, writable file that was read, and its
    extended attributes."""
    try:
        before = folder.lstat(name)
    except OSError as exc:
        raise WriteRefused(f"cannot stat it ({exc.strerror})") from None
    if stat.S_ISLNK(before.st_mode):
        raise WriteRefused("it was replaced by a symlink while it was being fixed; not written")
    if not stat.S_ISREG(before.st_mode):
        raise WriteRefused("not a regular file")
    if not before.st_mode & stat.S_IWUSR and not force:
        raise WriteRefused("it is read-only; use --force to write it anyway (its mode is kept)")
    if identity is not None and _identity(before) != _identity(identity):
        raise WriteRefused(_CHANGED)
    fd = _open_as_read(folder, name, original, before)
    try:
        return before, _attributes_of(fd)
    finally:
        os.close(fd)


def _attributes_of(fd: int) -> dict[str, bytes]:
    """Every extended attribute of the open file (ACLs included); refused when one cannot be read."""
    if not hasattr(os, "listxattr"):
        return {}
    try:
        names = os.listxattr(fd)
    except OSError as exc:
        if exc.errno in _NO_XATTR:
            return {}
        raise WriteRefused(f"cannot read its extended attributes ({exc.strerror}); not written") from None
    out = {}
    for attribute in names:
        try:
            out[attribute] = os.getxattr(fd, attribute)
        except OSError as exc:
            if exc.errno != getattr(errno, "ENODATA", errno.ENOENT):  # removed meanwhile: nothing to keep
                raise WriteRefused(f"cannot read its extended attribute {attribute} ({exc.strerror}); "
                                   "not written, so that it is not lost") from None
    return out


def _keep_attributes(fd: int, attributes: dict[str, bytes]) -> None:
    """The temporary file gets exactly the original's extended attributes, or the write is refused."""
    if not hasattr(os, "listxattr"):
        return
    try:
        present = set(os.listxattr(fd))
    except OSError as exc:
        if exc.errno not in _NO_XATTR or attributes:
            raise WriteRefused(f"cannot keep its extended attributes ({exc.strerror}); not written") from None
        return
    for attribute in sorted(present - attributes.keys()):  # a default ACL of the folder, say
        try:
            os.removexattr(fd, attribute)
        except OSError as exc:
            raise WriteRefused(f"the new file would get the extended attribute {attribute} the original does "
                               f"not have ({exc.strerror}); not written") from None
    for attribute, value in attributes.items():
        try:
            os.setxattr(fd, attribute, value)
        except OSError as exc:
            raise WriteRefused(f"cannot keep its extended attribute {attribute} ({exc.strerror}); not written, "
                               "so that it is not lost") from None


def _keep_owner_and_mode(folder: _Folder, temp: str, fd: int, before: os.stat_result,
                         attributes: dict[str, bytes]) -> None:
    mode = stat.S_IMODE(before.st_mode)
    owner_kept = group_kept = False
    if hasattr(os, "chown"):
        try:
            folder.chown(temp, before.st_uid, before.st_gid)
            owner_kept = group_kept = True
        except OSError:  # not root: the group alone, if we are in it
            with contextlib.suppress(OSError):
                folder.chown(temp, -1, before.st_gid)
    group_kept = group_kept or os.fstat(fd).st_gid == before.st_gid
    if not owner_kept:  # the file is ours now: it must not keep setuid/setgid
        mode &= ~(stat.S_ISUID | stat.S_ISGID)
    if not group_kept:  # another group: it must not gain the access the old one had
        if "system.posix_acl_access" in attributes:
            raise WriteRefused("cannot keep its group, and its ACL would then apply to another group; not written")
        mode &= ~stat.S_IRWXG
    # the attributes before the mode: a user.* attribute needs write permission, which a
    # read-only mode (fixed with --force) would take from the owner (not root); and an ACL
    # written first gets its mask from the chmod, as the original's is its group bits
    _keep_attributes(fd, attributes)
    folder.chmod(temp, fd, mode)  # after chown, which clears the setuid bits


def _write_all(fd: int, data: bytes, offset: int | None = None) -> None:
    if offset is not None:
        os.lseek(fd, offset, os.SEEK_SET)
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]


def _replace(folder: _Folder, name: str, original: bytes, new: bytes, before: os.stat_result,
             attributes: dict[str, bytes], deferred: _Deferred) -> None:
    """Write a temporary file beside the target with its owner, mode and attributes, then rename it over."""
    temp, fd = folder.temporary(name)
    renamed = False
    try:
        try:
            _write_all(fd, new)
            os.fsync(fd)
            deferred.check()
            _keep_owner_and_mode(folder, temp, fd, before, attributes)
            os.fsync(fd)
        except OSError as exc:
            raise NotWritten(_failure(exc)) from None
        deferred.check()
        os.close(_open_as_read(folder, name, original, before))  # the last comparison
        try:
            folder.replace(temp, name)
        except OSError as exc:
            raise NotWritten(f"cannot rename the fixed copy over it ({_failure(exc)})") from None
        renamed = True
        folder.sync()
    finally:
        os.close(fd)
        if not renamed:
            folder.unlink(temp)


def _write_in_place(folder: _Folder, name: str, original: bytes, new: bytes, before: os.stat_result,
                    deferred: _Deferred) -> None:
    """Every hard link keeps seeing the same (now fixed) file; written only once the whole new
    content is known to fit, and the file truncated back to what it was if the disk fills anyway."""
    temp, probe = folder.temporary(name)
    try:
        _write_all(probe, new)
        os.fsync(probe)
    except OSError as exc:
        raise NotWritten(_failure(exc)) from None
    finally:
        os.close(probe)
        folder.unlink(temp)
    deferred.check()
    fd = _open_as_read(folder, name, original, before, os.O_RDWR)  # the last comparison
    try:
        _overwrite(fd, original, new)
        _restore_mode(fd, before)
    finally:
        os.close(fd)


def _restore_mode(fd: int, before: os.stat_result) -> None:
    """The mode the file had, after writing it in place: a write by a process that may not keep
    setuid/setgid (Linux without ``CAP_FSETID``: its owner, not root) clears them.  Put back
    when the file is ours, as the rename keeps them; on another user's file the kernel's choice
    stands (a file we do not own loses setuid/setgid, as when its owner cannot be kept)."""
    mode = stat.S_IMODE(before.st_mode)
    if stat.S_IMODE(os.fstat(fd).st_mode) != mode and os.chmod in os.supports_fd:
        with contextlib.suppress(OSError):
            os.chmod(fd, mode)


def _overwrite(fd: int, old: bytes, new: bytes) -> None:
    """``old`` -> ``new`` in the file itself: the growth past the old end first (a full disk
    fails there, before a byte of ``old`` changes), then the old range, then the length."""
    try:
        if len(new) > len(old):
            _write_all(fd, new[len(old):], len(old))
        _write_all(fd, new[:len(old)], 0)
        os.ftruncate(fd, len(new))
        os.fsync(fd)
    except OSError as exc:
        reason = _failure(exc)
        try:
            _write_all(fd, old, 0)
            os.ftruncate(fd, len(old))
            os.fsync(fd)
        except OSError as again:
            raise NotWritten(f"{reason}, and it could not be put back as it was ({_failure(again)})") from None
        raise NotWritten(reason) from None
