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
from ..model import Finding
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

    def plan_by_form(self, verdict: Verdict, findings: Sequence[Finding], *, config_file: Plan | None,
                     keywords: Plan, command_line: Plan) -> None:
        """Call the engine's plan for how the launch is written: ``config_file`` when the engine
        says the launch is one of its ``--config`` files (None: it is not), ``keywords`` for a
        keyword launch in Python text (elsewhere, as in a Ray Serve YAML, its keywords are left
        alone), ``command_line`` for the words of a command line."""
        if config_file is not None:
            config_file(self, verdict, findings)
        elif verdict.launch.form == "kwargs":
            if self.kind == "python":
                keywords(self, verdict, findings)
        else:
            command_line(self, verdict, findings)
