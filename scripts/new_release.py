"""A new vLLM or SGLang release in a day: read the wheels, list what changed, write the data.

    pip download --no-deps vllm==0.34.0 -d /work/cache/whl
    python scripts/new_release.py vllm diff OLD.whl NEW.whl     # the checklist
    python scripts/new_release.py vllm write NEW.whl            # the generated parts
    python scripts/new_release.py vllm check NEW.whl            # generated parts == data?
    python scripts/new_release.py vllm facts NEW.whl > f.json   # record the extraction

A SOURCE is a wheel, a folder with the wheel's paths, or a JSON file ``facts`` wrote.
Nothing is imported or run from the wheel: it is read with ``ast`` (README, "Adding a
release"; what each fact is and where it goes: scripts/release_facts/).
"""

from __future__ import annotations

import argparse
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from flake8_replayssm.versions import in_range, resolve_extends  # noqa: E402
from release_facts import diff, sglang_facts, tables, vllm_facts  # noqa: E402
from release_facts.facts import Facts  # noqa: E402
from release_facts.tree import Tree  # noqa: E402

EXTRACTORS = {"vllm": vllm_facts.extract, "sglang": sglang_facts.extract}


def load(engine: str, source: str) -> Facts:
    """The facts of one release: extracted from a wheel or folder, or read back from JSON."""
    if source.endswith(".json"):
        with open(source, encoding="utf-8") as f:
            facts = Facts.from_json(json.load(f))
        if facts.engine != engine:
            raise SystemExit(f"{source}: facts of {facts.engine}, not {engine}")
        return facts
    if not os.path.exists(source):
        raise SystemExit(f"{source}: no such wheel or folder")
    return EXTRACTORS[engine](Tree(source))


def data_messages(data: tables.Data, release: str) -> list[str]:
    """The messages of the data's checks for ``release`` (what the linter says vLLM says)."""
    if data.engine == "vllm":
        table = resolve_extends(data.load("releases.toml")["releases"]).get(release, {})
        return [c.get("message", "") for c in table.get("checks", [])]
    return [c.get("message", "") for c in data.load("sglang.toml").get("checks", [])
            if in_range(release, c.get("since"), c.get("until"))]


def cmd_facts(ns: argparse.Namespace) -> int:
    sys.stdout.write(load(ns.engine, ns.source).dumps(record=ns.record))
    return 0


def cmd_diff(ns: argparse.Namespace) -> int:
    old, new = load(ns.engine, ns.old), load(ns.engine, ns.new)
    if ns.format == "json":
        changes, unchanged = diff.pair_rules(old.rules, new.rules)
        json.dump({"old": old.release, "new": new.release, "facts": diff.fact_changes(old, new),
                   "rules": [c.as_json() for c in changes], "rules_unchanged": unchanged},
                  sys.stdout, indent=1)
        sys.stdout.write("\n")
    else:
        sys.stdout.write(diff.report(old, new, limit=ns.limit))
    return 0


def cmd_check(ns: argparse.Namespace) -> int:
    data = tables.Data(ns.engine, ns.data)
    all_facts = [load(ns.engine, source) for source in ns.sources]
    failed = False
    for facts in all_facts:
        differences = tables.compare(facts, data, all_facts if ns.exact_union else None)
        print(f"{ns.engine} {facts.release}: "
              f"{'generated parts equal the data' if not differences else f'{len(differences)} differ'}")
        for difference in differences:
            print(f"  {difference.where}: {difference.describe()}")
        failed |= bool(differences)
        unmatched = diff.unmatched_messages(facts, data_messages(data, facts.release))
        if unmatched and facts.release in data.releases():
            print(f"  {len(unmatched)} refusals of the wheel whose message no check of the data carries "
                  "(read them; most are not launch checks):")
            for rule in unmatched[: ns.limit]:
                print(f"    {rule.loc}: {rule.message[:110]}")
    return 1 if failed else 0


def cmd_write(ns: argparse.Namespace) -> int:
    data = tables.Data(ns.engine, ns.data)
    changes = tables.write([load(ns.engine, source) for source in ns.sources], data, exact_union=ns.exact_union)
    for change in changes:
        print(change)
    if not changes:
        print("the generated parts already equal the wheels: nothing written")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("engine", choices=sorted(EXTRACTORS))
    commands = parser.add_subparsers(dest="command", required=True)
    facts = commands.add_parser("facts", help="print one release's facts as JSON (record them)")
    facts.add_argument("source")
    facts.add_argument("--record", action="store_true",
                       help="facts only (no source text of conditions): for committing as test data")
    facts.set_defaults(run=cmd_facts)
    changes = commands.add_parser("diff", help="what changed between two releases: the checklist")
    changes.add_argument("old")
    changes.add_argument("new")
    changes.add_argument("--format", choices=("text", "json"), default="text")
    changes.add_argument("--limit", type=int, default=40, help="items shown per list (default 40)")
    changes.set_defaults(run=cmd_diff)
    for name, run, text in (("check", cmd_check, "compare the generated parts with the committed data"),
                            ("write", cmd_write, "write the generated parts into the data files")):
        sub = commands.add_parser(name, help=text)
        sub.add_argument("sources", nargs="+")
        sub.add_argument("--data", help="the engine's data folder (default: the package's)")
        sub.add_argument("--exact-union", action="store_true",
                         help="SGLang: the sources are every release sglang_argv.toml is built from")
        sub.add_argument("--limit", type=int, default=12)
        sub.set_defaults(run=run)
    ns = parser.parse_args(argv)
    return ns.run(ns)


if __name__ == "__main__":
    sys.exit(main())
