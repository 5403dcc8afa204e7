"""The package as a newcomer gets it: built, installed in a fresh environment, used as the README says.

``python -m build`` makes the wheel and the sdist of this checkout; each is installed,
not editable, into a new virtual environment, and the README's commands run there:

- ``pip install . && replayssm-lint check fixtures/`` exits 1 with findings (the wheel's
  environment runs the command on this checkout's fixtures; the sdist's on its own);
- ``pip install ".[test]" && pytest`` from the unpacked sdist, which therefore must hold
  everything the tests read (``conftest.py``, ``fixtures/``, ``scripts/``, ``docs/``, the
  README, ``.pre-commit-hooks.yaml``).  To keep CI time reasonable it runs a fast subset,
  the tests that read those files: ``test_data_files.py`` (an installed copy),
  ``test_fixtures.py`` (``fixtures/``), ``test_rule_docs.py`` (``docs/``, the README,
  ``scripts/``), ``test_output.py`` (``.pre-commit-hooks.yaml``) and ``test_architectures.py``
  (``scripts/build_architectures.py``); the whole suite runs in the checkout.

Slow (minutes: two environments with every dependency), so marked ``slow``; CI runs it
(``.ci/run`` runs plain ``pytest``).  Dependencies come from pip's configured index.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SDIST_TESTS = ["tests/test_data_files.py", "tests/test_fixtures.py", "tests/test_rule_docs.py",
               "tests/test_output.py", "tests/test_architectures.py"]
#: what the sdist must hold besides the package: what the tests read, and the licence
SDIST_MUST_HOLD = ["LICENSE", "README.md", ".pre-commit-hooks.yaml", "tests/conftest.py", "tests/lsp_client.py",
                   "tests/conformance/replay.py", "tests/conformance/harness.py", "tests/fix_pairs",
                   "fixtures/notebooks/nemotron_h_backends.ipynb",
                   "scripts/build_architectures.py", "scripts/rule_docs.py", "docs/rules/RSM008.md",
                   "flake8_replayssm/engines/vllm/data/releases.toml"]

pytestmark = [pytest.mark.slow, pytest.mark.skipif(sys.platform == "win32", reason="POSIX venv layout")]


def _env() -> dict[str, str]:
    """This process's environment without what would make a child see this checkout or venv."""
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV", "PYTHONHOME")}
    env["PIP_DISABLE_PIP_VERSION_CHECK"] = "1"
    return env


def _run(cmd: list[str], cwd: Path, timeout: float = 900) -> subprocess.CompletedProcess[str]:
    return subprocess.run(cmd, cwd=cwd, env=_env(), capture_output=True, text=True, timeout=timeout)


def _ok(cmd: list[str], cwd: Path, timeout: float = 900) -> str:
    proc = _run(cmd, cwd, timeout)
    assert proc.returncode == 0, \
        f"{' '.join(cmd)} exited {proc.returncode}:\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}"
    return proc.stdout


def _venv(where: Path) -> Path:
    subprocess.run([sys.executable, "-m", "venv", str(where)], check=True, env=_env(), timeout=300)
    return where / "bin"


@pytest.fixture(scope="module")
def dist(tmp_path_factory) -> dict[str, Path]:
    pytest.importorskip("build")
    out = tmp_path_factory.mktemp("dist")
    source = tmp_path_factory.mktemp("source") / "checkout"
    # a copy, so the build's in-tree leftovers (build/, *.egg-info) never touch the checkout
    shutil.copytree(ROOT, source, ignore=shutil.ignore_patterns(
        ".git", ".ci-venv", ".ci-dist", "build", "dist", "*.egg-info", "__pycache__", ".hypothesis",
        ".pytest_cache"))
    _ok([sys.executable, "-m", "build", "--sdist", "--wheel", "--outdir", str(out), str(source)], source)
    (wheel,) = out.glob("*.whl")
    (sdist,) = out.glob("*.tar.gz")
    return {"wheel": wheel, "sdist": sdist}


def _check_fixtures(bin_dir: Path, cwd: Path) -> None:
    """README: ``replayssm-lint check fixtures/`` exits 1 because the fixtures have findings."""
    proc = _run([str(bin_dir / "replayssm-lint"), "check", "fixtures/"], cwd)
    assert proc.returncode == 1, proc.stderr
    assert " RSM008 error: " in proc.stdout and proc.stdout.splitlines()[-1].startswith("Found ")


def test_the_wheel_installs_and_runs_the_readme_command(dist, tmp_path):
    with zipfile.ZipFile(dist["wheel"]) as wheel:
        names = wheel.namelist()
    assert "flake8_replayssm/engines/vllm/data/releases.toml" in names and "flake8_replayssm/py.typed" in names
    assert any(name.endswith(".dist-info/licenses/LICENSE") for name in names)
    assert not any(name.startswith(("tests/", "fixtures/")) for name in names)
    bin_dir = _venv(tmp_path / "venv")
    _ok([str(bin_dir / "pip"), "install", "--quiet", str(dist["wheel"])], tmp_path)
    _check_fixtures(bin_dir, ROOT)
    # the flake8 plugin is registered by the wheel's entry points
    assert "flake8-replayssm" in _ok([str(bin_dir / "flake8"), "--version"], tmp_path)


def test_the_sdist_installs_and_its_own_tests_pass(dist, tmp_path):
    with tarfile.open(dist["sdist"]) as archive:
        archive.extractall(tmp_path, filter="data") if hasattr(tarfile, "data_filter") \
            else archive.extractall(tmp_path)  # noqa: S202 - our own archive
    (unpacked,) = [p for p in tmp_path.iterdir() if p.is_dir()]
    missing = [name for name in SDIST_MUST_HOLD if not (unpacked / name).exists()]
    assert missing == []
    bin_dir = _venv(tmp_path / "venv")
    _ok([str(bin_dir / "pip"), "install", "--quiet", "."], unpacked)  # README: pip install .
    _check_fixtures(bin_dir, unpacked)
    _ok([str(bin_dir / "pip"), "install", "--quiet", ".[test]"], unpacked)  # README: pip install ".[test]"
    out = _ok([str(bin_dir / "pytest"), "-q", "-p", "no:cacheprovider", *SDIST_TESTS], unpacked, timeout=1800)
    assert " passed" in out.splitlines()[-1] and " failed" not in out.splitlines()[-1]
