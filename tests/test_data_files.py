"""The packaged data files are parsed once and kept parsed between runs (data_files)."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import pytest

from flake8_replayssm import data_files, target
from flake8_replayssm.data_files import CACHE_ENV, read_data


@pytest.fixture()
def cache(tmp_path, monkeypatch):
    folder = tmp_path / "cache"
    monkeypatch.setenv(CACHE_ENV, str(folder))
    return folder


def entries(folder):
    return sorted(p.name for p in folder.iterdir() if not p.name.startswith(".tmp-")) if folder.exists() else []


def test_the_parsed_file_is_kept_and_read_back(cache, monkeypatch):
    first = read_data("engines/vllm/data/options.toml")
    assert [name.split(".")[0] for name in entries(cache)] == ["engines+vllm+data+options"]
    monkeypatch.setattr(data_files, "_parse", lambda raw: pytest.fail("parsed again"))
    assert read_data("engines/vllm/data/options.toml") == first


def test_a_damaged_entry_is_parsed_again_and_replaced(cache):
    expected = read_data("data/launchers.toml")
    (entry,) = cache.iterdir()
    data = entry.read_bytes()
    entry.write_bytes(data[: len(data) // 2])  # cut short
    assert read_data("data/launchers.toml") == expected
    assert entry.read_bytes() == data
    entry.write_bytes(b"\0" * 4 + data[4:])  # checksum does not match
    assert read_data("data/launchers.toml") == expected


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="FIFOs are POSIX")
def test_a_fifo_or_a_symlink_in_place_of_an_entry_is_ignored(cache, tmp_path):
    expected = read_data("data/launchers.toml")
    (entry,) = cache.iterdir()
    entry.unlink()
    os.mkfifo(entry)  # opening it must not block
    assert read_data("data/launchers.toml") == expected
    entry.unlink()
    elsewhere = tmp_path / "elsewhere"
    elsewhere.write_bytes(b"")
    entry.symlink_to(elsewhere)
    assert read_data("data/launchers.toml") == expected
    assert elsewhere.read_bytes() == b""


def test_an_unusable_cache_folder_is_only_slower(tmp_path, monkeypatch):
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    monkeypatch.setenv(CACHE_ENV, str(blocker / "cache"))
    assert "wrappers" in read_data("data/launchers.toml")


def test_an_empty_setting_keeps_nothing(tmp_path, monkeypatch):
    monkeypatch.setenv(CACHE_ENV, "")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    monkeypatch.setenv("HOME", str(tmp_path))
    assert "wrappers" in read_data("data/launchers.toml")
    assert list(tmp_path.iterdir()) == []


def test_xdg_cache_home_is_the_default(tmp_path, monkeypatch):
    monkeypatch.delenv(CACHE_ENV)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert data_files.cache_dir() == str(tmp_path / "flake8-replayssm")


# ---------------------------------------------------------------- the installed vllm


def test_installed_vllm_is_read_from_its_metadata(tmp_path, monkeypatch):
    dist = tmp_path / "vllm-0.31.0.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: vllm\nVersion: 0.31.0\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    target.installed_version.cache_clear()
    try:
        assert target.installed_version("vllm") == "0.31.0"
    finally:
        target.installed_version.cache_clear()


def test_no_vllm_on_the_path_means_no_metadata_import(tmp_path):
    """The quick look at sys.path's folders answers without importlib.metadata.

    The package is imported as installed (editable or not, wherever its dependencies are);
    only then is sys.path narrowed to folders without any vLLM metadata: an empty folder
    and the standard library's own (no site-packages, where a developer may have vLLM).
    """
    empty = tmp_path / "empty"
    empty.mkdir()
    code = textwrap.dedent(f"""
        import sys
        from flake8_replayssm import target
        before = 'importlib.metadata' in sys.modules
        sys.path[:] = [{str(empty)!r}] + [p for p in sys.path
                                          if p and 'site-packages' not in p and 'dist-packages' not in p]
        print(before, target.installed_version("vllm"), 'importlib.metadata' in sys.modules)
    """)
    package_parent = os.path.dirname(os.path.dirname(target.__file__))
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [package_parent, os.environ.get("PYTHONPATH")]))}
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=tmp_path, env=env,
                          timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == ["False", "None", "False"]


@pytest.mark.skipif(not hasattr(os, "getuid"), reason="file owners are POSIX")
def test_an_entry_others_could_write_is_not_trusted(cache, monkeypatch):
    """A forged entry (here: a well-formed one with another value) decides nothing unless it is
    this user's own, private file."""
    read_data("data/launchers.toml")
    (entry,) = cache.iterdir()
    forged = {"wrappers": {}}
    payload = data_files.marshal.dumps(forged)
    entry.write_bytes(data_files._checksum(payload) + payload)
    entry.chmod(0o666)
    assert read_data("data/launchers.toml") != forged
    entry.write_bytes(data_files._checksum(payload) + payload)
    entry.chmod(0o600)
    assert read_data("data/launchers.toml") == forged  # the user's own private entry is trusted


@pytest.mark.skipif(not hasattr(os, "getuid"), reason="file owners are POSIX")
def test_a_folder_others_could_write_is_not_used(cache):
    cache.mkdir(mode=0o700)
    cache.chmod(0o777)
    assert "wrappers" in read_data("data/launchers.toml")
    assert entries(cache) == []
