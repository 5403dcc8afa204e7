"""The conventions CI users type, as ruff and flake8 spell them, one test each.

``--exit-zero``, ``-q/--quiet``, ``--statistics``, ``--output-format`` (``--format``
kept), ``--extend-select``/``--extend-ignore``, ``per-file-ignores``, ``exclude`` /
``extend-exclude`` in the configuration, ``.gitignore`` respected by directory walks
(``--no-respect-gitignore``), colour (``--color``, ``NO_COLOR``, ``FORCE_COLOR``), and a
missing or unreadable path that is an error line of its own while every other file is
still checked.  The CLI runs in-process (``cli.main``); flake8 runs as a child process.

Facts used: on 0.33.0 the plain Nemotron-H launch is RSM008 (Triton ReplaySSM under the
default Model Runner V2), Falcon-H1 with ReplaySSM is RSM001 (+ RSM008 on the Triton/V2
path), and a launch whose model is a variable is RSM201 when that code is enabled.
"""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from flake8_replayssm import cli, colour, target
from flake8_replayssm.gitignore import GitIgnore, parse_line

NANO = "nvidia/NVIDIA-Nemotron-Nano-9B-v2"
FALCON = "tiiuae/Falcon-H1-1.5B-Instruct"
RSM008_SH = f"vllm serve {NANO} --use-replayssm\n"
RSM001_SH = f"vllm serve {FALCON} --use-replayssm\n"
UNRESOLVED_SH = 'VLLM_USE_V2_MODEL_RUNNER=0 vllm serve "$MODEL" --use-replayssm\n'


@pytest.fixture(autouse=True)
def _plain_environment(monkeypatch):
    """Verdicts and colours must not depend on this machine (an installed vLLM, NO_COLOR...)."""
    monkeypatch.setattr(target, "installed_version", lambda package: None)
    for name in ("NO_COLOR", "FORCE_COLOR", "GITHUB_ACTIONS"):
        monkeypatch.delenv(name, raising=False)


@pytest.fixture
def project(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "pyproject.toml").write_text('[tool.flake8-replayssm]\nvllm-version = "0.33.0"\n')
    return tmp_path


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def run(capsys, *args: str) -> tuple[int, str, str]:
    code = cli.main(["check", *args])
    out, err = capsys.readouterr()
    return code, out, err


def found(capsys, *args: str) -> tuple[int, list[tuple[str, str]]]:
    """Exit code and sorted (path relative to the cwd, code) pairs of a JSON run."""
    code, out, _ = run(capsys, "--output-format", "json", *args)
    return code, sorted((os.path.relpath(item["path"]), item["code"]) for item in json.loads(out))


# ---------------------------------------------------------------- exit status and output


def test_exit_zero_keeps_the_findings_and_exits_0(project, capsys):
    write(project / "serve.sh", RSM008_SH)
    assert run(capsys, "serve.sh")[0] == 1
    code, out, _ = run(capsys, "--exit-zero", "serve.sh")
    assert code == 0 and "RSM008" in out
    assert run(capsys, "--exit-zero", "serve.sh", "nope.sh")[0] == 2  # an error is still an error


@pytest.mark.parametrize("flag", ["-q", "--quiet"])
def test_quiet_prints_the_findings_and_nothing_else(project, capsys, flag):
    write(project / "serve.sh", RSM008_SH)
    _, loud, _ = run(capsys, "--vllm-version", "0.40.0", "serve.sh")
    code, quiet, _ = run(capsys, flag, "--vllm-version", "0.40.0", "serve.sh")
    assert code == 1
    assert "Found 1 finding" in loud and "newer than the newest release" in loud
    assert quiet.splitlines() == [line for line in loud.splitlines() if "RSM008" in line]
    write(project / "clean.sh", "echo hello\n")
    assert run(capsys, flag, "clean.sh")[:2] == (0, "")


def test_statistics_count_each_code_most_frequent_first(project, capsys):
    write(project / "a.sh", RSM008_SH + RSM008_SH.replace("serve", "serve  "))
    write(project / "b.sh", RSM001_SH)
    code, out, _ = run(capsys, "--statistics", ".")
    assert code == 1
    rows = [line.split("\t") for line in out.splitlines()]
    assert rows == [["3", "RSM008", "error", "replayssm-model-runner"],
                    ["1", "RSM001", "error", "replayssm-unsupported-architecture"]]
    _, out, _ = run(capsys, "--statistics", "--output-format", "json", ".")
    assert [(item["code"], item["count"]) for item in json.loads(out)] == [("RSM008", 3), ("RSM001", 1)]
    assert run(capsys, "--statistics", "--exit-zero", ".")[0] == 0


def test_output_format_is_ruffs_name_and_format_stays_an_alias(project, capsys):
    write(project / "serve.sh", RSM008_SH)
    _, as_ruff, _ = run(capsys, "--output-format", "json", "serve.sh")
    _, as_before, _ = run(capsys, "--format", "json", "serve.sh")
    assert as_ruff == as_before and json.loads(as_ruff)[0]["code"] == "RSM008"
    assert run(capsys, "--output-format", "github", "serve.sh")[1].startswith("::error file=serve.sh,")
    assert cli.main(["check", "--output-format", "xml", "serve.sh"]) == 2


# ---------------------------------------------------------------- which codes


def test_extend_select_turns_on_an_off_by_default_code(project, capsys):
    write(project / "serve.sh", UNRESOLVED_SH)
    assert found(capsys, "serve.sh") == (0, [])
    assert found(capsys, "--extend-select", "RSM201", "serve.sh") == (1, [("serve.sh", "RSM201")])
    write(project / "pyproject.toml", '[tool.flake8-replayssm]\nvllm-version = "0.33.0"\nextend-select = ["RSM201"]\n')
    assert found(capsys, "serve.sh") == (1, [("serve.sh", "RSM201")])


def test_extend_select_adds_to_select_and_extend_ignore_to_ignore(project, capsys):
    write(project / "a.sh", RSM001_SH)
    write(project / "pyproject.toml", '[tool.flake8-replayssm]\nvllm-version = "0.33.0"\nselect = ["RSM001"]\n')
    assert found(capsys, "a.sh")[1] == [("a.sh", "RSM001")]
    assert found(capsys, "--extend-select", "RSM008", "a.sh")[1] == [("a.sh", "RSM001"), ("a.sh", "RSM008")]
    assert found(capsys, "--select", "RSM", "--extend-ignore", "RSM001", "a.sh")[1] == [("a.sh", "RSM008")]


def test_per_file_ignores_from_the_configuration(project, capsys):
    write(project / "serve.sh", RSM008_SH)
    write(project / "tests" / "serve.sh", RSM008_SH)
    write(project / "tests" / "deep" / "old.sh", RSM001_SH)
    write(project / "pyproject.toml", '[tool.flake8-replayssm]\nvllm-version = "0.33.0"\n'
                                      'per-file-ignores = {"tests/*" = ["RSM008"], "old.sh" = ["RSM001"]}\n')
    assert found(capsys, ".")[1] == [("serve.sh", "RSM008")]
    # the configuration's globs are relative to its own folder, wherever the run starts
    os.chdir(project / "tests")
    assert found(capsys, str(project))[1] == [("../serve.sh", "RSM008")]


def test_per_file_ignores_on_the_command_line_and_negated(project, capsys):
    write(project / "serve.sh", RSM008_SH)
    write(project / "tests" / "serve.sh", RSM008_SH)
    assert found(capsys, "--per-file-ignores", "tests/*:RSM008", ".")[1] == [("serve.sh", "RSM008")]
    assert found(capsys, "--per-file-ignores", "!tests/*:RSM008", ".")[1] == [("tests/serve.sh", "RSM008")]
    assert cli.main(["check", "--per-file-ignores", "RSM008", "."]) == 2  # a code before any glob


def test_exclude_and_extend_exclude_in_the_configuration(project, capsys):
    for name in ("keep.sh", "gen/a.sh", "vendor/b.sh", "docs/generated/c.sh"):
        write(project / name, RSM008_SH)
    write(project / "pyproject.toml", '[tool.flake8-replayssm]\nvllm-version = "0.33.0"\n'
                                      'exclude = ["gen"]\nextend-exclude = ["docs/generated"]\n')
    assert [p for p, _ in found(capsys, ".")[1]] == ["keep.sh", "vendor/b.sh"]
    # --exclude replaces the configuration's exclude; extend-exclude still adds
    assert [p for p, _ in found(capsys, "--exclude", "vendor", ".")[1]] == ["gen/a.sh", "keep.sh"]
    assert [p for p, _ in found(capsys, "--extend-exclude", "vendor", ".")[1]] == ["keep.sh"]


# ---------------------------------------------------------------- .gitignore


@pytest.fixture
def repository(project):
    (project / ".git").mkdir()
    write(project / ".gitignore", "build/\n*.generated.sh\n")
    write(project / "build" / "lib" / "serve.sh", RSM008_SH)
    write(project / "src" / "serve.sh", RSM008_SH)
    write(project / "src" / "old.generated.sh", RSM008_SH)
    return project


def test_a_gitignored_build_folder_is_not_linted(repository, capsys):
    assert [p for p, _ in found(capsys, ".")[1]] == ["src/serve.sh"]


def test_explicit_files_are_always_linted(repository, capsys):
    assert [p for p, _ in found(capsys, "build/lib/serve.sh", "src/old.generated.sh")[1]] == [
        "build/lib/serve.sh", "src/old.generated.sh"]


def test_no_respect_gitignore_lints_everything(repository, capsys):
    assert [p for p, _ in found(capsys, "--no-respect-gitignore", ".")[1]] == [
        "build/lib/serve.sh", "src/old.generated.sh", "src/serve.sh"]
    write(repository / "pyproject.toml", '[tool.flake8-replayssm]\nvllm-version = "0.33.0"\n'
                                         "respect-gitignore = false\n")
    assert len(found(capsys, ".")[1]) == 3
    assert len(found(capsys, "--respect-gitignore", ".")[1]) == 1  # the command line wins


def test_nested_gitignore_and_negation(repository, capsys):
    write(repository / "src" / ".gitignore", "*.sh\n!keep.sh\n")
    write(repository / "src" / "keep.sh", RSM008_SH)
    write(repository / ".git" / "info" / "exclude", "scratch/\n")
    write(repository / "scratch" / "try.sh", RSM008_SH)
    assert [p for p, _ in found(capsys, ".")[1]] == ["src/keep.sh"]
    # walking from a folder inside the work tree still reads the .gitignore files above it
    assert [p for p, _ in found(capsys, "src")[1]] == ["src/keep.sh"]


def test_gitignore_means_nothing_outside_a_work_tree(project, capsys):
    write(project / ".gitignore", "build/\n")
    write(project / "build" / "serve.sh", RSM008_SH)
    assert [p for p, _ in found(capsys, ".")[1]] == ["build/serve.sh"]


@pytest.mark.parametrize(("pattern", "path", "is_folder", "ignored"), [
    ("build/", "build", True, True),
    ("build/", "build", False, False),          # a trailing / matches folders only
    ("build", "src/build", True, True),          # no / before the end: any depth
    ("/build", "src/build", True, False),        # a leading / anchors to the .gitignore's folder
    ("doc/frotz", "doc/frotz", True, True),
    ("doc/frotz", "a/doc/frotz", True, False),   # a / in the middle anchors too
    ("*.sh", "a/b/c.sh", False, True),
    ("a/*.sh", "a/b/c.sh", False, False),        # * does not cross /
    ("a/**/c.sh", "a/c.sh", False, True),        # **/ may match no folder
    ("a/**/c.sh", "a/b/d/c.sh", False, True),
    ("**/gen", "x/y/gen", True, True),
    ("logs/**", "logs/x/y.sh", False, True),
    ("file?.sh", "file1.sh", False, True),
    ("file[0-9].sh", "filex.sh", False, False),
    ("\\#hash", "#hash", False, True),
    ("# comment", "# comment", False, False),
])
def test_gitignore_patterns_follow_git(tmp_path, pattern, path, is_folder, ignored):
    (tmp_path / ".git").mkdir()
    (tmp_path / ".gitignore").write_text(pattern + "\n")
    assert GitIgnore(str(tmp_path)).ignored(str(tmp_path / path), is_folder) is ignored


def test_gitignore_blank_and_comment_lines_are_no_patterns():
    assert parse_line("") is None and parse_line("   ") is None and parse_line("# x") is None
    assert parse_line("!keep.sh").negated


# ---------------------------------------------------------------- colour


class _Stream(io.StringIO):
    def __init__(self, tty: bool) -> None:
        super().__init__()
        self.tty = tty

    def isatty(self) -> bool:
        return self.tty


@pytest.mark.parametrize(("choice", "tty", "environ", "expected"), [
    ("auto", True, {}, True),
    ("auto", False, {}, False),                                  # never colour a pipe or a file
    ("auto", True, {"NO_COLOR": "1"}, False),
    ("auto", False, {"FORCE_COLOR": "1"}, True),                 # a CI log that shows colours
    ("auto", False, {"FORCE_COLOR": "0"}, False),
    ("auto", True, {"NO_COLOR": "1", "FORCE_COLOR": "1"}, False),
    ("always", False, {"NO_COLOR": "1"}, True),
    ("never", True, {"FORCE_COLOR": "1"}, False),
])
def test_when_to_colour(choice, tty, environ, expected):
    assert colour.wanted(choice, _Stream(tty), environ) is expected


def test_colour_goes_around_the_parts_of_a_line(project, capsys, monkeypatch):
    write(project / "serve.sh", RSM008_SH)
    _, plain, _ = run(capsys, "serve.sh")
    assert "\x1b" not in plain  # capsys is not a terminal
    _, painted, _ = run(capsys, "--color", "always", "serve.sh")
    assert "\x1b[1;31mRSM008\x1b[0m" in painted and painted.startswith("\x1b[1mserve.sh:1:")
    assert colour_free(painted) == plain
    monkeypatch.setenv("FORCE_COLOR", "1")
    assert run(capsys, "serve.sh")[1] == painted
    monkeypatch.setenv("NO_COLOR", "1")
    assert run(capsys, "serve.sh")[1] == plain
    assert "\x1b" not in run(capsys, "--color", "always", "--output-format", "json", "serve.sh")[1]


def colour_free(text: str) -> str:
    import re

    return re.sub("\x1b\\[[0-9;]*m", "", text)


# ---------------------------------------------------------------- paths that cannot be checked


def test_a_missing_path_is_an_error_line_and_the_others_are_checked(project, capsys):
    write(project / "good.sh", RSM008_SH)
    code, out, err = run(capsys, "--output-format", "json", "nope.sh", "good.sh")
    assert code == 2
    assert [item["code"] for item in json.loads(out)] == ["RSM008"]
    assert err.splitlines() == ["replayssm-lint: error: nope.sh: no such file or directory"]


def test_an_unreadable_path_is_an_error_line_too(project, capsys, monkeypatch):
    write(project / "good.sh", RSM008_SH)
    write(project / "locked" / "serve.sh", RSM008_SH)
    real = os.access
    monkeypatch.setattr(os, "access", lambda path, mode: "locked" not in str(path) and real(path, mode))
    code, out, err = run(capsys, "locked", "good.sh")
    assert code == 2 and "good.sh:1:" in out
    assert err.splitlines() == ["replayssm-lint: error: locked: permission denied"]


def test_fix_goes_on_past_a_missing_path(project, capsys):
    good = write(project / "good.sh", RSM008_SH)
    code = cli.main(["fix", "nope.sh", "good.sh"])
    out, err = capsys.readouterr()
    assert code == 2 and "nope.sh: no such file or directory" in err
    assert good.read_text().startswith("VLLM_USE_V2_MODEL_RUNNER=0 ")


# ---------------------------------------------------------------- flake8


def flake8(cwd: Path, *args: str) -> list[str]:
    proc = subprocess.run([sys.executable, "-m", "flake8", "--select", "RSM", *args, "launch.py"], cwd=cwd,
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode in (0, 1), proc.stderr
    return [line.split(": ", 1)[1].split()[0] for line in proc.stdout.splitlines()]


def test_flake8_extend_select_and_enable_extensions_turn_rsm201_on(tmp_path):
    (tmp_path / "launch.py").write_text(
        "import os, sys\nfrom vllm import LLM\nos.environ['VLLM_USE_V2_MODEL_RUNNER'] = '0'\n"
        "llm = LLM(sys.argv[1], use_replayssm=True)\n")
    (tmp_path / "setup.cfg").write_text("[flake8]\nreplayssm-vllm-version = 0.33.0\n")
    assert flake8(tmp_path) == []
    assert flake8(tmp_path, "--extend-select", "RSM201") == ["RSM201"]
    assert flake8(tmp_path, "--enable-extensions", "RSM201") == ["RSM201"]
    assert flake8(tmp_path, "--extend-select", "RSM") == []  # the plugin's prefix only says "this plugin"
    (tmp_path / "setup.cfg").write_text("[flake8]\nreplayssm-vllm-version = 0.33.0\nenable-extensions = RSM201\n")
    assert flake8(tmp_path) == ["RSM201"]
