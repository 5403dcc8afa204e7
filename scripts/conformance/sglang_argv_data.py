"""Write flake8_replayssm/engines/sglang/data/sglang_argv.toml from SGLang's own argument parsers.

Run with the Python of the SGLang oracle (``sglang_setup_env.sh``); for every
release it builds ``ServerArgs.add_cli_args(parser)`` in a subprocess and
collects the long options, which of them take no value, how many words the
others take (argparse's ``nargs``) and the number type of a list option's words,
then writes the union with the releases each option is in (the linter needs them
for argparse's ``allow_abbrev`` prefix matching, which is per release —
``--cuda-graph-bs`` is an option up to 0.5.19 and an ambiguous prefix from 0.5.20 —
and to know how many words an option consumes: ``--cuda-graph-bs 1 2 4`` is one
option with three values, and ``--cuda-graph-bs 1 two`` an invalid int)::

    python3 scripts/conformance/sglang_argv_data.py > flake8_replayssm/engines/sglang/data/sglang_argv.toml
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from typing import Any

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import sglang_oracle  # noqa: E402

PROBE = """
import argparse, json
from sglang.srt.server_args import ServerArgs
parser = argparse.ArgumentParser()
ServerArgs.add_cli_args(parser)
long, valueless, nargs, types = [], [], {}, {}
for action in parser._actions:
    names = [o for o in action.option_strings if o.startswith("--")]
    long += names
    if action.nargs == 0:
        valueless += names
    elif action.nargs is not None:
        nargs.update((name, action.nargs) for name in names)
        if action.type in (int, float):
            types.update((name, action.type.__name__) for name in names)
print(json.dumps({"long": long, "valueless": valueless, "nargs": nargs, "types": types}))
"""


def parser_facts(release: str, oracle_dir: str) -> dict[str, Any]:
    env = sglang_oracle.oracle_env(release, oracle_dir, gpu="hopper")
    out = subprocess.run([os.path.join(oracle_dir, "venv", "bin", "python"), "-c", PROBE],
                         env=env, capture_output=True, text=True, check=True, cwd=oracle_dir)
    return json.loads(out.stdout.strip().splitlines()[-1])


def _toml_list(names: list[str], indent: str = "  ") -> str:
    lines, line = [], indent
    for name in names:
        item = f'"{name}", '
        if len(line) + len(item) > 100:
            lines.append(line.rstrip())
            line = indent
        line += item
    lines.append(line.rstrip())
    return "[\n" + "\n".join(lines) + "\n]"


def _toml_value(value: Any) -> str:
    return json.dumps(value)  # a string ("+", "*", "?") or an integer: the same in TOML


def nargs_tables(by_release: dict[str, dict[str, Any]], releases: list[str]) -> tuple[dict[str, Any],
                                                                                      dict[str, dict[str, Any]]]:
    """(nargs of every option that takes other than one value, in the newest release that
    has it; per release, the options whose nargs differs from that)."""
    common: dict[str, Any] = {}
    for release in releases:  # oldest first: a newer release's value wins
        common.update(by_release[release])
    common = {name: value for name, value in common.items() if value != 1}
    differs: dict[str, dict[str, Any]] = {}
    for release in releases:
        for name, value in by_release[release].items():
            if common.get(name, 1) != value:
                differs.setdefault(release, {})[name] = value
    return common, differs


def option_ranges(long_by_release: dict[str, set[str]], releases: list[str]) -> tuple[dict[str, str],
                                                                                      dict[str, str]]:
    """({option: first release} for the options not in the oldest release, {option: last
    release} for those not in the newest): every option is in a run of consecutive releases."""
    since: dict[str, str] = {}
    until: dict[str, str] = {}
    for option in set().union(*long_by_release.values()):
        present = [r for r in releases if option in long_by_release[r]]
        if present[0] != releases[0]:
            since[option] = present[0]
        if present[-1] != releases[-1]:
            until[option] = present[-1]
    return since, until


def _print_table(header: str, table: dict[str, Any]) -> None:
    print()
    print(f"[{header}]")
    for name in sorted(table):
        print(f'"{name}" = {_toml_value(table[name])}')


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--oracle-dir", default="/work/cache/sglang-oracle")
    ap.add_argument("--releases", nargs="*", default=list(sglang_oracle.RELEASES))
    ns = ap.parse_args()
    long: set[str] = set()
    valueless: set[str] = set()
    nargs: dict[str, dict[str, Any]] = {}
    one_word: dict[str, set[str]] = {}
    long_by_release: dict[str, set[str]] = {}
    types: dict[str, str] = {}
    for release in ns.releases:  # oldest first: a newer release's type wins
        facts = parser_facts(release, ns.oracle_dir)
        long_by_release[release] = set(facts["long"])
        types.update(facts["types"])
        long.update(facts["long"])
        valueless.update(facts["valueless"])
        nargs[release] = facts["nargs"]
        one_word[release] = set(facts["long"]) - set(facts["nargs"]) - set(facts["valueless"])
    # an option that takes one value in one release and a list in another
    for release in ns.releases:
        for name in one_word[release]:
            if any(name in nargs[other] for other in ns.releases):
                nargs[release][name] = 1
    common, differs = nargs_tables(nargs, list(ns.releases))
    since, until = option_ranges(long_by_release, list(ns.releases))
    print("# Generated by scripts/conformance/sglang_argv_data.py from SGLang's own parsers")
    print(f"# (ServerArgs.add_cli_args of {', '.join(ns.releases)}); do not edit by hand.")
    print("#")
    print("# long_options: every long option of any of those releases (argparse's allow_abbrev:")
    print("#   a unique prefix stands for the option; prefixes are judged against this list).")
    print("# valueless: the options among them that take no value (store_true and friends).")
    print("# [argv.nargs]: the options that take other than exactly one word (argparse's nargs:")
    print('#   "+" one or more, "*" zero or more, "?" zero or one, N exactly N), as in the newest')
    print("#   release that has them; every other option that is not valueless takes one word.")
    print("# [argv.nargs_by_release.\"X\"]: where release X differs from [argv.nargs] (1: one word).")
    print("# [argv.list_types]: the list options whose words argparse converts to int or float")
    print("#   (`--cuda-graph-bs 1 two`: invalid int value: 'two').")
    print("# [argv.since] / [argv.until]: the first / last release an option is in, for the options")
    print("#   not in every release above (an option is in a run of consecutive releases).")
    print("[argv]")
    print(f"long_options = {_toml_list(sorted(long))}")
    print(f"valueless = {_toml_list(sorted(valueless))}")
    _print_table("argv.nargs", common)
    for release in ns.releases:
        if release in differs:
            _print_table(f'argv.nargs_by_release."{release}"', differs[release])
    _print_table("argv.list_types", {name: kind for name, kind in types.items() if name in common})
    _print_table("argv.since", since)
    _print_table("argv.until", until)


if __name__ == "__main__":
    main()
