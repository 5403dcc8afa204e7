"""Where each generated fact lives in the committed data, how it is compared and written.

Three kinds of place:

- per release (``releases."X"`` of ``releases.toml`` / ``sglang.toml``): the value the
  release table has *after* ``extends`` is compared; a different value is written into
  that release's own table (a new release gets a new table that ``extends`` the newest).
- newest release only (``options.toml``'s option lists, backends, buffer default): they
  describe the newest release the linter knows; an older wheel is compared, not written.
- union over releases (``sglang_argv.toml``): every long option of any release; a wheel's
  options are written into the union, and the header's list of releases gains it.  Beside
  the lists, two kinds of union tables: ``[argv.nargs]`` / ``[argv.list_types]`` (option ->
  value, as in the newest release that has the option: a newer release that takes one word
  again drops it) and ``[argv.since]`` / ``[argv.until]`` (the first / last release of the
  options not in every release of the union).

Lists whose order carries no meaning are compared as sets; an equal set is never
rewritten, so regenerating from the same wheels leaves the files byte-identical.
"""

from __future__ import annotations

import os
import re
import sys
from dataclasses import dataclass

from flake8_replayssm.versions import resolve_extends, version_key

from .facts import Facts
from .toml_edit import TomlText

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

PACKAGE = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))),
                       "flake8_replayssm")


@dataclass(frozen=True)
class Slot:
    fact: str
    file: str
    key: str
    table: str | None = None  # a fixed table; None: the release's own table
    sub: str | None = None  # a key of an inline table (supported.cuda)
    scope: str = "release"  # "release", "newest", "union", "union_table" or "range"
    ordered: bool = False
    exclude_options: bool = False  # leave out the options the linter models itself


SLOTS = {
    "vllm": [
        Slot("long_options", "options.toml", "long_options", table="abbreviations", scope="newest"),
        Slot("flags_without_value", "options.toml", "flags_without_value", table="argv", scope="newest",
             exclude_options=True),
        Slot("backends", "options.toml", "valid", table="backends", scope="newest", ordered=True),
        Slot("backend_default", "options.toml", "default", table="backends", scope="newest"),
        Slot("buffer_default", "options.toml", "default", table="buffer", scope="newest"),
        Slot("supported.cuda", "releases.toml", "supported", sub="cuda"),
        Slot("supported.rocm", "releases.toml", "supported", sub="rocm"),
        Slot("supported.xpu", "releases.toml", "supported", sub="xpu"),
        Slot("kimi", "releases.toml", "kimi"),
        Slot("cache_mode_choices", "releases.toml", "cache_mode_choices", ordered=True),
        Slot("cache_mode_all_classes", "releases.toml", "cache_mode_all_classes"),
        Slot("cache_mode_deprecated", "releases.toml", "cache_mode_deprecated"),
        Slot("disable_aliases", "releases.toml", "disable_aliases"),
        Slot("runner", "releases.toml", "runner"),
        Slot("v1_spec_methods", "releases.toml", "v1_spec_methods"),
    ],
    "sglang": [
        Slot("long_options", "sglang_argv.toml", "long_options", table="argv", scope="union"),
        Slot("valueless", "sglang_argv.toml", "valueless", table="argv", scope="union"),
        Slot("nargs", "sglang_argv.toml", "nargs", table="argv", scope="union_table"),
        Slot("list_types", "sglang_argv.toml", "list_types", table="argv", scope="union_table"),
        Slot("long_options", "sglang_argv.toml", "since", table="argv", scope="range"),
        Slot("long_options", "sglang_argv.toml", "until", table="argv", scope="range"),
        Slot("radix_archs", "sglang.toml", "radix_archs"),
        Slot("extra_buffer_archs", "sglang.toml", "extra_buffer_archs"),
        Slot("linear_attn_backends", "sglang.toml", "linear_attn_backends", ordered=True),
        Slot("radix_by_layer_types", "sglang.toml", "radix_by_layer_types", table="models", scope="newest"),
    ],
}


@dataclass
class Difference:
    slot: Slot
    where: str
    committed: object
    extracted: object

    def describe(self) -> str:
        if isinstance(self.committed, list) and isinstance(self.extracted, list):
            added = [v for v in self.extracted if v not in self.committed]
            removed = [v for v in self.committed if v not in self.extracted]
            parts = []
            if added:
                parts.append("+ " + ", ".join(map(str, added)))
            if removed:
                parts.append("- " + ", ".join(map(str, removed)))
            return "; ".join(parts) or f"order: {self.committed} -> {self.extracted}"
        return f"{self.committed!r} -> {self.extracted!r}"


class Data:
    """One engine's committed data folder (the package's, or a copy for tests)."""

    def __init__(self, engine: str, folder: str | None = None) -> None:
        self.engine = engine
        self.folder = folder or os.path.join(PACKAGE, "engines", engine, "data")

    def path(self, name: str) -> str:
        return os.path.join(self.folder, name)

    def load(self, name: str) -> dict:
        with open(self.path(name), "rb") as f:
            return tomllib.load(f)

    def releases(self) -> list[str]:
        name = "releases.toml" if self.engine == "vllm" else "sglang.toml"
        return sorted(self.load(name)["releases"], key=version_key)

    def argv_releases(self) -> list[str]:
        """The releases the union in sglang_argv.toml was built from (its header says)."""
        with open(self.path("sglang_argv.toml"), encoding="utf-8") as f:
            match = re.search(r"add_cli_args of ([^)]*)\)", f.read())
        return [r.strip() for r in match.group(1).split(",")] if match else []

    def committed(self, slot: Slot, release: str) -> object:
        raw = self.load(slot.file)
        if slot.table is not None:
            node = raw
            for part in slot.table.split("."):
                node = node.get(part, {})
            value = node.get(slot.key)
        else:
            tables = resolve_extends(raw.get("releases", {}))
            if release not in tables:
                # a new release: what its table would inherit from the newest older one
                older = [r for r in tables if version_key(r) < version_key(release)]
                release = max(older, key=version_key) if older else release
            value = tables.get(release, {}).get(slot.key)
        if slot.sub is not None and isinstance(value, dict):
            value = value.get(slot.sub)
        return value

    def modelled_options(self) -> set[str]:
        """The vLLM options the linter interprets itself (options.toml [options])."""
        return set(self.load("options.toml").get("options", {})) if self.engine == "vllm" else set()


def expected(slot: Slot, facts: Facts, data: Data) -> object:
    value = facts.value(slot.fact)
    if slot.exclude_options and isinstance(value, list):
        modelled = data.modelled_options()
        value = [v for v in value if v not in modelled]
    return value


def same(slot: Slot, committed: object, extracted: object) -> bool:
    if isinstance(committed, list) and isinstance(extracted, list) and not slot.ordered:
        return sorted(map(str, committed)) == sorted(map(str, extracted)) and len(committed) == len(extracted)
    return committed == extracted


def compare(facts: Facts, data: Data, union_exact: list[Facts] | None = None) -> list[Difference]:
    """The generated facts of ``facts`` that the committed data does not hold.

    A union slot is compared as "contains" (a release's options are part of the union),
    or, given ``union_exact`` (the facts of every release the union is built from), as
    equal to their union.
    """
    out = []
    known = data.releases()
    for slot in SLOTS[data.engine]:
        if slot.fact not in facts.facts:
            continue
        if slot.scope == "newest" and known and version_key(facts.release) < version_key(known[-1]):
            continue
        committed = data.committed(slot, facts.release)
        extracted = expected(slot, facts, data)
        table = slot.table or 'releases."' + facts.release + '"'
        where = f"{slot.file} [{table}] {slot.key}" + (f".{slot.sub}" if slot.sub else "")
        if slot.scope in ("union_table", "range"):
            extracted = _union_table(slot, facts, data, committed, union_exact)
            if extracted != (committed or {}):
                out.append(Difference(slot, where, committed or {}, extracted))
            continue
        if slot.scope == "union":
            members = union_exact or [facts]
            union = sorted({v for f in members for v in expected(slot, f, data)})
            if union_exact is None:
                missing = [v for v in union if v not in (committed or [])]
                if missing:
                    out.append(Difference(slot, where, committed, sorted(set(committed or []) | set(missing))))
                continue
            extracted = union
        if not same(slot, committed, extracted):
            out.append(Difference(slot, where, committed, extracted))
    return out


def _union_table(slot: Slot, facts: Facts, data: Data, committed: object,
                 union_exact: list[Facts] | None) -> dict[str, object]:
    """The table a union slot should hold: from every release (``union_exact``), or the
    committed table with ``facts``'s release laid over it (a release newer than the union's
    wins; an older one only adds what is missing)."""
    if union_exact is not None:
        members = sorted(union_exact, key=lambda f: version_key(f.release))
        table: dict[str, object] = {}
        if slot.scope == "range":
            return _ranges(slot.key, members)
        for member in members:
            _lay_over(table, slot, member)
        return dict(sorted(table.items()))
    table = dict(committed) if isinstance(committed, dict) else {}
    known = data.argv_releases()
    newest = not known or version_key(facts.release) >= version_key(known[-1])
    if slot.scope == "range":
        if newest and facts.release not in known:
            options = set(facts.value("long_options") or [])
            union = set(data.load(slot.file)["argv"]["long_options"])
            if slot.key == "since":
                table.update((o, facts.release) for o in options - union)
            else:
                table.update((o, known[-1]) for o in union - options if o not in table)
                table = {o: r for o, r in table.items() if o not in options}
        return dict(sorted(table.items()))
    if newest:
        _lay_over(table, slot, facts)
    else:
        for option, value in dict(facts.value(slot.fact) or {}).items():  # type: ignore[call-overload]
            table.setdefault(option, value)
    return dict(sorted(table.items()))


def _lay_over(table: dict[str, object], slot: Slot, facts: Facts) -> None:
    """``facts``'s values replace the table's for every option the release has."""
    values = dict(facts.value(slot.fact) or {})  # type: ignore[call-overload]
    for option in facts.value("long_options") or []:  # type: ignore[union-attr]
        if option in values:
            table[option] = values[option]
        else:
            table.pop(option, None)


def _ranges(key: str, members: list[Facts]) -> dict[str, object]:
    """{option: first release} (``since``) or {option: last release} (``until``) of the options
    not in every release of ``members`` (oldest first)."""
    releases = [m.release for m in members]
    having: dict[str, list[str]] = {}
    for member in members:
        for option in member.value("long_options") or []:  # type: ignore[union-attr]
            having.setdefault(option, []).append(member.release)
    if key == "since":
        return {o: rs[0] for o, rs in sorted(having.items()) if rs[0] != releases[0]}
    return {o: rs[-1] for o, rs in sorted(having.items()) if rs[-1] != releases[-1]}


def write(facts_list: list[Facts], data: Data, exact_union: bool = False) -> list[str]:
    """Write the generated facts of each release into the data files; returns what changed."""
    changes: list[str] = []
    texts: dict[str, TomlText] = {}

    def text(name: str) -> TomlText:
        if name not in texts:
            with open(data.path(name), encoding="utf-8") as f:
                texts[name] = TomlText(f.read())
        return texts[name]

    for facts in sorted(facts_list, key=lambda f: version_key(f.release)):
        known = data.releases()
        exact = facts_list if exact_union else None
        for diff in compare(facts, data, exact):
            slot = diff.slot
            if slot.scope == "release":
                _write_release(text(slot.file), slot, facts, data, known, diff.extracted)
            elif slot.scope == "union":
                text(slot.file).set(slot.table, slot.key, sorted(diff.extracted))
            elif slot.scope in ("union_table", "range"):
                text(slot.file).set_table(f"{slot.table}.{slot.key}", diff.extracted)  # type: ignore[arg-type]
            else:
                text(slot.file).set(slot.table, slot.key, diff.extracted)
            changes.append(f"{diff.where}: {diff.describe()}")
            _flush(texts, data)
        if any(s.scope == "union" for s in SLOTS[data.engine]) and facts.release not in data.argv_releases():
            _add_argv_release(text("sglang_argv.toml"), data, facts.release)
            changes.append(f"sglang_argv.toml: header lists {facts.release}")
            _flush(texts, data)
    return changes


def _flush(texts: dict[str, TomlText], data: Data) -> None:
    for name, toml in texts.items():
        with open(data.path(name), "w", encoding="utf-8") as f:
            f.write(toml.text())


def _write_release(toml: TomlText, slot: Slot, facts: Facts, data: Data, known: list[str], value: object) -> None:
    header = f'releases."{facts.release}"'
    if toml.table(header) is None:
        older = [r for r in known if version_key(r) < version_key(facts.release)]
        keys: list[tuple[str, object]] = [("extends", older[-1])] if older else []
        source = facts.value("validator_source")
        if source:
            keys.append(("source", source))
        toml.add_table(header, ('[releases."', '[[releases."'), keys)
    if slot.sub is not None:
        whole = dict(data.committed(Slot(slot.fact, slot.file, slot.key), facts.release) or {})
        whole[slot.sub] = value
        toml.set(header, slot.key, whole)
    else:
        toml.set(header, slot.key, value)


def _add_argv_release(toml: TomlText, data: Data, release: str) -> None:
    releases = sorted(set(data.argv_releases()) | {release}, key=version_key)
    for i, line in enumerate(toml.lines):
        if "add_cli_args of " in line:
            toml.lines[i] = re.sub(r"add_cli_args of [^)]*\)", f"add_cli_args of {', '.join(releases)})", line)
            break
