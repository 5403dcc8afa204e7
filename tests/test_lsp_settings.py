"""The server's configuration: editor settings over the project's files, and changes of either.

Each test starts its own server in its own workspace, so settings and files of
one test never leak into another.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import pytest_lsp
from lsprotocol import types
from lsp_client import initialize, mark, open_text, published, server_config, until, uri_of
from pytest_lsp import LanguageClient

pytestmark = pytest.mark.asyncio

NANO = "nvidia/NVIDIA-Nemotron-Nano-9B-v2"
#: RSM004 on 0.28 (triton only), RSM002 on 0.30+ (FlashInfer with prefix caching on)
FLASHINFER = f"vllm serve {NANO} --use-replayssm --mamba-backend flashinfer\n"


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    (tmp_path / ".git").mkdir()  # the project root: pyproject and pins are looked up here
    return tmp_path


@pytest_lsp.fixture(config=server_config())
async def client(lsp_client: LanguageClient):
    yield
    await lsp_client.shutdown_session()


def _changed_files(client: LanguageClient, *paths: Path) -> None:
    client.workspace_did_change_watched_files(types.DidChangeWatchedFilesParams(
        [types.FileEvent(uri_of(p), types.FileChangeType.Changed) for p in paths]))


async def test_settings_win_and_a_change_relints(client: LanguageClient, workspace: Path):
    await initialize(client, workspace, {"vllmVersion": "0.28.0"})
    uri = uri_of(workspace / "serve.sh")
    start = mark(client)
    open_text(client, uri, FLASHINFER, "shellscript")
    (d,) = (await published(client, uri, 1, after=start)).diagnostics
    assert d.code == "RSM004"
    assert "judged for vLLM 0.28.0: the editor's vllmVersion setting" in d.message

    # pulled: the editor answers workspace/configuration with the new section
    client.set_configuration({"vllm-version": "0.33.0"}, section="replayssm")
    start = mark(client)
    client.workspace_did_change_configuration(types.DidChangeConfigurationParams(settings=None))
    (d,) = (await published(client, uri, 1, after=start)).diagnostics
    assert d.code == "RSM002" and "[vLLM 0.33.0]" in d.message

    # pushed: the settings come with the notification (Neovim's `settings = { replayssm = ... }`)
    start = mark(client)
    client.workspace_did_change_configuration(types.DidChangeConfigurationParams(
        settings={"replayssm": {"vllmVersion": "0.33.0", "ignore": ["RSM002"]}}))
    assert (await published(client, uri, 1, after=start)).diagnostics == ()


async def test_a_changed_pyproject_relints_open_documents(client: LanguageClient, workspace: Path):
    await initialize(client, workspace)
    await until(lambda: client.registrations, "the server to ask for file events")
    registered = [r for r in client.registrations if r.method == types.WORKSPACE_DID_CHANGE_WATCHED_FILES]
    globs = {w["globPattern"] for r in registered for w in r.register_options["watchers"]}
    assert {"**/pyproject.toml", "**/setup.cfg", "**/requirements*.txt"} <= globs
    uri = uri_of(workspace / "serve.sh")
    start = mark(client)
    open_text(client, uri, FLASHINFER, "shellscript")
    (d,) = (await published(client, uri, 1, after=start)).diagnostics
    assert d.code == "RSM002" and "newest release known" in d.message

    pyproject = workspace / "pyproject.toml"
    pyproject.write_text('[tool.flake8-replayssm]\nvllm-version = "0.28.0"\n')
    start = mark(client)
    _changed_files(client, pyproject)
    (d,) = (await published(client, uri, 1, after=start)).diagnostics
    assert d.code == "RSM004" and f"vllm-version in {pyproject}" in d.message

    # a pin in requirements.txt is read too (when pyproject names no release)
    pyproject.write_text("[tool.flake8-replayssm]\n")
    (workspace / "requirements.txt").write_text("vllm==0.27.0\n")
    start = mark(client)
    _changed_files(client, pyproject, workspace / "requirements.txt")
    (d,) = (await published(client, uri, 1, after=start)).diagnostics
    assert "vllm==0.27.0 pinned in requirements.txt" in d.message

    # a pyproject that cannot be used: no diagnostics, and the user is told why
    pyproject.write_text("[tool.flake8-replayssm\n")
    start = mark(client)
    _changed_files(client, pyproject)
    assert (await published(client, uri, 1, after=start)).diagnostics == ()
    await until(lambda: any("pyproject.toml" in m.message and "not checked" in m.message
                            for m in client.messages), "a message about the broken pyproject.toml")


async def test_model_dirs_are_relative_to_the_workspace(client: LanguageClient, workspace: Path):
    model = workspace / "models" / "my-org" / "tiny"
    model.mkdir(parents=True)
    (model / "config.json").write_text(json.dumps({"architectures": ["Qwen3ForCausalLM"]}))
    launch = "VLLM_USE_V2_MODEL_RUNNER=0 vllm serve my-org/tiny --use-replayssm\n"
    await initialize(client, workspace, {"modelDirs": ["models"]})
    uri = uri_of(workspace / "deploy" / "serve.sh")
    start = mark(client)
    open_text(client, uri, launch, "shellscript")
    (d,) = (await published(client, uri, 1, after=start)).diagnostics
    assert d.code == "RSM001" and "Qwen3ForCausalLM" in d.message


async def test_a_bad_setting_is_reported_and_left_out(client: LanguageClient, workspace: Path):
    await initialize(client, workspace, {"platform": "tpu", "enable": ["RSM999"], "vllmVersion": "0.28.0",
                                         "colour": "blue"})
    await until(lambda: len(client.messages) >= 3, "a message per bad setting")
    shown = "\n".join(m.message for m in client.messages)
    assert "platform" in shown and "RSM999" in shown and "'colour'" in shown
    uri = uri_of(workspace / "serve.sh")
    start = mark(client)
    open_text(client, uri, FLASHINFER, "shellscript")
    (d,) = (await published(client, uri, 1, after=start)).diagnostics
    assert d.code == "RSM004"  # the good setting (0.28.0) is used


async def test_a_set_of_releases(client: LanguageClient, workspace: Path):
    """vllmVersion takes the CLI's forms: each finding says on which releases it holds."""
    await initialize(client, workspace, {"vllmVersion": "all"})
    uri = uri_of(workspace / "serve.sh")
    start = mark(client)
    open_text(client, uri, FLASHINFER, "shellscript")
    diagnostics = (await published(client, uri, 1, after=start)).diagnostics
    by_code = {d.code: d.message for d in diagnostics}
    assert sorted(by_code) == ["RSM002", "RSM004"]
    assert "[vLLM 0.27.0\u20130.29.0]" in by_code["RSM004"]
    assert "judged for vLLM 0.27.0, 0.27.1, 0.28.0, 0.29.0: the editor's vllmVersion setting all" \
        in by_code["RSM004"]
    start = mark(client)
    client.workspace_did_change_configuration(types.DidChangeConfigurationParams(
        settings={"replayssm": {"vllmVersion": ">=0.28,<0.30"}}))
    (d,) = (await published(client, uri, 1, after=start)).diagnostics
    assert d.code == "RSM004" and "[vLLM 0.28.0\u20130.29.0]" in d.message
