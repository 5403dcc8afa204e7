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

from ...config import ConfigError, LintConfig
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
    """``lmsysorg/sglang:v0.5.23-cu129`` -> ``0.5.23``; None for latest, dev, digests and mirrors."""
    if not image:
        return None
    name, sep, tag = image.strip().rpartition(":")
    if not sep or "/" in tag or not _IMAGE.search(name.lower()):
        return None
    match = _TAG.fullmatch(tag)
    return match.group(1) if match else None


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


def resolve_target(config: LintConfig, hint: str | None, know: Knowledge) -> Target:
    """The SGLang release for one launch (``hint`` is its image tag's release, if any)."""
    if config.sglang_version:
        release, note = closest_release(config.sglang_version, know)
        if release is None:
            raise ConfigError(note)
        return Target(release, config.sglang_version_source + (f" ({note})" if note else ""))
    for version, reason in candidates(hint, know.package, tuple(know.releases), config.project_root):
        release, note = closest_release(version, know)
        if release is not None:
            return Target(release, reason + (f"; {note}" if note else ""))
    newest = know.newest
    return Target(newest, f"newest release known ({newest.version})")
