"""Hostile and odd inputs (issue 10): every probe finishes within a time and memory bound, never
crashes or hangs, and what could not be checked is reported (RSM900), never dropped in silence.

Each probe runs the real CLI in a child process (a segfault or a hang must not take the test
run down) under ``resource`` limits: CPU seconds and address space.  The exponential
expansions inside the frontends (``A="$A $A"``, YAML alias bombs) are bounded by the
frontends themselves and tested with them.  ``scripts/fuzz.py`` is the longer fuzz run.
"""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest

from flake8_replayssm.config import LintConfig
from flake8_replayssm.fix.codemod import fix_text
from flake8_replayssm.lint import lint_text

NANO = "nvidia/NVIDIA-Nemotron-Nano-9B-v2"
LAUNCH_PY = f'from vllm import LLM\nLLM("{NANO}", use_replayssm=True, mamba_backend="flashinfer")\n'
#: every probe: wall seconds, CPU seconds, address space (bytes)
WALL, CPU, MEMORY = 60, 30, 2_000_000_000

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="resource limits and FIFOs are POSIX")


def probe(args: list[str], cwd: Path, stdin: object = subprocess.DEVNULL) -> tuple[int, list[dict], str, float]:
    """Run ``replayssm-lint ARGS --format json`` bounded; (exit code, findings, stderr, seconds)."""
    def limits() -> None:
        import resource

        resource.setrlimit(resource.RLIMIT_CPU, (CPU, CPU))
        resource.setrlimit(resource.RLIMIT_AS, (MEMORY, MEMORY))

    started = time.monotonic()
    proc = subprocess.run([sys.executable, "-m", "flake8_replayssm", *args], cwd=cwd, stdin=stdin,
                          capture_output=True, text=True, timeout=WALL, preexec_fn=limits)
    seconds = time.monotonic() - started
    assert proc.returncode in (0, 1, 2), f"killed ({proc.returncode}): {proc.stderr[-500:]}"
    assert "Traceback" not in proc.stderr, proc.stderr[-2000:]
    found = json.loads(proc.stdout) if proc.stdout.strip().startswith("[") else []
    return proc.returncode, found, proc.stderr, seconds


def check(cwd: Path, *paths: str) -> tuple[int, list[dict], str, float]:
    return probe(["check", "--format", "json", "--vllm-version", "0.33.0", *paths], cwd)


@pytest.fixture
def tree(tmp_path):
    (tmp_path / ".git").mkdir()
    (tmp_path / "good.py").write_text(LAUNCH_PY)  # RSM002: must survive whatever its neighbours do
    return tmp_path


def codes_of(found: list[dict], name: str) -> list[str]:
    return [f["code"] for f in found if Path(f["path"]).name == name]


# ---------------------------------------------------------------- crashes and hangs

DEEP = {
    "nested-lists": "x = " + "[" * 1500 + "]" * 1500,
    "chained-plus": "x = " + "+".join(["1"] * 8000),
    "unary": "x = " + "-" * 10000 + "1",
    "nested-calls": "x = " + "f(" * 300 + ")" * 300,
    "long-flat-plus": "x = (" + " +\n".join(["1"] * 20000) + ")",
}


@pytest.mark.parametrize("name", sorted(DEEP))
def test_deep_or_long_python_is_reported_not_checked_and_neighbours_survive(tree, name):
    (tree / "deep.py").write_text(LAUNCH_PY + DEEP[name] + "\n")
    for jobs in ("1", "2"):
        code, found, _, seconds = check(tree, "--jobs", jobs, ".")
        assert code == 1 and seconds < WALL
        assert codes_of(found, "good.py") == ["RSM002"]
        assert codes_of(found, "deep.py") == ["RSM900"]


def test_deep_python_that_libcst_could_still_read_is_checked():
    text = LAUNCH_PY + "x = " + "[" * 60 + "]" * 60 + "\n"
    assert [f.code for f in lint_text(text, "python", LintConfig(vllm_version="0.33.0")).findings] == ["RSM002"]


def test_recursion_deep_enough_to_lose_findings_is_reported():
    """~150 nested lists used to drop every finding of the file (a RecursionError in a frontend)."""
    text = LAUNCH_PY + "x = " + "[" * 150 + "]" * 150 + "\n"
    (finding,) = lint_text(text, "python", LintConfig(vllm_version="0.33.0")).findings
    assert finding.code == "RSM900" and "too deeply nested" in finding.message


@pytest.mark.parametrize("kind,text", [
    ("yaml", "a: " + "[" * 400 + "]" * 400 + "\nargs: [--use-replayssm]\n"),
    ("notebook", '{"cells": [], "x": ' + "[" * 5000 + "]" * 5000 + ', "y": "--use-replayssm"}'),
])
def test_deep_documents_are_reported_not_checked(kind, text):
    (finding,) = lint_text(text, kind, LintConfig(vllm_version="0.33.0")).findings
    assert finding.code == "RSM900" and "nested" in finding.message


def test_symlink_to_dev_zero_and_a_fifo_in_the_tree(tree):
    os.symlink("/dev/zero", tree / "zero.sh")  # a symlink out of the project: not followed
    os.mkfifo(tree / "pipe.sh")  # in the project, not a regular file: reported
    code, found, err, seconds = check(tree, ".")
    assert code == 1 and seconds < WALL
    assert codes_of(found, "good.py") == ["RSM002"]
    assert codes_of(found, "pipe.sh") == ["RSM900"] and "FIFO" in found[-1]["message"] + json.dumps(found)
    assert codes_of(found, "zero.sh") == []


def test_named_device_and_fifo_are_reported_not_read(tree):
    os.mkfifo(tree / "pipe.yaml")
    code, found, _, seconds = check(tree, "pipe.yaml", "/dev/zero")
    assert seconds < WALL
    assert codes_of(found, "pipe.yaml") == ["RSM900"]


def test_config_file_that_is_a_device_fifo_or_stdin_is_not_read(tree):
    os.mkfifo(tree / "cfg.yaml")
    (tree / "serve.sh").write_text(f"vllm serve {NANO} --use-replayssm --config /dev/zero\n"
                                   f"vllm serve {NANO} --use-replayssm --config cfg.yaml\n"
                                   f"vllm serve {NANO} --use-replayssm --config /dev/stdin\n")
    code, found, _, seconds = probe(["check", "--format", "json", "--vllm-version", "0.33.0", "serve.sh"], tree,
                                    stdin=subprocess.PIPE)
    assert seconds < WALL and code in (0, 1)


def test_stdin_from_dev_zero_is_bounded(tree):
    with open("/dev/zero", "rb") as zero:
        code, found, err, seconds = probe(["check", "--format", "json", "--stdin-filename", "x.sh"], tree,
                                          stdin=zero)
    assert seconds < WALL
    assert [f["code"] for f in found] == ["RSM900"] and "too large" in found[0]["message"]


def test_huge_file_is_reported_not_checked(tree):
    (tree / "huge.sh").write_text(f"vllm serve {NANO} --use-replayssm\n" + "# padding\n" * 600_000)
    code, found, _, _ = check(tree, ".")
    assert codes_of(found, "huge.sh") == ["RSM900"] and "too large" in json.dumps(found)


def test_jobs_are_capped(tree):
    code, found, _, seconds = check(tree, "--jobs", "1000", ".")
    assert code == 1 and codes_of(found, "good.py") == ["RSM002"] and seconds < WALL


def test_unreadable_file_is_reported(tree, monkeypatch):
    from flake8_replayssm import project

    (tree / "locked.sh").write_text(f"vllm serve {NANO} --use-replayssm\n")
    real_open = os.open

    def denied(path, *args, **kwargs):
        if str(path).endswith("locked.sh"):
            raise PermissionError(13, "Permission denied", str(path))
        return real_open(path, *args, **kwargs)

    monkeypatch.setattr(os, "open", denied)
    result = project.lint_file(str(tree / "locked.sh"), LintConfig(vllm_version="0.33.0"))
    assert [f.code for f in result.findings] == ["RSM900"] and "permission denied" in result.findings[0].message


# ---------------------------------------------------------------- nothing leaks

def test_config_outside_the_project_is_not_read(tmp_path):
    outside, proj = tmp_path / "outside", tmp_path / "proj"
    outside.mkdir()
    (proj / ".git").mkdir(parents=True)
    (outside / "secrets.yaml").write_text("mamba-backend: TOPSECRET_ABC123\n")
    (proj / "serve.sh").write_text(f"vllm serve {NANO} --use-replayssm --config ../outside/secrets.yaml\n")
    code, found, err, _ = probe(["check", "--format", "json", "--verbose", "--vllm-version", "0.33.0", "."], proj)
    assert "TOPSECRET" not in json.dumps(found) + err
    assert "outside the project, not read" in err


def test_symlinked_directory_out_of_the_project_is_not_walked(tmp_path):
    outside, proj = tmp_path / "outside", tmp_path / "proj"
    outside.mkdir()
    (proj / ".git").mkdir(parents=True)
    (outside / "serve.sh").write_text(f"vllm serve {NANO} --use-replayssm\n")
    os.symlink(outside, proj / "linked")
    os.symlink(outside / "serve.sh", proj / "linked.sh")
    code, found, err, _ = probe(["check", "--format", "json", "--verbose", "--vllm-version", "0.33.0", "."], proj)
    assert (code, found) == (0, [])
    assert "symlink out of the project, not followed" in err


# ---------------------------------------------------------------- config types

@pytest.mark.parametrize("body", [
    "[tool.flake8-replayssm]\nmodel-dirs = 5\n", "[tool.flake8-replayssm]\nselect = 5\n",
    "[tool.flake8-replayssm]\nenable = [1, 2]\n", "[tool.flake8-replayssm]\nignore = true\n", "tool = 5\n",
])
def test_config_type_errors_are_one_line(tree, body):
    (tree / "pyproject.toml").write_text(body)
    code, _, err, _ = check(tree, ".")
    assert code == 2 and len(err.strip().splitlines()) == 1


# ---------------------------------------------------------------- fix never harms a file

def fix(cwd: Path, *args: str) -> subprocess.CompletedProcess:
    proc = subprocess.run([sys.executable, "-m", "flake8_replayssm", "fix", "--vllm-version", "0.33.0", *args],
                          cwd=cwd, capture_output=True, text=True, timeout=WALL)
    assert "Traceback" not in proc.stderr
    return proc


SCRIPT = f"vllm serve {NANO} --use-replayssm\n"


def test_symlink_inside_the_project_stays_a_symlink(tree):
    (tree / "real.sh").write_text(SCRIPT)
    os.symlink("real.sh", tree / "link.sh")
    fix(tree, "link.sh")
    assert os.path.islink(tree / "link.sh") and "VLLM_USE_V2_MODEL_RUNNER=0" in (tree / "real.sh").read_text()


def test_symlink_out_of_the_project_is_refused(tmp_path):
    proj = tmp_path / "proj"
    (proj / ".git").mkdir(parents=True)
    (tmp_path / "outside.sh").write_text(SCRIPT)
    os.symlink(tmp_path / "outside.sh", proj / "link.sh")
    proc = fix(proj, "link.sh")
    assert proc.returncode == 1 and "outside the project" in proc.stdout
    assert (tmp_path / "outside.sh").read_text() == SCRIPT


def test_hard_link_is_edited_in_place_never_split(tree):
    (tree / "a.sh").write_text(SCRIPT)
    os.link(tree / "a.sh", tree / "b.sh")
    fix(tree, "a.sh")
    assert os.stat(tree / "a.sh").st_ino == os.stat(tree / "b.sh").st_ino
    assert "VLLM_USE_V2_MODEL_RUNNER=0" in (tree / "b.sh").read_text()


def test_mode_and_owner_are_kept(tree):
    path = tree / "a.sh"
    path.write_text(SCRIPT)
    os.chmod(path, 0o750)
    before = os.stat(path)
    fix(tree, "a.sh")
    after = os.stat(path)
    assert stat.S_IMODE(after.st_mode) == 0o750 and (after.st_uid, after.st_gid) == (before.st_uid, before.st_gid)


def test_setuid_is_never_left_on_a_file_we_now_own(tree, monkeypatch):
    from flake8_replayssm.fix import writing

    path = tree / "a.sh"
    path.write_text(SCRIPT)
    os.chmod(path, 0o4755)

    def cannot_chown(*args, **kwargs):
        raise PermissionError(1, "Operation not permitted")

    monkeypatch.setattr(os, "chown", cannot_chown)  # as when a file of someone else is fixed by a non-owner
    writing.write_fixed(str(path), path.read_bytes(), b"new\n", project_root=str(tree))
    assert path.read_bytes() == b"new\n" and not os.stat(path).st_mode & stat.S_ISUID


def test_read_only_file_is_refused_unless_forced(tree):
    path = tree / "a.sh"
    path.write_text(SCRIPT)
    os.chmod(path, 0o444)
    proc = fix(tree, "a.sh")
    assert proc.returncode == 1 and "read-only" in proc.stdout and path.read_text() == SCRIPT
    fix(tree, "--force", "a.sh")
    assert "VLLM_USE_V2_MODEL_RUNNER=0" in path.read_text() and stat.S_IMODE(os.stat(path).st_mode) == 0o444


def test_a_file_changed_while_fixing_is_not_overwritten(tree):
    from flake8_replayssm.fix.writing import WriteRefused, write_fixed

    path = tree / "a.sh"
    path.write_text(SCRIPT)
    original = path.read_bytes()
    path.write_text(SCRIPT + "# someone else's edit\n")
    with pytest.raises(WriteRefused, match="changed while"):
        write_fixed(str(path), original, b"fixed\n", project_root=str(tree))
    assert path.read_text().endswith("# someone else's edit\n")


@pytest.mark.parametrize("name,data", [
    ("latin1.sh", ("# caf\xe9\n" + SCRIPT).encode("latin-1")),
    ("declared.py", ('# -*- coding: latin-1 -*-\nimport subprocess\nNAME = "caf\xe9"\n'
                     f'subprocess.run("vllm serve {NANO} --use-replayssm", shell=True)\n').encode("latin-1")),
    ("bom.py", b"\xef\xbb\xbf" + ('import subprocess\n'
                                  f'subprocess.run("vllm serve {NANO} --use-replayssm", shell=True)\n').encode()),
    ("crlf.sh", SCRIPT.replace("\n", "\r\n").encode()),
])
def test_bytes_outside_the_edits_are_identical(tree, name, data):
    path = tree / name
    path.write_bytes(data)
    proc = fix(tree, name)
    after = path.read_bytes()
    assert after != data, proc.stdout  # it was fixed (a BOM must not make the fix refuse)
    inserted = b"VLLM_USE_V2_MODEL_RUNNER=0 "
    assert inserted in after
    assert after.replace(inserted, b"", 1).replace(b" --mamba-backend triton", b"", 1) == data


def test_fixes_converge(tree):
    (tree / "late_import.py").write_text(f'from vllm import LLM\n\n\ndef main():\n    return LLM("{NANO}", '
                                         "use_replayssm=True)\n\n\nimport os\n")
    first = fix(tree, "--unsafe", ".")
    texts = {p.name: p.read_text() for p in tree.iterdir() if p.is_file()}
    fix(tree, "--unsafe", ".")
    assert {p.name: p.read_text() for p in tree.iterdir() if p.is_file()} == texts, first.stdout
    assert texts["late_import.py"].count("os.environ") <= 1


def test_fix_text_of_hostile_python_never_raises():
    text = LAUNCH_PY + DEEP["nested-lists"] + "\n"
    outcome = fix_text(text, "python", LintConfig(vllm_version="0.33.0"))
    assert outcome.text == text


def test_bounds_the_frontends_hit_are_reported_where_they_were_hit():
    """A="$A $A" doubling is cut by the shell frontend; the cut is RSM900 at the assignment."""
    text = "A=x\n" + 'A="$A $A"\n' * 24 + f"vllm serve {NANO} --use-replayssm $A\n"
    found = [(f.span.line, f.code) for f in lint_text(text, "shell", LintConfig(vllm_version="0.33.0")).findings]
    assert ("RSM008" in {code for _, code in found}) and any(code == "RSM900" and line <= 25 for line, code in found)


@pytest.mark.parametrize("encoding", ["utf-16", "utf-32", "utf-16-be"])
def test_utf16_and_utf32_files_with_a_byte_order_mark_are_read(tree, encoding):
    compose = ('services:\n  llm:\n    image: vllm/vllm-openai:v0.33.0\n'
               f'    command: ["--model", "{NANO}", "--use-replayssm"]\n')
    data = compose.encode(encoding)
    if encoding == "utf-16-be":
        data = b"\xfe\xff" + data
    (tree / "serve.yaml").write_bytes(data)
    _, found, _, _ = check(tree, ".")
    assert codes_of(found, "serve.yaml") == ["RSM008"]
    from flake8_replayssm.files import decode

    decoded = decode(data, "yaml")
    assert decoded.text == compose and decoded.lossless and decoded.encode(decoded.text) == data


# -- an error of ours is "not checked", never "clean" -------------------------------------------
def _boom(*args, **kwargs):
    raise RuntimeError("a bug of the linter")


@pytest.mark.parametrize("kind,text,module,name,lines", [
    ("dockerfile", "FROM vllm/vllm-openai:v0.33.0\nCMD [\"--model\", \"m\", \"--use-replayssm\"]\n",
     "flake8_replayssm.frontends.dockerfile", "_DockerfileReader.run", [1]),
    ("markdown", "# Serve\n\n```bash\nvllm serve m --use-replayssm\n```\n",
     "flake8_replayssm.frontends.markdown", "_shell_block", [4]),
    ("yaml", "a: 1\n---\napiVersion: v1\nkind: Pod\nspec:\n  containers:\n  - image: vllm/vllm-openai\n"
             "    args: [--model, m, --use-replayssm]\n",
     "flake8_replayssm.frontends.structured.document", "_read_root", [1, 3]),  # each document
])
def test_a_frontend_error_is_reported_as_not_checked(monkeypatch, kind, text, module, name, lines):
    import importlib

    target = importlib.import_module(module)
    owner_name, _, attr = name.rpartition(".")
    owner = getattr(target, owner_name) if owner_name else target
    monkeypatch.setattr(owner, attr, _boom)
    findings = lint_text(text, kind, LintConfig(vllm_version="0.33.0")).findings
    assert [(f.code, f.span.line) for f in findings] == [("RSM900", line) for line in lines]
    assert "an error of the linter's" in findings[0].message and "RuntimeError" in findings[0].message


@pytest.mark.parametrize("data,kind,lossless", [
    (b"x = 1\n", "python", True),                                   # ASCII: read as it is
    ("# caf\u00e9 \u2014 ok\n".encode(), "yaml", True),             # valid UTF-8
    (b"\xef\xbb\xbfa: 1\n", "yaml", True),                          # a byte order mark kept
    (b"a: \xff\xfe\n", "yaml", True),                               # not UTF-8: mapped and back
    ("a: \uf7ff\n".encode(), "yaml", False),                        # the mapping's own range: never written
    (b"# -*- coding: utf-7 -*-\nx = '+AGE-'\n", "python", False),   # ASCII bytes, another codec
])
def test_decoding_round_trips_or_says_it_does_not(data, kind, lossless):
    from flake8_replayssm.files import decode

    decoded = decode(data, kind)
    assert decoded.lossless is lossless
    if lossless:
        assert decoded.encode(decoded.text) == data
    if b"utf-7" in data:
        assert decoded.encoding == "utf-7" and "a" in decoded.text.split("'")[1]
