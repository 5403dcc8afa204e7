"""One configuration, validated: the same settings and verdicts from the CLI and flake8.

Facts used: on 0.33.0 the plain Nemotron-H launch is RSM008 (Triton ReplaySSM under
the default Model Runner V2) and passes on 0.28.0 (reference/vllm-replayssm-rules.md).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from flake8_replayssm import cli, project, target
from flake8_replayssm.config import ConfigError
from flake8_replayssm.settings import SETTINGS

NANO = "nvidia/NVIDIA-Nemotron-Nano-9B-v2"
NANO_SRC = f'from vllm import LLM\nllm = LLM("{NANO}", use_replayssm=True)\n'


@pytest.fixture(autouse=True)
def _no_installed_vllm(monkeypatch):
    monkeypatch.setattr(target, "installed_version", lambda package: None)


@pytest.fixture
def proj(tmp_path, monkeypatch):
    """A project (a .git marker) holding nano.py, as the working directory."""
    (tmp_path / ".git").mkdir()
    (tmp_path / "nano.py").write_text(NANO_SRC)
    monkeypatch.chdir(tmp_path)
    project.clear_caches()
    return tmp_path


def check(capsys, *args: str) -> tuple[int, list[str], str]:
    code = cli.main(["check", "--format", "json", *args])
    out, err = capsys.readouterr()
    assert "Traceback" not in err
    return code, ([i["code"] for i in json.loads(out)] if out.strip() else []), err


def flake8(cwd: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "flake8", "--select", "RSM", *args, "."], cwd=cwd,
                          capture_output=True, text=True, timeout=300)


# ---------------------------------------------------------------- validation

BAD_PYPROJECT = [
    ("vllm-version = 0.30", "vllm-version", "quote"),
    ('vllm-version = "banana"', "vllm-version", "not a vLLM version"),
    ('platform = "tpu"', "platform", "cuda, rocm, xpu"),
    ('enable = ["RSM999"]', "enable", "unknown code RSM999"),
    ('select = ["XYZ1"]', "select", "unknown code XYZ1"),
    ('ignore = "E501"', "ignore", "unknown code E501"),
    ("select = 5", "select", "list of codes"),
    ("enable = [1, 2]", "enable", "list of codes"),
    ("ignore = true", "ignore", "list of codes"),
    ("model-dirs = 5", "model-dirs", "list of folders"),
    ('extra-models = ["org/x=NemotronHForCausalLM"]', "extra-models", "table"),
    ('extra-models = { "org/x" = "not an arch" }', "extra-models", "architecture class name"),
    ('extra-args = "sometimes"', "extra-args", "closed, open"),
    ('vllm_verison = "0.33.0"', "vllm_verison", "unknown setting"),
]


@pytest.mark.parametrize("line,key,says", BAD_PYPROJECT, ids=[b[0] for b in BAD_PYPROJECT])
def test_every_bad_pyproject_setting_is_one_line_naming_key_and_file(proj, capsys, line, key, says):
    (proj / "pyproject.toml").write_text(f"[tool.flake8-replayssm]\n{line}\n")
    code, found, err = check(capsys, "nano.py")
    assert (code, found) == (2, [])
    (message,) = err.splitlines()
    assert "pyproject.toml" in message and key in message and says in message


@pytest.mark.parametrize("body,says", [
    ("tool = 5\n", "`tool` must be a table"),
    ('[tool]\nflake8-replayssm = "x"\n', "must be a table"),
    ("[tool.flake8-replayssm\n", "invalid TOML"),
])
def test_malformed_pyproject_is_one_line(proj, capsys, body, says):
    (proj / "pyproject.toml").write_text(body)
    code, _, err = check(capsys, "nano.py")
    assert code == 2 and len(err.splitlines()) == 1 and says in err


def test_pyproject_that_is_not_utf8_is_one_line(proj, capsys):
    (proj / "pyproject.toml").write_bytes(b'[tool.flake8-replayssm]\nplatform = "cu\xffda"\n')
    code, _, err = check(capsys, "nano.py")
    assert code == 2 and len(err.splitlines()) == 1 and "not UTF-8" in err


def test_pyproject_that_is_not_a_regular_file_is_one_line(proj, capsys):
    os.mkfifo(proj / "pyproject.toml")
    started = time.monotonic()
    code, _, err = check(capsys, "nano.py")
    assert code == 2 and "FIFO" in err and time.monotonic() - started < 10


@pytest.mark.parametrize("args,says", [
    (["--vllm-version", "banana"], "not a vLLM version"),
    (["--platform", "tpu"], "cuda, rocm, xpu"),
    (["--select", "RSM999"], "unknown code"),
    (["--extra-models", "no-equals-sign"], "model=Architecture"),
    (["--extra-args", "maybe"], "closed, open"),
])
def test_bad_command_line_values_are_one_line(proj, capsys, args, says):
    code, _, err = check(capsys, *args, "nano.py")
    assert code == 2 and len(err.splitlines()) == 1 and says in err


def test_validation_is_a_table_of_keys():
    """New settings (sglang-version, gpu) are one table entry: every key has a field and help."""
    for key, spec in SETTINGS.items():
        assert key == key.lower() and "_" not in key
        assert spec.field and spec.help and callable(spec.read)


# ---------------------------------------------------------------- one configuration

@pytest.mark.parametrize("ini", ["setup.cfg", "tox.ini", ".flake8"])
def test_cli_reads_the_replayssm_keys_of_flake8s_section(proj, capsys, ini):
    assert check(capsys, "nano.py")[:2] == (1, ["RSM008"])
    (proj / ini).write_text("[flake8]\nmax-line-length = 100\nreplayssm-vllm-version = 0.28.0\n")
    assert check(capsys, "nano.py")[:2] == (0, [])


def test_bad_value_in_flake8s_section_names_the_file_for_the_cli(proj, capsys):
    (proj / "setup.cfg").write_text("[flake8]\nreplayssm-platform = tpu\n")
    code, _, err = check(capsys, "nano.py")
    assert code == 2 and "setup.cfg" in err and "replayssm-platform" not in err.split(":")[0]
    assert "platform" in err and "tpu" in err


def test_precedence_command_line_over_ini_over_pyproject(proj, capsys):
    (proj / "pyproject.toml").write_text('[tool.flake8-replayssm]\nvllm-version = "0.33.0"\n')
    assert check(capsys, "nano.py")[:2] == (1, ["RSM008"])
    (proj / "setup.cfg").write_text("[flake8]\nreplayssm-vllm-version = 0.28.0\n")
    assert check(capsys, "nano.py")[:2] == (0, [])
    assert check(capsys, "--vllm-version", "0.33.0", "nano.py")[:2] == (1, ["RSM008"])


def test_ignore_adds_up_over_sources(proj, capsys):
    (proj / "pyproject.toml").write_text('[tool.flake8-replayssm]\nignore = ["RSM008"]\n')
    (proj / "falcon.py").write_text(NANO_SRC.replace(NANO, "tiiuae/Falcon-H1-1.5B-Instruct"))
    assert check(capsys, "falcon.py")[:2] == (1, ["RSM001"])
    assert check(capsys, "--ignore", "RSM001", "falcon.py")[:2] == (0, [])


def test_settings_are_read_again_when_the_file_changes(proj):
    """A long-running caller (the LSP server) gets the new settings without clearing caches."""
    assert project.settings_for(proj / "nano.py").vllm_version is None
    (proj / "pyproject.toml").write_text('[tool.flake8-replayssm]\nvllm-version = "0.30.0"\n')
    assert project.settings_for(proj / "nano.py").vllm_version == "0.30.0"
    (proj / "pyproject.toml").write_text('[tool.flake8-replayssm]\nvllm-version = "0.31.0"  # longer\n')
    config = project.settings_for(proj / "nano.py", {"platform": "rocm"})
    assert (config.vllm_version, config.platform, config.project_root) == ("0.31.0", "rocm", proj)


def test_settings_for_raises_one_line_config_errors(proj):
    (proj / "pyproject.toml").write_text("[tool.flake8-replayssm]\nplatform = 5\n")
    with pytest.raises(ConfigError, match=r"platform = 5: expected a string"):
        project.settings_for(proj / "nano.py")


def test_unreadable_directory_in_the_root_search_is_no_traceback(tmp_path, monkeypatch, capsys):
    """A parent directory we may not read (PermissionError on every entry) counts as "no marker"."""
    locked = tmp_path / "locked"
    (locked / "inner").mkdir(parents=True)
    (locked / "inner" / "nano.py").write_text(NANO_SRC)
    real_stat = os.stat

    def stat(path, *args, **kwargs):
        if os.path.dirname(os.fspath(path)) == str(locked):
            raise PermissionError(13, "Permission denied", os.fspath(path))
        return real_stat(path, *args, **kwargs)

    monkeypatch.setattr(os, "stat", stat)
    monkeypatch.chdir(locked / "inner")
    project.clear_caches()
    code, found, _ = check(capsys, "--vllm-version", "0.33.0", "nano.py")
    assert (code, found) == (1, ["RSM008"])


# ---------------------------------------------------------------- flake8, end to end

def test_flake8_and_the_cli_give_the_same_verdict_from_setup_cfg(proj, capsys):
    (proj / "setup.cfg").write_text("[flake8]\nreplayssm-vllm-version = 0.33.0\nreplayssm-ignore = RSM008\n")
    (proj / "falcon.py").write_text(NANO_SRC.replace(NANO, "tiiuae/Falcon-H1-1.5B-Instruct"))
    cli_codes = sorted(check(capsys, ".")[1])
    result = flake8(proj)
    flake8_codes = sorted(line.split(": ")[1].split()[0] for line in result.stdout.splitlines())
    assert cli_codes == flake8_codes == ["RSM001"]


def test_flake8_honours_every_pyproject_key_ignore_included(proj):
    (proj / "pyproject.toml").write_text('[tool.flake8-replayssm]\nignore = ["RSM008"]\n')
    result = flake8(proj)
    assert (result.returncode, result.stdout) == (0, "")


def test_flake8_bad_ini_value_is_an_option_error_naming_the_file(proj):
    (proj / "setup.cfg").write_text("[flake8]\nreplayssm-vllm-version = banana\n")
    result = flake8(proj)
    assert result.returncode == 2 and "Traceback" not in result.stderr
    assert "--replayssm-vllm-version" in result.stderr and "setup.cfg" in result.stderr
    assert "banana" in result.stderr.splitlines()[-1]


def test_flake8_unknown_platform_in_ini_is_an_error(proj):
    (proj / "setup.cfg").write_text("[flake8]\nreplayssm-platform = tpu\n")
    result = flake8(proj)
    assert result.returncode == 2 and "Traceback" not in result.stderr and "tpu" in result.stderr


def test_flake8_bad_pyproject_is_an_error_not_a_silent_plugin(proj):
    (proj / "pyproject.toml").write_text("[tool.flake8-replayssm]\nvllm-version = 0.30\n")
    result = flake8(proj)
    assert result.returncode == 2 and "Traceback" not in result.stderr
    assert "quote it" in result.stderr and "pyproject.toml" in result.stderr


def test_flake8_bad_pyproject_of_a_subproject_is_reported_on_its_files(proj):
    sub = proj / "svc"
    sub.mkdir()
    (sub / "nano.py").write_text(NANO_SRC)
    (sub / "pyproject.toml").write_text('[tool.flake8-replayssm]\nenable = [1, 2]\n')
    result = flake8(proj, "--jobs", "2")
    assert "Traceback" not in result.stderr + result.stdout
    lines = result.stdout.splitlines()
    assert any(line.startswith("./svc/nano.py:1:1: RSM900 invalid settings") for line in lines)
    assert any(line.startswith("./nano.py:2:") and "RSM008" in line for line in lines)
