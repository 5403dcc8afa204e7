"""Fixes: rewrite rejected ReplaySSM launches into ones the target vLLM release accepts.

- :func:`flake8_replayssm.fix.codemod.fix_text` fixes one text (plan, apply,
  re-parse, re-lint, repeat until stable);
- :func:`flake8_replayssm.fix.command.run_fix` is ``replayssm-lint fix``;
- :class:`flake8_replayssm.fix.codemod.ReplaySSMFixCommand` is the libcst codemod
  (``python -m libcst.tool codemod codemod.ReplaySSMFixCommand --no-format FILES``
  with ``flake8_replayssm.fix`` listed in the ``modules`` of ``.libcst.codemod.yaml``).

libcst is imported only when a Python text is fixed.
"""

from __future__ import annotations

from .edits import Edit, OverlapError, apply_edits

__all__ = ["Edit", "OverlapError", "apply_edits", "fix_text"]


def fix_text(*args, **kwargs):  # type: ignore[no-untyped-def]
    """See :func:`flake8_replayssm.fix.codemod.fix_text`."""
    from .codemod import fix_text as _fix_text

    return _fix_text(*args, **kwargs)
