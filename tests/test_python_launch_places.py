"""Python launches recognised by what they say, wherever the file writes them (issue 18).

An argv list or a command string whose words begin with an engine's entry point is a launch
when it is handed to any call (not only ``subprocess``), returned, yielded or stored; the
recogniser decides, not a list of calls.  Text for people is not: docstrings, ``print`` and
logging, ``help=``, exceptions, comparisons, patterns, and sentences that only mention an
entry point.  Each case is a minimal form written for this test.
"""

from __future__ import annotations

import textwrap

import pytest

from flake8_replayssm import check_source
from flake8_replayssm.config import LintConfig
from flake8_replayssm.lint import lint_text

NANO = "nvidia/NVIDIA-Nemotron-Nano-9B-v2"
FLAGS = "--use-replayssm --replayssm-buffer-len 0"  # RSM007 whatever the model and environment
ARGV = '"--use-replayssm", "--replayssm-buffer-len", "0"'


def found(source: str, **config) -> list[tuple[int, str]]:
    cfg = LintConfig(vllm_version="0.33.0", sglang_version="0.5.23", **config)
    findings = check_source(textwrap.dedent(source).lstrip("\n"), "python", config=cfg)
    return sorted((f.span.line, f.code) for f in findings)


def lines_of(source: str, code: str = "RSM007", **config) -> list[int]:
    return [line for line, c in found(source, **config) if c == code]


@pytest.mark.parametrize("source, line", [
    # a cloud SDK's container arguments
    (f'from cloud import Container\nContainer(image="img", args=["vllm", "serve", "{NANO}", {ARGV}])\n', 2),
    # a serving framework's method that returns the command it runs
    (f'class Service:\n    def __command__(self):\n        return ["vllm", "serve", "{NANO}", {ARGV}]\n', 3),
    # SGLang's notebook helper that runs a command string
    ('from sglang.utils import launch_server_cmd\n'
     'proc, port = launch_server_cmd("python3 -m sglang.launch_server --model-path Qwen/Qwen3-Next-80B-A3B-Instruct '
     '--enable-linear-replayssm --linear-replayssm-cache-len 0")\n', 2),
    # an argv list kept in a variable and handed to the project's own helper
    (f'cmd = ["python", "-m", "vllm.entrypoints.openai.api_server", "--model", "{NANO}", {ARGV}]\n'
     '_popen(cmd, env=child_env)\n', 1),
    # an f-string kept in an attribute, run later through it
    (f'class Server:\n    def __init__(self, model):\n        self.cmd = f"vllm serve {{model}} {FLAGS}"\n'
     '    def start(self):\n        return Popen(self.cmd, shell=True)\n', 3),
    # a dict value of a job spec, a concatenation
    (f'JOB = {{"name": "llm", "entrypoint": "vllm serve " + "{NANO}" + " {FLAGS}"}}\n', 1),
    # option strings joined into one command
    ('parts = ["python3 -m sglang.launch_server", "--model-path Qwen/Qwen3-Next-80B-A3B-Instruct",\n'
     '         "--enable-linear-replayssm --linear-replayssm-cache-len 0"]\nrun_cmd(" ".join(parts))\n', 2),
    # a generator of commands, a keyword argument
    (f'def commands():\n    yield f"vllm serve {NANO} {FLAGS}"\n', 2),
    (f'client.submit_job(entrypoint=f"vllm serve {NANO} {FLAGS}", runtime_env={{}})\n', 1),
    # the interpreter from sys.executable, a module constant used in another function
    (f'import sys\nBASE = [sys.executable, "-m", "vllm.entrypoints.openai.api_server"]\n'
     f'def serve():\n    return BASE + ["--model", "{NANO}", {ARGV}]\n', 4),
])
def test_a_command_is_a_launch_wherever_it_is_handed_on(source, line):
    codes = {code for at, code in found(source) if at == line}
    assert codes & {"RSM007", "RSM304"}, found(source)


@pytest.mark.parametrize("source", [
    f'"""Serve it with:\n\n    vllm serve {NANO} {FLAGS}\n"""\n',  # a docstring: documentation of code
    f'def f():\n    """vllm serve {NANO} {FLAGS}"""\n',
    f'print("run: vllm serve {NANO} {FLAGS}")\n',
    f'import logging\nlogging.getLogger(__name__).warning_once("vllm serve {NANO} {FLAGS}")\n',
    f'parser.add_argument("--replayssm-buffer-len", help="vllm serve {NANO} {FLAGS}")\n',
    f'raise ValueError("vllm serve {NANO} {FLAGS} is not supported")\n',
    f'notify("Please run vllm serve {NANO} {FLAGS} first")\n',  # a sentence mentioning an entry point
    f'msg = "Restart vllm serve with {FLAGS}"\n',
    f'if line.startswith("vllm serve {NANO} {FLAGS}"):\n    pass\n',
    f'if "vllm serve {NANO} {FLAGS}" in line:\n    pass\n',
    f'import subprocess\nsubprocess.run(["grep", "-r", "vllm serve {NANO} {FLAGS}", "."])\n',
    f'import subprocess\nsubprocess.run(["vllm", "serve", "{NANO}", {ARGV}, "--help"])\n',
    f'# vllm serve {NANO} {FLAGS}\n',
    f'os.path.join(root, "vllm", "serve", "{NANO}", "--use-replayssm")\n',
    f'ENGINES = ["vllm", "sglang"]\nrun(ENGINES, "{FLAGS}")\n',
])
def test_text_for_people_and_patterns_are_no_launch(source):
    assert found(source) == []


def test_a_command_read_at_a_process_call_is_not_read_again_where_it_is_written():
    source = f"""
    import subprocess
    cmd = ["vllm", "serve", "{NANO}", {ARGV}]
    log_command(cmd)
    subprocess.run(" ".join(cmd), shell=True, env={{"VLLM_USE_V2_MODEL_RUNNER": "0"}})
    """
    result = lint_text(textwrap.dedent(source), "python", LintConfig(vllm_version="0.33.0", inventory=True))
    assert [(n.line, n.label, n.codes) for n in result.launches] == [(3, "vllm serve", ["RSM007"])]


def test_a_command_handed_elsewhere_runs_in_an_environment_the_file_does_not_show():
    """Only a process call shows the environment; elsewhere it is unseen, like an unknown wrapper's."""
    source = f'launch_server_cmd("vllm serve {NANO} --use-replayssm")\n'
    note = {f.code: f.message for f in check_source(source, "python", vllm_version="0.33.0")}
    assert list(note) == ["RSM008"]
    assert "assuming the environment launch_server_cmd() gives sets no VLLM_USE_V2_MODEL_RUNNER" in note["RSM008"]
    assert found(source, extra_args="open") == []
    kept = f'def command():\n    return ["vllm", "serve", "{NANO}", "--use-replayssm"]\n'
    assert "the caller of command()" in check_source(kept, "python", vllm_version="0.33.0")[0].message
    known = f'run_job(["vllm", "serve", "{NANO}", "--use-replayssm"], env={{"VLLM_USE_V2_MODEL_RUNNER": "0"}})\n'
    assert found(known) == []  # the call's own env= is the environment it gives


def test_branches_of_a_handed_command_are_each_read():
    source = f"""
    mode = "a" if fast else "b"
    flags = "--replayssm-buffer-len 0" if fast else "--replayssm-buffer-len 32"
    submit(f"vllm serve {NANO} --use-replayssm {{flags}}")
    """
    assert lines_of(source) == []  # 0 only on one branch: RSM007 does not hold for every value
    assert lines_of(source.replace("32", "0")) == [3]


@pytest.mark.parametrize("header, call", [
    ("import art", "art.dev.EngineArgs"),
    ("from art.dev import EngineArgs", "EngineArgs"),
    ("from art.dev import EngineArgs as Args", "Args"),
])
def test_a_frameworks_class_that_forwards_engine_args_is_read_where_data_says_so(header, call):
    """OpenPipe ART's ``art.dev.EngineArgs`` holds vLLM's EngineArgs fields (data: engine.toml
    ``forwarded_classes``); the model is the framework's, so it is unknown, not vLLM's default."""
    source = f"{header}\nconfig = {call}(use_replayssm=True, replayssm_buffer_len=0)\n"
    assert found(source) == [(2, "RSM007"), (2, "RSM008")]  # no RSM001: not judged as vLLM's default model
    assert found(source.replace("art.dev", "other.dev").replace("art", "other")) == []


def test_the_screen_parses_no_module_that_only_names_the_engine_in_passing(monkeypatch):
    """vLLM's own sources: ``"vllm"`` beside ``"served_model_name"`` (no sub-command quoted),
    `vllm serve` as inline code in a docstring, an EngineArgs call in a comment and a class
    statement: none is a launch, and the screen tells so without a parse."""
    from flake8_replayssm.frontends import python_screen

    parses = []
    monkeypatch.setattr(python_screen, "parsed", lambda text: parses.append(text))
    for text in ('impl = "vllm"\nkeys = ["served_model_name"]\n',
                 'def f():\n    """Tokenize in the server started by `vllm serve`."""\n',
                 "# support `EngineArgs(compilation_config={...})`\nclass AsyncEngineArgs(EngineArgs):\n"
                 "    use_replayssm: bool = False\n\nx = dict(use_replayssm=True)\n"):
        assert python_screen.candidate_lines(text) is False
    assert parses == []


@pytest.mark.parametrize("text", [
    'cmd = ["vllm", "serve", "m", "--use-replayssm"]\n',
    'cmd = ["vllm", "serve --use-replayssm"]\n',
    'SCRIPT = """\nvllm serve m --use-replayssm\n"""\n',
    'SCRIPT = """\nPORT=`free-port` vllm serve m --use-replayssm\n"""\n',  # a backtick, not inline code
    "from vllm import EngineArgs\nargs = EngineArgs(model='m', use_replayssm=True)\n",
    "from vllm import EngineArgs as EA\nargs = EA(model='m', use_replayssm=True)\n",
])
def test_the_screen_still_finds_what_can_launch(text):
    from flake8_replayssm.frontends import python_screen

    assert python_screen.candidate_lines(text)
