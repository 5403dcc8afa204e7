"""The server survives what editors throw at it, and stays responsive while it lints.

A second server runs with the shell frontend wrapped: a script containing
``BOOM`` makes the frontend raise (a bug of ours), one containing ``SLOW``
makes it take two seconds (a long document), so both paths are exercised with
a real LSP client over stdio.
"""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import pytest
import pytest_lsp
from lsprotocol import types
from lsp_client import (
    ROOT, change_text, initialize, mark, open_text, published, server_config, until, uri_of,
)
from pytest_lsp import LanguageClient

in_module_loop = pytest.mark.asyncio(loop_scope="module")

NANO = "nvidia/NVIDIA-Nemotron-Nano-9B-v2"
LAUNCH = f"vllm serve {NANO} --use-replayssm --mamba-backend flashinfer\n"  # RSM002 on 0.33
PYTHON = f'from vllm import LLM\n\nLLM("{NANO}", use_replayssm=True, mamba_backend="flashinfer")\n'

WRAPPED_SERVER = """
import sys, time
import flake8_replayssm.frontends.shell as shell

real = shell.commands_in_shell

def wrapped(text, **kwargs):
    if "BOOM" in text:
        raise RuntimeError("a bug in one frontend")
    if "SLOW" in text:
        time.sleep(2)
    return real(text, **kwargs)

shell.commands_in_shell = wrapped
from flake8_replayssm.lsp.server import serve
sys.exit(serve())
"""


@pytest_lsp.fixture(scope="module", config=server_config([sys.executable, "-c", WRAPPED_SERVER]))
async def client(lsp_client: LanguageClient):
    await initialize(lsp_client, ROOT)
    yield
    await lsp_client.shutdown_session()


@in_module_loop
@pytest.mark.parametrize(("name", "language", "text"), [
    ("broken.py", "python", "from vllm import LLM\nLLM(model='x', use_replayssm=True\n  def (\n"),
    ("broken.ipynb", "json", '{"cells": [{"cell_type": "code", "source": "!vllm serve x --use-replayssm'),
    ("broken.yaml", "yaml", "args: [--use-replayssm, {\n  - :\n"),
    ("broken.md", "markdown", "```bash\nvllm serve \\\n  --use-replayssm \"unterminated\n"),
    ("binary.sh", "shellscript", "\0\0\0 --use-replayssm \0"),
])
async def test_a_document_no_parser_takes_gets_only_not_checked(
        client: LanguageClient, tmp_path: Path, name: str, language: str, text: str):
    uri = uri_of(tmp_path / name)
    start = mark(client)
    open_text(client, uri, text, language)
    codes = {d.code for d in (await published(client, uri, 1, after=start)).diagnostics}
    assert codes <= {"RSM900"}  # "could not be parsed", as flake8's E999, never a launch finding
    if name in ("broken.py", "broken.yaml"):
        assert codes == {"RSM900"}
    # the server is alive and well: the next document is linted
    good = uri_of(tmp_path / "good.sh")
    open_text(client, good, LAUNCH, "shellscript")
    assert [d.code for d in (await published(client, good, 1, after=start)).diagnostics] == ["RSM002"]


@in_module_loop
async def test_a_bug_in_one_frontend_is_logged_and_the_server_lives(client: LanguageClient, tmp_path: Path):
    uri = uri_of(tmp_path / "boom.sh")
    start = mark(client)
    open_text(client, uri, "# BOOM\n" + LAUNCH, "shellscript")
    assert (await published(client, uri, 1, after=start)).diagnostics == ()
    await until(lambda: any("a bug in one frontend" in m.message and m.type == types.MessageType.Error
                            for m in client.log_messages), "the error in the log")
    python = uri_of(tmp_path / "ok.py")
    open_text(client, python, PYTHON, "python")
    assert [d.code for d in (await published(client, python, 1, after=start)).diagnostics] == ["RSM002"]


@in_module_loop
async def test_requests_are_served_while_a_long_document_is_linted(client: LanguageClient, tmp_path: Path):
    slow, quick = uri_of(tmp_path / "slow.sh"), uri_of(tmp_path / "quick.py")
    start = mark(client)
    sent = time.perf_counter()
    open_text(client, slow, "# SLOW\n" + LAUNCH, "shellscript")
    open_text(client, quick, PYTHON, "python")
    (diagnostic,) = (await published(client, quick, 1, after=start)).diagnostics
    hover = await client.text_document_hover_async(types.HoverParams(
        types.TextDocumentIdentifier(quick), diagnostic.range.start))
    answered = time.perf_counter()
    assert hover is not None and "(RSM002)" in hover.contents.value
    assert not [p for _, p in client.published[start:] if p.uri == slow], "the slow lint is still running"
    done = await published(client, slow, 1, after=start)
    assert [d.code for d in done.diagnostics] == ["RSM002"]
    assert answered - sent < 1.5  # the two-second lint did not hold the others up


@in_module_loop
async def test_superseded_versions_are_not_published(client: LanguageClient, tmp_path: Path):
    uri = uri_of(tmp_path / "typing.sh")
    start = mark(client)
    open_text(client, uri, "# SLOW\n" + LAUNCH, "shellscript")
    for version in (2, 3):  # typed while version 1 is being linted
        change_text(client, uri, "# SLOW\n" + LAUNCH.replace("flashinfer", "triton") * version, version)
    final = await published(client, uri, 3, after=start)
    assert [d.code for d in final.diagnostics] == ["RSM008"] * 3
    assert [p.version for _, p in client.published[start:] if p.uri == uri] == [3]


def test_without_pygls_the_server_says_how_to_install_it():
    blocked = ("import sys; sys.modules['pygls'] = None; from flake8_replayssm.cli import main; "
               "raise SystemExit(main(['server']))")
    done = subprocess.run([sys.executable, "-c", blocked], capture_output=True, text=True, timeout=60)
    assert done.returncode == 2
    # the package is not on PyPI: the hint names what installs in any environment, and the README
    assert 'needs the "lsp" extra: pip install "pygls>=2,<3" "lsprotocol>=2025.0.0"' in done.stderr
    assert "README's Install section" in done.stderr
    assert done.stdout == ""


def test_the_base_install_does_not_import_pygls():
    check = ("import sys, flake8_replayssm, flake8_replayssm.cli, flake8_replayssm.plugin; "
             "flake8_replayssm.cli.main(['explain', 'RSM001']); "
             "assert not {'pygls', 'lsprotocol'} & set(sys.modules), sorted(sys.modules)")
    done = subprocess.run([sys.executable, "-c", check], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr


def test_a_bad_tcp_address_is_a_usage_error():
    done = subprocess.run([sys.executable, "-m", "flake8_replayssm", "server", "--tcp", "localhost"],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 2 and "HOST:PORT" in done.stderr
