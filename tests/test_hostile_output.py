"""Hostile inputs, second round (issue 20): output nobody can forge, file names that are not
options, a language server that survives its input, reads the linter promised not to make, and
odd bytes.

The linter runs in CI on pull requests from strangers, so file names, file contents and
settings files are written by whoever opened the pull request.  Every probe that runs the CLI
runs it in a child process under CPU, memory and wall-clock limits.  What GitHub's runner reads
as a workflow command is decided by :func:`runner_commands`, which follows the runner's own
parser (actions/runner ``ActionCommand.TryParseV2``/``TryParse``): a line that starts with
``::`` once leading blanks are trimmed, or one that holds ``##[`` anywhere; the runner cuts
its input into lines at ``\\n``, ``\\r\\n`` and a lone ``\\r``.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import threading
import time
from pathlib import Path
from urllib.parse import unquote_to_bytes

import pytest
import yaml

from flake8_replayssm import data_files
from flake8_replayssm.config import LintConfig
from flake8_replayssm.escaping import EscapingFormatter, diff_path, line, shown
from flake8_replayssm.lint import lint_text

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="resource limits, FIFOs and odd names are POSIX")

ROOT = Path(__file__).resolve().parent.parent
NANO = "nvidia/NVIDIA-Nemotron-Nano-9B-v2"
LAUNCH = f"vllm serve {NANO} --use-replayssm\n"  # RSM008 on 0.33.0
#: every probe: wall seconds, CPU seconds, address space (bytes)
WALL, CPU, MEMORY = 60, 30, 2_000_000_000


def _limits(memory: int = MEMORY) -> None:
    import resource

    resource.setrlimit(resource.RLIMIT_CPU, (CPU, CPU))
    resource.setrlimit(resource.RLIMIT_AS, (memory, memory))


def cli(cwd: Path, *args: str | bytes, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[bytes]:
    """``replayssm-lint ARGS`` in a bounded child; bytes out, so nothing is decoded for us."""
    proc = subprocess.run([sys.executable, "-m", "flake8_replayssm", *args], cwd=cwd, capture_output=True,
                          stdin=subprocess.DEVNULL, timeout=WALL, preexec_fn=_limits, env=env)
    assert proc.returncode in (0, 1, 2), f"killed ({proc.returncode}): {proc.stderr[-500:]!r}"
    assert b"Traceback" not in proc.stderr and b"internal error" not in proc.stderr, proc.stderr[-2000:]
    return proc


def runner_commands(output: bytes) -> list[tuple[str, dict[str, str], str]]:
    """(name, properties, data) of every workflow command GitHub's runner reads in ``output``."""
    found = []
    for text in re.split(r"\r\n|\r|\n", output.decode("utf-8", "replace")):
        trimmed = text.lstrip()
        if trimmed.startswith("::") and trimmed.find("::", 2) >= 0:
            end = trimmed.find("::", 2)
            name, _, props = trimmed[2:end].partition(" ")
            properties = {}
            for item in filter(None, props.split(",")):
                key, _, value = item.partition("=")
                properties[key] = (value.replace("%0D", "\r").replace("%0A", "\n").replace("%3A", ":")
                                   .replace("%2C", ",").replace("%25", "%"))
            data = trimmed[end + 2:].replace("%0D", "\r").replace("%0A", "\n").replace("%25", "%")
            found.append((name, properties, data))
        elif "##[" in text and "]" in text[text.index("##["):]:
            start = text.index("##[") + 3
            found.append((text[start:text.index("]", start)].split(" ")[0], {}, "legacy"))
    return found


def as_github_file(path: str) -> str:
    """The ``file`` property the runner decodes for ``path``: newlines and CRs exactly (GitHub's
    %-encoding carries them), any other control character in the display form."""
    return "".join(part if part in ("\r", "\n") else shown(part) for part in re.split(r"([\r\n])", path))


def annotations_only(proc: subprocess.CompletedProcess[bytes], paths: set[str]) -> None:
    """The runner reads exactly the annotations, each on the file it names, and nothing else."""
    commands = runner_commands(proc.stdout)
    assert commands and {name for name, _, _ in commands} <= {"error", "warning", "notice"}, commands
    assert {props["file"] for _, props, _ in commands} == {as_github_file(p) for p in paths}
    assert runner_commands(proc.stderr) == []


def no_control_characters(output: bytes) -> None:
    assert not re.search(rb"[\x00-\x09\x0b-\x1f\x7f]", output), output[:2000]
    assert b"##[" not in output


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    (tmp_path / ".git").mkdir()
    return tmp_path


# ===================================================================== 1. output that cannot be forged

FORGED = "forged.sh:1:1: RSM001 error: made up"
HOSTILE_NAMES = {
    "newline": f"a\n{FORGED}\n.sh",
    "carriage-return": f"a\r{FORGED}\r.sh",
    "stop-commands": "::stop-commands::pwned.sh",
    "blanks-then-command": "  ::error file=x::forged.sh",
    "legacy-command": "##[stop-commands]pwned.sh",
    "terminal-escapes": "\x1b[2J\x1b]0;pwned\x07\x1b[31m.sh",
    "bidi": "a\u202eetacol.sh",
}


@pytest.mark.parametrize("name", sorted(HOSTILE_NAMES))
def test_a_file_name_forges_no_line_no_escape_and_no_workflow_command(tree, name):
    """Named on the command line, as pre-commit names files: the name starts the text line."""
    hostile = HOSTILE_NAMES[name]
    (tree / hostile).write_text(LAUNCH)
    (tree / "good.sh").write_text(LAUNCH)
    paths = {hostile, "good.sh"}
    for fmt in ("text", "github", "json", "sarif"):
        proc = cli(tree, "check", "--format", fmt, "--vllm-version", "0.33.0", "--verbose", "--show-launches",
                   "--", *sorted(paths))
        assert proc.returncode == 1, proc.stderr
        no_control_characters(proc.stdout + proc.stderr)
        if fmt == "github":
            annotations_only(proc, paths)
            continue
        assert runner_commands(proc.stdout) == [] and runner_commands(proc.stderr) == []
        if fmt == "text":  # two findings, two launches, the count: nothing else, nothing made up
            lines = proc.stdout.decode().split("\n")
            assert lines[-1] == "" and len(lines) == 6, lines
            assert [t for t in lines if ": RSM008 error: " in t].__len__() == 2
            assert [t for t in lines if ": launch vllm serve: RSM008; " in t].__len__() == 2
            assert lines[2].startswith("Found 2 findings")
        elif fmt == "json":  # JSON strings hold the name exactly
            doc = json.loads(proc.stdout.decode("utf-8"))
            assert {f["path"] for f in doc["findings"]} == paths == {n["path"] for n in doc["launches"]}
        else:
            doc = json.loads(proc.stdout.decode("utf-8"))
            uris = {r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] for r in doc["runs"][0]["results"]}
            assert {os.fsdecode(unquote_to_bytes(uri)) for uri in uris} == paths
    for line_text in proc.stderr.decode().splitlines():
        assert line_text.startswith("replayssm-lint: ")


def test_a_name_that_is_not_utf8_is_valid_json_and_sarif(tree):
    raw = b"caf\xe9.sh"
    (tree / os.fsdecode(raw)).write_text(LAUNCH)
    escaped = "caf\\xe9.sh"  # the display form of the byte that is not UTF-8
    for fmt in ("json", "sarif", "text", "github"):
        proc = cli(tree, "check", "--format", fmt, "--vllm-version", "0.33.0", "--show-launches", raw)
        assert proc.returncode == 1 and proc.stdout, (fmt, proc.stderr)
        out = proc.stdout.decode("utf-8")  # strict: every byte written is UTF-8
        if fmt == "text":
            assert out.startswith(escaped + ":1:46: RSM008 error: ")
        elif fmt == "github":
            annotations_only(proc, {escaped})
        else:
            doc = json.loads(out)
            json.dumps(doc, ensure_ascii=False).encode("utf-8")  # no lone surrogate anywhere
        if fmt == "json":
            assert doc["findings"][0]["path"] == escaped and doc["launches"][0]["path"] == escaped
        if fmt == "sarif":
            (result,) = doc["runs"][0]["results"]
            uri = result["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
            assert unquote_to_bytes(uri) == raw  # the URI keeps the real bytes


def test_words_from_a_file_forge_nothing_in_messages_notes_and_inventory(tree):
    """Model strings and values quoted in messages, --verbose notes and --show-launches lines."""
    (tree / "serve.sh").write_text(
        f"vllm serve {NANO} --use-replayssm --mamba-backend $'tri\\x1b[2Jton\\n::stop-commands::pwn'\n"
        "vllm serve $'org/m\\x1b[31m\\n::error::forged' --use-replayssm --use-replayssm=$'yes\\n##[error]x'\n")
    (tree / "run.py").write_text('from vllm import LLM\nLLM("org/m\\r::warning::forged\\u202e", use_replayssm=True)\n')
    for fmt in ("text", "github"):
        proc = cli(tree, "check", "--format", fmt, "--vllm-version", "0.33.0", "--verbose", "--show-launches", ".")
        assert proc.returncode == 1
        no_control_characters(proc.stdout + proc.stderr)
        assert "\u202e" not in (proc.stdout + proc.stderr).decode()
        if fmt == "github":
            annotations_only(proc, {"./serve.sh", "./run.py"})
        else:
            assert runner_commands(proc.stdout + proc.stderr) == []


def test_settings_values_and_arguments_in_errors_forge_nothing(tree):
    (tree / "serve.sh").write_text(LAUNCH)
    (tree / "pyproject.toml").write_text('[tool.flake8-replayssm]\n'
                                         'platform = "cuda\\n::stop-commands::pwn\\u001b[2J"\n')
    for args in (["check", "."], ["fix", "."], ["check", "--bogus\n::stop-commands::pwn", "."],
                 ["explain", "RSM\n::stop-commands::pwn"], ["check", "--format", "x\r::error::y", "."]):
        proc = cli(tree, *args)
        assert proc.returncode == 2, args
        no_control_characters(proc.stderr)
        assert runner_commands(proc.stdout + proc.stderr) == [], (args, proc.stderr)


def test_github_properties_name_the_real_file(tree):
    """%-encoding per GitHub's rules: the runner decodes the file property back to the name."""
    name = "a%0A,b:c\nd.sh"
    (tree / name).write_text(LAUNCH)
    proc = cli(tree, "check", "--format", "github", "--vllm-version", "0.33.0", name)
    annotations_only(proc, {name})


def test_the_diff_quotes_a_file_name_as_git_does_and_still_applies(tree):
    if shutil.which("git") is None:
        pytest.skip("git applies the diff")
    folder = tree / "z\n+++ b"
    folder.mkdir()
    (folder / "other.sh").write_text(LAUNCH)
    proc = cli(tree, "fix", "--diff", "--vllm-version", "0.33.0", "--", "z\n+++ b")
    assert proc.returncode == 1
    headers = [t for t in proc.stdout.decode().split("\n") if t.startswith(("---", "+++"))]
    assert headers == ['--- "a/z\\n+++ b/other.sh"', '+++ "b/z\\n+++ b/other.sh"']
    git_apply(tree, proc.stdout)
    assert (folder / "other.sh").read_text().startswith("VLLM_USE_V2_MODEL_RUNNER=0 vllm serve")


def git_apply(folder: Path, patch: bytes) -> None:
    """``git apply`` as a patch tool (outside any repository)."""
    env = {**os.environ, "GIT_CEILING_DIRECTORIES": str(folder.parent), "GIT_DIR": str(folder / "no-repo")}
    done = subprocess.run(["git", "apply", "-"], cwd=folder, input=patch, capture_output=True, timeout=WALL, env=env)
    assert done.returncode == 0, done.stderr


def test_the_diff_in_a_github_actions_log_runs_no_command_of_the_files(tree):
    """A diff quotes the file's lines as they are; in Actions it is bracketed by stop-commands."""
    (tree / "serve.sh").write_text("::error file=x::forged\n##[add-mask]secret\n" + LAUNCH + "::stop-commands::a\n")
    env = {**os.environ, "GITHUB_ACTIONS": "true"}
    proc = cli(tree, "fix", "--diff", "--vllm-version", "0.33.0", "serve.sh", env=env)
    assert proc.returncode == 1
    commands = runner_commands(proc.stdout)
    (stop, _, token), (resume, _, _) = commands[0], commands[-1]
    assert stop == "stop-commands" and resume == token and token not in (tree / "serve.sh").read_text()
    # what the runner does with everything in between: nothing, until it reads the token
    assert all(name != token for name, _, _ in commands[1:-1])
    if shutil.which("git"):
        git_apply(tree, proc.stdout)
        assert "VLLM_USE_V2_MODEL_RUNNER=0" in (tree / "serve.sh").read_text()
    plain = cli(tree, "fix", "--diff", "--vllm-version", "0.33.0", "serve.sh",
                env={k: v for k, v in os.environ.items() if k != "GITHUB_ACTIONS"})
    assert b"stop-commands::replayssm" not in plain.stdout  # outside Actions the diff is only a diff


def test_the_diff_cuts_lines_at_newlines_only(tree):
    """A form feed or a lone CR inside a line is part of that line, as for diff and patch."""
    (tree / "serve.sh").write_text("# a\x0cb\x1c\n" + LAUNCH)
    proc = cli(tree, "fix", "--diff", "--vllm-version", "0.33.0", "serve.sh")
    assert b" # a\x0cb\x1c\n" in proc.stdout and b"No newline" not in proc.stdout


def test_flake8_messages_are_one_line_without_control_characters(tree):
    (tree / "run.py").write_text(
        "import subprocess\nsubprocess.run(['vllm', 'serve', 'nvidia/NVIDIA-Nemotron-Nano-9B-v2', "
        "'--use-replayssm', '--mamba-backend', 'tri\\x1b[2Jton\\n::stop-commands::pwn'])\n")
    proc = subprocess.run([sys.executable, "-m", "flake8", "--select", "RSM", "--replayssm-vllm-version",
                           "0.33.0", "run.py"], cwd=tree, capture_output=True, timeout=WALL, preexec_fn=_limits)
    assert b"RSM106" in proc.stdout, proc.stdout + proc.stderr
    no_control_characters(proc.stdout)
    assert runner_commands(proc.stdout) == []


def test_escaping_functions():
    assert shown("a\nb\r\tc\x1b[0m\x7f\x9b") == "a\\nb\\r\\tc\\x1b[0m\\x7f\\x9b"
    assert shown("caf\udce9") == "caf\\xe9" and shown("caf\uf7e9") == "caf\\xe9"
    assert shown("\u202e\u2066\u2028") == "\\u202e\\u2066\\u2028"
    assert shown("x ##[error]y") == "x ##\\x5b" + "error]y"
    assert line("::stop-commands::x") == "\\x3a:stop-commands::x"
    assert line(" \u3000::x") == " \u3000\\x3a:x" and line("a::b") == "a::b"
    assert diff_path("b/plain name.sh") == "b/plain name.sh"
    assert diff_path('b/x\ny"\\\x01\u00e9') == '"b/x\\ny\\"\\\\\\001\\303\\251"'
    assert diff_path(os.fsdecode(b"b/\xe9")) == '"b/\\351"'


def test_the_language_servers_log_records_stay_one_record_each():
    import logging

    try:
        raise ValueError("bad\n::stop-commands::pwn")
    except ValueError:
        record = logging.LogRecord("pygls", logging.ERROR, __file__, 1, "uri %s\x1b[2J\n::error::x",
                                   ("file:///a\nb",), sys.exc_info())
    text = EscapingFormatter().format(record)
    head, *rest = text.split("\n")
    assert head.startswith("ERROR:pygls:uri file:///a\\nb\\x1b[2J\\n::error::x")
    assert rest and all(t.startswith("    | ") for t in rest)
    assert runner_commands(text.encode()) == [] and "\x1b" not in text


# ===================================================================== 2. a file name that is an option

def _hook(hook_id: str) -> list[str]:
    (hook,) = [h for h in yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text()) if h["id"] == hook_id]
    return shlex.split(hook["entry"]) + list(hook.get("args", []))


def _as_pre_commit_runs(cwd: Path, hook_id: str, files: list[str]) -> subprocess.CompletedProcess[bytes]:
    """The hook's command as pre-commit builds it: entry, args, then the file names."""
    argv = _hook(hook_id)
    assert argv[0] == "replayssm-lint"
    return cli(cwd, *argv[1:], *files)


OPTION_NAMES = ["--ignore=RSM", "--exclude=*", "--select=RSM9", "--format=json", "--unsafe", "--help", "-"]


def test_pre_commit_file_names_that_look_like_options_are_linted_not_obeyed(tree):
    (tree / "serve.sh").write_text(LAUNCH)
    for name in OPTION_NAMES:
        (tree / name).write_text("#!/bin/bash\n" + LAUNCH)  # a shell script by its shebang
    proc = _as_pre_commit_runs(tree, "replayssm-lint", ["serve.sh", *OPTION_NAMES])
    assert proc.returncode == 1, proc.stderr
    out = proc.stdout.decode()
    assert out.count(": RSM008 error: ") == 1 + len(OPTION_NAMES), out  # every file, in text output
    for name in OPTION_NAMES:
        assert f"{name}:2:" in out


def test_the_fix_hook_does_not_take_a_file_named_unsafe_as_an_option(tree):
    unsafe_only = "VLLM_USE_V2_MODEL_RUNNER=0 vllm serve Qwen/Qwen3-8B --use-replayssm\n"  # RSM001: unsafe fix
    (tree / "serve.sh").write_text(unsafe_only)
    (tree / "--unsafe").write_text("not a launch\n")
    _as_pre_commit_runs(tree, "replayssm-lint-fix", ["serve.sh", "--unsafe"])
    assert (tree / "serve.sh").read_text() == unsafe_only


@pytest.mark.parametrize("args", [["check", "--", "--vllm-version"], ["fix", "--", "--vllm-version"]])
def test_after_double_dash_an_option_is_a_file_name_and_the_error_says_so(tree, args):
    proc = cli(tree, *args)
    assert proc.returncode == 2 and b"error: --vllm-version: no such file or directory" in proc.stderr
    assert b"after `--` every argument is a file name" in proc.stderr


# ===================================================================== 3. the language server

class RawClient:
    """A language client on the server's stdio, bytes as they are (no client library fixes them)."""

    def __init__(self, cwd: Path, memory: int = 1_000_000_000) -> None:
        self.proc = subprocess.Popen([sys.executable, "-m", "flake8_replayssm", "server"], cwd=cwd,
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                     preexec_fn=lambda: _limits(memory))
        self.messages: list[dict] = []
        self.stderr = b""
        threading.Thread(target=self._read, daemon=True).start()
        threading.Thread(target=self._read_stderr, daemon=True).start()

    def _read(self) -> None:
        out = self.proc.stdout
        assert out is not None
        while True:
            header = b""
            while not header.endswith(b"\r\n\r\n"):
                byte = out.read(1)
                if not byte:
                    return
                header += byte
            length = int(re.search(rb"Content-Length: (\d+)", header).group(1))
            self.messages.append(json.loads(out.read(length)))

    def _read_stderr(self) -> None:
        assert self.proc.stderr is not None
        for chunk in iter(lambda: self.proc.stderr.read(4096), b""):
            self.stderr += chunk

    def send_raw(self, data: bytes) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(data)
        self.proc.stdin.flush()

    def send(self, body: str) -> None:
        raw = body.encode()
        self.send_raw(b"Content-Length: %d\r\n\r\n" % len(raw) + raw)

    def wait(self, predicate, what: str, timeout: float = WALL) -> dict:  # type: ignore[no-untyped-def]
        """The first message so far (or to come) that ``predicate`` accepts."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            found = next((m for m in list(self.messages) if predicate(m)), None)
            if found is not None:
                return found
            assert self.proc.poll() is None, f"the server exited ({self.proc.returncode}): {self.stderr[-2000:]!r}"
            time.sleep(0.02)
        raise AssertionError(f"no {what} within {timeout} s: {self.messages[-5:]}")

    def close(self) -> int:
        if self.proc.stdin is not None:
            self.proc.stdin.close()
        try:
            return self.proc.wait(timeout=WALL)
        finally:
            if self.proc.poll() is None:
                self.proc.kill()


def _initialize(root: Path, options: str = "null") -> str:
    return ('{"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"processId": null, '
            f'"rootUri": "{root.as_uri()}", "capabilities": {{}}, "initializationOptions": {options}}}}}')


def _did_open(uri: str, text: str, version: int = 1) -> str:
    return json.dumps({"jsonrpc": "2.0", "method": "textDocument/didOpen", "params": {"textDocument": {
        "uri": uri, "languageId": "shellscript", "version": version, "text": text}}})


def _did_change(uri: str, text: str, version: int) -> str:
    return json.dumps({"jsonrpc": "2.0", "method": "textDocument/didChange", "params": {
        "textDocument": {"uri": uri, "version": version}, "contentChanges": [{"text": text}]}})


def _diagnostics(uri: str, version: int):  # type: ignore[no-untyped-def]
    return lambda m: (m.get("method") == "textDocument/publishDiagnostics" and m["params"]["uri"] == uri
                      and m["params"].get("version") == version)


FLASHINFER = f"vllm serve {NANO} --use-replayssm --mamba-backend flashinfer\n"  # RSM004 on 0.28, RSM002 on 0.33


def test_a_huge_content_length_is_neither_allocated_nor_fatal(tree):
    """pygls read the whole body in one call: 2 GB under a 1 GB limit was a MemoryError, and the
    server was gone.  Now the body is read in small chunks; an input that ends inside it ends
    the session as any end of input does."""
    client = RawClient(tree)
    client.send(_initialize(tree))
    client.wait(lambda m: m.get("id") == 1, "the answer to initialize")
    client.send_raw(b"Content-Length: 2000000000\r\n\r\n" + b"x" * 1000)
    assert client.close() == 0  # the end of the input inside the body: a normal end
    assert b"MemoryError" not in client.stderr and b"Traceback" not in client.stderr, client.stderr


def test_a_message_over_the_bound_is_skipped_and_the_next_one_answered(tree):
    from flake8_replayssm.lsp.transport import MAX_MESSAGE_BYTES

    client = RawClient(tree)
    client.send_raw(b"Content-Length: %d\r\n\r\n" % (MAX_MESSAGE_BYTES + 1) + b" " * (MAX_MESSAGE_BYTES + 1))
    client.send_raw(b"Content-Length: 99999999999999999999999x\r\n")  # not a header pygls reads: ignored
    client.send(_initialize(tree))
    reply = client.wait(lambda m: m.get("id") == 1, "the answer to initialize")
    assert "capabilities" in reply["result"]
    client.close()
    assert b"skipped a message of" in client.stderr


@pytest.mark.parametrize("debounce", ["1e400", "1e20"])  # infinity (was fatal), and a wait with no end
def test_one_bad_setting_is_left_out_with_a_warning_and_the_rest_applies(tree, debounce):
    client = RawClient(tree)
    client.send(_initialize(tree, f'{{"debounce": {debounce}, "vllmVersion": "0.28.0"}}'))
    reply = client.wait(lambda m: m.get("id") == 1, "the answer to initialize")
    assert "result" in reply and "capabilities" in reply["result"], reply
    client.send('{"jsonrpc": "2.0", "method": "initialized", "params": {}}')
    client.wait(lambda m: m.get("method") == "window/showMessage" and "debounce" in m["params"]["message"],
                "a warning about the setting")
    uri = (tree / "serve.sh").as_uri()
    client.send(_did_open(uri, FLASHINFER))
    first = client.wait(_diagnostics(uri, 1), "diagnostics")
    assert [d["code"] for d in first["params"]["diagnostics"]] == ["RSM004"]  # vllmVersion 0.28.0 applies
    # an edit right after is linted after the default debounce, not after 1e20 ms
    client.send(_did_change(uri, LAUNCH.replace("vllm serve", "vllm  serve"), 2))
    client.wait(_diagnostics(uri, 2), "diagnostics of the edit", timeout=10)
    # pushed later, the same: the setting is left out, the server answers on
    pushed = {"settings": {"replayssm": {"debounce": float("inf"), "vllmVersion": "0.33.0"}}}
    client.send(json.dumps({"jsonrpc": "2.0", "method": "workspace/didChangeConfiguration", "params": pushed})
                .replace("Infinity", "1e400"))
    client.send(_did_change(uri, FLASHINFER, 3))
    third = client.wait(_diagnostics(uri, 3), "diagnostics after the settings change")
    assert [d["code"] for d in third["params"]["diagnostics"]] == ["RSM002"]
    client.close()


# ===================================================================== 4. reads it promised not to make

SECRET_ARCH = "LlamaForCausalLM"  # a plain causal LM: as a draft it changes Kimi's verdict on 0.29
KIMI = "moonshotai/Kimi-Linear-48B-A3B-Instruct"


@pytest.fixture
def outside(tmp_path: Path) -> tuple[Path, Path]:
    proj, away = tmp_path / "proj", tmp_path / "outside"
    (proj / ".git").mkdir(parents=True)
    for name, config in {"secret-model": {"architectures": ["TOPSECRET_ARCH_0xC0FFEE"]},
                         "draft": {"architectures": [SECRET_ARCH], "note": "TOPSECRET_CONTENT"},
                         "granite": {"architectures": ["GraniteMoeHybridForCausalLM"], "layer_types": ["mamba"]}
                         }.items():
        (away / name).mkdir(parents=True)
        (away / name / "config.json").write_text(json.dumps(config))
    os.symlink(away / "secret-model", proj / "linked-model")  # inside by name, outside for real
    hub_named = away / "ibm-granite" / "granite-4.0-h-tiny"  # a Hub id, as a folder of the working directory
    hub_named.mkdir(parents=True)
    (hub_named / "config.json").write_text('{"layer_types": ["attention"]}')
    return proj, away


def test_a_model_folder_outside_the_project_is_not_read(outside):
    proj, away = outside
    (proj / "serve.sh").write_text(
        f"VLLM_USE_V2_MODEL_RUNNER=0 vllm serve ../outside/secret-model --use-replayssm\n"
        f"VLLM_USE_V2_MODEL_RUNNER=0 vllm serve {away}/secret-model --use-replayssm\n"
        "VLLM_USE_V2_MODEL_RUNNER=0 vllm serve ./linked-model --use-replayssm\n"
        "VLLM_USE_V2_MODEL_RUNNER=0 vllm serve ~/secret-model --use-replayssm\n"
        f"vllm serve {KIMI} --use-replayssm "
        '--speculative-config \'{"model": "../outside/draft", "num_speculative_tokens": 3}\'\n'
        "sglang serve --model-path ../outside/granite --enable-linear-replayssm\n")
    env = {**os.environ, "HOME": str(away)}
    for fmt in ("text", "json"):
        proc = cli(proj, "check", "--format", fmt, "--vllm-version", "0.29.0", "--verbose", "--show-launches",
                   "--enable", "RSM201", ".", env=env)
        said = (proc.stdout + proc.stderr).decode()
        assert "TOPSECRET" not in said and "GraniteMoeHybrid" not in said, said
        assert "outside the project and the model folders: not read" in said
    # the draft would have made the Kimi launch RSM008 on 0.29 (a plain causal LM is draft_model)
    found = json.loads(cli(proj, "check", "--format", "json", "--vllm-version", "0.29.0", ".", env=env).stdout)
    assert not any(f["code"] == "RSM008" and f["line"] == 5 for f in found)


def test_a_configured_model_folder_outside_the_project_is_read(outside):
    proj, away = outside
    (proj / "serve.sh").write_text("VLLM_USE_V2_MODEL_RUNNER=0 vllm serve secret-model --use-replayssm\n")
    proc = cli(proj, "check", "--verbose", "--vllm-version", "0.33.0", "--model-dirs", str(away), ".")
    assert "TOPSECRET_ARCH_0xC0FFEE" in proc.stderr.decode()  # the user's own option: read


@pytest.mark.parametrize("written", ["{away}", "../outside", "models-link"])
def test_a_settings_file_cannot_point_model_dirs_outside_its_project(outside, written):
    """A pull request's pyproject.toml is not the user's option: a model folder it names outside
    the project (directly, by `..` or through a symlink) is a settings error, and nothing of it is
    read; inside the project it is used."""
    proj, away = outside
    os.symlink(away, proj / "models-link")
    (proj / "serve.sh").write_text("VLLM_USE_V2_MODEL_RUNNER=0 vllm serve secret-model --use-replayssm\n")
    (proj / "pyproject.toml").write_text(
        f'[tool.flake8-replayssm]\nmodel-dirs = ["{written.format(away=away)}"]\n')
    proc = cli(proj, "check", "--verbose", "--vllm-version", "0.33.0", ".")
    said = (proc.stdout + proc.stderr).decode()
    assert proc.returncode == 2 and "TOPSECRET" not in said, said
    assert "model-dirs" in said and "inside its project" in said
    (proj / "models").mkdir()
    (proj / "pyproject.toml").write_text('[tool.flake8-replayssm]\nmodel-dirs = ["models"]\n')
    assert cli(proj, "check", "--vllm-version", "0.33.0", ".").returncode in (0, 1)


def test_no_file_outside_the_project_is_opened_for_a_model(outside, monkeypatch):
    """Nothing is opened, not even to find it has nothing to say (an audit hook sees every open)."""
    proj, away = outside
    opened: list[str] = []
    _AUDIT.append(opened)
    monkeypatch.chdir(away)  # a Hub id is never looked up relative to the working folder
    try:
        for text in (f"vllm serve {away}/secret-model --use-replayssm\n",
                     "sglang serve --model-path granite --enable-linear-replayssm\n"
                     "sglang serve --model-path ibm-granite/granite-4.0-h-tiny --enable-linear-replayssm\n"):
            lint_text(text, "shell", LintConfig(vllm_version="0.33.0", project_root=proj),
                      path=str(proj / "serve.sh"))
    finally:
        _AUDIT.remove(opened)
    assert not [p for p in opened if str(away) in p or p.startswith(("granite", "ibm-granite"))], opened


_AUDIT: list[list[str]] = []


def _audit(event: str, args: tuple) -> None:
    if event == "open" and _AUDIT and isinstance(args[0], (str, bytes, os.PathLike)):
        for sink in _AUDIT:
            sink.append(os.fsdecode(args[0]))


sys.addaudithook(_audit)


@pytest.mark.parametrize("env", [{"HOME": "relative/home"}, {"XDG_CACHE_HOME": "rel", "HOME": "relative/home"},
                                 {data_files.CACHE_ENV: "cache-here"}])
def test_the_data_cache_is_never_made_in_a_relative_folder(tree, env):
    (tree / "serve.sh").write_text(LAUNCH)
    clean = {k: v for k, v in os.environ.items() if k not in ("HOME", "XDG_CACHE_HOME", data_files.CACHE_ENV)}
    before = sorted(p.name for p in tree.iterdir())
    cli(tree, "check", ".", env={**clean, **env})
    assert sorted(p.name for p in tree.iterdir()) == before


def test_cache_dir_wants_an_absolute_folder(monkeypatch, tmp_path):
    monkeypatch.delenv(data_files.CACHE_ENV, raising=False)
    monkeypatch.delenv("XDG_CACHE_HOME", raising=False)
    monkeypatch.setattr(os.path, "expanduser", lambda path: path)  # no home: "~" stays "~"
    assert data_files.cache_dir() is None
    monkeypatch.setenv("XDG_CACHE_HOME", "relative")
    assert data_files.cache_dir() is None
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert data_files.cache_dir() == str(tmp_path / "flake8-replayssm")
    monkeypatch.setenv(data_files.CACHE_ENV, "relative")
    assert data_files.cache_dir() is None


# ===================================================================== 5. odd bytes

V1 = "VLLM_USE_V2_MODEL_RUNNER=0 "
CR_ONLY = {  # name: (text with LF, whether a lone CR ends a line for the file's own reader)
    "serve.py": ("import subprocess\n\nsubprocess.run(['vllm', 'serve', 'nvidia/NVIDIA-Nemotron-Nano-9B-v2', "
                 f"'--use-replayssm'])\nfrom vllm import LLM\nLLM(\"{NANO}\", use_replayssm=True)\n", True),
    "nb.ipynb": (json.dumps({"cells": [{"cell_type": "code", "metadata": {}, "outputs": [], "execution_count": None,
                                        "source": ["import os\n", "!" + LAUNCH]}],
                             "metadata": {}, "nbformat": 4, "nbformat_minor": 5}, indent=1), True),
    "compose.yaml": ("services:\n  llm:\n    image: vllm/vllm-openai:v0.33.0\n"
                     f'    command: ["--model", "{NANO}", "--use-replayssm"]\n', True),
    "serve-config.yaml": (f"model: {NANO}\nuse-replayssm: true\nenable-prefix-caching: false\n", True),
    "README.md": (f"# Serve\n\n```bash\nvllm serve {NANO} --use-replayssm\n```\n", True),
    "serve.sh": ("#!/bin/sh\n" + LAUNCH, False),
    "Makefile": ("serve:\n\t" + LAUNCH, False),
    "Dockerfile": (f'FROM vllm/vllm-openai:v0.33.0\nCMD ["--model", "{NANO}", "--use-replayssm"]\n', False),
}


def _found(tree: Path, name: str) -> list[tuple[int, int, str]]:
    proc = cli(tree, "check", "--format", "json", "--vllm-version", "0.33.0", name)
    return [(f["line"], f["column"], f["code"]) for f in json.loads(proc.stdout)]


@pytest.mark.parametrize("name", sorted(CR_ONLY))
def test_cr_only_line_ends_give_the_verdict_of_the_files_own_reader(tree, name):
    """Python, YAML, CommonMark (and JSON, as a blank) end a line at a lone CR, and Python runs
    such a file: the verdict is the LF file's, lines counted as they count them.  A shell, make
    and docker read one long line: RSM900 that says so, never "clean"."""
    text, cr_ends_lines = CR_ONLY[name]
    (tree / name).write_text(text)
    with_lf = _found(tree, name)
    assert with_lf and "RSM900" not in {code for _, _, code in with_lf}
    (tree / name).write_bytes(text.replace("\n", "\r").encode())
    if cr_ends_lines:
        assert _found(tree, name) == with_lf
    else:
        assert _found(tree, name) == [(1, 1, "RSM900")]
        found = json.loads(cli(tree, "check", "--format", "json", name).stdout)
        assert "CR only" in found[0]["message"]


@pytest.mark.parametrize("name", ["serve.py", "compose.yaml", "README.md"])
def test_a_cr_only_file_is_fixed_with_its_own_line_ends(tree, name):
    text, _ = CR_ONLY[name]
    data = text.replace("\n", "\r").encode()
    (tree / name).write_bytes(data)
    cli(tree, "fix", "--unsafe", "--vllm-version", "0.33.0", name)
    after = (tree / name).read_bytes()
    assert after != data and b"\n" not in after  # fixed, and still CR only
    assert "RSM008" not in cli(tree, "check", "--format", "json", "--vllm-version", "0.33.0", name).stdout.decode()


def test_a_nul_byte_past_the_first_8_kb_inside_a_launch_is_not_clean(tree):
    """The NUL would read as the engine's own "unknown part" marker: flash<NUL>infer would be
    an unknown backend, and the launch clean.  ruff and flake8 take a NUL as unreadable source."""
    padding = "# padding\n" * 1000
    (tree / "serve.sh").write_text(padding + V1 + f"vllm serve {NANO} --use-replayssm --mamba-backend flash\0infer\n")
    (tree / "good.sh").write_text(V1 + f"vllm serve {NANO} --use-replayssm --mamba-backend flashinfer\n")
    found = json.loads(cli(tree, "check", "--format", "json", "--vllm-version", "0.33.0", ".").stdout)
    by_file = {(Path(f["path"]).name, f["line"], f["code"]) for f in found}
    assert by_file == {("serve.sh", 1001, "RSM900"), ("good.sh", 1, "RSM002")}
    assert "NUL" in next(f["message"] for f in found if f["code"] == "RSM900")


def test_deep_nesting_in_a_config_file_or_a_model_config_is_reported_and_the_rest_judged(tree):
    (tree / "libyaml-depth.yaml").write_text("mamba-backend: flashinfer\na: " + "[" * 5000 + "]" * 5000 + "\n")
    (tree / "deep.yaml").write_text("mamba-backend: flashinfer\na: " + "[" * 150 + "]" * 150 + "\n")
    (tree / "models" / "m").mkdir(parents=True)
    (tree / "models" / "m" / "config.json").write_text(
        '{"architectures": ["NemotronHForCausalLM"], "x": ' + "[" * 100_000 + "]" * 100_000 + "}")
    (tree / "serve.sh").write_text(
        f"vllm serve {NANO} --use-replayssm --config libyaml-depth.yaml\n"
        f"vllm serve {NANO} --use-replayssm --config deep.yaml\n"
        f"{V1}vllm serve ./models/m --use-replayssm\n"
        "sglang serve --model-path ./models/m --enable-linear-replayssm\n"
        + LAUNCH)
    proc = cli(tree, "check", "--format", "json", "--vllm-version", "0.33.0", "serve.sh")
    found = {(Path(f["path"]).name, f["line"], f["code"]) for f in json.loads(proc.stdout)}
    assert found == {("libyaml-depth.yaml", 1, "RSM900"), ("deep.yaml", 1, "RSM900"),
                     ("config.json", 1, "RSM900"), ("serve.sh", 5, "RSM008")}
