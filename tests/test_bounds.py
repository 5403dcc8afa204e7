"""Hostile inputs the frontends follow only so far: bounded time and memory, and a verdict.

Each probe is text that expands exponentially if followed naively (a variable doubled in
every line, a dict splatting itself, YAML aliases of aliases).  The linter must finish
quickly, stay small, and still judge the launch with the exploding part unknown.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import tracemalloc
from pathlib import Path

import pytest

from flake8_replayssm import check_source

NANO = "nvidia/NVIDIA-Nemotron-Nano-9B-v2"


def _shell_doubling() -> str:
    return "A=x\n" + 'A="$A $A"\n' * 24 + f"vllm serve {NANO} --use-replayssm $A\n"


def _array_doubling() -> str:
    return "A=(x)\n" + 'A=("${A[@]}" "${A[@]}")\n' * 40 + f'vllm serve {NANO} --use-replayssm "${{A[@]}}"\n'


def _dict_doubling() -> str:
    lines = ["from vllm import LLM", "d0 = {'use_replayssm': True}"]
    lines += [f"d{i} = {{**d{i - 1}, **d{i - 1}}}" for i in range(1, 41)]
    return "\n".join(lines + [f"LLM('{NANO}', **d40)"]) + "\n"


def _string_doubling() -> str:
    lines = ["import subprocess", f"a0 = 'vllm serve {NANO} --use-replayssm '"]
    lines += [f"a{i} = a{i - 1} + a{i - 1}" for i in range(1, 41)]
    return "\n".join(lines + ["subprocess.run(a40, shell=True)"]) + "\n"


def _yaml_aliases() -> str:
    parts = ["a0: &a0 [x, x, x, x, x, x, x, x, x, x]"]
    parts += [f"a{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * 10) + "]" for i in range(1, 10)]
    return "\n".join([f"model: {NANO}", "use-replayssm: true", "hf-overrides:"] + ["  " + p for p in parts]) + "\n"


def _yaml_alias_walk() -> str:
    parts = ["a0: &a0 [x, x, x, x, x, x, x, x, x, x]"]
    parts += [f"a{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * 10) + "]" for i in range(1, 10)]
    return "\n".join(parts + ["args: [--use-replayssm]"]) + "\n"


@pytest.mark.parametrize("make,kind,codes", [
    (_shell_doubling, "shell", {"RSM008"}),
    (_array_doubling, "shell", {"RSM008"}),
    (_dict_doubling, "python", {"RSM008"}),
    (_string_doubling, "python", {"RSM008"}),  # a0 is itself a command kept in a variable (issue 18)
    (_yaml_aliases, "yaml", {"RSM008"}),
    (_yaml_alias_walk, "yaml", {"RSM001", "RSM008"}),  # Helm-style args, the default model
])
def test_exponential_expansions_are_bounded(make, kind, codes):
    text = make()
    tracemalloc.start()
    began = time.perf_counter()
    try:
        findings = check_source(text, kind, vllm_version="0.33.0")
        elapsed = time.perf_counter() - began
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert elapsed < 20, f"took {elapsed:.1f} s"
    assert peak < 200_000_000, f"peak {peak / 1e6:.0f} MB"
    assert {f.code for f in findings} - {"RSM900"} == codes


FALCON = "tiiuae/Falcon-H1-7B-Instruct"


def test_shell_nesting_past_the_bound_is_reported_where_it_stops():
    depth = 61
    text = "if true; then\n" * depth + f"vllm serve {FALCON} --use-replayssm\n" + "fi\n" * depth
    findings = check_source(text, "shell", vllm_version="0.33.0")
    assert [(f.span.line, f.code) for f in findings] == [(depth, "RSM900")]
    assert "nesting" in findings[0].message


def test_a_command_of_too_many_words_is_cut_and_reported():
    text = f"vllm serve {FALCON} --use-replayssm " + "--x " * 100_000 + "\n"
    began = time.perf_counter()
    findings = check_source(text, "shell", vllm_version="0.33.0")
    assert time.perf_counter() - began < 20
    assert sorted(f.code for f in findings) == ["RSM001", "RSM008", "RSM900"]
    cut = next(f for f in findings if f.code == "RSM900")
    assert "4096 words" in cut.message and cut.span.col > 4096 * 4


def test_an_unknown_flag_is_looked_up_as_an_abbreviation_once():
    from flake8_replayssm.engines.vllm.argv import _abbreviated
    from flake8_replayssm.engines.vllm.knowledge import knowledge
    know = knowledge()
    assert _abbreviated(know, "use-replay") == "use-replayssm"
    assert _abbreviated(know, "mamba") is None        # a prefix of several options
    assert _abbreviated(know, "no-such-option") is None


# ---------------------------------------------------------------------------------------------
# Linear or bounded work (issue 20): each shape below was super-linear in its size.  The text
# is linted in a child process under a CPU-seconds limit (a shape that regresses is killed,
# not timed in-process); where a count says it better, the parser calls are counted.
# ---------------------------------------------------------------------------------------------

#: CPU seconds a child may use for one shape (each takes a few seconds when linear)
CPU_SECONDS = 20
LAUNCH = f"vllm serve {NANO} --use-replayssm --mamba-backend flashinfer"

_LINT_CHILD = """
import json, sys
from flake8_replayssm.config import LintConfig
from flake8_replayssm.lint import lint_text
kind, inventory = sys.argv[1], sys.argv[2] == "1"
result = lint_text(sys.stdin.read(), kind, LintConfig(vllm_version="0.33.0", inventory=inventory), path="x")
print(json.dumps([(f.code, f.span.line, f.message) for f in result.findings]))
"""


def _limits() -> None:
    import resource

    resource.setrlimit(resource.RLIMIT_CPU, (CPU_SECONDS, CPU_SECONDS))
    resource.setrlimit(resource.RLIMIT_AS, (3_000_000_000, 3_000_000_000))


def run_bounded(args: list[str], stdin: str = "", cwd: Path | None = None) -> subprocess.CompletedProcess:
    """``python ARGS`` in a child limited to CPU_SECONDS of CPU (killed by SIGXCPU past it)."""
    proc = subprocess.run([sys.executable, *args], input=stdin, capture_output=True, text=True, cwd=cwd,
                          timeout=6 * CPU_SECONDS, preexec_fn=_limits)
    assert proc.returncode != -signal.SIGXCPU, f"more than {CPU_SECONDS} CPU seconds"
    assert "Traceback" not in proc.stderr, proc.stderr[-2000:]
    return proc


def lint_bounded(kind: str, text: str, *, inventory: bool = False) -> list[tuple[str, int, str]]:
    proc = run_bounded(["-c", _LINT_CHILD, kind, "1" if inventory else "0"], text)
    assert proc.returncode == 0, proc.stderr[-2000:]
    return [tuple(f) for f in json.loads(proc.stdout)]


def _codes(found: list[tuple[str, int, str]]) -> set[str]:
    return {code for code, _, _ in found}


POSIX_ONLY = pytest.mark.skipif(sys.platform == "win32", reason="resource limits")


# -- regular expressions that re-scanned the rest of a line or text from every position -------

@POSIX_ONLY
@pytest.mark.parametrize("kind,make,codes", [
    # Helm actions: `{{.*?}}` scanned to the line's end from every `{{` never closed
    ("yaml", lambda n: f"args: [{LAUNCH.replace(' ', ', ')}]\nx: '" + "{" * n + "'\n", {"RSM002"}),
    # Actions expressions: `\$\{\{.*?\}\}` (across lines) scanned to the text's end from every `${{`
    ("yaml", lambda n: "jobs:\n  a:\n    steps:\n    - run: " + LAUNCH + " " + "${{ " * (n // 8) + "\n",
     {"RSM900"}),
    # `^\s*(```|~~~)` and `^\s*command:` in a string: \s* ran over every following blank line
    ("yaml", lambda n: "guide: |\n  vllm\n" + "\n" * n + "  x\n" + f"args: [{LAUNCH.replace(' ', ', ')}]\n",
     {"RSM002"}),
    # the vLLM image named after a long word (--show-launches): `\S*vllm/vllm-openai\S*`
    ("shell", lambda n: "a" * (n // 2) + " vllm/vllm-openai\n" + LAUNCH + "\n", {"RSM002"}),
])
def test_scanners_are_linear_in_long_runs(kind, make, codes):
    found = lint_bounded(kind, make(400_000), inventory=True)
    assert _codes(found) == codes, found


@POSIX_ONLY
def test_a_manifest_test_on_a_fence_of_blank_lines_does_not_backtrack():
    """`(?:---\\s*\\n|\\s*\\n)*` split a run of blank lines in 2**n ways before giving up."""
    text = "```\n" + "\n" * 60 + "x\n```\n\n```bash\n" + LAUNCH + "\n```\n"
    assert _codes(lint_bounded("markdown", text)) == {"RSM002"}


@POSIX_ONLY
def test_buildkit_flags_do_not_backtrack():
    """`(\\s*--[A-Za-z-]+(=...)?)+\\s+` split `--a--a--a...` into flags in 2**n ways."""
    text = "FROM vllm/vllm-openai:v0.33.0\nRUN " + "--a" * 60 + "\nRUN " + LAUNCH + "\n"
    assert _codes(lint_bounded("dockerfile", text)) == {"RSM002"}


# -- work repeated per part: per notebook cell, per Dockerfile instruction, per document ------

def _notebook(cells: int) -> str:
    sources = ["x = 1\n"] * cells + [f'from vllm import LLM\nLLM("{NANO}", use_replayssm=True)\n',
                                     "!" + LAUNCH]
    return json.dumps({"cells": [{"cell_type": "code", "source": s} for s in sources], "metadata": {}})


def test_a_notebook_is_parsed_once_however_many_cells_it_has(monkeypatch):
    import flake8_replayssm.notebook_json as notebook_json
    from flake8_replayssm.config import LintConfig
    from flake8_replayssm.lint import lint_text

    text = _notebook(300)
    parses = []
    real = json.loads

    def counting(s, *args, **kwargs):
        if s == text:
            parses.append(1)
        return real(s, *args, **kwargs)

    monkeypatch.setattr(json, "loads", counting)
    notebook_json.parsed.cache_clear()
    result = lint_text(text, "notebook", LintConfig(vllm_version="0.33.0", inventory=True), path="x.ipynb")
    assert {f.code for f in result.findings} == {"RSM002", "RSM008"}
    assert len(parses) == 1


@POSIX_ONLY
def test_many_notebook_cells_are_linear():
    assert _codes(lint_bounded("notebook", _notebook(100_000), inventory=True)) == {"RSM002", "RSM008"}


@POSIX_ONLY
@pytest.mark.parametrize("make", [
    # each ENV copied the stage's variables, each RUN handed all of them to the shell frontend
    lambda n: "FROM x\n" + "".join(f"ENV A{i}=x\n" for i in range(n)) + "".join(f"RUN echo $A{i}\n" for i in range(n)),
    # each FROM of a stage copied its parent's variables, and looked the parent up in every stage
    lambda n: "FROM x AS s0\n" + "".join(f"ENV A{i}=x\n" for i in range(n))
    + "".join(f"FROM s{i} AS s{i + 1}\n" for i in range(n)),
])
def test_dockerfile_instructions_are_linear(make):
    found = lint_bounded("dockerfile", make(20_000) + "CMD " + LAUNCH + "\n")
    assert _codes(found) == {"RSM002"}


def test_fix_checks_each_edit_against_its_neighbours_not_by_applying_them_all(monkeypatch):
    """Collisions were found by applying every edit taken so far to the whole text, once per
    edit and once per launch: quadratic in a file of many launches."""
    from flake8_replayssm.config import LintConfig
    from flake8_replayssm.fix import codemod, edits

    applied = []
    real = edits.apply_edits

    def counting(text, planned):
        applied.append(1)
        return real(text, planned)

    for module in (codemod, sys.modules["flake8_replayssm.fix.planner"]):
        monkeypatch.setattr(module, "apply_edits", counting, raising=False)
    text = (f"vllm serve {NANO} --use-replayssm\n") * 200
    outcome = codemod.fix_text(text, "shell", LintConfig(vllm_version="0.33.0"))
    assert outcome.text.count("VLLM_USE_V2_MODEL_RUNNER=0") == 200
    assert len(applied) <= 4  # once per round of fixes


# -- nesting: documents in strings, deep folder trees ------------------------------------------

def _fuzz_shapes():  # type: ignore[no-untyped-def]
    """scripts/fuzz.py, whose generated shapes these tests share (it is not a package)."""
    import importlib.util

    script = Path(__file__).parent.parent / "scripts" / "fuzz.py"
    spec = importlib.util.spec_from_file_location("replayssm_fuzz", script)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@POSIX_ONLY
def test_documents_nested_in_strings_are_read_to_a_bound_and_reported_there():
    from flake8_replayssm.lint import MAX_EMBEDDED_DEPTH

    found = lint_bounded("yaml", _fuzz_shapes().nested_blocks(300))
    assert [line for code, line, _ in found if code == "RSM002"] == [2 + 4 * k for k in range(MAX_EMBEDDED_DEPTH + 1)]
    (cut,) = [(line, message) for code, line, message in found if code == "RSM900"]
    # at the first line of the document it did not read (its `containers:`)
    assert cut[0] == 1 + 4 * (MAX_EMBEDDED_DEPTH + 1) and f"deeper than {MAX_EMBEDDED_DEPTH}" in cut[1]


def test_a_memory_error_in_a_document_in_a_string_is_reported_not_dropped(monkeypatch):
    from flake8_replayssm import lint
    from flake8_replayssm.config import LintConfig

    real = lint._markdown_launches

    def exhausted(text, base_dir, path):
        raise MemoryError

    monkeypatch.setattr(lint, "_markdown_launches", exhausted)
    text = f"args: [{LAUNCH.replace(' ', ', ')}]\nguide: |\n  # Serve\n\n  ```bash\n  {LAUNCH}\n  ```\n"
    findings = lint.lint_text(text, "yaml", LintConfig(vllm_version="0.33.0")).findings
    monkeypatch.setattr(lint, "_markdown_launches", real)
    assert [(f.code, f.span.line) for f in findings] == [("RSM002", 1), ("RSM900", 3)]
    assert "ran out of memory" in findings[1].message


@POSIX_ONLY
def test_a_very_deep_folder_tree_is_walked_without_recursion(tmp_path):
    (tmp_path / ".git").mkdir()
    levels = [str(tmp_path)]
    for _ in range(1500):  # Python 3.10/3.11's os.walk recursed once per level (so do makedirs, rmtree)
        levels.append(levels[-1] + "/d")
        os.mkdir(levels[-1])
    Path(levels[-1], "serve.sh").write_text(LAUNCH + "\n")
    try:
        proc = run_bounded(["-m", "flake8_replayssm", "check", "--vllm-version", "0.33.0", "--format", "json", "."],
                           cwd=tmp_path)
        assert proc.returncode == 1, proc.stderr
        assert [f["code"] for f in json.loads(proc.stdout)] == ["RSM002"]
    finally:
        os.unlink(Path(levels[-1], "serve.sh"))
        for level in reversed(levels[1:]):
            os.rmdir(level)


def test_gitignore_rules_are_found_in_steps_linear_in_a_deep_tree(tmp_path, monkeypatch):
    """Each path walked up to the work tree's root for the .gitignore files above it: quadratic in
    the depth (found by scripts/fuzz.py: half the time of checking and fixing a 1,500-level tree)."""
    from flake8_replayssm import gitignore

    (tmp_path / ".git").mkdir()
    (tmp_path / ".gitignore").write_text("*.log\n")
    rules = gitignore.GitIgnore(str(tmp_path))
    steps = []
    real = os.path.dirname
    monkeypatch.setattr(os.path, "dirname", lambda path: steps.append(1) or real(path))
    folder, verdicts = str(tmp_path), []
    for _ in range(2000):  # folders that need not exist: a walk enters each before asking about it
        folder += "/d"
        rules.enter(folder)
        verdicts += [rules.ignored(folder + "/serve.sh", False), rules.ignored(folder + "/x.log", False)]
    monkeypatch.undo()
    assert verdicts == [False, True] * 2000
    assert len(steps) < 10 * 2000


# -- worker processes ------------------------------------------------------------------------

def _children(pid: int) -> set[int]:
    found = set()
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if int(fields[1]) == pid:
                found.add(int(entry.name))
    return found


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


@pytest.mark.skipif(not Path("/proc/self/stat").exists() or (os.cpu_count() or 1) < 2,
                    reason="needs /proc and two CPUs for two workers")
@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT, signal.SIGHUP])
def test_a_signal_to_check_with_jobs_ends_every_worker(tmp_path, signum):
    import time

    (tmp_path / ".git").mkdir()
    for k in range(200):
        (tmp_path / f"s{k}.sh").write_text((LAUNCH + "\n") * 60)
    parent = subprocess.Popen([sys.executable, "-m", "flake8_replayssm", "check", "--jobs", "2", "--format",
                               "json", "."], cwd=tmp_path, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                              preexec_fn=_defaults)
    try:
        deadline = time.monotonic() + 60
        workers: set[int] = set()
        while len(workers) < 2 and time.monotonic() < deadline and parent.poll() is None:
            workers = _children(parent.pid)
            time.sleep(0.05)
        assert len(workers) >= 2, "the workers did not start"
        time.sleep(0.5)  # busy with files now
        parent.send_signal(signum)
        _, err = parent.communicate(timeout=60)
    finally:
        parent.kill()
    assert parent.returncode == 128 + signum or (signum == signal.SIGINT and parent.returncode == 130)
    assert "Traceback" not in err.decode()
    time.sleep(0.5)
    assert [pid for pid in workers if _alive(pid)] == []


def _defaults() -> None:
    for signum in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(signum, signal.SIG_DFL)


# -- settings and --config files: too deep or too large is said, never dropped ----------------

def test_a_config_file_too_deep_to_read_is_reported(tmp_path):
    from flake8_replayssm.config import LintConfig
    from flake8_replayssm.lint import lint_text

    (tmp_path / ".git").mkdir()
    (tmp_path / "deep.yaml").write_text(f"model: {NANO}\nx: " + "[" * 5000 + "]" * 5000 + "\n")
    (tmp_path / "alias.yaml").write_text("a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n" + "".join(
        f"a{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * 10) + "]\n" for i in range(1, 6)))
    for name, why in (("deep.yaml", "nested too deeply"), ("alias.yaml", "expands past")):
        script = tmp_path / "serve.sh"
        script.write_text(f"vllm serve {NANO} --use-replayssm --config {name}\n")
        findings = lint_text(script.read_text(), "shell", LintConfig(vllm_version="0.33.0", project_root=tmp_path),
                             path=str(script)).findings
        cut = [f for f in findings if f.code == "RSM900"]
        assert cut and why in cut[0].message and cut[0].path.endswith(name), findings


def test_a_pyproject_too_deep_to_read_is_a_one_line_error_naming_it(tmp_path):
    (tmp_path / "pyproject.toml").write_text("[tool.flake8-replayssm]\nx = " + "[" * 5000 + "]" * 5000 + "\n")
    (tmp_path / "serve.sh").write_text(LAUNCH + "\n")
    proc = run_bounded(["-m", "flake8_replayssm", "check", "serve.sh"], cwd=tmp_path)
    assert proc.returncode == 2 and proc.stderr.count("\n") == 1
    assert "pyproject.toml: nested too deeply" in proc.stderr


# -- shell and Python frontends -------------------------------------------------------------

@POSIX_ONLY
@pytest.mark.parametrize("make", [
    # `case` arms / `elif` branches setting one variable: every value compared with every other
    lambda n: "case $X in\n" + "".join(f"  a{i}) M=m{i} ;;\n" for i in range(n)) + "esac\n",
    lambda n: "if a; then M=x\n" + "".join(f"elif b{i}; then M=m{i}\n" for i in range(n)) + "fi\n",
])
def test_shell_value_sets_stop_at_their_cap(make):
    """Past MAX_CHOICES values the variable is unknown: the launch is judged for any model."""
    found = lint_bounded("shell", make(30_000) + "vllm serve $M --use-replayssm\n")
    assert _codes(found) == {"RSM008"}, found


#: models vLLM 0.33.0 refuses ReplaySSM for (RSM001), one more than a value set may hold
_JAMBAS = [f"ai21labs/{m}" for m in ("AI21-Jamba-1.5-Large", "AI21-Jamba-1.5-Mini", "AI21-Jamba-Large-1.6",
                                     "AI21-Jamba-Large-1.7", "AI21-Jamba-Mini-1.6", "AI21-Jamba-Mini-1.7",
                                     "AI21-Jamba-Mini-1.7-FP8", "AI21-Jamba-Reasoning-3B", "Jamba-v0.1")]


@pytest.mark.parametrize("size,codes", [(8, {"RSM001", "RSM008"}), (9, {"RSM008"})])
def test_a_shell_value_set_is_a_set_up_to_its_cap(size, codes):
    """Within MAX_CHOICES values, a code that holds for every value is reported (RSM001 for
    every Jamba); one value more, and the variable is unknown (RSM001 no longer holds)."""
    from flake8_replayssm.frontends.shell.choices import MAX_CHOICES

    assert len(_JAMBAS) == MAX_CHOICES + 1
    *arms, last = _JAMBAS[:size]
    text = "case $X in\n" + "".join(f"  a{i}) M={m} ;;\n" for i, m in enumerate(arms)) \
        + f"  *) M={last} ;;\nesac\nvllm serve $M --use-replayssm\n"
    assert {f.code for f in check_source(text, "shell", vllm_version="0.33.0")} == codes


@POSIX_ONLY
@pytest.mark.parametrize("line", ["c += ' --port 1'\n", "c.append('--port')\n"])
def test_python_commands_built_step_by_step_are_linear(line):
    """Each step summed the lengths of every line above it (``python.source.Source.offset``) and
    copied the command built so far (``python.command_text`` ``changed_text``, ``changed_words``)."""
    text_form = "+=" in line
    start = "c = 'vllm serve m --use-replayssm'\n" if text_form else "c = ['vllm', 'serve', 'm', '--use-replayssm']\n"
    text = "import subprocess\n" + "x = 1\n" * 200_000 + start + line * 4_000 \
        + f"subprocess.run(c{', shell=True' if text_form else ''})\n"
    found = lint_bounded("python", text)
    # the string form splits into 8,000 words: past the command's bound, said so, model still judged
    assert _codes(found) == ({"RSM008", "RSM900"} if text_form else {"RSM008"}), found


@pytest.mark.parametrize("step,codes", [
    ("", {"RSM001", "RSM008"}),
    (f"c.insert(2, '{NANO}')\nc.pop(3)", {"RSM008"}),  # the Llama model popped: Nemotron is served
    (f"c.insert(2, '{NANO}')\nc.pop(2)", {"RSM001", "RSM008"}),
    (f"c[2:3] = ['{NANO}']", {"RSM008"}),
    ("del c[3]", set()),  # no --use-replayssm left
    ("c.pop(x)", {"RSM001", "RSM008"}),  # not understood: extra words assumed to change nothing
])
def test_python_commands_built_step_by_step_keep_every_step(step, codes):
    """The list is changed in place: each step is applied once, in order."""
    text = ("import subprocess\nc = ['vllm', 'serve']\nc.append('meta-llama/Llama-3.1-8B-Instruct')\n"
            f"c += ['--use-replayssm']\n{step}\nsubprocess.run(c)\n")
    assert {f.code for f in check_source(text, "python", vllm_version="0.33.0")} == codes
