"""Options written with look-alike or invisible characters, and near-miss spellings of a
ReplaySSM option: the engine's parser rejects the launch, so the linter reports RSM106 with
the option the word looks like (issue 20: hostile and copied text)."""

from __future__ import annotations

import pytest

from flake8_replayssm import check_source
from flake8_replayssm.lookalikes import meant
from flake8_replayssm.triggers import contains_trigger, has_trigger

NANO = "nvidia/NVIDIA-Nemotron-Nano-9B-v2"
QWEN = "Qwen/Qwen3-Next-80B-A3B-Instruct"


@pytest.mark.parametrize("flag, why, meant_flag", [
    ("--use\u2010replayssm", "HYPHEN (U+2010)", "--use-replayssm"),
    ("--use-repl\u0430yssm", "CYRILLIC SMALL LETTER A (U+0430)", "--use-replayssm"),
    ("--use-replay\u200bssm", "ZERO WIDTH SPACE (U+200B)", "--use-replayssm"),
    ("\u2014use-replayssm", "EM DASH (U+2014)", "--use-replayssm"),  # typography made `--` one dash
    ("--use-replaysm", "did you mean --use-replayssm?", "--use-replayssm"),
    ("--replayssm-bufer-len 4", "did you mean --replayssm-buffer-len?", "--replayssm-buffer-len"),
])
def test_a_vllm_flag_that_only_looks_right_is_rsm106(flag, why, meant_flag):
    text = f"vllm serve {NANO} {flag}\n"
    found = [f for f in check_source(text, "shell", vllm_version="0.33.0") if f.code == "RSM106"]
    assert len(found) == 1, found
    assert why in found[0].message and found[0].message.endswith(f"fix: write {meant_flag}")
    assert found[0].span.col == len(f"vllm serve {NANO} ")
    assert "\u200b" not in found[0].message and "\u0430" not in found[0].message  # shown escaped


def test_an_sglang_flag_that_only_looks_right_is_rsm106():
    text = f"sglang serve --model-path {QWEN} --enable-linear\u2011replayssm --disable-overlap-schedule\n"
    found = [f for f in check_source(text, "shell") if f.code == "RSM106"]
    assert [f.message.split("fix: ")[1] for f in found] == ["write --enable-linear-replayssm"]


@pytest.mark.parametrize("text", [
    f"vllm serve {NANO} --use-replayssm --mamba-backend triton\n",
    f"vllm serve {NANO} --use-replay --mamba-backend triton\n",  # argparse's abbreviation: accepted
    f"vllm serve {NANO} --served-model-name n\u00e4no --use-replayssm\n",  # a value may be any text
])
def test_options_as_written_are_not_rsm106(text):
    assert not [f for f in check_source(text, "shell", vllm_version="0.33.0") if f.code == "RSM106"]


def test_a_misspelt_keyword_is_a_type_error():
    text = f"from vllm import LLM\nllm = LLM({NANO!r}, use_replaysm=True, enforce_eager=True)\n"
    found = [f for f in check_source(text, "python") if f.code == "RSM106"]
    assert len(found) == 1 and "unexpected keyword argument 'use_replaysm'" in found[0].message
    assert found[0].message.endswith("fix: write use_replayssm=")


def test_a_file_whose_only_option_is_a_lookalike_is_not_skipped():
    text = f"vllm serve {NANO} --use-repl\u0430yssm\n"
    assert has_trigger(text) and contains_trigger(text.encode())
    assert "replayssm" not in text
    assert [f.code for f in check_source(text, "shell")] == ["RSM106"]


def test_only_near_misses_of_the_replayssm_options_are_guessed():
    options = ["--use-replayssm", "--max-model-len", "--mamba-backend"]
    assert meant("--max-model-lenn", options, ["--use-replayssm"]) is None  # another tool's flag, maybe
    assert meant("--use-replayssm", options, ["--use-replayssm"]) is None
    assert meant("--use-replaysmm", options, ["--use-replayssm"])[0] == "--use-replayssm"


@pytest.mark.parametrize("before", ["", "注释 " * 2000, "é" + "x" * 30 + "ü", "\u200b" * 10])
@pytest.mark.parametrize("option", ["--use-repl\u0430yssm", "--use\u2010replayssm", "--use-ｒｅｐｌａｙｓｓｍ",
                                    "--use-" + "\u200b".join("replayssm")])
def test_the_screen_folds_only_around_non_ascii_text_and_still_sees_every_lookalike(before, option):
    """The screen folds the stretches around non-ASCII characters, not the whole file (a large
    file of CJK comments stays cheap); an option with look-alikes anywhere in it is still seen,
    also right after other non-ASCII text whose stretch it extends."""
    text = f"# {before}\nvllm serve m {option}\n"
    assert has_trigger(text) and contains_trigger(text.encode())
    assert not has_trigger(f"# {before}\nvllm serve m --use-cuda-graph\n")


@pytest.mark.parametrize("offset", [0, 1, 2040, 2047, 2048, 2050, 4095, 4096, 10_000])
def test_a_lookalike_anywhere_in_a_large_ascii_file_is_seen(offset):
    """The byte screen looks for non-ASCII blocks with ``isascii`` and folds only around them:
    a look-alike option that straddles a block boundary is still inside a stretch it folds."""
    padding = "#" * offset + "\n"
    for option in ("--use-repl\u0430yssm", "--use\u2010replayssm", "--" + "\u200b".join("mamba-block-size")):
        text = f"{padding}vllm serve m {option} x\n" + "# plain\n" * 3000
        assert contains_trigger(text.encode(), "shell") and has_trigger(text, "shell"), (offset, option)
    other = f"{padding}vllm serve m --use\u2010cuda-graph x\n# \u2014 a dash far away\n" + "# plain\n" * 3000
    assert not contains_trigger(other.encode(), "shell") and not has_trigger(other, "shell")


def test_a_python_file_with_a_lookalike_option_but_no_launch_word_is_skipped():
    text = "# --use-repl\u0430yssm in a comment of a module that launches nothing\nx = 1\n"
    assert not contains_trigger(text.encode(), "python")
    launching = text + "llm = LLM(model='m', use_repl\u0430yssm=True)\n"
    assert contains_trigger(launching.encode(), "python")
