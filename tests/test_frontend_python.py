"""The Python frontend: which calls are launches, and what they say."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

from flake8_replayssm import check_source

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
