"""Which SGLang release a verdict is for, and why.

The order is vLLM's (DESIGN.md): explicit option (``--sglang-version``, flake8
``--replayssm-sglang-version``, pyproject ``sglang-version``) > the
``lmsysorg/sglang:vX.Y.Z`` image next to the launch > the project's pins
(``sglang==X``, ``sglang[all]==X``, lock files) > the installed ``sglang``
distribution's metadata > the newest release known.  A release between known
ones is judged by the newest known one before it; a release before the first
with ``--enable-linear-replayssm`` is judged as such (every ReplaySSM flag is
then RSM104), never silently by another release.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace

from ...argv import image_tag_releases
from ...config import ConfigError, LintConfig
from ...model import Launch, Span
from ...release_sets import how_admitted, releases_of
from ...target import candidates
from ...versions import is_version, normalize_version, version_key
from .knowledge import Knowledge, Release

_IMAGE = re.compile(r"(^|/)lmsysorg/sglang$")
_TAG = re.compile(r"v?(\d+\.\d+\.\d+)(?:\.post\d+)?(?:-[\w.]+)?")
_CUDA_TAG = re.compile(r"(?:^|-)cu(\d{3})(?:$|-)")


@dataclass(frozen=True)
class Target:
    """The SGLang release a launch is judged for (a table without checks before the first)."""

    release: Release
    reason: str

    @property
    def name(self) -> str:
        return self.release.version

    @property
    def version(self) -> str:
        return self.release.version


def sglang_image_release(image: str | None, know: Knowledge) -> str | None:
    """``lmsysorg/sglang:v0.5.23-cu129`` -> ``0.5.23``; ``:latest`` -> ``latest``; a tag the file
    leaves unknown -> ``all``; None for dev builds, digests and mirrors."""
    if not image:
        return None
    name, sep, tag = image.strip().rpartition(":")
    if not sep or "/" in tag or not _IMAGE.search(name.lower()):
        return None
    match = _TAG.fullmatch(tag)
    return image_tag_releases(tag) or (match.group(1) if match else None)


def sglang_image_cuda(image: str | None) -> str | None:
    """``lmsysorg/sglang:v0.5.23-cu129`` -> ``cu129``: the CUDA build an image tag names."""
    if not image:
        return None
    name, sep, tag = image.strip().rpartition(":")
    match = _CUDA_TAG.search(tag) if sep and _IMAGE.search(name.lower()) else None
    return f"cu{match.group(1)}" if match else None


def cuda_version(text: str | None) -> str | None:
    """The CUDA version of a setting (``12.9``, ``13``) or an image's ``cu129`` (``12.9``)."""
    text = (text or "").strip()
    match = re.fullmatch(r"cu(\d\d)(\d)", text)
    if match:
        return f"{match.group(1)}.{match.group(2)}"
    return text if re.fullmatch(r"\d{2}(?:\.\d+)?", text) else None


def before_first(version: str, know: Knowledge) -> Release:
    """A release older than the first with ReplaySSM: no checks, every ReplaySSM flag unknown."""
    first = know.releases[know.first_release]
    return replace(first, version=version, checks=(), source="")


def closest_release(version: str, know: Knowledge) -> tuple[Release | None, str]:
    """The release table that judges ``version``, and a note when it is not that release."""
    if not is_version(version):
        return None, f"{version!r} is not an SGLang version (expected e.g. 0.5.23)"
    wanted = normalize_version(version)
    if wanted in know.releases:
        return know.releases[wanted], ""
    key = version_key(wanted)
    older = [r for r in know.releases.values() if r.key <= key]
    if not older:
        return before_first(wanted, know), ""
    best = max(older, key=lambda r: r.key)
    return best, f"SGLang {wanted} is not in the release table; judged by {best.version}"


def is_before_first(release: Release, know: Knowledge) -> bool:
    return release.key < version_key(know.first_release)


def known_releases(know: Knowledge) -> tuple[str, ...]:
    """Every SGLang release this linter knows, oldest first."""
    return tuple(sorted(know.releases, key=version_key))


def _targets(versions: tuple[str, ...], reason: str, know: Knowledge) -> list[Target]:
    """One target per release table a source names (one table judges each release once)."""
    out: dict[str, Target] = {}
    for version in versions:
        release, note = closest_release(version, know)
        if release is not None:
            out.setdefault(release.version, Target(release, reason + (f"; {note}" if note else "")))
    return sorted(out.values(), key=lambda t: t.release.key)


def explicit_releases(config: LintConfig, know: Knowledge) -> list[Target]:
    """The releases the ``sglang-version`` setting names (a version, a list, a range, ``all``)."""
    spec = config.sglang_version
    if not spec:
        return []
    how = how_admitted(spec)
    if not how:  # one release, as ever (a note when another table judges it)
        release, note = closest_release(spec, know)
        if release is None:
            raise ConfigError(note)
        return [Target(release, config.sglang_version_source + (f" ({note})" if note else ""))]
    targets = _targets(releases_of(spec, known_releases(know)), f"{config.sglang_version_source} {spec}: {how}",
                       know)
    if not targets:
        raise ConfigError(f"{spec!r} admits no SGLang release this linter knows "
                          f"({', '.join(known_releases(know))})")
    return targets


def resolve_targets(config: LintConfig, launch: Launch, know: Knowledge) -> list[Target]:
    """The SGLang releases one launch is judged for, oldest first (one, unless a source names a set)."""
    explicit = explicit_releases(config, know)
    if explicit:
        return explicit
    for versions, reason in candidates(launch.release_hint, know.package, known_releases(know), config.project_root,
                                       in_file=launch.file_pins.get(know.package, ()), ranges=config.ranges):
        targets = _targets(versions, reason, know)
        if targets:
            return targets
    newest = know.newest
    return [Target(newest, f"newest release known ({newest.version})")]


def resolve_target(config: LintConfig, hint: str | None, know: Knowledge) -> Target:
    """The newest SGLang release one launch is judged for (``hint`` is its image tag's release, if any)."""
    return resolve_targets(config, Launch("serve", Span(1, 0, 1, 0), release_hint=hint, engine="sglang"), know)[-1]
