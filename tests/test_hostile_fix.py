"""``fix`` as a transaction (issue 20): no race, signal or full disk turns a fix into a torn,
lost or misplaced write, and every file's outcome is reported (fixed / unchanged / refused /
not written).

The CLI runs in a child process under CPU, memory and wall-clock limits; signals are real
signals sent to that child; a full disk is a real 64 KB tmpfs where the test may mount one
(root), and a simulated ``ENOSPC`` (``os.write`` failing past the end of a file) everywhere.
Races are played by the test itself at the exact step between the checks and the rename.
"""

from __future__ import annotations

import errno
import os
import shutil
import signal
import stat
import struct
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from flake8_replayssm.fix import writing
from flake8_replayssm.fix.writing import NotWritten, WriteRefused, write_fixed

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="POSIX files, signals and limits")

NANO = "nvidia/NVIDIA-Nemotron-Nano-9B-v2"
SCRIPT = f"vllm serve {NANO} --use-replayssm\n"
FIXED_MARK = "VLLM_USE_V2_MODEL_RUNNER=0"
WALL, CPU, MEMORY = 60, 30, 2_000_000_000


def _limits() -> None:
    """In the child: CPU and memory bounds, and the stopping signals at their defaults (a
    test runner started in the background may have inherited them ignored)."""
    import resource

    resource.setrlimit(resource.RLIMIT_CPU, (CPU, CPU))
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY, MEMORY))
    for signum in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(signum, signal.SIG_DFL)


def run_fix(cwd: Path, *args: str, driver: str | None = None, wrapper: tuple[str, ...] = ()) -> \
        subprocess.CompletedProcess:
    """``replayssm-lint fix ARGS`` in a bounded child (``driver``: Python run before the CLI;
    ``wrapper``: a command that runs the child, such as ``setpriv``)."""
    code = (driver or "") + "\nimport sys\nfrom flake8_replayssm.cli import main\n" \
        "sys.exit(main(['fix', '--vllm-version', '0.33.0', *sys.argv[1:]]))\n"
    proc = subprocess.run([*wrapper, sys.executable, "-c", code, *args], cwd=cwd, capture_output=True, text=True,
                          timeout=WALL, preexec_fn=_limits)
    assert "Traceback" not in proc.stderr, proc.stderr[-2000:]
    return proc


def temp_files(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.rglob(f"{writing.TEMP_PREFIX}*"))


@pytest.fixture
def tree(tmp_path):
    (tmp_path / ".git").mkdir()
    return tmp_path


# ---------------------------------------------------------------- per-file report

def test_every_file_is_reported_fixed_unchanged_or_refused(tree):
    (tree / "fixed.sh").write_text(SCRIPT)
    (tree / "kept.sh").write_text(f"vllm serve {NANO} --use-replayssm --mamba-backend flashinfer "
                                  "--disable-prefix-caching --kv-offloading-size 4\n")
    (tree / "locked.sh").write_text(SCRIPT)
    os.chmod(tree / "locked.sh", 0o444)
    proc = run_fix(tree, "fixed.sh", "kept.sh", "locked.sh")
    lines = proc.stdout.splitlines()
    assert any(line.startswith("fixed fixed.sh: ") for line in lines), proc.stdout
    assert any(line.startswith("unchanged kept.sh: ") for line in lines), proc.stdout
    assert "refused locked.sh: it is read-only; use --force to write it anyway (its mode is kept); " \
           "the file is as it was" in lines
    assert any("[not fixed: refused: it is read-only" in line for line in lines)
    assert (tree / "locked.sh").read_text() == SCRIPT and FIXED_MARK in (tree / "fixed.sh").read_text()


# ---------------------------------------------------------------- real signals

#: fsync of the temporary file (the first fsync of a write) says "ready" and waits; the test
#: sends the signal then, between the write of the new bytes and the rename
_PAUSE_AT_FSYNC = textwrap.dedent("""
    import os, time
    _real_fsync, _calls = os.fsync, [0]
    def _fsync(fd):
        _real_fsync(fd)
        _calls[0] += 1
        if _calls[0] == {call}:
            print("ready", flush=True)
            time.sleep(1.0)
    os.fsync = _fsync
""")


def _fix_with_signal(tree: Path, signum: int, name: str, call: int = 1) -> tuple[int, str, str]:
    code = _PAUSE_AT_FSYNC.replace("{call}", str(call)) + \
        "import sys\nfrom flake8_replayssm.cli import main\n" \
        "sys.exit(main(['fix', '--vllm-version', '0.33.0', sys.argv[1]]))\n"
    child = subprocess.Popen([sys.executable, "-c", code, name], cwd=tree, stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True, preexec_fn=_limits)
    try:
        assert child.stdout is not None
        assert child.stdout.readline().strip() == "ready"
        child.send_signal(signum)
        out, err = child.communicate(timeout=WALL)
    finally:
        child.kill()
    assert "Traceback" not in err, err
    return child.returncode, out, err


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM, signal.SIGHUP])
def test_a_signal_while_writing_removes_the_temporary_file_and_leaves_the_file_as_it_was(tree, signum):
    (tree / "a.sh").write_text(SCRIPT)
    code, out, err = _fix_with_signal(tree, signum, "a.sh")
    assert code == 128 + signum
    assert (tree / "a.sh").read_text() == SCRIPT and temp_files(tree) == []
    name = signal.Signals(signum).name
    assert f"not written a.sh: interrupted by {name}; the file is as it was" in out
    assert f"stopped by {name}: a.sh was not written" in err


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM, signal.SIGHUP])
def test_a_signal_while_a_hard_linked_file_is_checked_for_space_leaves_both_links(tree, signum):
    (tree / "a.sh").write_text(SCRIPT)
    os.link(tree / "a.sh", tree / "b.sh")
    code, _, _ = _fix_with_signal(tree, signum, "a.sh")
    assert code == 128 + signum and temp_files(tree) == []
    assert (tree / "a.sh").read_text() == (tree / "b.sh").read_text() == SCRIPT
    assert os.stat(tree / "a.sh").st_ino == os.stat(tree / "b.sh").st_ino


def test_a_signal_during_the_in_place_write_never_leaves_a_torn_hard_linked_file(tree):
    """The second fsync is the in-place write's own: the signal waits until the write is whole."""
    (tree / "a.sh").write_text(SCRIPT)
    os.link(tree / "a.sh", tree / "b.sh")
    code, out, err = _fix_with_signal(tree, signal.SIGTERM, "a.sh", call=2)
    assert code == 128 + signal.SIGTERM and "a.sh was fixed" in err
    fixed = (tree / "b.sh").read_text()
    assert FIXED_MARK in fixed and fixed.endswith("\n") and (tree / "a.sh").read_text() == fixed


#: the fix run as root but without some of root's powers: as the file's owner would run it
AS_OWNER = pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0 or not shutil.which("setpriv"),
                              reason="needs root and setpriv to run the fix without root's capabilities")


def _without(*capabilities: str) -> tuple[str, ...]:
    names = ",".join(f"-{c}" for c in capabilities)
    return ("setpriv", f"--bounding-set={names}", f"--inh-caps={names}")


@AS_OWNER
def test_a_hard_linked_setuid_file_keeps_its_mode_though_writing_clears_it(tree):
    """A write by a process without CAP_FSETID (a file's owner, not root) clears setuid and
    setgid; the in-place write puts them back, as the rename keeps them (found by scripts/fuzz.py)."""
    (tree / "a.sh").write_text(SCRIPT)
    os.link(tree / "a.sh", tree / "b.sh")
    os.chmod(tree / "a.sh", 0o6755)
    proc = run_fix(tree, "a.sh", wrapper=_without("fsetid"))
    assert proc.returncode == 0 and "fixed a.sh" in proc.stdout, proc.stdout + proc.stderr
    assert FIXED_MARK in (tree / "b.sh").read_text()
    assert stat.S_IMODE(os.stat(tree / "a.sh").st_mode) == 0o6755


# ---------------------------------------------------------------- a full disk

@pytest.fixture
def small_fs(tmp_path):
    """A real 64 KB tmpfs, filled up but for a few bytes; skipped where it cannot be mounted."""
    mount = tmp_path / "fs"
    mount.mkdir()
    try:
        done = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", str(mount)],
                              capture_output=True, timeout=20)
    except (OSError, subprocess.TimeoutExpired):
        pytest.skip("cannot run mount")
    if done.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {done.stderr.decode(errors='replace').strip()}")
    try:
        (mount / ".git").mkdir()
        yield mount
    finally:
        subprocess.run(["umount", "-l", str(mount)], capture_output=True, timeout=20)


def _fill(folder: Path) -> None:
    fd = os.open(folder / "filler", os.O_WRONLY | os.O_CREAT, 0o600)
    try:
        for size in (4096, 1):
            while True:
                try:
                    os.write(fd, b"\0" * size)
                except OSError as exc:
                    assert exc.errno == errno.ENOSPC
                    break
    finally:
        os.close(fd)


@pytest.mark.parametrize("links", [1, 2])
def test_a_full_disk_leaves_every_link_intact_and_is_reported_not_written(small_fs, links):
    (small_fs / "a.sh").write_text(SCRIPT)
    if links == 2:
        os.link(small_fs / "a.sh", small_fs / "b.sh")
    _fill(small_fs)
    proc = run_fix(small_fs, "a.sh")
    assert proc.returncode == 1
    assert "not written a.sh: no space left on the device; the file is as it was" in proc.stdout
    assert "[not fixed: not written: no space left on the device]" in proc.stdout
    assert (small_fs / "a.sh").read_text() == SCRIPT and temp_files(small_fs) == []
    if links == 2:
        assert (small_fs / "b.sh").read_text() == SCRIPT
        assert os.stat(small_fs / "a.sh").st_ino == os.stat(small_fs / "b.sh").st_ino


def _enospc_past_the_end(monkeypatch) -> None:
    """``os.write`` fails with ENOSPC whenever it would make a file longer (a full disk)."""
    real_write = os.write

    def write(fd, data):
        if os.lseek(fd, 0, os.SEEK_CUR) + len(data) > os.fstat(fd).st_size:
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        return real_write(fd, data)

    monkeypatch.setattr(os, "write", write)


@pytest.mark.parametrize("links", [1, 2])
def test_a_simulated_full_disk_leaves_every_link_intact(tree, monkeypatch, links):
    path = tree / "a.sh"
    path.write_text(SCRIPT)
    if links == 2:
        os.link(path, tree / "b.sh")
    _enospc_past_the_end(monkeypatch)
    with pytest.raises(NotWritten, match="no space left on the device"):
        write_fixed(str(path), SCRIPT.encode(), b"fixed\n" + SCRIPT.encode(), project_root=str(tree))
    assert path.read_text() == SCRIPT and temp_files(tree) == []
    if links == 2:
        assert (tree / "b.sh").read_text() == SCRIPT


def test_a_disk_that_fills_after_the_space_check_leaves_a_hard_linked_file_as_it_was(tree, monkeypatch):
    """The growth past the old end is written first: when it fails, no old byte has changed."""
    path = tree / "a.sh"
    path.write_text(SCRIPT)
    os.link(path, tree / "b.sh")
    real_write_all = writing._write_all
    probes = []

    def write_all(fd, data, offset=None):
        if offset is None:  # the temporary file of the space check: it fits
            probes.append(fd)
            return real_write_all(fd, data)
        _enospc_past_the_end(monkeypatch)  # then the disk is full
        return real_write_all(fd, data, offset)

    monkeypatch.setattr(writing, "_write_all", write_all)
    with pytest.raises(NotWritten, match="no space left on the device"):
        write_fixed(str(path), SCRIPT.encode(), b"fixed\n" + SCRIPT.encode(), project_root=str(tree))
    assert probes and (tree / "b.sh").read_text() == SCRIPT and os.stat(path).st_size == len(SCRIPT)
    assert temp_files(tree) == []


# ---------------------------------------------------------------- races

def _at_the_last_step(monkeypatch, action) -> None:
    """Run ``action`` when the temporary file is written (after every check but the last)."""
    real_fsync = os.fsync
    done = []

    def fsync(fd):
        real_fsync(fd)
        if not done:
            done.append(True)
            action()

    monkeypatch.setattr(os, "fsync", fsync)


def test_a_file_swapped_for_a_symlink_during_the_fix_is_refused_never_written_through(tree, monkeypatch):
    outside = tree.parent / f"{tree.name}-outside.sh"
    outside.write_text("echo precious\n")
    path = tree / "a.sh"
    path.write_text(SCRIPT)

    def swap():
        path.unlink()
        path.symlink_to(outside)

    _at_the_last_step(monkeypatch, swap)
    with pytest.raises(WriteRefused, match="replaced by a symlink"):
        write_fixed(str(path), SCRIPT.encode(), b"fixed\n", project_root=str(tree))
    assert outside.read_text() == "echo precious\n" and path.is_symlink() and temp_files(tree) == []


def test_a_file_swapped_for_a_symlink_before_writing_is_refused(tree):
    """Even to a file of the same bytes inside the project: it is not the file that was read."""
    path, copy = tree / "a.sh", tree / "copy.sh"
    path.write_text(SCRIPT)
    copy.write_text(SCRIPT)
    read_stat = os.stat(path)
    path.unlink()
    path.symlink_to("copy.sh")
    with pytest.raises(WriteRefused, match="changed while"):
        write_fixed(str(path), SCRIPT.encode(), b"fixed\n", project_root=str(tree), identity=read_stat)
    assert copy.read_text() == SCRIPT and path.is_symlink()


@pytest.mark.parametrize("how", ["in place", "renamed over"])
def test_an_edit_saved_while_the_fix_is_written_is_not_lost(tree, monkeypatch, how):
    path = tree / "a.sh"
    path.write_text(SCRIPT)
    edited = SCRIPT + "# saved by an editor meanwhile\n"

    def save():
        if how == "in place":
            with open(path, "a") as fh:
                fh.write("# saved by an editor meanwhile\n")
        else:
            (tree / "a.sh.swp").write_text(edited)
            os.replace(tree / "a.sh.swp", path)

    _at_the_last_step(monkeypatch, save)
    with pytest.raises(WriteRefused, match="changed while it was being fixed"):
        write_fixed(str(path), SCRIPT.encode(), b"fixed\n", project_root=str(tree))
    assert path.read_text() == edited and temp_files(tree) == []


def test_a_file_touched_between_reading_and_writing_is_refused(tree):
    """Same bytes, but not the file that was read (its mtime moved): refused, not overwritten."""
    path = tree / "a.sh"
    path.write_text(SCRIPT)
    read_stat = os.stat(path)
    os.utime(path, ns=(read_stat.st_atime_ns, read_stat.st_mtime_ns + 1_000_000_000))
    with pytest.raises(WriteRefused, match="changed while"):
        write_fixed(str(path), SCRIPT.encode(), b"fixed\n", project_root=str(tree), identity=read_stat)
    assert path.read_text() == SCRIPT


def test_a_symlinked_folder_that_leads_out_of_the_project_is_refused(tmp_path):
    proj = tmp_path / "proj"
    (proj / ".git").mkdir(parents=True)
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "serve.sh").write_text(SCRIPT)
    (proj / "linked").symlink_to(outside)
    proc = run_fix(proj, "linked/serve.sh")
    assert proc.returncode == 1 and "refused linked/serve.sh: it is in" in proc.stdout
    assert "outside the project" in proc.stdout
    assert (outside / "serve.sh").read_text() == SCRIPT and temp_files(outside) == []


# ---------------------------------------------------------------- owner, group, ACLs, attributes

def _acl(*entries: tuple[int, int, int]) -> bytes:
    """A ``system.posix_acl_access`` value: version 2, then (tag, permissions, id) entries."""
    return struct.pack("<I", 2) + b"".join(struct.pack("<HHI", *entry) for entry in entries)


_NO_ID = 0xFFFFFFFF
#: user::rw- user:4242:rw- group::--- mask::rw- other::---  (so the mode shows group rw-)
ACL = _acl((0x01, 6, _NO_ID), (0x02, 6, 4242), (0x04, 0, _NO_ID), (0x10, 6, _NO_ID), (0x20, 0, _NO_ID))


def _set_or_skip(path: Path, attribute: str, value: bytes) -> None:
    try:
        os.setxattr(path, attribute, value)
    except OSError as exc:
        pytest.skip(f"this filesystem does not keep {attribute}: {exc.strerror}")


def test_acls_and_extended_attributes_are_kept_and_the_group_gains_nothing(tree):
    path = tree / "a.sh"
    path.write_text(SCRIPT)
    _set_or_skip(path, "user.origin", b"reviewed")
    _set_or_skip(path, "system.posix_acl_access", ACL)
    before = os.stat(path)
    proc = run_fix(tree, "a.sh")
    assert FIXED_MARK in path.read_text(), proc.stdout
    assert os.getxattr(path, "user.origin") == b"reviewed"
    assert os.getxattr(path, "system.posix_acl_access") == ACL  # group::--- still, not the mask's rw-
    after = os.stat(path)
    assert stat.S_IMODE(after.st_mode) == stat.S_IMODE(before.st_mode)
    assert (after.st_uid, after.st_gid) == (before.st_uid, before.st_gid)


@AS_OWNER
def test_a_read_only_file_with_attributes_is_fixed_with_force_by_its_owner(tree):
    """A user.* attribute needs write permission: it is copied before the read-only mode is
    (found by scripts/fuzz.py: "refused: cannot keep its extended attribute")."""
    path = tree / "a.sh"
    path.write_text(SCRIPT)
    _set_or_skip(path, "user.origin", b"reviewed")
    os.chmod(path, 0o444)
    proc = run_fix(tree, "--force", "a.sh", wrapper=_without("dac_override", "fowner"))
    assert FIXED_MARK in path.read_text(), proc.stdout
    assert os.getxattr(path, "user.origin") == b"reviewed" and stat.S_IMODE(os.stat(path).st_mode) == 0o444


def test_an_acl_the_folder_would_give_the_new_file_is_not_added(tree):
    path = tree / "a.sh"
    path.write_text(SCRIPT)
    os.chmod(path, 0o640)
    _set_or_skip(tree, "system.posix_acl_default", ACL)  # files created here from now on get it
    run_fix(tree, "a.sh")
    assert FIXED_MARK in path.read_text()
    assert "system.posix_acl_access" not in os.listxattr(path)
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o640


def test_an_attribute_that_cannot_be_kept_refuses_the_write(tree, monkeypatch):
    path = tree / "a.sh"
    path.write_text(SCRIPT)
    _set_or_skip(path, "user.origin", b"reviewed")

    def cannot(*args, **kwargs):
        raise PermissionError(errno.EPERM, "Operation not permitted")

    monkeypatch.setattr(os, "setxattr", cannot)
    with pytest.raises(WriteRefused, match="cannot keep its extended attribute user.origin"):
        write_fixed(str(path), SCRIPT.encode(), b"fixed\n", project_root=str(tree))
    assert path.read_text() == SCRIPT and os.getxattr(path, "user.origin") == b"reviewed"
    assert temp_files(tree) == []


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0, reason="needs root to give the file a group")
def test_a_group_that_cannot_be_kept_gets_no_access(tree, monkeypatch):
    path = tree / "a.sh"
    path.write_text(SCRIPT)
    os.chown(path, os.getuid(), 4242)
    os.chmod(path, 0o660)

    def cannot(*args, **kwargs):
        raise PermissionError(errno.EPERM, "Operation not permitted")

    monkeypatch.setattr(os, "chown", cannot)  # as when someone else's file is fixed by a non-owner
    write_fixed(str(path), SCRIPT.encode(), b"fixed\n", project_root=str(tree))
    after = os.stat(path)
    assert path.read_bytes() == b"fixed\n" and after.st_gid != 4242 and stat.S_IMODE(after.st_mode) == 0o600


# ---------------------------------------------------------------- any exception

@pytest.mark.parametrize("failure", [OSError(errno.EIO, "Input/output error"), RuntimeError("a bug of ours")])
def test_any_exception_removes_the_temporary_file(tree, monkeypatch, failure):
    path = tree / "a.sh"
    path.write_text(SCRIPT)

    def fail(*args, **kwargs):
        raise failure

    monkeypatch.setattr(os, "replace", fail)
    with pytest.raises((NotWritten, RuntimeError)):
        write_fixed(str(path), SCRIPT.encode(), b"fixed\n", project_root=str(tree))
    assert path.read_text() == SCRIPT and temp_files(tree) == []


def test_a_python_module_too_large_for_the_fixer_is_left_as_it_is_and_says_why(tmp_path, monkeypatch, capsys):
    """libcst costs about a second per 1,000 lines: past the bound, keyword launches are not
    edited (bounded time), and each finding left says why; a shell launch beside it is still fixed."""
    from flake8_replayssm import cli
    from flake8_replayssm.fix import python_facts

    monkeypatch.setattr(python_facts, "FIX_MAX_CHARS", 200)
    text = ("from vllm import LLM\n" + "# filler\n" * 30
            + "llm = LLM(model='nvidia/NVIDIA-Nemotron-Nano-9B-v2', use_replayssm=True)\n")
    (tmp_path / "big.py").write_text(text)
    (tmp_path / "serve.sh").write_text("vllm serve nvidia/NVIDIA-Nemotron-Nano-9B-v2 --use-replayssm\n")
    monkeypatch.chdir(tmp_path)
    assert cli.main(["fix", "--unsafe", "."]) == 1
    out = capsys.readouterr().out
    assert (tmp_path / "big.py").read_text() == text
    assert "too large for the fixer" in out and "the bound is 200" in out
    assert (tmp_path / "serve.sh").read_text().startswith("VLLM_USE_V2_MODEL_RUNNER=0 vllm serve")
