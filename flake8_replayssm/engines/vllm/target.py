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
from ...model import Launch
from ...release_sets import how_admitted, is_set, releases_of
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


def known_releases(know: Knowledge) -> tuple[str, ...]:
    """Every release this linter knows, oldest first."""
    return tuple(sorted(know.releases, key=version_key))


def _targets(versions: tuple[str, ...], reason: str, know: Knowledge) -> list[Target]:
    """One target per release a source names (one table judges each release once)."""
    out: dict[str, Target] = {}
    for version in versions:
        target = _target(version, reason, know)
        if target is not None:
            out.setdefault(target.name, target)
    return sorted(out.values(), key=lambda t: version_key(t.name))


def explicit_releases(config: LintConfig, know: Knowledge) -> list[Target]:
    """The releases the ``vllm-version`` setting names (a version, a list, a range, ``all``)."""
    if not config.vllm_version:
        return []
    spec = config.vllm_version
    versions = releases_of(spec, known_releases(know))
    how = how_admitted(spec)
    targets = _targets(versions, config.vllm_version_source + (f" {spec}: {how}" if how else ""), know)
    if not targets:
        if is_set(spec):
            raise ConfigError(f"{spec!r} admits no vLLM release this linter knows "
                              f"({', '.join(known_releases(know))})")
        raise ConfigError(closest_release(spec, know)[1])
    return targets


def explicit_release(config: LintConfig, know: Knowledge) -> Target | None:
    targets = explicit_releases(config, know)
    return targets[-1] if targets else None


def resolve_targets(config: LintConfig, launch: Launch, know: Knowledge) -> list[Target]:
    """The releases one launch is judged for, oldest first (one, unless a source names a set)."""
    explicit = explicit_releases(config, know)
    if explicit:
        return explicit
    for versions, reason in candidates(launch.release_hint, "vllm", known_releases(know), config.project_root,
                                       in_file=launch.file_pins.get("vllm", ()), ranges=config.ranges):
        targets = _targets(versions, reason, know)
        if targets:
            return targets
    newest = know.newest
    return [Target(newest, f"newest release known ({newest.version})", newest.version)]
