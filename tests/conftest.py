"""Shared test helpers: judge a command line without any file frontend."""

from __future__ import annotations

import atexit
import os
import shlex
import shutil
import sys
import tempfile
import types

import pytest
from hypothesis import settings

from flake8_replayssm.recognise import launch_from_command
from flake8_replayssm.config import LintConfig
from flake8_replayssm.judging import judge
from flake8_replayssm.model import Command, Span, Word

# parsed data files are kept in a folder of this run (and its subprocesses), never in ~/.cache
_DATA_CACHE = tempfile.mkdtemp(prefix="replayssm-test-cache-")
os.environ.setdefault("FLAKE8_REPLAYSSM_CACHE_DIR", _DATA_CACHE)
atexit.register(shutil.rmtree, _DATA_CACHE, True)

# CI runs the property tests on a fixed set of examples (reproducible); locally they explore
settings.register_profile("ci", derandomize=True, database=None)
if os.environ.get("CI"):
    settings.load_profile("ci")


def command(cmdline: str, env: dict[str, str] | None = None) -> Command:
    """A Command from one line of shell-like text; `$X` words are unknown, `$@` a splat."""
    words, col = [], 0
    for token in shlex.split(cmdline):
        if token in ("$@", "${ARGS[@]}"):
            words.append(Word(None, Span(1, col, 1, col + len(token)), splat=True, label=token))
        elif token.startswith("$"):
            words.append(Word(None, Span(1, col, 1, col + len(token))))
        else:
            words.append(Word(token, Span(1, col, 1, col + len(token))))
        col += len(token) + 1
    env_words = {k: Word(v, Span(1, 0, 1, 1)) for k, v in (env or {}).items()}
    return Command(words, env_words)


def codes(cmdline: str, release: str, env: dict[str, str] | None = None, *,
          platform: str = "cuda", enable: tuple[str, ...] = (), extra_args: str = "closed") -> list[str]:
    launch = launch_from_command(command(cmdline, env))
    assert launch is not None, f"not a launch: {cmdline}"
    config = LintConfig(vllm_version=release, platform=platform, enable=enable, extra_args=extra_args)
    return sorted(f.code for f in judge(launch, config).findings)


@pytest.fixture
def judge_codes():
    return codes


def raw(text: str, span: Span) -> str:
    """The source text a single-line span covers."""
    assert span.line == span.end_line, span
    return text.split("\n")[span.line - 1][span.col:span.end_col]


def texts(command: Command) -> list[str | None]:
    return [w.text for w in command.words]


@pytest.fixture
def recording_shell(monkeypatch):
    """Stand-in shell frontend: space-separated words placed through ``place``."""
    calls: list[tuple[str, dict]] = []

    def commands_in_shell(text, *, place=None, variables=None, base_dir=None):
        calls.append((text, dict(variables or {})))
        words = []
        for row, line in enumerate(text.split("\n")):
            col = 0
            for token in line.split(" "):
                if token and token != "\\":
                    words.append(Word(token, place(row, col, row, col + len(token))))
                col += len(token) + 1
        return [Command(words=words)] if words else []

    module = types.ModuleType("flake8_replayssm.frontends.shell")
    module.commands_in_shell = commands_in_shell
    monkeypatch.setitem(sys.modules, "flake8_replayssm.frontends.shell", module)
    return calls


# --- shared by the fix property tests ------------------------------------------------------
FIX_FAMILIES = [
    ["--use-replayssm", "--use-replayssm=true", "--use-replayssm true"],
    ["--enable-prefix-caching", "--no-enable-prefix-caching", "--disable-prefix-caching"],
    ["--mamba-cache-mode all", "--mamba-cache-mode align", "--mamba-cache-mode none", "--mamba-cache-mode=all"],
    ["--mamba-backend triton", "--mamba-backend flashinfer"],
    ["--mamba-block-size 64"],
    ["--config=cfg.yaml"],
    ["--port 8000"],
]
FIX_RELEASES = ["0.27.0", "0.28.0", "0.29.0", "0.30.0", "0.31.0", "0.32.0", "0.33.0"]


def fixable_left(text: str, kind: str, version: str, flags: list[str]) -> list[str]:
    """Codes a `fix` run should have removed from a launch built from ``flags``."""
    from flake8_replayssm.lint import lint_text

    left = []
    for f in lint_text(text, kind, LintConfig(vllm_version=version)).findings:
        if f.code in ("RSM101", "RSM105", "RSM106"):
            left.append(f.code)
        elif f.code == "RSM002" and "only in align mode" in f.message:
            left.append(f.code)
        elif f.code == "RSM008" and f.message.startswith("Triton ReplaySSM requires Model Runner V1"):
            left.append(f.code)
        elif f.code == "RSM104" and ("choice" in f.message or "--disable-prefix-caching" in f.message):
            left.append(f.code)
        elif f.code == "RSM006" and not any("prefix-caching" in flag or "flashinfer" in flag for flag in flags):
            left.append(f.code)
    return left


# --- shared by the tests that run the CLI in a project -------------------------------------
@pytest.fixture
def no_installed_vllm(monkeypatch):
    """Verdicts must not depend on whether this machine has vllm (or sglang) installed."""
    from flake8_replayssm import target

    monkeypatch.setattr(target, "installed_version", lambda package: None)


@pytest.fixture
def git_project(tmp_path, monkeypatch):
    """An empty project (a .git marker: its root, where pins are looked up), the working directory."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / ".git").mkdir()
    return tmp_path


def write_file(path, text: str):
    """``path`` with ``text`` in it (UTF-8), its folders made."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path
