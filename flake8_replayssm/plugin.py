"""The flake8 plugin: ``RSM`` codes for vLLM launches in Python files.

flake8 gives the file's lines; the plugin checks them for a trigger token
first, so files without one cost a substring search and never import libcst.
Every setting of :data:`flake8_replayssm.settings.SETTINGS` is a flake8 option
``--replayssm-KEY`` (``replayssm-KEY`` in flake8's config), validated like
everywhere else: a bad value is flake8's own option error, not a traceback.
``[tool.flake8-replayssm]`` in the file's pyproject.toml fills in what flake8's
options leave unset (:func:`flake8_replayssm.project.settings_for`), every key of
it, ``ignore`` and ``select`` included.  flake8 applies ``# noqa`` itself, and
reports Python syntax errors itself (E999: flake8 runs no plugin on such a file).
"""

from __future__ import annotations

import argparse
import ast
from pathlib import Path
from typing import Any, Callable, ClassVar, Iterator, Sequence

from . import __version__, engines
from .config import ConfigError, LintConfig
from .settings import SETTINGS, check_value

PREFIX = "replayssm-"
#: the plugin's entry point in pyproject.toml (``RSM = "flake8_replayssm.plugin:Plugin"``)
PLUGIN_PREFIX = "RSM"


def _option_type(key: str) -> Callable[[str], Any]:
    """argparse ``type=`` for a setting: validated value, or flake8's "argument ...: problem" error."""
    def convert(text: str) -> Any:
        try:
            return check_value(key, text, Path.cwd())
        except ValueError as exc:
            raise argparse.ArgumentTypeError(f"{text!r}: {exc}{_written_in(key, text)}") from None
    convert.__name__ = key  # argparse names the type in some messages
    return convert


def _written_in(key: str, text: str) -> str:
    """`` (in setup.cfg)`` when flake8's config file is where the bad value was written."""
    from .project import flake8_ini, ini_table

    try:
        ini = flake8_ini(Path.cwd())
        if ini is not None and (ini_table(ini) or {}).get(key, "").strip() == text.strip():
            return f" (in {ini})"
    except ConfigError:
        pass
    return ""


def flake8_selected_off_by_default(options: Any) -> tuple[str, ...]:
    """Off-by-default codes (RSM201) that flake8's own options ask for: ``--extend-select RSM201``,
    ``--enable-extensions RSM201`` or ``--select RSM201`` (also a prefix such as ``RSM2``, but not
    the plugin's whole prefix ``RSM``, which only says "report this plugin")."""
    from .config import OFF_BY_DEFAULT, split_codes

    asked: list[str] = []
    for name in ("select", "extend_select", "enable_extensions"):
        value = getattr(options, name, None)
        asked += split_codes(value) if value else ()
    return tuple(sorted(code for code in OFF_BY_DEFAULT
                        if any(len(p) > len(PLUGIN_PREFIX) and code.startswith(p) for p in asked)))


class Plugin:
    name = "flake8-replayssm"
    version = __version__

    #: LintConfig fields from flake8's options (its command line over its config files)
    _overrides: ClassVar[dict[str, Any]] = {}
    #: flake8's --disable-noqa turns our suppressions off too
    _noqa: ClassVar[bool] = True
    #: off-by-default codes flake8 loaded as extensions (``--enable-extensions RSM201``)
    _extensions: ClassVar[tuple[str, ...]] = ()

    def __init__(self, tree: ast.AST, filename: str, lines: Sequence[str]) -> None:
        self.filename = filename
        self.lines = lines
        self.tree = tree

    @classmethod
    def add_options(cls, manager: Any) -> None:
        cls._extensions = ()  # a new flake8 run (options are registered before any is parsed)
        for key, spec in SETTINGS.items():
            if spec.walk:  # flake8 decides which files it reads (its own --exclude, --extend-exclude)
                continue
            manager.add_option(f"--{PREFIX}{key}", parse_from_config=True, default=None,
                               type=_option_type(key), help=spec.help)

    @classmethod
    def parse_options(cls, manager: Any, options: Any, args: Any) -> None:
        overrides: dict[str, Any] = {}
        for key, spec in SETTINGS.items():
            value = getattr(options, (PREFIX + key).replace("-", "_"), None)
            if value is not None:
                overrides[spec.field] = value
        turned_on = flake8_selected_off_by_default(options)
        if turned_on:
            overrides["enable"] = tuple(overrides.get("enable", ())) + turned_on
        if cls._extensions:  # OffByDefaultCode was loaded (its options may be parsed before ours)
            overrides["enable"] = tuple(overrides.get("enable", ())) + cls._extensions
        for engine in engines.NAMES:
            if f"{engine}_version" in overrides:
                overrides[f"{engine}_version_source"] = f"--{PREFIX}{engine}-version"
        cls._overrides = overrides
        cls._noqa = not getattr(options, "disable_noqa", False)
        from .project import settings_for

        try:  # the settings of the directory flake8 runs in: a bad pyproject stops the run here
            settings_for(None, overrides, flake8_ini=False)
        except ConfigError as exc:
            manager.parser.error(str(exc))

    def config(self) -> LintConfig:
        from .project import settings_for

        path = None if self.filename in ("stdin", "-") else self.filename
        return settings_for(path, self._overrides, flake8_ini=False)

    def run(self) -> Iterator[tuple[int, int, str, type]]:
        from .lint import has_trigger  # a substring test; libcst stays unimported

        text = "".join(self.lines)
        if not has_trigger(text, "python"):
            return
        from .escaping import shown  # flake8 prints our text as it is: one line, no control characters
        from .frontends.python_screen import remember_tree
        from .lint import lint_text

        remember_tree(text, self.tree)  # flake8 parsed the file already: no second parse
        try:
            # `# noqa` on the reported line is flake8's own; ours adds the other lines of a launch
            # and the replayssm-lint directives, so flake8 and the CLI silence the same findings
            findings = lint_text(text, "python", self.config(), path=self.filename, noqa=self._noqa).findings
        except ConfigError as exc:  # this file's project has a bad setting: never a silently idle plugin
            yield 1, 0, shown(f"RSM900 invalid settings ({exc}): the launches in this file were not checked"), \
                type(self)
            return
        except Exception as exc:  # a bug of ours: say so on the file, never break the flake8 run
            yield 1, 0, shown(f"RSM900 internal error of flake8-replayssm ({type(exc).__name__}: {exc}): "
                              "the launches in this file were not checked"), type(self)
            return
        for finding in findings:
            if finding.span.source is not None:
                continue
            yield finding.span.line, finding.span.col, shown(f"{finding.code} {finding.message}"), type(self)


class OffByDefaultCode:
    """``RSM201`` as flake8 knows off-by-default extensions: ``--enable-extensions RSM201`` (or
    ``enable-extensions = RSM201`` in its config) loads this entry point, whose only job is to
    turn the code on in :class:`Plugin`, which reports it.  flake8 keeps that option to itself
    (the plugins' options never see it), so loading is the only way to know it was given.
    Its check finds nothing: the launches are read once, by :class:`Plugin`."""

    name = "flake8-replayssm"
    version = __version__
    off_by_default = True
    code = "RSM201"

    def __init__(self, tree: ast.AST) -> None:
        pass

    @classmethod
    def parse_options(cls, manager: Any, options: Any, args: Any) -> None:
        if cls.code not in Plugin._extensions:
            Plugin._extensions += (cls.code,)
            Plugin._overrides = {**Plugin._overrides,
                                 "enable": tuple(Plugin._overrides.get("enable", ())) + (cls.code,)}

    def run(self) -> Iterator[tuple[int, int, str, type]]:
        return iter(())
