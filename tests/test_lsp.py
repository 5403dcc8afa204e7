"""The language server end to end: a real LSP client (pytest-lsp) drives ``replayssm-lint server``.

Diagnostics must be the CLI's findings (same codes, same spans, the CLI's
severities), for every file kind, computed from the buffer; quick fixes must
fix what they say; hover must explain the code under the cursor.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import pytest_lsp
from lsprotocol import types
from lsp_client import (
    ROOT, apply_edits, as_cli, change_text, cli_findings, cli_key, close_text, edits_for, initialize, mark,
    open_text, published, server_config, uri_of,
)
from pytest_lsp import LanguageClient

from flake8_replayssm.config import DEFAULT_DOCS_URL
from flake8_replayssm.rules import BY_CODE

pytestmark = pytest.mark.asyncio(loop_scope="module")

NANO = "nvidia/NVIDIA-Nemotron-Nano-9B-v2"


@pytest_lsp.fixture(scope="module", config=server_config())
async def client(lsp_client: LanguageClient):
    await initialize(lsp_client, ROOT)
    yield
    await lsp_client.shutdown_session()
    assert lsp_client._server.returncode == 0  # shutdown, then exit: a clean exit


# one launch file per kind the CLI checks, as the buffer an editor holds (language id as VS Code names it)
KINDS = [
    ("fixtures/python/launch_replicas.py", "python"),
    ("fixtures/shell/serve_kimi_linear.sh", "shellscript"),
    ("fixtures/shell/Makefile", "makefile"),
    ("fixtures/deploy/Dockerfile.api-server", "dockerfile"),
    ("fixtures/deploy/docker-compose.hybrid.yml", "dockercompose"),
    ("fixtures/deploy/k8s/nemotron-h-flashinfer.yaml", "yaml"),
    ("fixtures/deploy/ci/replayssm-smoke.yml", "yaml"),
    ("fixtures/configs/nano-flashinfer-serve.yaml", "yaml"),
    ("fixtures/docs/replayssm-serving-guide.md", "markdown"),
]


@pytest.mark.parametrize(("name", "language"), KINDS, ids=[k[0].rsplit("/", 1)[-1] for k in KINDS])
async def test_open_change_close_give_the_clis_findings(client: LanguageClient, name: str, language: str):
    path = ROOT / name
    uri = uri_of(path)
    text = path.read_text()
    start = mark(client)
    open_text(client, uri, text, language)
    first = await published(client, uri, 1, after=start)
    expected = sorted(cli_key(f) for f in cli_findings(str(path), text))
    assert expected, f"{name} should have findings"
    assert sorted(as_cli(d) for d in first.diagnostics) == expected
    messages = {(f["code"], f["line"]): f for f in cli_findings(str(path), text)}
    for d in first.diagnostics:
        finding = messages[(d.code, d.range.start.line + 1)]
        assert d.source == "replayssm-lint"
        assert d.message.startswith(finding["message"])  # the CLI's words, then the release and why
        assert f"judged for vLLM {finding['vllm_version']}: {finding['vllm_version_reason']}" in d.message
        assert d.severity == {"error": 1, "warning": 2, "note": 3}[BY_CODE[d.code].severity]
        assert d.code_description.href == DEFAULT_DOCS_URL.replace("{code}", str(d.code))  # its rule page

    # the buffer, not the file: an edit the file does not have changes the diagnostics
    edited = text.replace("--use-replayssm", "--max-num-seqs").replace("use_replayssm=True", "max_num_seqs=8")
    edited = edited.replace("use_replayssm: true", "max-num-seqs: 8")
    assert edited != text
    change_text(client, uri, edited, 2)
    second = await published(client, uri, 2, after=start)
    assert sorted(as_cli(d) for d in second.diagnostics) == sorted(cli_key(f) for f in cli_findings(str(path), edited))
    assert len(second.diagnostics) < len(first.diagnostics)

    close_text(client, uri)
    closed = await published(client, uri, after=start + 2)
    assert closed.diagnostics == ()


async def test_kind_comes_from_the_language_id(client: LanguageClient, tmp_path: Path):
    """An extension-less script without a shebang is shell when the editor says so."""
    uri = uri_of(tmp_path / "serve")
    text = f"set -e\nvllm serve {NANO} --use-replayssm --mamba-backend flashinfer\n"
    start = mark(client)
    open_text(client, uri, text, "shellscript")
    params = await published(client, uri, 1, after=start)
    assert [d.code for d in params.diagnostics] == ["RSM002"]
    open_text(client, uri_of(tmp_path / "notes"), text, "plaintext")  # no kind: nothing to say
    params = await published(client, uri_of(tmp_path / "notes"), 1, after=start)
    assert params.diagnostics == ()


async def test_columns_are_utf16_code_units(client: LanguageClient, tmp_path: Path):
    """A character outside the BMP before the flag counts two UTF-16 units (LSP's default)."""
    uri = uri_of(tmp_path / "emoji.sh")
    text = f'echo "🚀 go" && vllm serve {NANO} --use-replayssm --mamba-backend flashinfer\n'
    start = mark(client)
    open_text(client, uri, text, "shellscript")
    (diagnostic,) = (await published(client, uri, 1, after=start)).diagnostics
    column = text.index("--use-replayssm")
    assert diagnostic.range.start == types.Position(0, column + 1)
    assert diagnostic.range.end == types.Position(0, column + 1 + len("--use-replayssm"))


async def test_a_finding_in_the_config_file_is_shown_on_the_launch(client: LanguageClient, tmp_path: Path):
    (tmp_path / "serve.yaml").write_text("mamba-backend: flashinfer\nenable-prefix-caching: false\n")
    script = tmp_path / "run.sh"
    text = f"vllm serve {NANO} --use-replayssm --config serve.yaml\n"
    start = mark(client)
    open_text(client, uri_of(script), text, "shellscript")
    params = await published(client, uri_of(script), 1, after=start)
    cli = cli_findings(str(script), text)
    in_yaml = [f for f in cli if f["path"].endswith("serve.yaml")]
    assert in_yaml, "the YAML's `enable-prefix-caching: false` is reported in the YAML by the CLI"
    shown = [d for d in params.diagnostics if d.message.startswith("serve.yaml:")]
    assert sorted(d.code for d in shown) == sorted(f["code"] for f in in_yaml)
    for d in shown:
        assert d.range.start.line == 0  # on the launch in this buffer
        (related,) = d.related_information
        assert related.location.uri == uri_of(tmp_path / "serve.yaml")
        assert related.location.range.start.line + 1 in {f["line"] for f in in_yaml}


# -- notebooks ------------------------------------------------------------------------------

NOTEBOOK = ROOT / "fixtures/notebooks/nemotron_h_backends.ipynb"


def _cells(path: Path) -> list[tuple[str, str]]:
    data = json.loads(path.read_text())
    return [(c["cell_type"], "".join(c["source"]) if isinstance(c["source"], list) else c["source"])
            for c in data["cells"]]


def _open_notebook(client: LanguageClient, uri: str, cells: list[tuple[str, str]]) -> list[str]:
    cell_uris = [f"vscode-notebook-cell:{uri[len('file:'):]}#cell{i}" for i in range(len(cells))]
    client.notebook_document_did_open(types.DidOpenNotebookDocumentParams(
        types.NotebookDocument(uri, "jupyter-notebook", 1, [
            types.NotebookCell(types.NotebookCellKind.Markup if kind == "markdown" else types.NotebookCellKind.Code,
                               cell_uri)
            for (kind, _), cell_uri in zip(cells, cell_uris)]),
        [types.TextDocumentItem(cell_uri, "markdown" if kind == "markdown" else "python", 1, text)
         for (kind, text), cell_uri in zip(cells, cell_uris)]))
    return cell_uris


async def test_notebook_findings_land_in_their_cells(client: LanguageClient):
    uri = uri_of(NOTEBOOK)
    cells = _cells(NOTEBOOK)
    start = mark(client)
    cell_uris = _open_notebook(client, uri, cells)
    expected = sorted((f["cell"], *cli_key(f)) for f in cli_findings(str(NOTEBOOK), NOTEBOOK.read_text()))
    assert expected
    for cell_uri in cell_uris:  # every cell is published (cells without findings get an empty list)
        await published(client, cell_uri, after=start)
    got = sorted((cell_uris.index(u), *as_cli(d)) for u in cell_uris for d in client.diagnostics[u])
    assert got == expected

    # a cell inserted at the top: every finding moves one cell down
    start = mark(client)
    new_uri = f"vscode-notebook-cell:{uri[len('file:'):]}#new"
    client.notebook_document_did_change(types.DidChangeNotebookDocumentParams(
        types.VersionedNotebookDocumentIdentifier(2, uri),
        types.NotebookDocumentChangeEvent(cells=types.NotebookDocumentCellChanges(
            structure=types.NotebookDocumentCellChangeStructure(
                types.NotebookCellArrayChange(0, 0, [types.NotebookCell(types.NotebookCellKind.Code, new_uri)]),
                did_open=[types.TextDocumentItem(new_uri, "python", 1, "import os\n")])))))
    await published(client, new_uri, after=start)
    for cell_uri in cell_uris:
        await published(client, cell_uri, after=start)
    order = [new_uri] + cell_uris
    moved = sorted((order.index(u) - 1, *as_cli(d)) for u in order for d in client.diagnostics[u])
    assert moved == expected and client.diagnostics[new_uri] == ()

    # a cell's text edited: its findings follow the text
    (cell, *_), = [e for e in expected if e[1] == expected[0][1]][:1]
    start = mark(client)
    client.notebook_document_did_change(types.DidChangeNotebookDocumentParams(
        types.VersionedNotebookDocumentIdentifier(3, uri),
        types.NotebookDocumentChangeEvent(cells=types.NotebookDocumentCellChanges(text_content=[
            types.NotebookDocumentCellContentChanges(
                types.VersionedTextDocumentIdentifier(2, cell_uris[cell]),
                [types.TextDocumentContentChangeWholeDocument("# nothing to launch here\n")])]))))
    params = await published(client, cell_uris[cell], 2, after=start)
    assert params.diagnostics == ()

    start = mark(client)
    client.notebook_document_did_close(types.DidCloseNotebookDocumentParams(
        types.NotebookDocumentIdentifier(uri), [types.TextDocumentIdentifier(u) for u in order]))
    for cell_uri in cell_uris:
        assert (await published(client, cell_uri, after=start)).diagnostics == ()


async def test_notebook_quick_fix_edits_the_cell(client: LanguageClient):
    before = ROOT / "tests/fix_pairs/notebook.0.33.0.before.ipynb"
    uri = uri_of(before)
    cells = _cells(before)
    start = mark(client)
    cell_uris = _open_notebook(client, uri, cells)
    for cell_uri in cell_uris:
        await published(client, cell_uri, after=start)
    cell = next(i for i, u in enumerate(cell_uris) if any(d.code == "RSM008" for d in client.diagnostics[u]))
    diagnostic = next(d for d in client.diagnostics[cell_uris[cell]] if d.code == "RSM008")
    actions = await client.text_document_code_action_async(types.CodeActionParams(
        types.TextDocumentIdentifier(cell_uris[cell]), diagnostic.range, types.CodeActionContext([diagnostic])))
    (fix,) = [a for a in actions if a.kind == types.CodeActionKind.QuickFix]
    assert fix.is_preferred
    touched = {change.text_document.uri for change in fix.edit.document_changes}
    assert touched == {cell_uris[cell]}  # only that cell's document changes
    fixed = apply_edits(cells[cell][1], edits_for(fix.edit, cell_uris[cell]))
    start = mark(client)
    client.notebook_document_did_change(types.DidChangeNotebookDocumentParams(
        types.VersionedNotebookDocumentIdentifier(2, uri),
        types.NotebookDocumentChangeEvent(cells=types.NotebookDocumentCellChanges(text_content=[
            types.NotebookDocumentCellContentChanges(
                types.VersionedTextDocumentIdentifier(2, cell_uris[cell]),
                [types.TextDocumentContentChangeWholeDocument(fixed)])]))))
    params = await published(client, cell_uris[cell], 2, after=start)
    assert "RSM008" not in {d.code for d in params.diagnostics}


# -- quick fixes and hover ------------------------------------------------------------------------

async def _open(client: LanguageClient, path: Path, text: str, language: str) -> list[types.Diagnostic]:
    start = mark(client)
    open_text(client, uri_of(path), text, language)
    return list((await published(client, uri_of(path), 1, after=start)).diagnostics)


async def _actions(client: LanguageClient, uri: str, diagnostics: list[types.Diagnostic],
                   only: list[str] | None = None) -> list[types.CodeAction]:
    where = diagnostics[0].range if diagnostics else types.Range(types.Position(0, 0), types.Position(0, 0))
    return await client.text_document_code_action_async(types.CodeActionParams(
        types.TextDocumentIdentifier(uri), where, types.CodeActionContext(diagnostics, only=only)))


async def test_a_quick_fix_applied_leaves_no_finding_of_its_code(client: LanguageClient, tmp_path: Path):
    path = tmp_path / "serve.sh"
    text = (f"#!/bin/bash\nvllm serve {NANO} --use-replayssm --mamba-cache-mode all\n"
            f"vllm serve {NANO} --port 8001 --use-replayssm\n")
    diagnostics = await _open(client, path, text, "shellscript")
    assert sorted(d.code for d in diagnostics) == ["RSM008", "RSM008", "RSM104"]
    version = 1
    for code in ("RSM104", "RSM008"):
        diagnostic = next(d for d in diagnostics if d.code == code)
        actions = await _actions(client, uri_of(path), [diagnostic])
        quick = [a for a in actions if a.kind == types.CodeActionKind.QuickFix]
        assert len(quick) == 1 and quick[0].is_preferred and quick[0].title.startswith(f"Fix {code}")
        assert list(quick[0].diagnostics) == [diagnostic]
        before = sum(d.code == code for d in diagnostics)
        text = apply_edits(text, edits_for(quick[0].edit, uri_of(path)))
        version += 1
        start = mark(client)
        change_text(client, uri_of(path), text, version)
        diagnostics = list((await published(client, uri_of(path), version, after=start)).diagnostics)
        assert sum(d.code == code for d in diagnostics) == before - 1  # that launch's, not the other's
    assert sorted(d.code for d in diagnostics) == ["RSM008"]
    assert diagnostics[0].range.start.line == 2  # the second launch still has its own


async def test_unsafe_fixes_are_labelled_and_never_preferred(client: LanguageClient, tmp_path: Path):
    path = tmp_path / "falcon.py"
    text = ("from vllm import LLM\n\n"
            "llm = LLM(model=\"tiiuae/Falcon-H1-1.5B-Instruct\", use_replayssm=True)\n")
    diagnostics = await _open(client, path, text, "python")
    rsm001 = next(d for d in diagnostics if d.code == "RSM001")
    actions = await _actions(client, uri_of(path), [rsm001])
    (quick,) = [a for a in actions if a.kind == types.CodeActionKind.QuickFix]
    assert "(unsafe)" in quick.title and not quick.is_preferred
    fixed = apply_edits(text, edits_for(quick.edit, uri_of(path)))
    start = mark(client)
    change_text(client, uri_of(path), fixed, 2)
    after = (await published(client, uri_of(path), 2, after=start)).diagnostics
    assert "RSM001" not in {d.code for d in after}


async def test_fix_all_safe_is_a_source_action(client: LanguageClient, tmp_path: Path):
    path = tmp_path / "Dockerfile"
    text = ("FROM vllm/vllm-openai:v0.32.0\n"
            f'CMD ["--model", "{NANO}", "--use-replayssm", "--config=serve.yaml", "--mamba-cache-mode", "all"]\n')
    diagnostics = await _open(client, path, text, "dockerfile")
    codes = {d.code for d in diagnostics}
    assert {"RSM101", "RSM104"} <= codes
    # a cursor with no diagnostic of ours and no explicit request: nothing to compute
    assert not await _actions(client, uri_of(path), [])
    # a request for quick fixes only gets no source action
    rsm101 = next(d for d in diagnostics if d.code == "RSM101")
    only_quick = await _actions(client, uri_of(path), [rsm101], only=[types.CodeActionKind.QuickFix])
    assert only_quick and all(a.kind == types.CodeActionKind.QuickFix for a in only_quick)
    # no `only`, a diagnostic of ours: its quick fix and the file's fix-all
    kinds = [a.kind for a in await _actions(client, uri_of(path), [rsm101])]
    assert kinds == [types.CodeActionKind.QuickFix, "source.fixAll.replayssm"]

    actions = await _actions(client, uri_of(path), [], only=[types.CodeActionKind.SourceFixAll])
    (action,) = actions
    assert action.kind == "source.fixAll.replayssm" and not action.diagnostics
    fixed = apply_edits(text, edits_for(action.edit, uri_of(path)))
    start = mark(client)
    change_text(client, uri_of(path), fixed, 2)
    after = {d.code for d in (await published(client, uri_of(path), 2, after=start)).diagnostics}
    assert not after & {"RSM101", "RSM104"}


async def test_hover_explains_the_code_under_the_cursor(client: LanguageClient, tmp_path: Path):
    path = tmp_path / "hover.sh"
    text = f"vllm serve {NANO} --use-replayssm --mamba-backend flashinfer\n"
    (diagnostic,) = await _open(client, path, text, "shellscript")
    inside = types.Position(0, diagnostic.range.start.character + 3)
    hover = await client.text_document_hover_async(types.HoverParams(types.TextDocumentIdentifier(uri_of(path)),
                                                                     inside))
    assert hover.contents.kind == types.MarkupKind.Markdown
    assert hover.contents.value == BY_CODE[diagnostic.code].doc()
    assert hover.range == diagnostic.range
    outside = await client.text_document_hover_async(types.HoverParams(
        types.TextDocumentIdentifier(uri_of(path)), types.Position(0, 1)))
    assert outside is None
