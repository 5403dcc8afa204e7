"""Every file under fixtures/ is judged as its annotations say.

A fixture carries one annotation line per release it is checked for, in any
comment syntax of its kind::

    # replayssm-expect 0.33.0: 21:RSM008 23:RSM105
    # replayssm-expect 0.28.0:
    # replayssm-expect sglang 0.5.23: 12:RSM302

(an empty list means: no finding; ``sglang`` names an SGLang release).  Notebook findings are written
``CELL/LINE:CODE``.  The expected (line, code) multiset must equal the CLI's.
"""

from __future__ import annotations

import collections
import re
from pathlib import Path

import pytest

from flake8_replayssm.project import lint_file
from flake8_replayssm.config import LintConfig

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"
ANNOTATION = re.compile(r"replayssm-expect\s+(sglang\s+)?(\d+\.\d+\.\d+)(?:\s+enable=(\S+))?:([^\n\"\\>]*)")


def _cases():
    for path in sorted(FIXTURES.rglob("*")):
        if not path.is_file():
            continue
        text = path.read_text(encoding="utf-8", errors="replace")
        for match in ANNOTATION.finditer(text):
            engine, release, enable = "sglang" if match.group(1) else "vllm", match.group(2), match.group(3)
            items = re.findall(r"[\d/]+:RSM\d{3}", match.group(4))
            yield pytest.param(path, engine, release, tuple(enable.split(",")) if enable else (), items,
                               id=f"{path.relative_to(FIXTURES)}@{release}")


def test_every_fixture_is_annotated():
    unannotated = [p for p in FIXTURES.rglob("*")
                   if p.is_file() and not ANNOTATION.search(p.read_text(encoding="utf-8", errors="replace"))]
    assert unannotated == []


@pytest.mark.parametrize("path,engine,release,enable,items", list(_cases()))
def test_fixture(path, engine, release, enable, items):
    version = {"sglang_version" if engine == "sglang" else "vllm_version": release}
    result = lint_file(str(path), LintConfig(enable=enable, **version))
    assert result is not None and result.error is None
    found = collections.Counter(
        (f"{f.span.cell}/{f.span.line}" if f.span.cell is not None else str(f.span.line), f.code)
        for f in result.findings if not f.span.source)
    expected = collections.Counter(tuple(item.split(":", 1)) for item in items)
    assert found == expected
