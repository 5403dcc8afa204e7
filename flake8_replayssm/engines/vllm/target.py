"""Which vLLM release a verdict is for, and why.

The candidates and their order are the core's (:mod:`flake8_replayssm.target`):
explicit option > the ``vllm/vllm-openai:vX.Y.Z`` image next to the launch >
the project's pins > the installed ``vllm`` > the newest release this tool knows.
A version between known releases is judged by the newest known one before it; a
version before the first with ReplaySSM is judged as such (RSM104), never by
another release.
"""

from __future__ import annotations

from dataclasses import dataclass

from ...config import ConfigError, LintConfig
from ...target import candidates
from ...versions import is_version, normalize_version, version_key
from .knowledge import Knowledge, Release


@dataclass(frozen=True)
class Target:
    """The release a launch is judged for.

    ``release`` is None when the launch targets a vLLM release older than the
    first with ReplaySSM (``version`` says which): the flags do not exist there,
    so the launch is judged for that alone (RSM104), never by another release.
    """

    release: Release | None
    reason: str
    version: str = ""

    @property
    def name(self) -> str:
        return self.release.version if self.release is not None else self.version


def closest_release(version: str, know: Knowledge) -> tuple[Release | None, str]:
    """The known release that judges ``version``: itself, or the newest one before it.

    None with an empty note for a release older than every known one (it has no
    ReplaySSM); None with a note for text that is not a version.
    """
    if not is_version(version):
        return None, f"{version!r} is not a vLLM version (expected e.g. 0.33.0)"
    wanted = normalize_version(version)
    exact = know.releases.get(wanted)
    if exact is not None:
        return exact, ""
    key = version_key(wanted)
    older = [r for r in know.releases.values() if r.key <= key]
    if not older:
        return None, ""
    best = max(older, key=lambda r: r.key)
    return best, f"vLLM {wanted} is not in the release table; judged by {best.version}"


def _target(version: str, reason: str, know: Knowledge) -> Target | None:
    release, note = closest_release(version, know)
    if release is None:
        return Target(None, reason, normalize_version(version)) if not note else None
    return Target(release, reason + (f"; {note}" if note else ""), release.version)


def explicit_release(config: LintConfig, know: Knowledge) -> Target | None:
    if not config.vllm_version:
        return None
    target = _target(config.vllm_version, config.vllm_version_source, know)
    if target is None:
        raise ConfigError(closest_release(config.vllm_version, know)[1])
    return target


def resolve_target(config: LintConfig, hint: str | None, know: Knowledge) -> Target:
    """The release for one launch (``hint`` is its image tag's release, if any)."""
    explicit = explicit_release(config, know)
    if explicit is not None:
        return explicit
    for version, reason in candidates(hint, "vllm", tuple(know.releases), config.project_root):
        target = _target(version, reason, know)
        if target is not None:
            return target
    newest = know.newest
    return Target(newest, f"newest release known ({newest.version})", newest.version)
