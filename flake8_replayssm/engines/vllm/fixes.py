"""vLLM's fixes: which edits fix a vLLM launch's findings (see the README's fix table).

The decisions still live in the core planner's vLLM methods; they move here with the
planner's split (issue 17).
"""

from __future__ import annotations

from typing import Any, Sequence

from ...model import Finding


def plan(planner: Any, verdict: Any, findings: Sequence[Finding]) -> None:
    planner.plan_vllm(verdict, findings)
