"""Bad input never crashes: garbage, mutated fixtures, odd encodings, huge and binary files."""

from __future__ import annotations

import random
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from flake8_replayssm.cli import main
from flake8_replayssm.project import lint_file
from flake8_replayssm.config import LintConfig
from flake8_replayssm.lint import KINDS, lint_text

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"
CONFIG = LintConfig(vllm_version="0.33.0", enable=("RSM201",))
SEED_WORDS = ["vllm", "serve", "--use-replayssm", "--mamba-backend", "flashinfer", "--config",
              "--config=", "{", "}", "'", '"', "\\\n", "$", "${X:-", "[", "]", ":", "- ", "\n",
              "LLM(", "use_replayssm=True", "**", "subprocess.run([", "```", "!", "%%bash", "#",
              "python -m vllm.entrypoints.openai.api_server", "CMD [", "FROM vllm/vllm-openai:v0.33.0",
              "args:", "command:", "\t", "\x00", "é", "\ufeff"]


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(kind=st.sampled_from(KINDS),
       parts=st.lists(st.one_of(st.sampled_from(SEED_WORDS), st.text(max_size=8)), max_size=40))
def test_random_launch_shaped_text_never_raises(kind, parts):
    text = " ".join(parts) + " --use-replayssm"
    lint_text(text, kind, CONFIG, path=f"fuzz.{kind}")


def _fixture_files():
    return sorted(p for p in FIXTURES.rglob("*") if p.is_file())


@pytest.mark.parametrize("path", _fixture_files(), ids=lambda p: str(p.relative_to(FIXTURES)))
def test_mutated_fixtures_never_raise(path, tmp_path):
    data = path.read_bytes()
    rng = random.Random(str(path))
    for round_ in range(12):
        mutated = bytearray(data)
        for _ in range(rng.randint(1, 8)):
            op = rng.random()
            pos = rng.randrange(len(mutated) or 1)
            if op < 0.4 and mutated:
                del mutated[pos:pos + rng.randint(1, 20)]
            elif op < 0.8:
                mutated[pos:pos] = rng.choice([b'"', b"'", b"\\", b"{", b"\n", b"\xff\xfe", b"--", b"$("])
            else:
                cut = rng.randrange(len(mutated) or 1)
                mutated = mutated[:cut]
        target = tmp_path / f"{round_}-{path.name}"
        target.write_bytes(bytes(mutated))
        result = lint_file(str(target), CONFIG)
        assert result is None or result.error is None, result.error


def test_binary_huge_and_undecodable_files(tmp_path, capsys):
    (tmp_path / "binary.py").write_bytes(b"\x00\x01use_replayssm\x00" * 100)
    (tmp_path / "latin1.sh").write_bytes("vllm serve tiiuae/Falcon-H1-0.5B-Instruct --use-replayssm # é\n"
                                         .encode("latin-1"))
    (tmp_path / "huge.py").write_text("x = 1\n" * 1_000_000 + "# use_replayssm\n")
    code = main(["check", "--vllm-version", "0.28.0", "--format", "json", str(tmp_path)])
    out, err = capsys.readouterr()
    assert code == 1 and "Traceback" not in err
    assert '"RSM001"' in out and "latin1.sh" in out


def test_deeply_nested_python_does_not_raise():
    text = "from vllm import LLM\nx = " + "[" * 500 + "]" * 500 + "\nLLM(use_replayssm=True)\n"
    lint_text(text, "python", CONFIG)


_PIECES = st.sampled_from(["replayssm", "REPLAYSSM", "replace", "mamba", "mamba-block-size", "mamba_cache_mode",
                           "--config", "--conf", "api_server", "api_s", "disable", "disable_prefix_caching",
                           "disable-prefix-caching", " ", "x", "\n"])


@given(st.lists(_PIECES, max_size=12))
def test_the_grouped_trigger_screen_is_the_plain_one(pieces):
    """The screen searches anchors first (speed); it must say what a search for every trigger
    token says."""
    from flake8_replayssm.triggers import TRIGGER_NEEDLES, contains_trigger, has_trigger

    text = "".join(pieces)
    plain = any(needle in text for needle in TRIGGER_NEEDLES)
    assert contains_trigger(text.encode()) == plain
    assert has_trigger(text, "shell") == plain
