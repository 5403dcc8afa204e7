"""The fix planner: edits for the findings of one launch, as text splices on its spans.

:class:`Planner` is given a text of one kind and, per launch, the verdict and the findings
to fix; it asks the launch's engine (``Engine.plan_fixes``: ``engines/*/fixes.py``) which
fixes to make, and the engine makes them with the planner's edits.  :mod:`.codemod` runs
rounds of planning, applying and re-linting.

The planner knows no engine: it knows how a text is written.  Its interface, by family:

- text (:mod:`.state`): ``text``, ``kind``, ``unsafe``, ``offsets``, ``raw``, ``add``,
  ``planned``, ``skip``, ``config_file`` (:class:`.config_file.ConfigFile`, an engine's
  ``--config`` file), ``serve_config`` (the whole text is one);
- words of a command line (:mod:`.words`): ``context``, ``replace_word``, ``replace_value``,
  ``switch_flag``, ``drop_true_value``, ``delete_true_word``, ``written_true``,
  ``insert_words_after`` / ``_before``, ``delete_words``, ``delete_option``,
  ``fix_config_equals``;
- Python keyword arguments (:mod:`.keywords`): ``kw_target``, ``direct``,
  ``written_keywords``, ``insert_keywords_after``, ``delete_keyword``, ``rename_keyword``,
  ``replace_kwarg_value``, ``replace_kwarg_literal``;
- environment variables (:mod:`.environment`): ``set_launch_env``, ``set_env_value``,
  ``add_environ_line``.

Every edited span is first checked to hold the word the launch says is there
(:mod:`.expect`); a launch whose edits fail or collide is left as it was.
"""

from __future__ import annotations

from typing import Callable, Sequence

from .. import engines
from ..model import Finding, Launch
from ..verdicts import Verdict
from .edits import OverlapError, check_overlaps
from .environment import EnvironmentEdits
from .expect import expect


#: an engine's plan for one way a launch is written: (planner, verdict, findings)
Plan = Callable[["Planner", Verdict, Sequence[Finding]], None]


class Planner(EnvironmentEdits):
    """Edits for the launches of one text."""

    def plan(self, verdict: Verdict, findings: Sequence[Finding]) -> None:
        """Plan the fixes of one launch's ``findings`` (its engine decides which)."""
        launch = verdict.launch
        if not findings:
            return
        if launch.anchor.cell is not None or launch.anchor.source is not None:
            self.skip(findings, "not fixable in this file kind")
            return
        engine = engines.get(launch.engine)
        before = self.launch_start = len(self.edits)
        expect(self.expected, launch, engine.WORDS.programs)
        try:
            engine.plan_fixes(self, verdict, findings)
            self.flush_deletions()
        except (AssertionError, IndexError, KeyError, TypeError):  # a launch we cannot edit: leave it
            del self.edits[before:]
            self.deletions = []
            return
        try:  # one launch must never garble itself; drop its edits when they collide
            check_overlaps(self.edits[before:])  # (not applied to the whole text once per launch)
        except OverlapError:
            del self.edits[before:]

    def plan_oldest_fixable(self, verdict: Verdict, findings: Sequence[Finding],
                            moved: Callable[[Verdict, list[Finding]], tuple[Verdict, list[Finding]]] | None = None,
                            ) -> None:
        """Plan a launch judged for a set of releases on the oldest release where an edit can be
        planned (:meth:`.Verdict.releases_to_fix`); for one release, :meth:`plan` itself.
        ``moved`` places each release's verdict and findings in this planner's text (a Python
        fence of a page, a notebook cell)."""
        for release_verdict, release_findings in verdict.releases_to_fix(findings):
            before = len(self.edits)
            self.plan(*(moved(release_verdict, release_findings) if moved else (release_verdict, release_findings)))
            if len(self.edits) > before:
                return

    def plan_by_form(self, verdict: Verdict, findings: Sequence[Finding], *, config_file: Plan | None,
                     keywords: Plan, command_line: Plan, option_block: Plan | None = None) -> None:
        """Call the engine's plan for how the launch is written: ``config_file`` when the engine
        says the launch is one of its ``--config`` files (None: it is not), ``keywords`` for a
        keyword launch in Python text, ``option_block`` for one written as a YAML mapping of
        options (a Ray Serve config's ``engine_kwargs``, a framework's ``vllm_kwargs:``: the
        same key edits as a ``--config`` file, on that mapping), ``command_line`` for the words
        of a command line.  A launch written in a framework's own names elsewhere (a Hydra
        override, a prefixed option) is left unfixed, saying so."""
        launch = verdict.launch
        if config_file is not None:
            config_file(self, verdict, findings)
        elif launch.form == "kwargs" and self.kind == "python":
            keywords(self, verdict, findings)
        elif launch.form == "kwargs":
            self.block = self.option_block(launch) if option_block is not None else None
            if self.block is None:
                self.leave(findings, f"{_written_as(launch)}: not fixable in this file kind")
                return
            try:
                assert option_block is not None
                option_block(self, verdict, findings)
            finally:
                self.block = None
        elif launch.forwarded_by:
            self.leave(findings, f"{_written_as(launch)}: fix it in {launch.forwarded_by}'s own names")
        else:
            command_line(self, verdict, findings)


def _written_as(launch: Launch) -> str:
    return f"options {launch.forwarded_by} forwards to {engines.title(launch.engine)}" if launch.forwarded_by \
        else f"{launch.label or 'keyword options'} outside Python"
