"""The Python frontend: which calls are launches, and what they say."""

from __future__ import annotations

import subprocess
import sys
import textwrap
import time

import pytest

from flake8_replayssm import check_source
from flake8_replayssm.config import LintConfig

NANO = "nvidia/NVIDIA-Nemotron-Nano-9B-v2"


def found(source: str, release: str = "0.33.0", **kw) -> list[tuple[int, int, str]]:
    return [(f.span.line, f.span.col, f.code)
            for f in check_source(textwrap.dedent(source), "python", vllm_version=release, **kw)]


def test_llm_keyword_launch_reported_at_the_keyword():
    src = f"""
    from vllm import LLM
    llm = LLM(
        model="{NANO}",
        use_replayssm=True,
    )
    """
    assert found(src) == [(5, 4, "RSM008")]
    assert found(src, "0.28.0") == []


@pytest.mark.parametrize("header,call", [
    ("from vllm import LLM as Engine", "Engine"),
    ("import vllm", "vllm.LLM"),
    ("import vllm as v", "v.LLM"),
    ("from vllm.engine.arg_utils import EngineArgs", "EngineArgs"),
    ("from vllm import AsyncEngineArgs", "AsyncEngineArgs"),
])
def test_aliases(header, call):
    src = f"{header}\nx = {call}('tiiuae/Falcon-H1-1.5B-Instruct', use_replayssm=True)\n"
    assert [c for _, _, c in found(src, "0.28.0")] == ["RSM001"]


def test_same_named_call_from_elsewhere_is_not_a_launch():
    src = "from mylib import LLM\nLLM('tiiuae/Falcon-H1-1.5B-Instruct', use_replayssm=True)\n"
    assert found(src, "0.28.0") == []


def test_kwargs_from_module_dict_and_model_constant():
    src = f"""
    from vllm import LLM
    MODEL = "{NANO}"
    CFG = dict(model=MODEL, use_replayssm=True, mamba_backend="flashinfer")
    LLM(**CFG)
    """
    assert found(src) == [(4, 24, "RSM002")]


def test_unknown_kwargs_are_judged_as_written_and_the_message_says_so():
    """DESIGN "judge what is written": **extra from elsewhere is assumed to add no ReplaySSM option."""
    src = textwrap.dedent(f"""
    from vllm import LLM
    def run(extra):
        return LLM("{NANO}", use_replayssm=True, **extra)
    """)
    [finding] = check_source(src, "python", vllm_version="0.33.0")
    assert (finding.span.line, finding.code) == (4, "RSM008")
    assert "assuming **extra adds no ReplaySSM option" in finding.message


def test_unknown_kwargs_under_the_strict_reading_suppress_absence_based_codes():
    from flake8_replayssm.config import LintConfig

    src = f"""
    from vllm import LLM
    def run(extra):
        return LLM("{NANO}", use_replayssm=True, **extra)
    """
    assert found(src, config=LintConfig(extra_args="open")) == []


def test_subprocess_argv_with_env():
    src = f"""
    import os, subprocess
    subprocess.Popen(["vllm", "serve", "{NANO}", "--use-replayssm"],
                     env={{**os.environ, "VLLM_USE_V2_MODEL_RUNNER": "0"}})
    subprocess.Popen(["vllm", "serve", "{NANO}", "--use-replayssm"],
                     env={{**os.environ, "VLLM_USE_V2_MODEL_RUNNER": "1"}})
    """
    line5 = textwrap.dedent(src).splitlines()[4]
    assert found(src) == [(5, line5.index('"--use-replayssm"'), "RSM008")]


def test_os_environ_assignment_applies_to_later_launches():
    src = f"""
    import os
    from vllm import LLM
    os.environ["VLLM_USE_V2_MODEL_RUNNER"] = "0"
    LLM("{NANO}", use_replayssm=True)
    """
    assert found(src) == []


def test_argv_list_built_with_extend():
    src = f"""
    import subprocess
    cmd = ["vllm", "serve", "{NANO}"]
    cmd += ["--use-replayssm", "--mamba-backend", "flashinfer"]
    subprocess.run(cmd, check=True)
    """
    assert [c for _, _, c in found(src)] == ["RSM002"]


def test_fstring_command_with_shell_and_split():
    src = f'''
    import os, subprocess
    port = 8000
    os.system(f"vllm serve tiiuae/Falcon-H1-1.5B-Instruct --port {{port}} --use-replayssm")
    subprocess.run(f"vllm serve {NANO} --port {{port}} --use-replayssm --mamba-backend flashinfer".split())
    '''
    result = found(src)
    assert [(line, code) for line, _, code in result] == [(4, "RSM001"), (4, "RSM008"), (5, "RSM002")]
    assert result[0][1] == src.splitlines()[3].index("--use-replayssm") - 4


def test_implicit_concatenation_positions():
    src = f'''
    import subprocess
    subprocess.Popen(
        "vllm serve {NANO} --port 8001 "
        "--use-replayssm --mamba-backend flashinfer",
        shell=True,
    )
    '''
    line5 = textwrap.dedent(src).splitlines()[4]
    assert found(src, "0.28.0") == [(5, line5.index("--use-replayssm"), "RSM004")]


def test_bash_c_string():
    src = f"""
    import subprocess
    subprocess.run(["bash", "-c", "VLLM_USE_V2_MODEL_RUNNER=1 vllm serve {NANO} --use-replayssm"])
    """
    assert [c for _, _, c in found(src)] == ["RSM008"]


def test_vllm_internals_are_not_launches():
    src = """
    from dataclasses import dataclass
    @dataclass
    class CacheConfig:
        use_replayssm: bool = False
        mamba_cache_mode: str = "none"
    def setup(cache_config):
        cache_config.use_replayssm = True
        parser.add_argument("--use-replayssm", action="store_true", help="vllm serve --use-replayssm")
    print("run: vllm serve tiiuae/Falcon-H1-1.5B-Instruct --use-replayssm")
    """
    assert found(src) == []


def test_syntax_error_is_reported_as_not_checked_at_the_parsers_line():
    assert found("from vllm import LLM\nLLM(use_replayssm=True,\n") == [(2, 3, "RSM900")]


def test_no_trigger_token_never_imports_libcst():
    code = ("import sys; from flake8_replayssm import check_source;"
            "check_source('from vllm import LLM\\nLLM(\"x\")\\n', 'python');"
            "print('libcst' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_trigger_without_a_possible_launch_is_screened_before_libcst():
    """vLLM's own config code mentions the flags but launches nothing: libcst is not needed."""
    src = ("import subprocess\nfrom dataclasses import dataclass\n"
           "@dataclass\nclass CacheConfig:\n    use_replayssm: bool = False\n"
           "    mamba_cache_mode: str = 'none'\n"
           "subprocess.run(['nvidia-smi'])\n")
    code = ("import sys; from flake8_replayssm import check_source;"
            f"assert check_source({src!r}, 'python') == [];"
            "print('libcst' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


@pytest.mark.parametrize("source", [
    "from vllm import LLM as make\nmake('tiiuae/Falcon-H1-1.5B-Instruct', use_replayssm=True)\n",
    "import subprocess\nCMD = ['vllm', 'serve', 'tiiuae/Falcon-H1-1.5B-Instruct']\n"
    "subprocess.run(CMD + ['--use-replayssm'])\n",
])
def test_screen_keeps_launches_through_aliases_and_names(source):
    assert [f.code for f in check_source(source, "python", vllm_version="0.28.0")] == ["RSM001"]


def test_notebook_cells_share_imports_and_constants():
    import json

    cells = [
        {"cell_type": "code", "metadata": {}, "outputs": [], "execution_count": None,
         "source": ["from vllm import LLM\n", "MODEL = 'tiiuae/Falcon-H1-1.5B-Instruct'\n"]},
        {"cell_type": "markdown", "metadata": {}, "source": ["Now the engine:"]},
        {"cell_type": "code", "metadata": {}, "outputs": [], "execution_count": None,
         "source": ["llm = LLM(\n", "    MODEL,\n", "    use_replayssm=True,\n", ")\n"]},
    ]
    text = json.dumps({"cells": cells, "metadata": {}, "nbformat": 4, "nbformat_minor": 5})
    found = check_source(text, "notebook", vllm_version="0.28.0")
    assert [(f.span.cell, f.span.line, f.code) for f in found] == [(2, 3, "RSM001")]


def test_serve_config_without_a_model_does_not_judge_the_default_model():
    config = "use-replayssm: true\nmamba-backend: flashinfer\ndisable-prefix-caching: true\n"
    assert check_source(config, "yaml", vllm_version="0.33.0") == []
    with_model = "model: tiiuae/Falcon-H1-1.5B-Instruct\n" + config
    assert [f.code for f in check_source(with_model, "yaml", vllm_version="0.33.0")] == ["RSM001"]


def test_environment_defaults_are_the_scripts_choice():
    src = """
    import os
    from vllm import LLM
    MODEL = os.environ.get("MODEL_ID", "tiiuae/Falcon-H1-1.5B-Instruct")
    LLM(MODEL, use_replayssm=True)
    LLM(os.getenv("OTHER", "tiiuae/Falcon-H1-1.5B-Instruct"), use_replayssm=True)
    LLM(os.environ["MODEL_ID"], use_replayssm=True)
    """
    assert [(line, code) for line, _, code in found(src, "0.28.0")] == [(5, "RSM001"), (6, "RSM001")]


def test_joined_argv_run_through_a_shell():
    src = """
    import subprocess
    cmd = ["vllm", "serve", "tiiuae/Falcon-H1-1.5B-Instruct", "--use-replayssm"]
    subprocess.run(" ".join(cmd), shell=True, check=True)
    """
    assert [(line, code) for line, _, code in found(src, "0.28.0")] == [(3, "RSM001")]


# -- os.environ written where the launch may or may not see it (review item 2) ---------------
def lines(source: str) -> list[tuple[int, str]]:
    return [(line, code) for line, _, code in found(source)]


def strict(source: str) -> list[str]:
    """The codes under the strict reading of unseen extra arguments (extra-args = "open")."""
    config = LintConfig(vllm_version="0.33.0", extra_args="open")
    return [f.code for f in check_source(source, "python", config=config)]


_LAUNCH = f'LLM(model="{NANO}", use_replayssm=True)'


@pytest.mark.parametrize("src", [
    # set under `if __name__ == "__main__":` after the function that launches
    f'import os\nfrom vllm import LLM\ndef main():\n    {_LAUNCH}\nif __name__ == "__main__":\n'
    '    os.environ["VLLM_USE_V2_MODEL_RUNNER"] = "0"\n    main()\n',
    # set by another function (which holds no launch itself)
    f'import os\nfrom vllm import LLM\ndef setup_env():\n    os.environ["VLLM_USE_V2_MODEL_RUNNER"] = "0"\n'
    f'def run():\n    return {_LAUNCH}\n',
    # a pytest fixture's monkeypatch
    f'from vllm import LLM\ndef test_launch(monkeypatch):\n    monkeypatch.setenv("VLLM_USE_V2_MODEL_RUNNER", "0")\n'
    f'    {_LAUNCH}\n',
    # patched for a block, or for a test by a decorator
    f'import os\nfrom unittest import mock\nfrom vllm import LLM\n'
    f'with mock.patch.dict(os.environ, {{"VLLM_USE_V2_MODEL_RUNNER": "0"}}):\n    {_LAUNCH}\n',
    f'import os\nfrom unittest.mock import patch\nfrom vllm import LLM\n'
    f'@patch.dict("os.environ", {{"VLLM_USE_V2_MODEL_RUNNER": "0"}})\ndef test_launch():\n    {_LAUNCH}\n',
    f'import os\nfrom vllm import LLM\nos.putenv("VLLM_USE_V2_MODEL_RUNNER", "0")\n{_LAUNCH}\n',
])
def test_an_environment_written_out_of_line_is_not_asserted_unset(src):
    assert found(src) == []


@pytest.mark.parametrize("src", [
    f'import os\nfrom unittest import mock\nfrom vllm import LLM\n'
    f'with mock.patch.dict(os.environ, ENV):\n    {_LAUNCH}\n',
    # read from a file the linter does not lint
    f'from dotenv import load_dotenv\nfrom vllm import LLM\nload_dotenv()\n{_LAUNCH}\n',
    f'import os\nfrom dotenv import dotenv_values\nfrom vllm import LLM\n'
    f'os.environ.update(dotenv_values())\n{_LAUNCH}\n',
    f'import os\nfrom vllm import LLM\nos.environ.update(load_settings())\n{_LAUNCH}\n',
])
def test_an_environment_the_file_does_not_show_is_assumed_to_set_nothing(src):
    """DESIGN.md: an unseen environment is read like unseen extra arguments; the finding says so,
    and the strict reading (extra-args = "open") reports nothing that rests on it."""
    reported = check_source(src, "python", config=LintConfig(vllm_version="0.33.0"))
    assert [f.code for f in reported] == ["RSM008"]
    assert "sets no VLLM_USE_V2_MODEL_RUNNER)" in reported[0].message
    assert strict(src) == []


def test_environment_writes_count_only_where_they_can_run_before_the_launch():
    base = f'import os\nfrom vllm import LLM\n{_LAUNCH}\n'
    assert lines(base) == [(3, "RSM008")]
    # a function defined before a module-level launch may have run
    assert lines(base.replace("LLM\n", 'LLM\ndef setup():\n    os.environ["VLLM_USE_V2_MODEL_RUNNER"] = "0"\n')) == []
    # later in the module, or in a function defined after a module-level launch: too late
    assert lines(base + 'os.environ["VLLM_USE_V2_MODEL_RUNNER"] = "0"\n') == [(3, "RSM008")]
    assert lines(base + 'def later():\n    os.environ["VLLM_USE_V2_MODEL_RUNNER"] = "0"\n') == [(3, "RSM008")]
    # written elsewhere is "maybe": both readings hold RSM008 when the value written is 1
    elsewhere_v2 = f'import os\nfrom vllm import LLM\ndef v2():\n    os.environ["VLLM_USE_V2_MODEL_RUNNER"] = "1"\n' \
        f'def run():\n    {_LAUNCH}\n'
    assert lines(elsewhere_v2) == [(6, "RSM008")]
    # straight-line in the launching function: a known value
    assert lines(f'import os\nfrom vllm import LLM\ndef run():\n    os.environ["VLLM_USE_V2_MODEL_RUNNER"] = "1"\n'
                 f'    {_LAUNCH}\n') == [(5, "RSM008")]


def test_a_command_inherits_an_environment_read_from_a_dotenv_file():
    src = f'import subprocess\nsubprocess.run(["vllm", "serve", "{NANO}", "--use-replayssm"])\n'
    assert [c for _, _, c in found(src)] == ["RSM008"]
    dotenv = "from dotenv import load_dotenv\nload_dotenv()\n" + src
    assert [c for _, _, c in found(dotenv)] == ["RSM008"]  # assumed to set nothing, and said so
    assert strict(dotenv) == []


# -- dicts changed in place before **cfg (review item 3) --------------------------------------
@pytest.mark.parametrize("change", [
    'cfg.update(mamba_backend="flashinfer", enable_prefix_caching=False)',
    'cfg.update({"mamba_backend": "flashinfer", "enable_prefix_caching": False})',
    'cfg |= {"mamba_backend": "flashinfer", "enable_prefix_caching": False}',
    'cfg["mamba_backend"] = "flashinfer"\ncfg["enable_prefix_caching"] = False',
    'cfg.setdefault("mamba_backend", "flashinfer")\ncfg.setdefault("enable_prefix_caching", False)',
])
def test_a_dict_changed_in_place_before_the_launch(change):
    src = f'from vllm import LLM\ncfg = {{"model": "{NANO}", "use_replayssm": True}}\n{change}\nLLM(**cfg)\n'
    assert found(src) == []
    assert [c for _, _, c in found(src.replace("False", "True"))] == ["RSM002"]


def test_dict_entries_removed_or_changed_where_the_launch_may_not_see_it():
    base = f'from vllm import LLM\ncfg = {{"model": "{NANO}", "use_replayssm": True, ' \
        '"mamba_backend": "flashinfer", "enable_prefix_caching": False}\n'
    assert found(base + "LLM(**cfg)\n") == []
    assert [c for _, _, c in found(base + 'del cfg["mamba_backend"]\nLLM(**cfg)\n')] == ["RSM008"]
    assert [c for _, _, c in found(base + 'cfg.pop("mamba_backend", None)\nLLM(**cfg)\n')] == ["RSM008"]
    assert found(base + "LLM(**cfg)\ndel cfg['mamba_backend']\n") == []  # after the launch
    # changed in another function, or in a loop: that key is not known
    other = base.replace('"mamba_backend": "flashinfer", ', "")
    assert [c for _, _, c in found(other + "LLM(**cfg)\n")] == ["RSM008"]
    assert found(other + 'def pick():\n    cfg["mamba_backend"] = "flashinfer"\ndef run():\n    LLM(**cfg)\n') == []
    assert found(other + 'for b in BACKENDS:\n    cfg["mamba_backend"] = b\nLLM(**cfg)\n') == []
    # update(<unseen>): extra keys unseen, judged as written and said so (strict reading: none)
    unseen = other + "cfg.update(load())\nLLM(**cfg)\n"
    assert [c for _, _, c in found(unseen)] == ["RSM008"]
    assert "assuming **cfg adds no ReplaySSM option" in check_source(unseen, "python", vllm_version="0.33.0")[0].message
    assert strict(unseen) == []


# -- argv lists and command strings changed in place (review item 4) --------------------------
_ARGV = f'import subprocess\ncmd = ["vllm", "serve", "{NANO}", "--use-replayssm"]\n'


@pytest.mark.parametrize("src", [
    _ARGV + 'cmd[4:4] = ["--mamba-backend", "flashinfer", "--disable-prefix-caching"]\nsubprocess.run(cmd)\n',
    _ARGV + 'cmd[2:2] = ["--mamba-backend", "flashinfer", "--disable-prefix-caching"]\nsubprocess.run(cmd)\n',
    _ARGV + 'cmd.insert(3, "--disable-prefix-caching")\ncmd.insert(-1, "--mamba-backend=flashinfer")\n'
    'subprocess.run(cmd)\n',
    _ARGV + 'del cmd[3]\nsubprocess.run(cmd)\n',
    _ARGV + 'cmd.pop()\nsubprocess.run(cmd)\n',
    _ARGV + 'cmd[3] = "--enforce-eager"\nsubprocess.run(cmd)\n',
    f'import subprocess\ncmd = "vllm serve {NANO} --use-replayssm"\n'
    'cmd += " --mamba-backend flashinfer --disable-prefix-caching"\nsubprocess.run(cmd, shell=True)\n',
    f'import os\ncmd = "vllm serve {NANO} --use-replayssm"\ncmd += " --mamba-backend flashinfer"\n'
    'cmd += " --disable-prefix-caching"\nos.system(cmd)\n',
])
def test_a_command_changed_in_place_before_it_runs(src):
    assert found(src) == []


@pytest.mark.parametrize("change", [
    "cmd.sort()",
    "cmd[i:i] = more",
])
def test_a_change_not_understood_leaves_extra_arguments_unseen_not_dropped(change):
    src = _ARGV + change + "\nsubprocess.run(cmd)\n"
    findings = check_source(src, "python", vllm_version="0.33.0")
    assert [f.code for f in findings] == ["RSM008"]
    assert "assuming" in findings[0].message
    assert strict(src) == []


def test_unseen_parts_of_a_changed_command_stay_unseen():
    src = f'import subprocess\ncmd = "vllm serve {NANO} --use-replayssm"\ncmd += extra\n' \
        'subprocess.run(cmd, shell=True)\n'
    assert [c for _, _, c in found(src)] == ["RSM008"]
    assert strict(src) == []
    # an index into a list with an unseen part cannot be placed: unseen, not applied
    indexed = _ARGV + 'cmd += more\ndel cmd[3]\nsubprocess.run(cmd)\n'
    assert [c for _, _, c in found(indexed)] == ["RSM008"]
    assert strict(indexed) == []


# -- bounds and suppressions (review items 19a and noqa) -------------------------------------
@pytest.mark.parametrize("literal", ["'{}'", "f'{{MODEL}} {}'"])
def test_a_huge_command_string_is_bounded_before_it_is_read(literal):
    body = f"vllm serve {NANO} --use-replayssm " + "a" * 1_000_000
    src = "import os\nos.system(" + literal.format(body) + ")\n"
    began = time.perf_counter()
    findings = check_source(src, "python", vllm_version="0.33.0")
    assert time.perf_counter() - began < 3
    assert [f.code for f in findings] == ["RSM900"]
    assert "longer than" in findings[0].message


@pytest.mark.parametrize("where", [0, 3])  # the call's first and last lines, which hold no word
def test_noqa_on_any_line_of_a_multiline_python_call(where):
    lines = ["import subprocess", "subprocess.run([", '    "vllm", "serve", "tiiuae/Falcon-H1-7B-Instruct",',
             '    "--use-replayssm",', "])"]
    assert sorted(c for _, _, c in found("\n".join(lines) + "\n")) == ["RSM001", "RSM008"]
    lines[1 + where] += "  # noqa: RSM001"
    assert [c for _, _, c in found("\n".join(lines) + "\n")] == ["RSM008"]


def test_noqa_on_the_closing_line_of_an_engine_call():
    src = f'from vllm import LLM\nllm = LLM(\n    model="{NANO}",\n    use_replayssm=True,\n){{}}\n'
    assert lines(src.format("")) == [(4, "RSM008")]
    assert lines(src.format("  # noqa: RSM008")) == []
