"""A pytest-lsp client that keeps every notification, and helpers to drive the server.

pytest-lsp keeps only the newest diagnostics per document; the tests need to
know which version each publication was for, and to wait for a given one.
"""

from __future__ import annotations

import asyncio
import io
import json
import os
import sys
import time
from pathlib import Path
from typing import Any, Callable

from lsprotocol import types
from pygls.uris import from_fs_path
from pytest_lsp import ClientServerConfig, LanguageClient
from pytest_lsp.client import DEFAULT_CLIENT_FEATURES, register_lsp_features

from flake8_replayssm import cli

ROOT = Path(__file__).resolve().parent.parent
SERVER = [sys.executable, "-m", "flake8_replayssm", "server"]
TIMEOUT = 60.0


def make_client() -> LanguageClient:
    from pygls.protocol import default_converter

    client = LanguageClient(converter_factory=default_converter)
    client.published = []  # type: ignore[attr-defined]

    def publish(client: LanguageClient, params: types.PublishDiagnosticsParams) -> None:
        client.diagnostics[params.uri] = params.diagnostics
        client.published.append((time.perf_counter(), params))  # type: ignore[attr-defined]

    def register(client: LanguageClient, params: types.RegistrationParams) -> None:
        client.registrations.extend(params.registrations)  # type: ignore[attr-defined]

    client.registrations = []  # type: ignore[attr-defined]
    register_lsp_features(client, {**DEFAULT_CLIENT_FEATURES, types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS: publish,
                                   types.CLIENT_REGISTER_CAPABILITY: register})
    return client


def server_config(command: list[str] | None = None) -> ClientServerConfig:
    return ClientServerConfig(server_command=command or SERVER, client_factory=make_client)


def capabilities() -> types.ClientCapabilities:
    """What a current editor offers (VS Code 1.9x, Neovim 0.11): pull configuration, watched
    files, versioned workspace edits, Markdown hover, notebook sync."""
    return types.ClientCapabilities(
        workspace=types.WorkspaceClientCapabilities(
            configuration=True,
            did_change_configuration=types.DidChangeConfigurationClientCapabilities(dynamic_registration=True),
            did_change_watched_files=types.DidChangeWatchedFilesClientCapabilities(dynamic_registration=True),
            workspace_edit=types.WorkspaceEditClientCapabilities(document_changes=True),
        ),
        text_document=types.TextDocumentClientCapabilities(
            hover=types.HoverClientCapabilities(content_format=[types.MarkupKind.Markdown]),
            publish_diagnostics=types.PublishDiagnosticsClientCapabilities(
                related_information=True, version_support=True),
            code_action=types.CodeActionClientCapabilities(
                code_action_literal_support=types.ClientCodeActionLiteralOptions(
                    types.ClientCodeActionKindOptions(["", "quickfix", "source", "source.fixAll"]))),
        ),
        notebook_document=types.NotebookDocumentClientCapabilities(
            types.NotebookDocumentSyncClientCapabilities()),
    )


async def initialize(client: LanguageClient, root: Path, options: Any = None) -> None:
    await client.initialize_session(types.InitializeParams(
        capabilities=capabilities(), root_uri=uri_of(root), initialization_options=options,
        workspace_folders=[types.WorkspaceFolder(uri_of(root), root.name)]))


def uri_of(path: Path | str) -> str:
    return from_fs_path(str(path))


async def published(client: LanguageClient, uri: str, version: int | None = None, *,
                    after: int = 0, timeout: float = TIMEOUT) -> types.PublishDiagnosticsParams:
    """The first diagnostics for ``uri`` (of ``version``) among those published after index ``after``."""
    deadline = time.monotonic() + timeout
    while True:
        for _, params in client.published[after:]:  # type: ignore[attr-defined]
            if params.uri == uri and (version is None or params.version == version):
                return params
        if time.monotonic() > deadline:
            raise AssertionError(f"no diagnostics for {uri} (version {version}) within {timeout} s")
        await asyncio.sleep(0.01)


async def until(condition: Callable[[], bool], what: str, timeout: float = TIMEOUT) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        await asyncio.sleep(0.01)


def mark(client: LanguageClient) -> int:
    """An index into the publications: wait for ones after this point."""
    return len(client.published)  # type: ignore[attr-defined]


def open_text(client: LanguageClient, uri: str, text: str, language: str, version: int = 1) -> None:
    client.text_document_did_open(types.DidOpenTextDocumentParams(
        types.TextDocumentItem(uri, language, version, text)))


def change_text(client: LanguageClient, uri: str, text: str, version: int) -> None:
    client.text_document_did_change(types.DidChangeTextDocumentParams(
        types.VersionedTextDocumentIdentifier(version, uri), [types.TextDocumentContentChangeWholeDocument(text)]))


def close_text(client: LanguageClient, uri: str) -> None:
    client.text_document_did_close(types.DidCloseTextDocumentParams(types.TextDocumentIdentifier(uri)))


def cli_findings(path: str, text: str) -> list[dict[str, Any]]:
    """What ``replayssm-lint check --format json`` reports for ``text`` saved as ``path``."""
    stdin, stdout = sys.stdin, sys.stdout
    sys.stdin = io.TextIOWrapper(io.BytesIO(text.encode()))
    sys.stdout = out = io.StringIO()
    try:
        rc = cli.main(["check", "--format", "json", "--stdin-filename", path, os.path.dirname(path)])
    finally:
        sys.stdin, sys.stdout = stdin, stdout
    assert rc in (0, 1), f"replayssm-lint check exited {rc}"
    return json.loads(out.getvalue())


def as_cli(diagnostic: types.Diagnostic) -> tuple[str, int, int, int, int]:
    """A diagnostic in the CLI's terms (1-based lines and columns), for ASCII texts."""
    r = diagnostic.range
    return (str(diagnostic.code), r.start.line + 1, r.start.character + 1, r.end.line + 1, r.end.character + 1)


def cli_key(item: dict[str, Any]) -> tuple[str, int, int, int, int]:
    return (item["code"], item["line"], item["column"], item["end_line"], item["end_column"])


def apply_edits(text: str, edits: list[types.TextEdit]) -> str:
    """``text`` with LSP edits applied (ASCII texts: a character is a UTF-16 unit)."""
    lines = text.split("\n")
    starts = [0]
    for line in lines[:-1]:
        starts.append(starts[-1] + len(line) + 1)

    def offset(p: types.Position) -> int:
        return starts[p.line] + p.character if p.line < len(starts) else len(text)

    for edit in sorted(edits, key=lambda e: (e.range.start.line, e.range.start.character), reverse=True):
        text = text[:offset(edit.range.start)] + edit.new_text + text[offset(edit.range.end):]
    return text


def edits_for(edit: types.WorkspaceEdit, uri: str) -> list[types.TextEdit]:
    if edit.document_changes:
        return [e for change in edit.document_changes if change.text_document.uri == uri for e in change.edits]
    return list((edit.changes or {}).get(uri, []))
