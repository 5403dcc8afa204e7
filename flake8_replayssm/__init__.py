"""flake8-replayssm: find vLLM launches that ReplaySSM would make fail at startup.

The package imports nothing until a name is used: ``replayssm-lint`` on a folder
without launches, or flake8 on a file without a trigger token, should cost an
interpreter's startup and little more.
"""

from __future__ import annotations

from typing import Any

__all__ = ["Finding", "Span", "__version__", "check_source"]


def __getattr__(name: str) -> Any:
    if name == "check_source":
        from .lint import check_source as value
    elif name in ("Finding", "Span"):
        from . import model

        value = getattr(model, name)
    elif name == "__version__":
        from importlib import metadata

        try:
            value = metadata.version("flake8-replayssm")
        except metadata.PackageNotFoundError:  # pragma: no cover - running from a source tree
            value = "0.0.0"
    else:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    globals()[name] = value
    return value
