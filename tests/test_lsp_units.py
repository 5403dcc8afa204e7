"""The language server's parts that need no client: edits, positions, settings, kinds, scheduling."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
from pygls.workspace import PositionCodec

from flake8_replayssm.frontends.notebook import commands_in_notebook, python_cells_of_notebook
from flake8_replayssm.lsp.documents import Cell, kind_of, notebook_json
from flake8_replayssm.lsp.fixes import describe
from flake8_replayssm.lsp.positions import TextPositions, changes
from flake8_replayssm.lsp.scheduling import Debouncer
from flake8_replayssm.lsp.settings import Settings, read_settings
from flake8_replayssm.model import Span

LINES = st.lists(st.sampled_from(["vllm serve m", "--use-replayssm", "  --port 8000 \\", "", "é🚀", "x\r"]),
                 max_size=8).map("\n".join)


def _apply(text: str, edits: list[tuple[int, int, str]]) -> str:
    for start, end, new in reversed(edits):
        text = text[:start] + new + text[end:]
    return text


@given(LINES, LINES)
def test_changes_turn_the_old_text_into_the_new(old: str, new: str):
    edits = list(changes(old, new))
    assert _apply(old, edits) == new
    assert all(a[1] <= b[0] for a, b in zip(edits, edits[1:]))  # in order, never overlapping
    assert all(old[start:end] != replacement for start, end, replacement in edits)


def test_changes_keep_unchanged_words_out_of_the_edit():
    old = "vllm serve m --use-replayssm --mamba-cache-mode all\n"
    new = "VLLM_USE_V2_MODEL_RUNNER=0 vllm serve m --use-replayssm --mamba-cache-mode align\n"
    third = old.index(" all") + 3  # "al" stays, "l" becomes "ign"
    assert list(changes(old, new)) == [(0, 0, "VLLM_USE_V2_MODEL_RUNNER=0 "), (third, third + 1, "ign")]
    assert describe(old, new) == "insert 'VLLM_USE_V2_MODEL_RUNNER=0'; replace 'all' with 'align'"


def test_positions_count_utf16_units_and_clamp():
    text = "a🚀b\nsecond\r\nlast"
    where = TextPositions(text, PositionCodec())
    assert where.position(0, 2) == where.at(2)
    assert (where.at(2).line, where.at(2).character) == (0, 3)  # 🚀 is two UTF-16 units
    assert (where.at(text.index("second")).line, where.at(text.index("second")).character) == (1, 0)
    assert (where.position(9, 0).line, where.position(9, 0).character) == (2, 4)  # past the end: the end
    r = where.span(Span(2, 0, 2, 99))
    assert (r.end.line, r.end.character) == (1, 7)  # the line with its "\r", no further


@pytest.mark.parametrize(("language", "name", "text", "kind"), [
    ("shellscript", "serve", "vllm serve m\n", "shell"),
    ("plaintext", "serve", "#!/usr/bin/env bash\nvllm serve m\n", "shell"),
    ("plaintext", "serve", "vllm serve m\n", None),
    ("dockerfile", "Dockerfile.prod", "", "dockerfile"),
    ("yaml", "compose.yaml", "", "yaml"),
    ("dockercompose", "docker-compose.yml", "", "yaml"),
    ("json", "demo.ipynb", "{}", "notebook"),
    ("python", "demo.ipynb", "{}", "notebook"),
    (None, "Makefile", "", "makefile"),
    ("sh", "run", "", "shell"),
    ("markdown", "README", "", "markdown"),
])
def test_kind_from_language_then_name_then_content(language, name, text, kind):
    assert kind_of(language, f"/w/{name}", text) == kind


def test_a_notebook_of_cells_is_read_cell_for_cell():
    cells = [Cell("c0", "# Title\n", "markdown"), Cell("c1", "import os\n", "code"),
             Cell("c2", "!vllm serve m --use-replayssm\n", "code"), Cell("c3", "ls <- 1\n", "raw")]
    text = notebook_json(cells)
    assert [cell for cell, _ in python_cells_of_notebook(text)] == [1, 2]
    (command,) = commands_in_notebook(text)
    assert command.words[0].span.cell == 2 and command.words[0].span.line == 1


def test_settings_read_camel_and_kebab_keys_and_leave_bad_values_out(tmp_path: Path):
    settings, problems = read_settings({"replayssm": {
        "vllmVersion": "0.30", "extra-args": "open", "model_dirs": ["models", "/abs"],
        "ignore": "RSM105, rsm2", "platform": "tpu", "select": ["XYZ1"], "debounce": 50, "what": 1,
    }}, str(tmp_path))
    assert settings == Settings(vllm_version="0.30", extra_args="open", model_dirs=(tmp_path / "models", Path("/abs")),
                                ignore=("RSM105", "RSM2"), debounce_ms=50)
    assert len(problems) == 3
    assert any(p.startswith("platform:") for p in problems) and any("XYZ1" in p for p in problems)
    assert any("'what'" in p for p in problems)
    assert read_settings({"vllmVersion": "0.20.0"}, None)[0].vllm_version == "0.20.0"  # judged: RSM104
    assert read_settings({"vllmVersion": "newer"}, None)[0].vllm_version is None
    assert read_settings({"vllmVersion": "latest"}, None)[0].vllm_version == "latest"  # a set: the newest
    assert read_settings(None, None) == (Settings(), [])
    assert read_settings(["x"], None)[1]


def test_docs_url_and_extend_settings_reach_the_configuration(tmp_path: Path):
    from flake8_replayssm.lsp.settings import config_for_document

    settings, problems = read_settings({"docsUrl": "https://lint.example/{code}", "extendSelect": ["RSM201"],
                                        "extendIgnore": "RSM105"}, str(tmp_path))
    assert problems == []
    config = config_for_document(str(tmp_path / "serve.sh"), settings, str(tmp_path))
    assert config.docs_page("RSM008") == "https://lint.example/RSM008"
    assert config.is_enabled("RSM201") and not config.is_enabled("RSM105")
    assert read_settings({"docsUrl": "javascript:alert(1)"}, None)[1] == [
        "docsUrl: expected an http(s) or file URL, with {code} where the code goes (or a base URL: CODE.md is added)"]


def test_later_settings_change_only_the_keys_they_have():
    initial = Settings(vllm_version="0.28.0", ignore=("RSM105",))
    assert read_settings({}, None, initial) == (initial, [])  # an editor's empty section
    pulled, _ = read_settings({"replayssm": {"platform": "rocm", "ignore": []}}, None, initial)
    assert pulled == Settings(vllm_version="0.28.0", platform="rocm")


def test_debounce_lints_at_once_then_once_per_burst_and_never_two_at_a_time():
    runs: list[float] = []
    active = 0
    peak = 0

    async def run(key: str) -> None:
        nonlocal active, peak
        active += 1
        peak = max(peak, active)
        runs.append(asyncio.get_running_loop().time())
        await asyncio.sleep(0.05)
        active -= 1

    async def scenario() -> float:
        debouncer = Debouncer(run, lambda: 0.1)
        loop = asyncio.get_running_loop()
        began = loop.time()
        debouncer.touch("doc")  # quiet before: at once
        for _ in range(5):  # a burst: one more lint, after it
            await asyncio.sleep(0.02)
            debouncer.touch("doc")
        last = loop.time()
        await asyncio.sleep(0.4)
        assert runs[0] - began < 0.05
        return last

    last = asyncio.run(scenario())
    assert len(runs) == 2 and runs[1] >= last + 0.1 - 0.01
    assert peak == 1


def test_the_server_starts_without_the_fix_machinery():
    """The first diagnostics are on an editor's critical path: libcst and the fix planner are
    imported only when a code action is asked for (scripts/benchmark.py --lsp-cold has the times)."""
    import subprocess
    import sys

    code = ("import sys, flake8_replayssm.lsp.server as s; s.build_server(); "
            "print(sorted(m for m in sys.modules if m == 'libcst' or m.startswith('flake8_replayssm.fix')), "
            "s.installed_version())")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True).stdout
    from flake8_replayssm import __version__

    assert out.split() == ["[]", __version__]
