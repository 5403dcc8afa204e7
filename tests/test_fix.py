"""``replayssm-lint fix``: golden before/after pairs, idempotence, re-lint, safety."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conftest import FIX_FAMILIES, FIX_RELEASES, fixable_left
from flake8_replayssm import cli
from flake8_replayssm.config import LintConfig
from flake8_replayssm.fix import codemod
from flake8_replayssm.fix.codemod import fix_text
from flake8_replayssm.fix.edits import Edit, OverlapError, apply_edits
from flake8_replayssm.lint import lint_text

FIXTURES = Path(__file__).resolve().parent / "fix_pairs"
HEAD = "import os\nimport subprocess\nfrom vllm import LLM\n# untouched line  \t\n"
TAIL = "x = 1  # untouched too\n"
M = "nvidia/Nemotron-H-8B-Base-8K"
needs_shell = pytest.mark.skipif(not (Path(cli.__file__).parent / "frontends" / "shell" / "__init__.py").exists(),
                                 reason="the shell frontend is not there yet")


def codes(text: str, version: str, kind: str = "python") -> list[str]:
    return sorted(f.code for f in lint_text(text, kind, LintConfig(vllm_version=version)).findings)


def fixed(text: str, version: str, *, unsafe: bool = False, kind: str = "python") -> str:
    outcome = fix_text(text, kind, LintConfig(vllm_version=version), unsafe=unsafe)
    assert outcome.error is None
    return outcome.text


# (id, release, unsafe, before body, after body, codes that must be gone)
GOLDEN = [
    ("rsm002-pin-list-0.27", "0.27.0", False,
     f'subprocess.run(["vllm", "serve", "{M}", "--use-replayssm", "--enable-prefix-caching"])\n',
     f'subprocess.run(["vllm", "serve", "{M}", "--use-replayssm", "--mamba-cache-mode", "align", '
     f'"--mamba-backend", "triton", "--enable-prefix-caching"])\n',
     {"RSM002"}),
    ("rsm002-value-list-0.28", "0.28.0", False,
     f'subprocess.run(["vllm", "serve", "{M}", "--use-replayssm", "--mamba-cache-mode", "all"])\n',
     f'subprocess.run(["vllm", "serve", "{M}", "--use-replayssm", "--mamba-cache-mode", "align"])\n',
     {"RSM002"}),
    ("rsm002-inline-equals-0.28", "0.28.0", False,
     f"subprocess.run(['vllm', 'serve', '{M}', '--use-replayssm', '--mamba-cache-mode=all'])\n",
     f"subprocess.run(['vllm', 'serve', '{M}', '--use-replayssm', '--mamba-cache-mode=align'])\n",
     {"RSM002"}),
    ("rsm002-kwargs-multiline-0.27", "0.27.0", False,
     f'llm = LLM(\n    "{M}",\n    use_replayssm=True,  # on\n    enable_prefix_caching=True,\n)\n',
     f'llm = LLM(\n    "{M}",\n    use_replayssm=True,  # on\n    mamba_cache_mode="align",\n'
     f'    mamba_backend="triton",\n    enable_prefix_caching=True,\n)\n',
     {"RSM002"}),
    ("rsm002-kwargs-no-trailing-comma-0.27", "0.27.0", False,
     f'llm = LLM(\n    "{M}",\n    enable_prefix_caching=True,\n    use_replayssm=True\n)\n',
     f'llm = LLM(\n    "{M}",\n    enable_prefix_caching=True,\n    use_replayssm=True,\n'
     f'    mamba_cache_mode="align",\n    mamba_backend="triton"\n)\n',
     {"RSM002"}),
    ("rsm008-env-kwarg-0.30", "0.30.0", False,
     f'subprocess.run(["vllm", "serve", "{M}", "--use-replayssm"], check=True)\n',
     f'subprocess.run(["vllm", "serve", "{M}", "--use-replayssm", "--mamba-cache-mode", "align", '
     f'"--mamba-backend", "triton"], check=True, env={{**os.environ, "VLLM_USE_V2_MODEL_RUNNER": "0"}})\n',
     {"RSM008"}),
    ("rsm008-env-dict-0.32", "0.32.0", False,
     f'subprocess.run(["vllm", "serve", "{M}", "--use-replayssm"], env={{"PATH": "/usr/bin"}})\n',
     f'subprocess.run(["vllm", "serve", "{M}", "--use-replayssm", "--mamba-cache-mode", "align", '
     f'"--mamba-backend", "triton"], env={{"VLLM_USE_V2_MODEL_RUNNER": "0", "PATH": "/usr/bin"}})\n',
     {"RSM008"}),
    ("rsm008-shell-string-0.33", "0.33.0", False,
     f'os.system("cd /srv && vllm serve {M} --use-replayssm --port 8000")\n',
     f'os.system("cd /srv && VLLM_USE_V2_MODEL_RUNNER=0 vllm serve {M} --use-replayssm '
     f'--mamba-backend triton --port 8000")\n',
     {"RSM008"}),
    ("rsm008-docker-0.31", "0.31.0", False,
     f'subprocess.run(["docker", "run", "--gpus", "all", "vllm/vllm-openai:latest", "--model", "{M}", '
     f'"--use-replayssm"])\n',
     f'subprocess.run(["docker", "run", "--gpus", "all", "-e", "VLLM_USE_V2_MODEL_RUNNER=0", '
     f'"vllm/vllm-openai:latest", "--model", "{M}", "--use-replayssm", "--mamba-cache-mode", "align", '
     f'"--mamba-backend", "triton"])\n',
     {"RSM008"}),
    ("rsm104-multiline-list-0.33", "0.33.0", False,
     f'subprocess.run(\n    [\n        "vllm", "serve", "{M}",\n        "--use-replayssm",\n'
     f'        "--mamba-cache-mode", "all",\n    ],\n    check=True,\n)\n',
     f'subprocess.run(\n    [\n        "vllm", "serve", "{M}",\n        "--use-replayssm", '
     f'"--mamba-backend", "triton",\n    ],\n    check=True,\n'
     f'    env={{**os.environ, "VLLM_USE_V2_MODEL_RUNNER": "0"}},\n)\n',
     {"RSM104", "RSM008"}),
    ("rsm104-disable-alias-0.32", "0.32.0", False,
     f'subprocess.run(["vllm", "serve", "{M}", "--use-replayssm", "--mamba-backend", "flashinfer", '
     f'"--disable-prefix-caching"])\n',
     f'subprocess.run(["vllm", "serve", "{M}", "--use-replayssm", "--mamba-backend", "flashinfer", '
     f'"--no-enable-prefix-caching"])\n',
     {"RSM104", "RSM002"}),
    ("rsm105-kwargs-0.33", "0.33.0", False,
     f'LLM("{M}", use_replayssm=True, mamba_backend="flashinfer", enable_prefix_caching=False, '
     f'mamba_cache_mode="none")\n',
     f'LLM("{M}", use_replayssm=True, mamba_backend="flashinfer", enable_prefix_caching=False)\n',
     {"RSM105"}),
    ("rsm105-list-0.33", "0.33.0", False,
     f'subprocess.run(["vllm", "serve", "{M}", "--mamba-cache-mode", "align", "--use-replayssm", '
     f'"--mamba-backend", "flashinfer", "--disable-prefix-caching"])\n',
     f'subprocess.run(["vllm", "serve", "{M}", "--use-replayssm", '
     f'"--mamba-backend", "flashinfer", "--disable-prefix-caching"])\n',
     {"RSM105"}),
    ("rsm101-rsm106-list-0.29", "0.29.0", False,
     f'subprocess.run(["vllm", "serve", "{M}", "--use-replayssm=true", "--config=cfg.yaml"])\n',
     f'subprocess.run(["vllm", "serve", "{M}", "--use-replayssm", "--config", "cfg.yaml"])\n',
     {"RSM101", "RSM106"}),
    ("rsm101-string-0.28", "0.28.0", False,
     f'os.system("vllm serve {M} --config=cfg.yaml")\n',
     f'os.system("vllm serve {M} --config cfg.yaml")\n',
     {"RSM101"}),
    ("rsm106-stray-word-0.29", "0.29.0", False,
     f'os.system("vllm serve {M} --use-replayssm true --port 8000")\n',
     f'os.system("vllm serve {M} --use-replayssm --port 8000")\n',
     {"RSM106"}),
    ("rsm006-string-0.27", "0.27.0", False,
     f'os.system("vllm serve {M} --mamba-block-size 64")\n',
     f'os.system("vllm serve {M} --mamba-block-size 64 --enable-prefix-caching")\n',
     {"RSM006"}),
    ("rsm006-then-rsm002-0.27", "0.27.0", False,
     f'os.system("vllm serve {M} --use-replayssm --mamba-block-size 64")\n',
     f'os.system("vllm serve {M} --use-replayssm --mamba-cache-mode align --mamba-backend triton '
     f'--mamba-block-size 64 --enable-prefix-caching")\n',
     {"RSM006", "RSM002"}),
    ("unsafe-rsm001-0.28", "0.28.0", True,
     'LLM("state-spaces/mamba-130m-hf", use_replayssm=True, max_model_len=4096)\n'
     'subprocess.run(["vllm", "serve", "state-spaces/mamba-130m-hf", "--use-replayssm"])\n'
     'LLM(\n    "state-spaces/mamba-130m-hf",\n    max_model_len=4096,\n    use_replayssm=True\n)\n',
     'LLM("state-spaces/mamba-130m-hf", max_model_len=4096)\n'
     'subprocess.run(["vllm", "serve", "state-spaces/mamba-130m-hf"])\n'
     'LLM(\n    "state-spaces/mamba-130m-hf",\n    max_model_len=4096\n)\n',
     {"RSM001"}),
    ("unsafe-rsm004-0.28", "0.28.0", True,
     f'subprocess.run(["vllm", "serve", "{M}", "--use-replayssm", "--mamba-backend", "cpu"])\n',
     f'subprocess.run(["vllm", "serve", "{M}", "--use-replayssm", "--mamba-backend", "triton"])\n',
     {"RSM004"}),
    ("unsafe-rsm008-kwargs-0.33", "0.33.0", True,
     f'def main():\n    llm = LLM("{M}", use_replayssm=True)\n',
     f'def main():\n    os.environ["VLLM_USE_V2_MODEL_RUNNER"] = "0"\n'
     f'    llm = LLM("{M}", use_replayssm=True, mamba_backend="triton")\n',
     {"RSM008"}),
]


@pytest.mark.parametrize("case", GOLDEN, ids=[c[0] for c in GOLDEN])
def test_golden(case):
    _, version, unsafe, before_body, after_body, gone = case
    before, expected = HEAD + before_body + TAIL, HEAD + after_body + TAIL
    assert set(codes(before, version)) & gone, "the case must start with a finding it fixes"
    after = fixed(before, version, unsafe=unsafe)
    assert after == expected
    # lines outside the edits are byte-identical
    assert after.startswith(HEAD) and after.endswith(TAIL)
    # the fixed codes are gone; a second run changes nothing
    assert not set(codes(after, version)) & gone
    assert fixed(after, version, unsafe=unsafe) == after


def test_unsafe_fixes_need_unsafe():
    for _, version, unsafe, before_body, _, _ in GOLDEN:
        if unsafe:
            before = HEAD + before_body + TAIL
            assert fixed(before, version) == before


def _without_annotations(text: str) -> str:
    """The fixture without its trailing ``# replayssm-expect`` comments (they differ by design)."""
    return text.split("# replayssm-expect", 1)[0]


def test_fixture_pair():
    before = _without_annotations((FIXTURES / "launch_0.30.0.before.py").read_text())
    expected = _without_annotations((FIXTURES / "launch_0.30.0.after.py").read_text())
    after = fixed(before, "0.30.0")
    assert after == expected
    assert fixed(after, "0.30.0") == after
    # `all` -> `align` makes Model Runner V2 the default again: the LLM(...) call then needs
    # the environment, which only --unsafe sets (an os.environ line)
    assert codes(after, "0.30.0") == ["RSM008"]
    assert codes(fixed(after, "0.30.0", unsafe=True), "0.30.0") == []


def test_nothing_to_fix_is_unchanged():
    text = HEAD + f'subprocess.run(["vllm", "serve", "{M}", "--use-replayssm"])\n' + TAIL
    assert codes(text, "0.28.0") == []
    assert fixed(text, "0.28.0") == text


def test_noqa_is_respected():
    text = HEAD + f'os.system("vllm serve {M} --config=c.yaml")  # noqa: RSM101\n'
    assert fixed(text, "0.28.0") == text


def test_wrapper_command_gets_no_env_prefix():
    """`nohup VAR=0 vllm` would run a program called `VAR=0`: leave it alone."""
    text = HEAD + f'os.system("nohup vllm serve {M} --use-replayssm")\n'
    assert fixed(text, "0.33.0") == text


def test_escaped_string_is_left_alone():
    """Spans inside strings with escapes are not exact: no edit there."""
    text = HEAD + f'os.system("vllm serve {M} \\\\\\n  --mamba-block-size 64")\n'
    assert codes(text, "0.27.0") == ["RSM006"]
    assert fixed(text, "0.27.0") == text


def test_crlf_is_kept():
    body = f'llm = LLM(\n    "{M}",\n    use_replayssm=True,\n    enable_prefix_caching=True,\n)\n'
    before = (HEAD + body + TAIL).replace("\n", "\r\n")
    after = fixed(before, "0.27.0")
    assert after != before
    assert after.count("\n") == after.count("\r\n")
    assert 'mamba_cache_mode="align",\r\n' in after
    assert fixed(after, "0.27.0") == after


def test_overlapping_edits_are_rejected():
    with pytest.raises(OverlapError):
        apply_edits("abcdef", [Edit(0, 3, "x"), Edit(2, 4, "y")])
    assert apply_edits("abcdef", [Edit(3, 3, "-"), Edit(0, 1, "A")]) == "Abc-def"


# --- the command ------------------------------------------------------------

def _launch_file(tmp_path: Path) -> Path:
    path = tmp_path / "serve.py"
    path.write_text(HEAD + f'os.system("vllm serve {M} --use-replayssm")\n' + TAIL)
    return path


def test_diff_and_check_write_nothing(tmp_path, capsys):
    path = _launch_file(tmp_path)
    original = path.read_bytes()
    assert cli.main(["fix", "--diff", "--vllm-version", "0.33.0", str(path)]) == 1
    out = capsys.readouterr().out
    assert "+os.system(\"VLLM_USE_V2_MODEL_RUNNER=0 vllm serve" in out
    assert path.read_bytes() == original
    assert cli.main(["fix", "--check", "--vllm-version", "0.33.0", str(path)]) == 1
    assert path.read_bytes() == original


def test_fix_writes_keeps_mode_and_is_idempotent(tmp_path):
    path = _launch_file(tmp_path)
    os.chmod(path, 0o755)
    assert cli.main(["fix", "--vllm-version", "0.33.0", str(tmp_path)]) == 0
    assert "VLLM_USE_V2_MODEL_RUNNER=0 vllm serve" in path.read_text()
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o755
    assert cli.main(["fix", "--check", "--vllm-version", "0.33.0", str(path)]) == 0
    assert [p.name for p in tmp_path.iterdir()] == ["serve.py"]  # no temporary file left


def test_unparsable_result_is_not_written(tmp_path, monkeypatch, capsys):
    path = _launch_file(tmp_path)
    original = path.read_bytes()
    monkeypatch.setattr(codemod, "plan_edits", lambda text, *a, **k: [Edit(0, 0, "(")])
    assert cli.main(["fix", "--vllm-version", "0.33.0", str(path)]) == 2
    assert "would not parse" in capsys.readouterr().err
    assert path.read_bytes() == original


def test_bad_version_is_a_usage_error(tmp_path):
    path = _launch_file(tmp_path)
    assert cli.main(["fix", "--vllm-version", "not-a-version", str(path)]) == 2


def test_dockerfile_words(tmp_path):
    text = (
        "FROM vllm/vllm-openai:v0.31.0\n"
        f'CMD ["--model", "{M}", "--use-replayssm=true", "--config=/etc/x.yaml"]\n'
        f"RUN vllm serve {M} --use-replayssm --mamba-cache-mode all\n"
    )
    after = fixed(text, "0.33.0", kind="dockerfile")
    assert after == (
        "FROM vllm/vllm-openai:v0.31.0\n"
        "ENV VLLM_USE_V2_MODEL_RUNNER=0\n"
        f'CMD ["--model", "{M}", "--use-replayssm", "--mamba-backend", "triton", "--config", "/etc/x.yaml"]\n'
        f"RUN VLLM_USE_V2_MODEL_RUNNER=0 vllm serve {M} --use-replayssm --mamba-backend triton\n"
    )
    assert fixed(after, "0.33.0", kind="dockerfile") == after


def test_yaml_replacements_stay_in_place():
    """Replacing a value keeps the item where it is (insertions: tests/test_fix_formats.py)."""
    text = (
        "services:\n  vllm:\n    image: vllm/vllm-openai:v0.32.0\n    command:\n"
        f"      - --model\n      - {M}\n      - --use-replayssm=true\n      - --mamba-cache-mode\n      - all\n"
    )
    after = fixed(text, "0.28.0", kind="yaml")
    assert after == text.replace("--use-replayssm=true", "--use-replayssm").replace("- all", "- align")


@needs_shell
def test_shell_script():
    text = f"#!/bin/sh\nset -e\nvllm serve {M} \\\n  --use-replayssm \\\n  --mamba-cache-mode all \\\n  --port 8000\n"
    after = fixed(text, "0.33.0", kind="shell")
    assert after == (f"#!/bin/sh\nset -e\nVLLM_USE_V2_MODEL_RUNNER=0 vllm serve {M} \\\n"
                     "  --use-replayssm --mamba-backend triton \\\n  --port 8000\n")
    assert fixed(after, "0.33.0", kind="shell") == after


def test_libcst_codemod_command():
    import libcst as cst
    from libcst.codemod import CodemodContext

    from flake8_replayssm.fix.codemod import ReplaySSMFixCommand

    before = HEAD + f'os.system("vllm serve {M} --use-replayssm")\n' + TAIL
    command = ReplaySSMFixCommand(CodemodContext(filename=None), vllm_version="0.33.0")
    after = command.transform_module(cst.parse_module(before)).code
    assert after == fixed(before, "0.33.0")


# --- property ---------------------------------------------------------------

FAMILIES, RELEASES = FIX_FAMILIES, FIX_RELEASES


def _fixable_left(text: str, version: str, flags: list[str]) -> list[str]:
    return fixable_left(text, "python", version, flags)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    version=st.sampled_from(RELEASES),
    picks=st.lists(st.tuples(st.integers(0, len(FAMILIES) - 1), st.integers(0, 3)),
                   max_size=len(FAMILIES), unique_by=lambda p: p[0]),
    form=st.sampled_from(["list", "multiline", "string"]),
)
def test_property_fixed_launch_has_no_fixable_finding(version, picks, form):
    """Random Nemotron-H launches: after a fix nothing fixable is left, and the file parses."""
    flags = [FAMILIES[f][i % len(FAMILIES[f])] for f, i in picks]
    words = ["vllm", "serve", M] + [w for flag in flags for w in flag.split()]
    if form == "multiline":
        body = "subprocess.run(\n    [\n" + "".join(f'        "{w}",\n' for w in words) + "    ],\n)\n"
    elif form == "list":
        body = "subprocess.run([" + ", ".join(f'"{w}"' for w in words) + "])\n"
    else:
        body = 'os.system("' + " ".join(words) + '")\n'
    before = HEAD + body + TAIL
    after = fixed(before, version)
    compile(after, "<fixed>", "exec")
    assert after.startswith(HEAD) and after.endswith(TAIL)
    assert _fixable_left(after, version, flags) == []
    assert fixed(after, version) == after


@needs_shell
def test_shell_prefix_forms():
    text = (
        "#!/bin/bash\n# launch\n"
        f"CUDA_VISIBLE_DEVICES=0 vllm serve {M} --use-replayssm --port 8000 &\n"
        f"if true; then\n  nohup vllm serve {M} --use-replayssm=true > log 2>&1\nfi\n"
        f"export VLLM_USE_V2_MODEL_RUNNER=0\nvllm serve {M} --use-replayssm\n"
        'echo "vllm serve x --use-replayssm=true"\n'
    )
    after = fixed(text, "0.31.0", kind="shell")
    assert after == (
        "#!/bin/bash\n# launch\n"
        f"CUDA_VISIBLE_DEVICES=0 VLLM_USE_V2_MODEL_RUNNER=0 vllm serve {M} --use-replayssm "
        "--mamba-cache-mode align --mamba-backend triton --port 8000 &\n"
        f"if true; then\n  nohup env VLLM_USE_V2_MODEL_RUNNER=0 vllm serve {M} --use-replayssm "
        "--mamba-cache-mode align --mamba-backend triton > log 2>&1\nfi\n"
        f"export VLLM_USE_V2_MODEL_RUNNER=0\nvllm serve {M} --use-replayssm\n"
        'echo "vllm serve x --use-replayssm=true"\n'
    )
    assert codes(after, "0.31.0", kind="shell") == []
    assert fixed(after, "0.31.0", kind="shell") == after


@needs_shell
def test_makefile_recipe():
    text = f"serve:\n\tvllm serve {M} --use-replayssm --config=a.yaml\n"
    after = fixed(text, "0.33.0", kind="makefile")
    assert after == (f"serve:\n\tVLLM_USE_V2_MODEL_RUNNER=0 vllm serve {M} --use-replayssm "
                     "--mamba-backend triton --config a.yaml\n")
