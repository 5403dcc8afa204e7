"""What git ignores, so a directory walk skips it (ruff's ``respect-gitignore``).

``pip install .`` leaves a ``build/`` copy of every source file in the clone, and a
generated tree is rarely what a CI lint stage is meant to read; both are in the
project's ``.gitignore``.  A walk inside a git work tree (a folder with ``.git`` at
or above the walked one) therefore skips what its ``.gitignore`` files and
``.git/info/exclude`` ignore, with git's rules: blank lines and ``#`` comments,
``!`` re-includes, a trailing ``/`` matches folders only, a pattern with a ``/``
before its end is relative to its ``.gitignore``'s folder (otherwise it matches a
name at any depth), ``*`` and ``?`` stop at ``/``, ``**`` crosses folders, and a
deeper file's patterns win over a shallower one's (the last match decides).  A
folder git ignores is not entered, so nothing in it can be re-included, as in git.

Outside a work tree ``.gitignore`` means nothing, as for git.  The user's global
excludes file is not read: it is outside the project.  Files named on the command
line are always linted; only what a walk finds is filtered here.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass

from .files import MAX_SETTINGS_BYTES, read_bounded
from .unchecked import NotChecked


@dataclass(frozen=True)
class Pattern:
    regex: re.Pattern[str]
    negated: bool
    folders_only: bool


def _glob_regex(glob: str) -> str:
    """The regular expression of one gitignore glob (no leading ``/``, no trailing ``/``)."""
    out, i, n = [], 0, len(glob)
    while i < n:
        c = glob[i]
        if glob.startswith("**/", i) and (i == 0 or glob[i - 1] == "/"):
            out.append("(?:.*/)?")
            i += 3
        elif glob.startswith("**", i) and i + 2 == n and (i == 0 or glob[i - 1] == "/"):
            out.append(".*")
            i += 2
        elif c == "*":
            while i + 1 < n and glob[i + 1] == "*":  # other runs of asterisks are one asterisk
                i += 1
            out.append("[^/]*")
            i += 1
        elif c == "?":
            out.append("[^/]")
            i += 1
        elif c == "[":
            end = glob.find("]", i + 2 if glob[i + 1:i + 2] in ("!", "^", "]") else i + 1)
            if end < 0:
                out.append(re.escape(c))
                i += 1
                continue
            body = glob[i + 1:end]
            if body[:1] in ("!", "^"):
                body = "^" + body[1:]
            out.append("[" + body.replace("\\", "\\\\").replace("/", "") + "]")
            i = end + 1
        elif c == "\\" and i + 1 < n:
            out.append(re.escape(glob[i + 1]))
            i += 2
        else:
            out.append(re.escape(c))
            i += 1
    return "".join(out)


def parse_line(line: str) -> Pattern | None:
    """One line of a ``.gitignore`` as a pattern (None: blank, a comment, or nothing to match)."""
    line = line.rstrip("\r\n")
    stripped = line.rstrip(" ")
    if stripped.endswith("\\") and len(stripped) < len(line):  # "a\ " keeps its escaped space
        stripped += " "
    line = stripped
    if not line or line.startswith("#"):
        return None
    negated = line.startswith("!")
    if negated or line.startswith("\\!") or line.startswith("\\#"):
        line = line[1:]
    folders_only = line.endswith("/")
    line = line.rstrip("/")
    if not line:
        return None
    anchored = "/" in line
    body = _glob_regex(line.lstrip("/"))
    try:
        regex = re.compile(("" if anchored else "(?:.*/)?") + body + r"\Z", re.DOTALL)
    except re.error:
        return None  # a pattern git would not match either (an odd bracket): ignore the line
    return Pattern(regex, negated, folders_only)


def parse(text: str) -> list[Pattern]:
    return [p for p in map(parse_line, text.splitlines()) if p is not None]


def work_tree_root(folder: str) -> str | None:
    """The nearest folder at or above ``folder`` holding ``.git`` (a folder or a worktree's file)."""
    current = os.path.abspath(folder)
    while True:
        if os.path.lexists(os.path.join(current, ".git")):
            return current
        parent = os.path.dirname(current)
        if parent == current:
            return None
        current = parent


def _read(path: str) -> list[Pattern]:
    try:
        data = read_bounded(path, MAX_SETTINGS_BYTES)
    except NotChecked:  # missing, not a regular file, too large, unreadable: no patterns
        return []
    return parse(data.decode("utf-8", errors="replace"))


class GitIgnore:
    """The ignore rules of one walk: loaded folder by folder as the walk enters them."""

    def __init__(self, top: str) -> None:
        top = os.path.abspath(top)
        self.root = work_tree_root(top)
        #: folder -> its patterns (``.gitignore``; the root also ``.git/info/exclude`` first)
        self.rules: dict[str, list[Pattern]] = {}
        #: folder -> the folders at or above it (the root's first) whose patterns apply to it,
        #: those with patterns only: a path is matched against these, not every level above it
        self._chains: dict[str, tuple[str, ...]] = {}
        if self.root is None:
            return
        git = os.path.join(self.root, ".git")
        exclude = _read(os.path.join(git, "info", "exclude")) if os.path.isdir(git) else []
        self.rules[self.root] = exclude + _read(os.path.join(self.root, ".gitignore"))
        folder, above = top, []
        while folder != self.root:  # the folders between the work tree's root and the walk's top
            above.append(folder)
            folder = os.path.dirname(folder)
        for folder in reversed(above):
            self.enter(folder)

    @property
    def active(self) -> bool:
        return self.root is not None

    def enter(self, folder: str) -> None:
        """Read ``folder``'s ``.gitignore`` (a walk calls this before looking at its entries)."""
        folder = os.path.abspath(folder)
        if self.root is not None and folder not in self.rules:
            self.rules[folder] = _read(os.path.join(folder, ".gitignore"))
            if self.rules[folder] and folder in self._chains:  # asked about before it was entered
                self._chains.clear()

    def ignored(self, path: str, is_folder: bool) -> bool:
        """Whether git ignores ``path`` (its parent folders are taken as not ignored: a walk
        never enters an ignored one)."""
        if self.root is None:
            return False
        path = os.path.abspath(path)
        verdict = False
        for base in self._chain(os.path.dirname(path)):  # the root's rules first: a deeper .gitignore wins
            patterns = self.rules[base]
            relative = os.path.relpath(path, base).replace(os.sep, "/")
            for pattern in patterns:
                if (is_folder or not pattern.folders_only) and pattern.regex.match(relative):
                    verdict = not pattern.negated
        return verdict

    def _chain(self, folder: str) -> tuple[str, ...]:
        """The folders with patterns from the root down to ``folder``, remembered per folder: a
        walk asks for each folder after its parent, so each answer costs one step, however deep
        the tree (walking up to the root per path was quadratic in the depth)."""
        passed = []
        while folder not in self._chains:
            passed.append(folder)
            parent = os.path.dirname(folder)
            if folder == self.root or parent == folder:
                break
            folder = parent
        chain = self._chains.get(folder, ())
        for below in reversed(passed):
            if self.rules.get(below):
                chain += (below,)
            self._chains[below] = chain
        return self._chains[passed[0]] if passed else chain
