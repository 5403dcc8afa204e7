"""The Python files of one released wheel, read without installing or importing it.

A release is read from the wheel itself (``pip download --no-deps vllm==X``: a zip) or
from a folder that holds the same paths (an unpacked wheel, or the small synthetic tree
the tests write).  Only ``*.py`` files and the ``*.dist-info/METADATA`` are looked at;
nothing is executed, so no oracle environment (torch, CUDA, the engine's dependencies)
is needed.
"""

from __future__ import annotations

import ast
import os
import re
import zipfile
from dataclasses import dataclass
from email.parser import HeaderParser
from functools import lru_cache


@dataclass(frozen=True)
class Loc:
    """Where a fact comes from: a path inside the wheel (``vllm/config/vllm.py``) and a line."""

    path: str
    line: int

    def __str__(self) -> str:
        return f"{self.path}:{self.line}"


class Tree:
    """A wheel (zip) or a folder, as a set of files keyed by their path in the wheel."""

    def __init__(self, location: str) -> None:
        self.location = location
        self._zip: zipfile.ZipFile | None = None
        if os.path.isdir(location):
            self._names = sorted(
                os.path.relpath(os.path.join(root, name), location).replace(os.sep, "/")
                for root, _dirs, names in os.walk(location) for name in names)
        else:
            self._zip = zipfile.ZipFile(location)
            self._names = sorted(self._zip.namelist())
        self._name_set = set(self._names)
        self._parse = lru_cache(maxsize=None)(self._parse_uncached)

    def exists(self, path: str) -> bool:
        return path in self._name_set

    def files(self, prefix: str = "", suffix: str = ".py") -> list[str]:
        return [n for n in self._names if n.startswith(prefix) and n.endswith(suffix)]

    def text(self, path: str) -> str:
        if self._zip is not None:
            return self._zip.read(path).decode("utf-8", errors="replace")
        with open(os.path.join(self.location, path), encoding="utf-8", errors="replace") as f:
            return f.read()

    def parse(self, path: str) -> ast.Module | None:
        """The module's tree (parsed once), None if absent or not Python 3."""
        return self._parse(path)

    def _parse_uncached(self, path: str) -> ast.Module | None:
        if not self.exists(path):
            return None
        try:
            return ast.parse(self.text(path), filename=path)
        except SyntaxError:
            return None

    def release(self, package: str) -> str:
        """The release number: the wheel's METADATA ``Version``, else the file name's."""
        for name in self._names:
            if name.endswith(".dist-info/METADATA"):
                return HeaderParser().parsestr(self.text(name)).get("Version", "").strip()
        match = re.match(rf"{re.escape(package)}-([^-/]+?)(?:-|\.whl$|$)", os.path.basename(self.location))
        return match.group(1) if match else "unknown"
