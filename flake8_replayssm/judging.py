"""Judge a launch: hand it to the engine that reads it (:mod:`flake8_replayssm.engines`).

The one path every file kind shares after its frontend: launch -> its engine's verdict
(target release, checks, form findings, one finding per code).
"""

from __future__ import annotations

from . import engines
from .config import LintConfig
from .model import Launch
from .verdicts import Verdict


def judge(launch: Launch, config: LintConfig) -> Verdict:
    return engines.get(launch.engine).judge(launch, config)
