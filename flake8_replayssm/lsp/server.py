"""The language server: live diagnostics, quick fixes and explanations in any LSP editor.

Built on pygls.  Linting runs in worker threads, off the event loop, so the
server keeps answering (hover, code actions, other documents) while a long
document is linted; a lint whose document changed meanwhile is not published.
Whatever goes wrong in one lint (a frontend bug, a document no parser takes, an
unusable ``pyproject.toml``) is logged to the editor and leaves that document
without diagnostics; the server carries on.
"""

from __future__ import annotations

import asyncio
import logging
import sys
import traceback
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Sequence

from lsprotocol import types
from pygls.lsp.server import LanguageServer

from ..files import MAX_SOURCE_BYTES
from ..config import ConfigError
from ..escaping import EscapingFormatter
from ..lint import lint_text
from ..rules import BY_CODE
from . import diagnostics as diag
from .documents import Cell, Snapshot, cell_type, notebook_snapshot, path_of, text_snapshot

if TYPE_CHECKING:  # the fix machinery (libcst, the planner) is imported when a code action is asked for
    from .fixes import Fix, Fixer
from .positions import text_edits
from .scheduling import Debouncer
from .transport import BoundedInput
from .settings import (
    CONFIG_FILE_GLOBS, SECTION, Settings, config_for_document, forget_config_files, is_config_file,
    read_settings,
)

FIX_ALL = "source.fixAll.replayssm"


@dataclass
class Outcome:
    """One lint of one snapshot: its diagnostics, or why there are none."""

    snapshot: Snapshot
    placed: list[diag.Placed] = field(default_factory=list)
    problem: str | None = None
    #: the problem is the user's configuration (shown once), not a bug (logged)
    config_problem: bool = False


class ReplaySSMServer(LanguageServer):
    def __init__(self) -> None:
        super().__init__(
            "replayssm-lint", installed_version(),
            # whole texts: pygls's incremental updates split lines at form feeds and other
            # separators that LSP does not count as line ends, which would garble the buffer
            text_document_sync_kind=types.TextDocumentSyncKind.Full,
            notebook_document_sync=types.NotebookDocumentSyncOptions(
                notebook_selector=[types.NotebookDocumentFilterWithNotebook(notebook="*")]),
        )
        self.settings = Settings()
        self.init_settings = Settings()
        self.executor = ThreadPoolExecutor(max_workers=2, thread_name_prefix="replayssm-lint")
        self.debouncer = Debouncer(self.lint_and_publish, lambda: self.settings.debounce_ms / 1000)
        #: open documents and notebooks (cells are reached through their notebook)
        self.open: set[str] = set()
        #: the last published outcome per document or notebook
        self.outcomes: dict[str, Outcome] = {}
        #: per document or notebook: the fixes of its latest version asked for
        self.fixers: dict[str, tuple[Any, Fixer, list[diag.Placed]]] = {}
        self.shown: set[str] = set()

    # -- reading the editor's state --------------------------------------------------------
    @property
    def root(self) -> str | None:
        try:
            return self.workspace.root_path
        except RuntimeError:  # not initialized yet
            return None

    def snapshot(self, uri: str) -> Snapshot | None:
        """The document or notebook ``uri`` as it is now (None once closed)."""
        if uri not in self.open:
            return None
        notebook = self.workspace.get_notebook_document(notebook_uri=uri)
        if notebook is not None:
            cells = []
            for cell in notebook.cells:
                doc = self.workspace.text_documents.get(cell.document)
                text = doc.source if doc is not None else ""
                cells.append(Cell(cell.document, text, cell_type(cell.kind, doc.language_id if doc else None),
                                  doc.version if doc is not None else None))
            return notebook_snapshot(uri, notebook.version, cells, path_of(uri), notebook.metadata)
        doc = self.workspace.text_documents.get(uri)
        if doc is None:
            return None
        return text_snapshot(uri, doc.version, doc.source, doc.language_id, path_of(uri))

    def owner(self, uri: str) -> str:
        """The document or notebook a URI's diagnostics come from (a cell -> its notebook)."""
        notebook = self.workspace.get_notebook_document(cell_uri=uri)
        return notebook.uri if notebook is not None else uri

    def codec(self):  # type: ignore[no-untyped-def]
        return self.workspace.position_codec

    # -- linting -------------------------------------------------------------------------
    async def lint_and_publish(self, uri: str) -> None:
        snapshot = self.snapshot(uri)
        if snapshot is None:
            return
        loop = asyncio.get_running_loop()
        outcome = await loop.run_in_executor(self.executor, self.lint, snapshot, self.settings)
        current = self.snapshot(uri)
        if current is None or current.version != snapshot.version:
            return  # superseded: a newer version is on its way
        self.report(outcome)
        self.outcomes[uri] = outcome
        for target, found in diag.by_uri(snapshot, outcome.placed).items():
            self.text_document_publish_diagnostics(types.PublishDiagnosticsParams(
                target, found, version=self._version_of(snapshot, target)))

    def lint(self, snapshot: Snapshot, settings: Settings) -> Outcome:
        """Lint one snapshot (in a worker thread); never raises."""
        name = snapshot.path or snapshot.uri
        if snapshot.kind is None:
            return Outcome(snapshot)
        if len(snapshot.text) > MAX_SOURCE_BYTES or "\0" in snapshot.text[:8192]:  # as the CLI reads files
            return Outcome(snapshot, problem=f"{name}: not checked: binary, or over {MAX_SOURCE_BYTES:,} characters")
        try:
            config = config_for_document(snapshot.path, settings, self.root)
        except ConfigError as exc:
            return Outcome(snapshot, problem=f"{name}: not checked: {exc}", config_problem=True)
        try:
            result = lint_text(snapshot.text, snapshot.kind, config, path=snapshot.path)
            if result.error:
                return Outcome(snapshot, problem=f"{name}: {result.error}")
            return Outcome(snapshot, diag.place(snapshot, result, self.codec(), config.docs_url))
        except Exception as exc:  # a bug of ours: this document gets no diagnostics, the server lives
            return Outcome(snapshot, problem=f"{name}: internal error while linting ({type(exc).__name__}: "
                                             f"{exc})\n{traceback.format_exc(limit=-8)}")

    def report(self, outcome: Outcome) -> None:
        if outcome.problem is None:
            return
        level = types.MessageType.Warning if outcome.config_problem else types.MessageType.Error
        self.window_log_message(types.LogMessageParams(level, f"replayssm-lint: {outcome.problem}"))
        if outcome.config_problem and outcome.problem not in self.shown:
            self.shown.add(outcome.problem)
            self.window_show_message(types.ShowMessageParams(level, f"replayssm-lint: {outcome.problem}"))

    def _version_of(self, snapshot: Snapshot, uri: str) -> int | None:
        if snapshot.cells is None:
            return snapshot.version
        return next((cell.version for cell in snapshot.cells if cell.uri == uri), None)

    def opened(self, uri: str) -> None:
        self.open.add(uri)
        self.debouncer.touch(uri, now=True)

    def relint_all(self) -> None:
        for uri in list(self.open):
            self.debouncer.touch(uri, now=True)

    def files_changed(self, paths: Sequence[str | None]) -> None:
        """Files changed on disk: when one of them can change a verdict, read them again."""
        if any(path is not None and is_config_file(path) for path in paths):
            forget_config_files()
            self.fixers.clear()
            self.relint_all()

    def close(self, uri: str) -> None:
        """The document or notebook is closed: stop linting it and clear what it showed."""
        outcome = self.outcomes.pop(uri, None)
        self.fixers.pop(uri, None)
        self.open.discard(uri)
        self.debouncer.forget(uri)
        for target in diag.uris(outcome.snapshot) if outcome is not None else [uri]:
            self.text_document_publish_diagnostics(types.PublishDiagnosticsParams(target, []))

    # -- settings --------------------------------------------------------------------------
    def use_settings(self, raw: Any, *, initial: bool = False) -> None:
        """Settings from the editor: ``initializationOptions`` first, later ones over them."""
        settings, problems = read_settings(raw, self.root, None if initial else self.init_settings)
        for problem in problems:
            message = f"replayssm-lint: setting left out: {problem}"
            self.window_log_message(types.LogMessageParams(types.MessageType.Warning, message))
            if message not in self.shown:
                self.shown.add(message)
                self.window_show_message(types.ShowMessageParams(types.MessageType.Warning, message))
        if initial:
            self.init_settings = settings
        self.settings = settings

    async def pull_settings(self) -> None:
        """Ask the editor for the ``replayssm`` section (when it can answer)."""
        workspace = self.client_capabilities.workspace
        if workspace is None or not workspace.configuration:
            return
        try:
            reply = await self.workspace_configuration_async(
                types.ConfigurationParams([types.ConfigurationItem(section=SECTION)]))
        except Exception as exc:  # an editor that cannot answer: keep what we have
            self.window_log_message(types.LogMessageParams(
                types.MessageType.Warning, f"replayssm-lint: workspace/configuration failed: {exc}"))
            return
        self.use_settings(reply[0] if reply else None)

    # -- code actions and hover -------------------------------------------------------------
    def fixer(self, snapshot: Snapshot, settings: Settings) -> tuple[Fixer, list[diag.Placed]]:
        """The fixes of a snapshot, planned once per version (an editor asks again and again)."""
        key = (snapshot.version, snapshot.text, settings)
        cached = self.fixers.get(snapshot.uri)
        if cached is not None and cached[0] == key:
            return cached[1], cached[2]
        from .fixes import Fixer  # libcst and the planner: only once a fix is asked for

        config = config_for_document(snapshot.path, settings, self.root)
        result = lint_text(snapshot.text, snapshot.kind or "", config, path=snapshot.path)
        fixer, placed = Fixer(snapshot, config, result), diag.place(snapshot, result, self.codec(), config.docs_url)
        self.fixers[snapshot.uri] = (key, fixer, placed)
        return fixer, placed

    def fixes(self, snapshot: Snapshot, settings: Settings, wanted: Sequence[types.Diagnostic],
              fix_all: bool) -> list[tuple[Fix, list[types.Diagnostic]]]:
        """The fixes for the request's diagnostics (in a worker thread)."""
        if snapshot.kind is None:
            return []
        try:
            fixer, placed = self.fixer(snapshot, settings)
            out: list[tuple[Fix, list[types.Diagnostic]]] = []
            for wish in wanted:
                for item in placed:
                    if item.diagnostic.range == wish.range and item.diagnostic.code == wish.code:
                        out += [(fix, [wish]) for fix in fixer.for_finding(item.finding)]
                        break
            if fix_all:
                everything = fixer.fix_all()
                if everything is not None:
                    out.append((everything, []))
            return out
        except Exception:
            self.window_log_message(types.LogMessageParams(
                types.MessageType.Error, f"replayssm-lint: code actions failed\n{traceback.format_exc(limit=-8)}"))
            return []

    def workspace_edit(self, snapshot: Snapshot, fix: Fix) -> types.WorkspaceEdit:
        """The edit that turns the editor's documents into ``fix.text``."""
        import json

        documents: list[tuple[str, int | None, str, str]] = []
        if snapshot.cells is None:
            documents.append((snapshot.uri, snapshot.version, snapshot.text, fix.text))
        else:
            from ..frontends.notebook import source_of

            cells = json.loads(fix.text)["cells"]
            for cell, new in zip(snapshot.cells, cells):
                if source_of(new) != cell.text:
                    documents.append((cell.uri, cell.version, cell.text, source_of(new)))
        codec = self.codec()
        workspace = self.client_capabilities.workspace
        versioned = bool(workspace and workspace.workspace_edit and workspace.workspace_edit.document_changes)
        if versioned:
            return types.WorkspaceEdit(document_changes=[
                types.TextDocumentEdit(types.OptionalVersionedTextDocumentIdentifier(uri, version),
                                       text_edits(old, new, codec))
                for uri, version, old, new in documents])
        return types.WorkspaceEdit(changes={uri: text_edits(old, new, codec) for uri, _, old, new in documents})


def installed_version() -> str:
    """This package's version for the ``initialize`` answer, without :mod:`importlib.metadata`
    when the installed ``.dist-info`` folder's name says it (the server's start is on the
    editor's critical path; that import costs more than reading one folder)."""
    import os
    import re
    import sys

    for folder in sys.path:
        try:
            names = os.listdir(folder or ".")
        except OSError:
            continue
        for name in names:
            m = re.fullmatch(r"flake8_replayssm-([^-]+)\.dist-info", name)
            if m is not None:
                return m.group(1)
    from .. import __version__

    return str(__version__)


def _wants(only: Sequence[str] | None, kind: str) -> bool:
    """Whether a code action of ``kind`` answers a request for ``only`` (None: any)."""
    return only is None or any(kind == o or kind.startswith(o + ".") for o in only)


def _markup(client: types.ClientCapabilities) -> types.MarkupKind:
    hover = client.text_document.hover if client.text_document else None
    formats = hover.content_format if hover else None
    return types.MarkupKind.PlainText if formats and types.MarkupKind.Markdown not in formats \
        else types.MarkupKind.Markdown


def build_server() -> ReplaySSMServer:
    server = ReplaySSMServer()

    @server.feature(types.INITIALIZE)
    def initialize(ls: ReplaySSMServer, params: types.InitializeParams) -> None:
        ls.use_settings(params.initialization_options, initial=True)

    @server.feature(types.INITIALIZED)
    async def initialized(ls: ReplaySSMServer, params: types.InitializedParams) -> None:
        workspace = ls.client_capabilities.workspace
        registrations = []
        if workspace and workspace.did_change_watched_files and workspace.did_change_watched_files.dynamic_registration:
            registrations.append(types.Registration(
                "replayssm-config-files", types.WORKSPACE_DID_CHANGE_WATCHED_FILES,
                types.DidChangeWatchedFilesRegistrationOptions(
                    [types.FileSystemWatcher(glob) for glob in CONFIG_FILE_GLOBS])))
        if workspace and workspace.did_change_configuration and workspace.did_change_configuration.dynamic_registration:
            registrations.append(types.Registration(
                "replayssm-settings", types.WORKSPACE_DID_CHANGE_CONFIGURATION))
        if registrations:
            try:
                await ls.client_register_capability_async(types.RegistrationParams(registrations))
            except Exception as exc:
                ls.window_log_message(types.LogMessageParams(
                    types.MessageType.Warning, f"replayssm-lint: could not watch configuration files: {exc}"))
        before = ls.settings
        await ls.pull_settings()
        if ls.settings != before:
            ls.relint_all()

    @server.feature(types.TEXT_DOCUMENT_DID_OPEN)
    def did_open(ls: ReplaySSMServer, params: types.DidOpenTextDocumentParams) -> None:
        ls.opened(params.text_document.uri)

    @server.feature(types.TEXT_DOCUMENT_DID_CHANGE)
    def did_change(ls: ReplaySSMServer, params: types.DidChangeTextDocumentParams) -> None:
        ls.debouncer.touch(params.text_document.uri)

    @server.feature(types.TEXT_DOCUMENT_DID_SAVE)
    def did_save(ls: ReplaySSMServer, params: types.DidSaveTextDocumentParams) -> None:
        ls.files_changed([path_of(params.text_document.uri)])

    @server.feature(types.TEXT_DOCUMENT_DID_CLOSE)
    def did_close(ls: ReplaySSMServer, params: types.DidCloseTextDocumentParams) -> None:
        ls.close(params.text_document.uri)

    @server.feature(types.NOTEBOOK_DOCUMENT_DID_OPEN)
    def notebook_open(ls: ReplaySSMServer, params: types.DidOpenNotebookDocumentParams) -> None:
        ls.opened(params.notebook_document.uri)

    @server.feature(types.NOTEBOOK_DOCUMENT_DID_CHANGE)
    def notebook_change(ls: ReplaySSMServer, params: types.DidChangeNotebookDocumentParams) -> None:
        structure = params.change.cells.structure if params.change.cells else None
        for closed in (structure.did_close or []) if structure else []:  # cells deleted: clear them
            ls.text_document_publish_diagnostics(types.PublishDiagnosticsParams(closed.uri, []))
        ls.debouncer.touch(params.notebook_document.uri)

    @server.feature(types.NOTEBOOK_DOCUMENT_DID_CLOSE)
    def notebook_close(ls: ReplaySSMServer, params: types.DidCloseNotebookDocumentParams) -> None:
        ls.close(params.notebook_document.uri)

    @server.feature(types.WORKSPACE_DID_CHANGE_CONFIGURATION)
    async def configuration_changed(ls: ReplaySSMServer, params: types.DidChangeConfigurationParams) -> None:
        pushed = params.settings
        if isinstance(pushed, dict) and SECTION in pushed:
            ls.use_settings(pushed[SECTION])
        else:
            await ls.pull_settings()
        ls.relint_all()

    @server.feature(types.WORKSPACE_DID_CHANGE_WATCHED_FILES)
    def watched_files_changed(ls: ReplaySSMServer, params: types.DidChangeWatchedFilesParams) -> None:
        ls.files_changed([path_of(change.uri) for change in params.changes])

    @server.feature(types.TEXT_DOCUMENT_HOVER)
    def hover(ls: ReplaySSMServer, params: types.HoverParams) -> types.Hover | None:
        uri = params.text_document.uri
        outcome = ls.outcomes.get(ls.owner(uri))
        if outcome is None:
            return None
        at = (params.position.line, params.position.character)
        hits = [item.diagnostic for item in outcome.placed if item.uri == uri
                and (item.diagnostic.range.start.line, item.diagnostic.range.start.character) <= at
                <= (item.diagnostic.range.end.line, item.diagnostic.range.end.character)]
        codes = list(dict.fromkeys(str(d.code) for d in hits if str(d.code) in BY_CODE))
        if not codes:
            return None
        text = "\n---\n\n".join(BY_CODE[code].doc() for code in codes)
        return types.Hover(types.MarkupContent(_markup(ls.client_capabilities), text), hits[0].range)

    @server.feature(types.TEXT_DOCUMENT_CODE_ACTION, types.CodeActionOptions(
        code_action_kinds=[types.CodeActionKind.QuickFix, FIX_ALL]))
    async def code_action(ls: ReplaySSMServer, params: types.CodeActionParams) -> list[types.CodeAction]:
        uri = params.text_document.uri
        only = params.context.only
        ours = [d for d in params.context.diagnostics if d.source == diag.SOURCE and str(d.code) in BY_CODE]
        wanted = ours if _wants(only, types.CodeActionKind.QuickFix) else []
        fix_all = _wants(only, FIX_ALL) and (bool(ours) or only is not None)
        snapshot = ls.snapshot(ls.owner(uri))
        if snapshot is None or not (wanted or fix_all):
            return []
        loop = asyncio.get_running_loop()
        found = await loop.run_in_executor(ls.executor, ls.fixes, snapshot, ls.settings, wanted, fix_all)
        actions = []
        for fix, diagnostics in found:
            kind = types.CodeActionKind.QuickFix if diagnostics else FIX_ALL
            actions.append(types.CodeAction(
                fix.title, kind=kind, diagnostics=diagnostics or None,
                is_preferred=bool(diagnostics) and fix.safe, edit=ls.workspace_edit(snapshot, fix)))
        return actions

    @server.feature(types.SHUTDOWN)
    def shutdown(ls: ReplaySSMServer, params: None) -> None:
        ls.executor.shutdown(wait=False, cancel_futures=True)

    return server


def serve(tcp: str | None = None) -> int:
    """Run the server on stdio, or on ``HOST:PORT``; returns the exit status."""
    handler = logging.StreamHandler()  # stderr: the editor's log of the server
    handler.setFormatter(EscapingFormatter())  # what a record quotes (a URI, a message) stays in it
    logging.basicConfig(level=logging.WARNING, handlers=[handler])
    server = build_server()
    if tcp:
        host, _, port = tcp.rpartition(":")
        server.start_tcp(host or "127.0.0.1", int(port))
    else:
        server.start_io(stdin=BoundedInput(sys.stdin.buffer))  # type: ignore[arg-type]
    return 0
