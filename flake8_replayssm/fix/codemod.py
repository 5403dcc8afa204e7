"""Plan fixes for rejected ReplaySSM launches, as text edits on source spans.

One pass: lint the text (``# noqa`` respected), and for every finding of every
launch that has a known fix for the target release, compute edits from the
launch's spans.  :func:`fix_text` applies them, re-parses and re-lints, and
repeats (a fix may uncover the next one, e.g. enabling prefix caching on 0.27
needs ``--mamba-cache-mode align``) until nothing changes.

Which fixes a launch gets is its engine's decision (``engines/vllm/fixes.py``,
``engines/sglang/fixes.py``: [safe] always, [unsafe] only with ``--unsafe``, for the
target release of each launch); :class:`.planner.Planner` makes them as edits.

Structural edits (insert/delete words) are made in Python (argv lists, command
strings without escapes, keywords written in the call or in a same-module dict
literal / ``dict(...)`` that only this call splats as ``**cfg``), shell,
Makefile and Dockerfile text, and YAML (:mod:`.yaml_edits`: sequence items
written like their neighbours, words inside a string that compose or a shell
splits; :mod:`.yaml_env`: compose ``environment:`` / Kubernetes ``env:`` entries;
:mod:`.config_file`: top-level keys of an engine's ``--config`` file).  Notebooks
are fixed cell by cell (:mod:`.notebook`).  Markdown gets only in-place word
replacements; findings inside other files (a ``--config`` YAML a command line
reads) are left to that file's own run.  Every edited span is first checked to
hold the word the launch says is there; nothing reachable through a YAML alias
or merge key is edited; and a round that would make the engine refuse a launch
it accepted before is left out (:func:`fix_text`).

The libcst codemod :class:`ReplaySSMFixCommand` runs the same planner on a
module's code, so comments and layout outside the edits stay byte for byte::

    python -m libcst.tool codemod codemod.ReplaySSMFixCommand --no-format [--vllm-version V] [--unsafe] FILES

``libcst.tool`` finds commands only under the ``modules`` listed in
``.libcst.codemod.yaml`` (``python -m libcst.tool initialize .`` writes one):
add ``flake8_replayssm.fix`` there.  Pass ``--no-format`` when black is not
installed (black would also reformat the rest of the file).
"""

from __future__ import annotations

import collections
from dataclasses import dataclass, field
from typing import Any

from ..config import LintConfig
from ..model import Span
from ..verdicts import without_release_tag
from .edits import Edit, apply_edits, parse_error, span_key, without_collisions
from .markdown import into_block, onto_document, python_block_of
from .planner import Planner


# ---------------------------------------------------------------------------
# Planning and fixing a text
# ---------------------------------------------------------------------------

@dataclass
class FixOutcome:
    """What fixing one text did."""

    original: str
    text: str
    #: codes fixed, in the order the edits were made (one entry per edit)
    fixed: list[str] = field(default_factory=list)
    error: str | None = None
    #: what was left unfixed and why (printed, not an error)
    notes: list[str] = field(default_factory=list)
    #: launches judged for a set of releases: what the fixes tried would make a release of the
    #: set refuse (no launch found that every release accepts)
    conflicts: set[tuple[str, str | None, str | None]] = field(default_factory=set)
    #: (span, code) -> why the planner left that finding unfixed (how the launch is written)
    why_not: dict[tuple[Span, str], str] = field(default_factory=dict)
    #: why the text's Python is not edited at all (too large for the fixer), "" when it is
    bound: str = ""

    @property
    def changed(self) -> bool:
        return self.text != self.original


def plan_edits(text: str, kind: str, config: LintConfig, *, path: str | None = None,
               unsafe: bool = False, why_not: dict[tuple[Span, str], str] | None = None) -> list[Edit]:
    """The edits that fix the findings of ``text`` (one round; edits address ``text``);
    ``why_not`` gets why findings were left unfixed where the planner can say."""
    from ..lint import line_ends, lint_text

    if line_ends(text, kind) != text:  # lone CRs: lint counts lines the edits' offsets would not
        return []
    if kind == "notebook":
        from .notebook import plan_notebook_edits

        return plan_notebook_edits(text, config, path=path, unsafe=unsafe)
    result = lint_text(text, kind, config, path=path)
    if result.error:
        return []
    reported = {(f.span, f.code) for f in result.findings}
    planner = Planner(text, kind, unsafe=unsafe)
    blocks = _python_blocks(text) if kind == "markdown" else []
    in_blocks: dict[int, Planner] = {}
    seen: set[tuple[int, int, int, int]] = set()
    groups: set[int] = set()
    for verdict in result.verdicts:
        findings = [f for f in verdict.findings if (f.span, f.code) in reported]
        key = span_key(verdict.launch.anchor)
        if key in seen and verdict.launch.form == "argv":  # the same command reached twice
            continue
        if verdict.launch.group is not None:  # one written launch read with each of its values
            if verdict.launch.group in groups:
                continue
            groups.add(verdict.launch.group)
        seen.add(key)
        block = python_block_of(blocks, verdict.launch.anchor.line) if blocks else None
        if block is None:
            planner.plan_oldest_fixable(verdict, findings)
            continue
        first, source = block  # a Python fence: planned as Python on the block's own text
        sub = in_blocks.setdefault(first, Planner(source, "python", unsafe=unsafe))
        sub.plan_oldest_fixable(verdict, findings, lambda v, f, first=first: into_block(v, f, first))
    if why_not is not None:
        why_not.update(planner.why_not)
    planned = list(planner.edits)
    for first, sub in in_blocks.items():
        moved = onto_document(_first_of_colliding(sub.text, sub.edits), sub.text, first, text)
        planned += moved or []
    return _first_of_colliding(text, planned)


def _first_of_colliding(text: str, planned: list[Edit]) -> list[Edit]:
    """The edits in order, leaving out any that collides with one already taken."""
    return without_collisions(planned)


def _python_blocks(text: str) -> list[tuple[int, str]]:
    from ..frontends.markdown import python_blocks_of_markdown

    return python_blocks_of_markdown(text)


#: codes that mean "vLLM (or SGLang) refuses to start"; a fix must never add one
FAILING_CODES = frozenset({"RSM001", "RSM002", "RSM003", "RSM004", "RSM005", "RSM006", "RSM007",
                           "RSM008", "RSM009", "RSM104", "RSM106", "RSM301", "RSM302", "RSM303",
                           "RSM304", "RSM305", "RSM306", "RSM307"})


def _lint(text: str, kind: str, config: LintConfig, path: str | None) -> Any:
    from ..lint import lint_text

    return lint_text(text, kind, config, path=path)  # must not raise


def _said(result: Any) -> collections.Counter[tuple[Any, ...]]:
    """What the engine would say about each finding, wherever it is (lines move when a fix inserts
    some; the notes after vLLM's own words change when a pin makes a default explicit), and
    on which releases."""
    return collections.Counter((f.code, without_release_tag(f.message), f.releases) for f in result.findings)


#: a refusal: (code, engine, release), engine and release None for a launch judged for one release
Refusal = tuple[str, "str | None", "str | None"]


def _refusals(result: Any) -> list[dict[str, frozenset[Refusal]]]:
    """Per launch of a lint result, in the order found, per release it was judged for: what makes
    the engine refuse to start it there."""
    reported = {(f.span, f.code) for f in result.findings}
    out = []
    seen: set[tuple[Any, ...]] = set()
    for verdict in result.verdicts:
        anchor = verdict.launch.anchor
        key = (anchor.cell, anchor.source, span_key(anchor), verdict.launch.form)
        if key in seen:
            continue
        seen.add(key)
        codes = {f.code for f in verdict.findings if f.code in FAILING_CODES and (f.span, f.code) in reported}
        parts = verdict.by_release or ((verdict.target, verdict.findings),)
        engine = verdict.launch.engine if len(parts) > 1 else None
        out.append({target.name: frozenset((f.code, engine, target.name if engine else None)
                                           for f in found if f.code in codes)
                    for target, found in parts})
    return out


def _new_refusals(base: list[dict[str, frozenset[Refusal]]],
                  now: list[dict[str, frozenset[Refusal]]]) -> set[Refusal]:
    """What launches the engine accepted before are refused for now, on a release of their set
    (launches matched in order)."""
    if len(base) != len(now):
        flat_base = [frozenset().union(*b.values()) for b in base]
        flat_now = [frozenset().union(*n.values()) for n in now]
        return set().union(*flat_now) if sum(map(bool, flat_now)) > sum(map(bool, flat_base)) else set()
    return {refusal for b, n in zip(base, now) for release, found in n.items() if not b.get(release)
            for refusal in found}


def said_refusals(refusals: set[Refusal]) -> str:
    """``RSM002`` for a launch judged for one release; ``RSM104 on SGLang 0.5.20–0.5.23`` for a set."""
    from .. import engines
    from ..release_sets import label

    by_code: dict[tuple[str, str | None], list[str]] = {}
    for code, engine, release in refusals:
        by_code.setdefault((code, engine), []).extend([release] if release else [])
    ordered = sorted(by_code.items(), key=lambda item: (item[0][0], item[0][1] or ""))
    return ", ".join(code if engine is None else
                     f"{code} on {engines.title(engine)} {label(releases, engines.get(engine).releases())}"
                     for (code, engine), releases in ordered)


def fix_text(text: str, kind: str, config: LintConfig, *, path: str | None = None,
             unsafe: bool = False, rounds: int = 4) -> FixOutcome:
    """``text`` with its fixable findings fixed; never a text that does not parse.

    Rounds repeat until no edit is left (a fix can make the next one visible), and
    stop at a round that changes no finding (its edits are dropped: a fix that the
    next lint does not see would otherwise be added again on every run).
    When a round's result does not parse, that round is dropped and
    :attr:`FixOutcome.error` says why.  The result is the last round whose
    launches vLLM refuses to start are all launches it refused before (a fix may
    uncover a problem that the next round fixes; if none does, those rounds are
    left out and :attr:`FixOutcome.notes` says so).
    """
    from ..lint import line_ends

    as_lf = line_ends(text, kind)
    if as_lf != text and "\n" not in text:  # old Mac line ends throughout: fixed as LF, kept as CR
        outcome = fix_text(as_lf, kind, config, path=path, unsafe=unsafe, rounds=rounds)
        outcome.original, outcome.text = text, outcome.text.replace("\n", "\r")
        return outcome
    outcome = FixOutcome(text, text)
    if kind == "python":
        from .python_facts import too_large_to_fix

        outcome.bound = too_large_to_fix(text)
    first = _lint(text, kind, config, path)
    base, said = _refusals(first), _said(first)
    current = text
    accepted: tuple[str, int] = (text, 0)
    fixed: list[str] = []
    added: set[Refusal] = set()
    tried = {text}
    for round_number in range(rounds):
        edits = plan_edits(current, kind, config, path=path, unsafe=unsafe,
                           why_not=outcome.why_not if round_number == 0 else None)
        if not edits:
            break
        candidate = apply_edits(current, edits)
        if candidate in tried:  # back to a text already tried: the fixes of one release undo another's
            break
        tried.add(candidate)
        problem = parse_error(candidate, kind)
        if problem is not None:
            outcome.error = f"fix not applied: the result would not parse ({problem})"
            break
        result = _lint(candidate, kind, config, path)
        if _said(result) == said:  # the round changed text but not one finding: it would repeat forever
            break
        said = _said(result)
        fixed += [code for e in edits for code in e.code.split(",") if code]
        current = candidate
        added = _new_refusals(base, _refusals(result))
        if not added:
            accepted = (current, len(fixed))
        outcome.conflicts |= {refusal for refusal in added if refusal[1] is not None}
    if current != accepted[0]:
        outcome.notes.append("some fixes were left out: the engine would then refuse to start a launch "
                             f"({said_refusals(added)})")
    outcome.text, outcome.fixed = accepted[0], fixed[:accepted[1]]
    return outcome


# ---------------------------------------------------------------------------
# libcst codemod
# ---------------------------------------------------------------------------

try:
    import libcst as _cst
    from libcst.codemod import CodemodContext, VisitorBasedCodemodCommand
except ImportError:  # pragma: no cover - libcst is a dependency
    VisitorBasedCodemodCommand = object  # type: ignore[assignment,misc]


class ReplaySSMFixCommand(VisitorBasedCodemodCommand):  # type: ignore[misc,valid-type]
    """Fix rejected ReplaySSM launches in a Python module (the ``replayssm-lint fix`` planner).

    The edits are computed on the module's exact code and spliced in, so
    comments, blank lines and layout outside them stay byte for byte.
    """

    DESCRIPTION = "Rewrite vLLM --use-replayssm launches into ones the target vLLM release accepts."

    def __init__(self, context: "CodemodContext", vllm_version: str | None = None,
                 unsafe: bool = False) -> None:
        super().__init__(context)
        self.vllm_version = vllm_version
        self.unsafe = unsafe

    @staticmethod
    def add_args(arg_parser: Any) -> None:
        arg_parser.add_argument("--vllm-version", dest="vllm_version", default=None,
                                help="vLLM release to fix for (default: pins, installed, newest)")
        arg_parser.add_argument("--unsafe", dest="unsafe", action="store_true",
                                help="also apply unsafe fixes")

    def transform_module_impl(self, tree: "_cst.Module") -> "_cst.Module":
        from ..config import ConfigError
        from ..project import command_line_overrides, settings_for

        path = self.context.filename
        try:
            config = settings_for(path, command_line_overrides({"vllm-version": self.vllm_version}))
        except ConfigError as exc:
            self.warn(str(exc))
            return tree
        outcome = fix_text(tree.code, "python", config, path=path, unsafe=self.unsafe)
        if outcome.error is not None:
            self.warn(outcome.error)
        if not outcome.changed:
            return tree
        return _cst.parse_module(outcome.text)
