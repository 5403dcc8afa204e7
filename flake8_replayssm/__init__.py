"""flake8-replayssm: find vLLM launches that ReplaySSM would make fail at startup."""

from __future__ import annotations

from importlib import metadata

from .lint import check_source
from .model import Finding, Span

try:
    __version__ = metadata.version("flake8-replayssm")
except metadata.PackageNotFoundError:  # pragma: no cover - running from a source tree
    __version__ = "0.0.0"

__all__ = ["Finding", "Span", "__version__", "check_source"]
