"""``replayssm-lint fix`` end to end: what it says, what it exits with, and the fixes issue 9 asks for.

Facts used (reference/vllm-replayssm-rules.md): on 0.33.0 a plain Nemotron-H Triton
launch is RSM008 (Model Runner V2 is the CUDA default), FlashInfer needs prefix
caching off (RSM002; on by default for hybrid models from 0.28), the FlashInfer
buffer is at most 16 (RSM007); ``--disable-prefix-caching`` exists from 0.33
(``--no-enable-prefix-caching`` before); the api_server module reads the model only
from ``--model`` (RSM103).
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from flake8_replayssm import cli, target
from flake8_replayssm.config import LintConfig
from flake8_replayssm.fix.codemod import fix_text
from flake8_replayssm.lint import lint_text

NANO = "nvidia/NVIDIA-Nemotron-Nano-9B-v2"
FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"
#: codes no automatic fix can resolve (a choice only the user can make), and "not checked"
REPORT_ONLY = {"RSM003", "RSM005", "RSM007", "RSM009", "RSM201", "RSM900",
               "RSM303", "RSM304", "RSM306", "RSM307", "RSM308"}


@pytest.fixture(autouse=True)
def _no_installed_vllm(monkeypatch):
    monkeypatch.setattr(target, "installed_version", lambda package: None)


def fix(capsys, *args: str) -> tuple[int, str, str]:
    code = cli.main(["fix", *args])
    out, err = capsys.readouterr()
    assert "Traceback" not in out + err
    return code, out, err


def codes(text: str, kind: str, release: str = "0.33.0") -> list[str]:
    return sorted(f.code for f in lint_text(text, kind, LintConfig(vllm_version=release)).findings)


def fixed(text: str, kind: str, release: str = "0.33.0", *, unsafe: bool = False) -> str:
    return fix_text(text, kind, LintConfig(vllm_version=release), unsafe=unsafe).text


# ---------------------------------------------------------------- what fix says, and its exit status

def test_fix_names_every_finding_left_with_its_reason_and_counts_them(tmp_path, capsys):
    script = tmp_path / "serve.sh"
    script.write_text(f"vllm serve {NANO} --use-replayssm --mamba-backend flashinfer --replayssm-buffer-len 32\n"
                      "vllm serve tiiuae/Falcon-H1-1.5B-Instruct --use-replayssm\n")
    code, out, _ = fix(capsys, "--vllm-version", "0.33.0", str(script))
    assert code == 1  # findings remain
    lines = out.splitlines()
    assert any("RSM007" in line and "[not fixed: no automatic fix for this code]" in line for line in lines)
    assert any("RSM001" in line and "[not fixed: needs --unsafe: removing --use-replayssm" in line for line in lines)
    # Falcon-H1 cannot use ReplaySSM (RSM001): its RSM008 gets no safe fix (pinning the runner would
    # leave a launch that still fails); dropping the flag, with --unsafe, fixes both
    assert any("RSM008" in line and "see RSM001" in line and "[not fixed: needs --unsafe: dropping "
               "--use-replayssm for the unsupported model (RSM001) removes it too]" in line for line in lines)
    assert f"fixed {script}: RSM002" in lines
    # RSM002 on line 1 fixed; RSM007, and RSM001 + RSM008 on line 2, left
    assert lines[-1] == "Found 4 findings (1 fixed, 3 remaining); 2 more fixable with --unsafe."
    assert "--disable-prefix-caching" in script.read_text()
    assert script.read_text().splitlines()[1] == "vllm serve tiiuae/Falcon-H1-1.5B-Instruct --use-replayssm"


def test_fix_counts_findings_not_edits(tmp_path, capsys):
    """One RSM008 fixed by an environment word and a pinned backend is one RSM008; two are x2."""
    script = tmp_path / "serve.sh"
    script.write_text(f"vllm serve {NANO} --use-replayssm\n")
    code, out, _ = fix(capsys, "--vllm-version", "0.32.0", str(script))
    assert script.read_text() == (f"VLLM_USE_V2_MODEL_RUNNER=0 vllm serve {NANO} --use-replayssm "
                                  "--mamba-cache-mode align --mamba-backend triton\n")
    assert (code, out.splitlines()) == (0, [f"fixed {script}: RSM008", "Found 1 finding (1 fixed, 0 remaining)."])
    script.write_text(f"vllm serve {NANO} --use-replayssm\nvllm serve {NANO} --use-replayssm --port 8001\n")
    code, out, _ = fix(capsys, "--vllm-version", "0.33.0", str(script))
    assert (code, out.splitlines()) == (0, [f"fixed {script}: RSM008 x2", "Found 2 findings (2 fixed, 0 remaining)."])


def test_an_unsupported_model_gets_only_the_fix_that_drops_the_flag(tmp_path, capsys):
    script = tmp_path / "serve.sh"
    launch = "vllm serve tiiuae/Falcon-H1-1.5B-Instruct --use-replayssm --enable-prefix-caching\n"
    for release in ("0.27.0", "0.33.0"):  # RSM002 (align mode) on 0.27, RSM008 (the runner) on 0.33
        script.write_text(launch)
        code, out, _ = fix(capsys, "--diff", "--vllm-version", release, str(script))
        assert (code, out) == (1, "")  # no safe edit: the launch would fail all the same
        code, out, _ = fix(capsys, "--unsafe", "--vllm-version", release, str(script))
        assert script.read_text() == launch.replace(" --use-replayssm", "")
        assert code == 0 and out.splitlines()[0] == f"fixed {script}: " + (
            "RSM001, RSM002" if release == "0.27.0" else "RSM001, RSM008")


def test_a_launch_with_an_unfixable_code_still_gets_its_safe_fixes():
    text = f"vllm serve {NANO} --use-replayssm --mamba-backend flashinfer --replayssm-buffer-len 32\n"
    assert codes(text, "shell") == ["RSM002", "RSM007"]
    after = fixed(text, "shell")
    assert codes(after, "shell") == ["RSM007"]
    assert after == text.replace("--use-replayssm", "--use-replayssm --disable-prefix-caching")


def test_exit_0_when_nothing_is_left(tmp_path, capsys):
    script = tmp_path / "serve.sh"
    script.write_text(f"vllm serve {NANO} --use-replayssm\n")
    code, out, _ = fix(capsys, "--vllm-version", "0.33.0", str(script))
    assert (code, out.splitlines()[-1]) == (0, "Found 1 finding (1 fixed, 0 remaining).")
    assert fix(capsys, "--vllm-version", "0.33.0", str(script))[:2] == (0, "No findings.\n")


def test_missing_path_is_an_error(tmp_path, capsys):
    code, out, err = fix(capsys, str(tmp_path / "nosuch.sh"))
    assert (code, out) == (2, "No findings.\n") and f"{tmp_path / 'nosuch.sh'}: no such file or directory" in err


def test_diff_keeps_stdout_a_clean_diff(tmp_path, capsys):
    script = tmp_path / "serve.sh"
    script.write_text(f"vllm serve {NANO} --use-replayssm --replayssm-buffer-len 32 --mamba-backend flashinfer\n")
    code, out, err = fix(capsys, "--diff", "--vllm-version", "0.33.0", str(script))
    assert code == 1
    assert out.startswith("--- a/") and "RSM007" not in out
    assert "RSM007" in err and err.splitlines()[-1].startswith("Found 2 findings (1 fixable, 1 remaining)")


# ---------------------------------------------------------------- --unsafe resolves explicit settings

@pytest.mark.parametrize("release,off", [("0.33.0", "--disable-prefix-caching"),
                                         ("0.32.0", "--no-enable-prefix-caching")])
def test_unsafe_turns_explicit_prefix_caching_off_for_flashinfer(release, off):
    text = f"vllm serve {NANO} --use-replayssm --mamba-backend flashinfer --enable-prefix-caching\n"
    assert "RSM002" in codes(text, "shell", release)
    assert fixed(text, "shell", release) == text  # an explicit setting: only --unsafe changes it
    after = fixed(text, "shell", release, unsafe=True)
    assert after == text.replace("--enable-prefix-caching", off)
    assert codes(after, "shell", release) == []


def test_unsafe_turns_explicit_prefix_caching_off_for_mamba2_speculative_decoding():
    text = (f"vllm serve {NANO} --use-replayssm --mamba-backend flashinfer --enable-prefix-caching "
            "--speculative-config '{\"method\": \"ngram\", \"num_speculative_tokens\": 2}'\n")
    assert "RSM002" in codes(text, "shell", "0.32.0")
    after = fixed(text, "shell", "0.32.0", unsafe=True)
    assert "--no-enable-prefix-caching" in after and "RSM002" not in codes(after, "shell", "0.32.0")


def test_unsafe_turns_keyword_prefix_caching_off():
    text = (f'from vllm import LLM\nLLM("{NANO}", use_replayssm=True, mamba_backend="flashinfer",\n'
            "    enable_prefix_caching=True)\n")
    assert fixed(text, "python") == text
    after = fixed(text, "python", unsafe=True)
    assert after == text.replace("enable_prefix_caching=True", "enable_prefix_caching=False")
    assert codes(after, "python") == []


def test_prefix_caching_on_by_default_is_turned_off_safely():
    text = f'from vllm import LLM\nLLM("{NANO}", use_replayssm=True, mamba_backend="flashinfer")\n'
    after = fixed(text, "python")
    assert after == text.replace('use_replayssm=True,', 'use_replayssm=True, enable_prefix_caching=False,')
    assert codes(after, "python") == []


@pytest.mark.parametrize("kind,text", [
    ("shell", f"VLLM_USE_V2_MODEL_RUNNER=1 vllm serve {NANO} --use-replayssm\n"),
    ("python", "import os, subprocess\n"
               f'subprocess.run(["vllm", "serve", "{NANO}", "--use-replayssm"],\n'
               '               env={**os.environ, "VLLM_USE_V2_MODEL_RUNNER": "1"})\n'),
    ("yaml", "apiVersion: v1\nkind: Pod\nmetadata: {name: v}\nspec:\n  containers:\n    - name: v\n"
             "      image: vllm/vllm-openai:v0.33.0\n"
             f'      args: ["--model", "{NANO}", "--use-replayssm"]\n'
             '      env:\n        - name: VLLM_USE_V2_MODEL_RUNNER\n          value: "1"\n'),
])
def test_unsafe_sets_an_explicit_v2_runner_to_0(kind, text):
    assert codes(text, kind) == ["RSM008"]
    assert fixed(text, kind) == text
    after = fixed(text, kind, unsafe=True)
    assert codes(after, kind) == []
    assert "VLLM_USE_V2_MODEL_RUNNER=0" in after or '"VLLM_USE_V2_MODEL_RUNNER": "0"' in after \
        or 'value: "0"' in after


def test_unsafe_llm_environment_fix_adds_import_os_when_missing():
    text = f'"""Doc."""\nfrom vllm import LLM\n\nllm = LLM("{NANO}", use_replayssm=True)\n'
    after = fixed(text, "python", unsafe=True)
    assert after == ('"""Doc."""\nfrom vllm import LLM\nimport os\n\n'
                     'os.environ["VLLM_USE_V2_MODEL_RUNNER"] = "0"\n'
                     f'llm = LLM("{NANO}", use_replayssm=True, mamba_backend="triton")\n')
    assert codes(after, "python") == []


def test_unsafe_explicit_prefix_caching_off_with_a_block_size_is_turned_on():
    text = ('from vllm import EngineArgs\nEngineArgs(model="ibm-granite/granite-4.0-h-tiny",\n'
            "           enable_prefix_caching=False, mamba_block_size=512)\n")
    assert codes(text, "python", "0.28.0") == ["RSM006"]
    after = fixed(text, "python", "0.28.0", unsafe=True)
    assert "enable_prefix_caching=True" in after and codes(after, "python", "0.28.0") == []


# ---------------------------------------------------------------- RSM103 and Markdown

def test_rsm103_positional_model_becomes_model_option():
    text = f"python -m vllm.entrypoints.openai.api_server {NANO} --port 8000\n"
    assert codes(text, "shell") == ["RSM103"]
    after = fixed(text, "shell")
    assert after == f"python -m vllm.entrypoints.openai.api_server --model {NANO} --port 8000\n"
    assert codes(after, "shell") == []


def test_markdown_fences_get_insertions_and_deletions():
    text = (f"# Recipe\n\n```bash\nvllm serve {NANO} \\\n  --use-replayssm \\\n  --port 8000\n```\n\n"
            f"```console\n$ python -m vllm.entrypoints.openai.api_server {NANO} --use-replayssm\n```\n\n"
            "```bash\nvllm serve tiiuae/Falcon-H1-1.5B-Instruct --use-replayssm\n```\n")
    after = fixed(text, "markdown", unsafe=True)
    assert f"VLLM_USE_V2_MODEL_RUNNER=0 vllm serve {NANO} \\\n  --use-replayssm --mamba-backend triton \\\n" in after
    assert (f"$ VLLM_USE_V2_MODEL_RUNNER=0 python -m vllm.entrypoints.openai.api_server --model {NANO} "
            "--use-replayssm --mamba-backend triton\n") in after
    assert "vllm serve tiiuae/Falcon-H1-1.5B-Instruct\n" in after  # RSM001: the flag removed
    assert codes(after, "markdown") == []


# ---------------------------------------------------------------- fixes converge

def test_environment_fix_the_linter_cannot_see_is_not_repeated():
    """`import os` after the function: the inserted line is not seen, so no round keeps it."""
    text = (f'from vllm import LLM\n\n\ndef main():\n    return LLM("{NANO}", use_replayssm=True)\n\n\n'
            "import os\n")
    assert fixed(text, "python", unsafe=True) == text


@pytest.mark.parametrize("text", [
    "apiVersion: v1\nkind: Pod\nmetadata: {name: v}\nspec:\n  containers:\n    - name: v\n"
    "      image: vllm/vllm-openai:v0.33.0\n      env:\n        - name: A\n          value: \"1\"\n"
    f'      args: ["--model", "{NANO}", "--use-replayssm"]\n'
    "      env:\n        - name: B\n          value: \"2\"\n",
    "services:\n  vllm:\n    image: vllm/vllm-openai:v0.33.0\n    environment:\n      A: \"1\"\n"
    f'    command: ["--model", "{NANO}", "--use-replayssm"]\n    environment:\n      B: "2"\n',
])
def test_documents_with_a_repeated_key_converge(text):
    once = fixed(text, "yaml")
    assert fixed(once, "yaml") == once
    assert once.count("VLLM_USE_V2_MODEL_RUNNER") <= 1


# ---------------------------------------------------------------- the bundled launches

def test_fix_unsafe_on_the_bundled_launches_leaves_only_report_only_codes_each_named(tmp_path, capsys):
    copy = tmp_path / "fixtures"
    shutil.copytree(FIXTURES, copy)
    code, out, _ = fix(capsys, "--unsafe", str(copy))
    assert code == 1
    assert cli.main(["check", "--format", "json", str(copy)]) == 1
    left = json.loads(capsys.readouterr().out)
    assert {item["code"] for item in left} <= REPORT_ONLY
    for item in left:
        where = f"{item['path']}:" + (f"cell {item['cell']}:" if "cell" in item else "") + \
            f"{item['line']}:{item['column']}: {item['code']} "
        assert any(line.startswith(where) and "[not fixed: " in line for line in out.splitlines()), where
