"""End-to-end tests of the flake8 plugin, through real flake8 runs.

``flake8_path`` (pytest-flake8-path) is a temporary directory with a
``setup.cfg`` holding ``[flake8]``; ``run_flake8`` runs ``python -m flake8
--jobs 1 --config setup.cfg .`` in it.  Facts used: on 0.33.0 the plain
Nemotron-H launch is RSM008 and passes on 0.28.0; Falcon-H1 is RSM001 on every
release.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from importlib import metadata
from pathlib import Path

import pytest

from flake8_replayssm import cli

NANO = "nvidia/NVIDIA-Nemotron-Nano-9B-v2"
FALCON = "tiiuae/Falcon-H1-1.5B-Instruct"

NANO_SRC = f'from vllm import LLM\nllm = LLM("{NANO}", use_replayssm=True)\n'
FALCON_SRC = f'from vllm import LLM\nllm = LLM("{FALCON}", use_replayssm=True)\n'
UNRESOLVED_SRC = "import sys\nfrom vllm import LLM\nllm = LLM(sys.argv[1], use_replayssm=True)\n"
KIMI_SRC = ('from vllm import LLM\nllm = LLM("moonshotai/Kimi-K3", use_replayssm=True,\n'
            '          speculative_config={"method": "ngram", "num_speculative_tokens": 2})\n')


def column(src: str, line: int, token: str = "use_replayssm") -> int:
    """flake8's 1-based column of ``token`` on ``line``."""
    return src.splitlines()[line - 1].index(token) + 1


def setup_cfg(path: Path, **options: str) -> None:
    options = {"max-line-length": "120", **options}  # room for `# noqa` comments
    body = "".join(f"{key} = {value}\n" for key, value in options.items())
    (path / "setup.cfg").write_text("[flake8]\n" + body)


def rsm_lines(result) -> list[str]:
    return [line for line in result.out_lines if ": RSM" in line]


def where(result) -> list[tuple[str, int, int, str]]:
    """(file, line, column, code) of every reported line."""
    out = []
    for line in result.out_lines:
        path, lineno, col, rest = line.split(":", 3)
        out.append((path, int(lineno), int(col), rest.split()[0]))
    return sorted(out)


def flake8(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "flake8", *args], cwd=cwd,
                          capture_output=True, text=True, timeout=300)


# ---------------------------------------------------------------- registration


def test_flake8_version_lists_the_plugin():
    proc = flake8("--version")
    assert proc.returncode == 0
    assert f"flake8-replayssm: {metadata.version('flake8-replayssm')}" in " ".join(proc.stdout.split())


def test_plugin_options_are_in_help():
    proc = flake8("--help")
    for option in ("--replayssm-vllm-version", "--replayssm-platform", "--replayssm-enable",
                   "--replayssm-extra-models"):
        assert option in proc.stdout


# ---------------------------------------------------------------- findings


def test_failing_launch_is_reported(flake8_path):
    setup_cfg(flake8_path, **{"replayssm-vllm-version": "0.33.0"})
    (flake8_path / "example.py").write_text(NANO_SRC)
    result = flake8_path.run_flake8()
    assert result.exit_code == 1
    assert result.err == ""
    (line,) = result.out_lines
    assert line.startswith(f"./example.py:2:{column(NANO_SRC, 2)}: RSM008 Triton ReplaySSM requires "
                           "Model Runner V1")
    assert "[vLLM 0.33.0]" in line


def test_default_release_is_the_newest(flake8_path):
    try:
        metadata.version("vllm")
    except metadata.PackageNotFoundError:
        pass
    else:  # pragma: no cover - the installed vllm would be the target
        pytest.skip("vllm is installed here; its version is the default target")
    (flake8_path / "example.py").write_text(NANO_SRC)
    result = flake8_path.run_flake8()
    assert rsm_lines(result) == result.out_lines
    assert [w[3] for w in where(result)] == ["RSM008"]


def test_every_violated_code_is_reported(flake8_path):
    setup_cfg(flake8_path, **{"replayssm-vllm-version": "0.33.0"})
    (flake8_path / "example.py").write_text(FALCON_SRC)
    result = flake8_path.run_flake8()
    col = column(FALCON_SRC, 2)
    assert where(result) == [("./example.py", 2, col, "RSM001"), ("./example.py", 2, col, "RSM008")]


def test_column_on_a_later_line_of_a_multiline_call(flake8_path):
    setup_cfg(flake8_path, **{"replayssm-vllm-version": "0.33.0"})
    src = textwrap.dedent(f"""\
        from vllm import LLM


        def make():
            return LLM(
                model="{FALCON}",
                    use_replayssm=True,
            )
        """)
    (flake8_path / "example.py").write_text(src)
    result = flake8_path.run_flake8(["--select", "RSM"])
    assert where(result) == [("./example.py", 7, column(src, 7), "RSM001"),
                             ("./example.py", 7, column(src, 7), "RSM008")]


def test_clean_file(flake8_path):
    (flake8_path / "example.py").write_text("from vllm import LLM\nllm = LLM('facebook/opt-125m')\n")
    result = flake8_path.run_flake8()
    assert (result.exit_code, result.out_lines, result.err) == (0, [], "")


def test_same_findings_as_the_cli(flake8_path, capsys):
    setup_cfg(flake8_path, **{"replayssm-vllm-version": "0.33.0"})
    (flake8_path / "nano.py").write_text(NANO_SRC)
    (flake8_path / "falcon.py").write_text(FALCON_SRC)
    (flake8_path / "multi.py").write_text(
        f'from vllm import LLM, EngineArgs\n\n'
        f'a = LLM("{NANO}", use_replayssm=True, enable_prefix_caching=False)\n'
        f'b = EngineArgs(model="{NANO}", use_replayssm=True, mamba_backend="flashinfer")\n')
    result = flake8_path.run_flake8(["--select", "RSM"])
    assert cli.main(["check", "--format", "json", "--vllm-version", "0.33.0", str(flake8_path)]) == 1
    items = json.loads(capsys.readouterr().out)
    from_cli = sorted(("./" + Path(i["path"]).name, i["line"], i["column"], i["code"]) for i in items)
    assert where(result) == from_cli
    assert len(from_cli) >= 3


# ---------------------------------------------------------------- noqa


def test_noqa_with_the_code_silences(flake8_path):
    setup_cfg(flake8_path, **{"replayssm-vllm-version": "0.33.0"})
    (flake8_path / "example.py").write_text(NANO_SRC.replace("True)", "True)  # noqa: RSM008"))
    result = flake8_path.run_flake8()
    assert (result.exit_code, result.out_lines) == (0, [])


def test_noqa_with_another_code_does_not(flake8_path):
    setup_cfg(flake8_path, **{"replayssm-vllm-version": "0.33.0"})
    (flake8_path / "example.py").write_text(NANO_SRC.replace("True)", "True)  # noqa: RSM001"))
    result = flake8_path.run_flake8()
    assert [w[3] for w in where(result)] == ["RSM008"]


def test_noqa_silences_only_listed_codes(flake8_path):
    setup_cfg(flake8_path, **{"replayssm-vllm-version": "0.33.0"})
    (flake8_path / "example.py").write_text(FALCON_SRC.replace("True)", "True)  # noqa: RSM001"))
    result = flake8_path.run_flake8()
    assert [w[3] for w in where(result)] == ["RSM008"]


def test_bare_noqa_silences_everything(flake8_path):
    setup_cfg(flake8_path, **{"replayssm-vllm-version": "0.33.0"})
    (flake8_path / "example.py").write_text(FALCON_SRC.replace("True)", "True)  # noqa"))
    assert flake8_path.run_flake8().out_lines == []


def test_noqa_on_another_line_does_not_silence(flake8_path):
    setup_cfg(flake8_path, **{"replayssm-vllm-version": "0.33.0"})
    (flake8_path / "example.py").write_text(NANO_SRC.replace("import LLM", "import LLM  # noqa: RSM008"))
    assert [w[3] for w in where(flake8_path.run_flake8())] == ["RSM008"]


# ---------------------------------------------------------------- options


def test_vllm_version_in_setup_cfg_changes_the_verdict(flake8_path):
    (flake8_path / "nano.py").write_text(NANO_SRC)
    (flake8_path / "falcon.py").write_text(FALCON_SRC)
    setup_cfg(flake8_path, **{"replayssm-vllm-version": "0.33.0"})
    assert [(w[0], w[3]) for w in where(flake8_path.run_flake8())] == [
        ("./falcon.py", "RSM001"), ("./falcon.py", "RSM008"), ("./nano.py", "RSM008")]
    setup_cfg(flake8_path, **{"replayssm-vllm-version": "0.28.0"})
    result = flake8_path.run_flake8()
    assert [(w[0], w[3]) for w in where(result)] == [("./falcon.py", "RSM001")]
    assert "[vLLM 0.28.0]" in result.out_lines[0]
    assert "only supported for Nemotron-H models" in result.out_lines[0]  # 0.28's own wording


def test_vllm_version_on_the_command_line_beats_setup_cfg(flake8_path):
    (flake8_path / "nano.py").write_text(NANO_SRC)
    setup_cfg(flake8_path, **{"replayssm-vllm-version": "0.28.0"})
    result = flake8_path.run_flake8(["--replayssm-vllm-version", "0.33.0"])
    assert [w[3] for w in where(result)] == ["RSM008"]


def test_rsm201_needs_enable(flake8_path):
    (flake8_path / "example.py").write_text(UNRESOLVED_SRC)
    setup_cfg(flake8_path, **{"replayssm-vllm-version": "0.28.0"})
    assert flake8_path.run_flake8().out_lines == []
    result = flake8_path.run_flake8(["--replayssm-enable", "RSM201"])
    assert where(result) == [("./example.py", 3, column(UNRESOLVED_SRC, 3), "RSM201")]
    setup_cfg(flake8_path, **{"replayssm-vllm-version": "0.28.0", "replayssm-enable": "RSM201"})
    assert [w[3] for w in where(flake8_path.run_flake8())] == ["RSM201"]


def test_flake8_selection_applies_to_rsm_codes(flake8_path):
    setup_cfg(flake8_path, **{"replayssm-vllm-version": "0.33.0"})
    (flake8_path / "example.py").write_text(FALCON_SRC)
    assert [w[3] for w in where(flake8_path.run_flake8(["--extend-ignore", "RSM008"]))] == ["RSM001"]
    assert flake8_path.run_flake8(["--select", "E,F,W"]).out_lines == []


def test_platform_option(flake8_path):
    setup_cfg(flake8_path, **{"replayssm-vllm-version": "0.33.0"})
    (flake8_path / "kimi.py").write_text(KIMI_SRC)
    assert flake8_path.run_flake8().out_lines == []
    result = flake8_path.run_flake8(["--replayssm-platform", "rocm"])
    assert where(result) == [("./kimi.py", 2, column(KIMI_SRC, 2), "RSM001")]


def test_extra_models_option(flake8_path):
    src = 'from vllm import LLM\nllm = LLM("myorg/my-hybrid", use_replayssm=True)\n'
    (flake8_path / "example.py").write_text(src)
    setup_cfg(flake8_path, **{"replayssm-vllm-version": "0.28.0"})
    assert flake8_path.run_flake8().out_lines == []
    result = flake8_path.run_flake8(["--replayssm-extra-models", "myorg/my-hybrid=FalconH1ForCausalLM"])
    assert [w[3] for w in where(result)] == ["RSM001"]


def test_pyproject_table_fills_in_unset_options(flake8_path):
    (flake8_path / "nano.py").write_text(NANO_SRC)
    (flake8_path / "pyproject.toml").write_text('[tool.flake8-replayssm]\nvllm-version = "0.28.0"\n')
    assert flake8_path.run_flake8().out_lines == []
    # flake8's own option wins over pyproject
    assert [w[3] for w in where(flake8_path.run_flake8(["--replayssm-vllm-version", "0.33.0"]))] == ["RSM008"]


def test_unusable_vllm_version_is_not_silent(flake8_path):
    (flake8_path / "nano.py").write_text(NANO_SRC)
    setup_cfg(flake8_path, **{"replayssm-vllm-version": "0.26.0"})
    result = flake8_path.run_flake8()
    assert result.exit_code != 0
    assert "0.26.0" in result.out + result.err


def test_plugin_pre_filter_matches_the_cli(flake8_path):
    src = ('import subprocess\n'
           f'subprocess.run(["vllm", "serve", "{NANO}", "--disable_prefix_caching"])\n')
    (flake8_path / "example.py").write_text(src)
    setup_cfg(flake8_path, **{"replayssm-vllm-version": "0.32.0"})
    result = flake8_path.run_flake8()
    assert where(result) == [("./example.py", 2, column(src, 2, '"--disable'), "RSM104")]


def test_requirements_pin_next_to_the_file(flake8_path):
    (flake8_path / "requirements.txt").write_text("vllm==0.28.0\n")
    (flake8_path / "nano.py").write_text(NANO_SRC)
    assert flake8_path.run_flake8().out_lines == []


def test_requirements_pin_at_the_project_root(flake8_path):
    (flake8_path / "requirements.txt").write_text("vllm==0.28.0\n")
    (flake8_path / "src" / "pkg").mkdir(parents=True)
    (flake8_path / "src" / "pkg" / "nano.py").write_text(NANO_SRC)
    assert flake8_path.run_flake8().out_lines == []


def test_pyproject_pin_at_the_project_root(flake8_path):
    (flake8_path / "pyproject.toml").write_text('[project]\nname = "svc"\ndependencies = ["vllm==0.28.0"]\n')
    (flake8_path / "src" / "pkg").mkdir(parents=True)
    (flake8_path / "src" / "pkg" / "nano.py").write_text(NANO_SRC)
    assert flake8_path.run_flake8().out_lines == []


# ---------------------------------------------------------------- robustness


def test_syntax_error_gives_e999_only(flake8_path):
    setup_cfg(flake8_path, **{"replayssm-vllm-version": "0.33.0"})
    (flake8_path / "example.py").write_text(f'from vllm import LLM\nLLM("{FALCON}", use_replayssm=True\n')
    result = flake8_path.run_flake8()
    assert [w[3] for w in where(result)] == ["E999"]
    assert result.err == ""
    assert "Traceback" not in result.out


def test_grammar_libcst_may_not_know_gives_no_crash(flake8_path):
    setup_cfg(flake8_path, **{"replayssm-vllm-version": "0.33.0"})
    src = ("from vllm import LLM\n\n"
           "match 1:\n    case _:\n        pass\n\n"
           f'llm = LLM("{FALCON}", use_replayssm=True)\n')
    (flake8_path / "example.py").write_text(src)
    result = flake8_path.run_flake8()
    assert result.err == ""
    assert all(w[3].startswith("RSM") for w in where(result))


def test_non_utf8_and_binaryish_files(flake8_path):
    setup_cfg(flake8_path, **{"replayssm-vllm-version": "0.33.0"})
    latin1 = ('# -*- coding: latin-1 -*-\n# caf\xe9\n' + FALCON_SRC).encode("latin-1")
    (flake8_path / "latin1.py").write_bytes(latin1)
    (flake8_path / "bom.py").write_bytes(("\ufeff" + FALCON_SRC).encode("utf-8"))
    (flake8_path / "crlf.py").write_bytes(FALCON_SRC.replace("\n", "\r\n").encode())
    result = flake8_path.run_flake8(["--select", "RSM"])
    assert "Traceback" not in result.err
    assert [(w[0], w[1], w[3]) for w in where(result)] == [
        ("./bom.py", 2, "RSM001"), ("./bom.py", 2, "RSM008"),
        ("./crlf.py", 2, "RSM001"), ("./crlf.py", 2, "RSM008"),
        ("./latin1.py", 4, "RSM001"), ("./latin1.py", 4, "RSM008")]


def test_jobs_2_on_several_files(flake8_path):
    setup_cfg(flake8_path, **{"replayssm-vllm-version": "0.28.0"})
    expected = []
    for i in range(8):
        (flake8_path / f"nano_{i}.py").write_text(NANO_SRC)
        (flake8_path / f"falcon_{i}.py").write_text(FALCON_SRC)
        (flake8_path / f"plain_{i}.py").write_text("import os\n\nprint(os.sep)\n")
        expected.append((f"./falcon_{i}.py", 2, column(FALCON_SRC, 2), "RSM001"))
    result = flake8_path.run_flake8(["--jobs", "2"])
    assert result.err == ""
    assert where(result) == sorted(expected)
    # the option reaches the worker processes: 0.33.0 adds RSM008 everywhere
    result = flake8_path.run_flake8(["--jobs", "2", "--replayssm-vllm-version", "0.33.0"])
    assert len(where(result)) == 8 * 3


LAZY_CHECK = """
import ast, sys
from flake8_replayssm.plugin import Plugin
path = sys.argv[1]
with open(path) as fh:
    lines = fh.readlines()
tree = ast.parse("".join(lines))
results = list(Plugin(tree, path, lines).run())
print(len(results), "libcst" in sys.modules)
"""


@pytest.mark.parametrize("src, expected", [
    ("import os\n\nprint(os.getcwd())\n", "0 False"),
    ('from vllm import LLM\nLLM("facebook/opt-125m")  # no trigger\n', "0 False"),
    (NANO_SRC, "1 False"),  # a launch is found on Python's own tree: libcst is for fixes only
])
def test_linting_never_imports_libcst(tmp_path, src, expected):
    path = tmp_path / "example.py"
    path.write_text(src)
    proc = subprocess.run([sys.executable, "-c", LAZY_CHECK, str(path)], capture_output=True, text=True,
                          timeout=120, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == expected.split()


def test_the_plugin_reads_flake8s_tree_without_parsing_again(tmp_path, monkeypatch):
    """flake8 has parsed the file; the plugin's screen and frontend use that tree."""
    import ast

    from flake8_replayssm.frontends import python_screen
    from flake8_replayssm.plugin import Plugin

    src = NANO_SRC.replace("llm =", "other = 1\nllm =")
    lines = src.splitlines(keepends=True)
    tree = ast.parse(src)
    parses: list[str] = []
    real_parse = ast.parse
    monkeypatch.setattr(python_screen.ast, "parse",
                        lambda text, *a, **k: parses.append(text) or real_parse(text, *a, **k))
    path = tmp_path / "launch.py"
    results = list(Plugin(tree, str(path), lines).run())
    assert [r[2].split()[0] for r in results] == ["RSM008"]
    assert results[0][0] == 3  # the launch's line in flake8's tree
    assert src not in parses and src.lstrip() not in parses  # (the rule conditions are parsed too)
