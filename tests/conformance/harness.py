"""One shape for every engine's conformance replay (tests/test_conformance.py).

An engine's recorder ran the engine's own argument code on recorded launches; its replay
module (``replay.py`` for vLLM, ``sglang/sglang_replay.py`` for SGLang) says how the linter
sees one record and when the two disagree. Everything else is the same for every engine and
lives here: reading record files, writing a record's files into a work folder, the table of
documented differences, the replay of a whole file into a list of problems, and the quick
agreement report. A third engine writes a replay module with the names of :class:`Engine`
and adds it to :data:`ENGINES`.
"""

from __future__ import annotations

import collections
import importlib
import json
import re
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterable, Protocol

HERE = Path(__file__).resolve().parent

Record = dict[str, Any]
#: (test of a record and the linter's codes, why the linter knowingly differs there)
KnownDifference = tuple[Callable[[Record, list[str]], bool], str]


@dataclass
class Replay:
    """What the linter made of one record."""

    record: Record
    codes: list[str]
    #: the values the linter derives (one reading), compared with what the engine resolved
    facts: dict[str, Any] | None
    #: (code, message) of every finding
    messages: list[tuple[str, str]] = field(default_factory=list)
    #: whether the linter read the command as a launch of the record's engine at all
    recognised: bool = True


class Engine(Protocol):
    """What an engine's replay module provides (module-level names)."""

    #: the folder of its record files: RELEASE.jsonl and fixes-RELEASE.jsonl
    HERE: Path
    #: codes that mean "the engine refuses to start"
    FAILING_CODES: frozenset[str]
    #: fewest records a release file holds (a recorder that broke writes few)
    MINIMUM_RECORDS: int

    def replay(self, record: Record, workdir: Path) -> Replay: ...

    def disagreement(self, result: Replay) -> str | None: ...

    def mismatches(self, result: Replay) -> list[str]: ...

    def error_codes(self, message: str) -> frozenset[str] | None: ...

    def label(self, record: Record) -> str: ...

    def fixed_launches(self, release: str) -> list[Record]: ...


#: engine name -> its replay module (imported from this folder)
ENGINES = {"vllm": "replay", "sglang": "sglang.sglang_replay"}


def engine(name: str) -> Engine:
    if str(HERE) not in sys.path:
        sys.path.insert(0, str(HERE))
    module: Engine = importlib.import_module(ENGINES[name])  # type: ignore[assignment]
    return module


def read_records(path: Path) -> list[Record]:
    with open(path, encoding="utf-8") as fh:
        return [json.loads(line) for line in fh if line.strip()]


def _version(name: str) -> list[int]:
    return [int(x) for x in name.split(".")]


def releases(folder: Path) -> list[str]:
    """The releases with records in ``folder`` (files named RELEASE.jsonl), oldest first."""
    names = (p.name[:-len(".jsonl")] for p in folder.glob("*.jsonl"))
    return sorted((n for n in names if re.fullmatch(r"\d+\.\d+\.\d+", n)), key=_version)


def fix_releases(folder: Path) -> list[str]:
    """The releases whose fixed launches were asked again (files named fixes-RELEASE.jsonl)."""
    return sorted((p.name[len("fixes-"):-len(".jsonl")] for p in folder.glob("fixes-*.jsonl")), key=_version)


def write_files(files: dict[str, str], workdir: Path) -> None:
    """A record's files (--config files, tiny model folders) written where the launch reads them."""
    for rel, text in files.items():
        target = workdir / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")


def known_difference(table: Iterable[KnownDifference], result: Replay) -> str | None:
    """Why the linter knowingly differs from the engine on this record (README.md), or None."""
    for test, why in table:
        if test(result.record, result.codes):
            return why
    return None


def first_error_codes(table: Iterable[tuple[str, frozenset[str] | None]], message: str) -> frozenset[str] | None:
    """The codes of the first pattern of ``table`` that ``message`` matches (None: none does, or
    the engine's error is not a ReplaySSM matter)."""
    for pattern, codes in table:
        if re.search(pattern, message):
            return codes
    return None


def problems(replay: Engine, records: list[Record], tmp_path: Path) -> list[str]:
    """Every disagreement and value mismatch of ``records``, one line each (empty: all agree)."""
    found = []
    for number, record in enumerate(records):
        workdir = tmp_path / str(number)
        workdir.mkdir()
        result = replay.replay(record, workdir)
        why = replay.disagreement(result)
        if why:
            found.append(f"{replay.label(record)} {record['argv']}: {why}")
        found += [f"{replay.label(record)}: {m}" for m in replay.mismatches(result)]
    return found


def report(replay: Engine, paths: list[Path]) -> None:
    """A quick agreement report per record file: ``python tests/conformance/harness.py ENGINE``."""
    for path in paths:
        records = read_records(path)
        bad: collections.Counter[str] = collections.Counter()
        values: collections.Counter[str] = collections.Counter()
        examples: dict[str, Any] = {}
        for record in records:
            with tempfile.TemporaryDirectory() as tmp:
                result = replay.replay(record, Path(tmp))
            why = replay.disagreement(result)
            if why:
                key = why[:100]
                bad[key] += 1
                examples.setdefault(key, (replay.label(record), record["argv"], record.get("env")))
            for m in replay.mismatches(result):
                values[m] += 1
                examples.setdefault(m, (replay.label(record), record["argv"]))
        print(f"{path.name}: {len(records)} records, {len(records) - sum(bad.values())} agree")
        for key, n in bad.most_common():
            print(f"   {n:4d} {key}\n        {examples[key]}")
        for key, n in values.most_common():
            print(f"   value {n:4d} {key}\n        {examples[key]}")


if __name__ == "__main__":
    chosen = engine(sys.argv[1] if len(sys.argv) > 1 else "vllm")
    report(chosen, [Path(p) for p in sys.argv[2:]]
           or [chosen.HERE / f"{r}.jsonl" for r in releases(chosen.HERE)])
