"""scripts/new_release.py: a release's facts read from its wheel, diffed, checked and written.

Three layers:
- a synthetic wheel-like tree the tests write (tests/new_release/synthetic.py) runs every
  extraction path, the diff, and ``write`` into a copy of the committed data;
- the extraction of the real wheels, recorded as facts (names, messages, ``file:line``; no
  source text) in tests/new_release/*.json, is compared with the committed data tables —
  this runs everywhere, without the multi-hundred-MB wheels;
- when the wheels are present (REPLAYSSM_WHEELS, default /work/cache/whl) the extractor
  runs on them and must reproduce both the recording and the committed data.
"""

from __future__ import annotations

import glob
import json
import os
import shutil
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "scripts"))
sys.path.insert(0, str(HERE / "new_release"))

import new_release  # noqa: E402
import synthetic  # noqa: E402
from release_facts import diff, sglang_facts, tables, vllm_facts  # noqa: E402
from release_facts.facts import Facts  # noqa: E402
from release_facts.toml_edit import TomlText  # noqa: E402
from release_facts.tree import Tree  # noqa: E402

RECORDED = HERE / "new_release"
PACKAGE = HERE.parent / "flake8_replayssm" / "engines"
WHEELS = os.environ.get("REPLAYSSM_WHEELS", "/work/cache/whl")


@pytest.fixture(scope="module")
def vllm_tree(tmp_path_factory) -> str:
    return synthetic.write_tree(str(tmp_path_factory.mktemp("vllm")), synthetic.VLLM)


@pytest.fixture(scope="module")
def vllm(vllm_tree) -> Facts:
    return vllm_facts.extract(Tree(vllm_tree))


@pytest.fixture(scope="module")
def sglang(tmp_path_factory) -> Facts:
    return sglang_facts.extract(Tree(synthetic.write_tree(str(tmp_path_factory.mktemp("sg")), synthetic.SGLANG)))


def _messages(facts: Facts, kind_prefix: str = "") -> dict[str, tuple[str, ...]]:
    return {r.message: r.conditions for r in facts.rules if r.kind.startswith(kind_prefix)}


# --- vLLM extraction ----------------------------------------------------------------

def test_vllm_options_from_fields_and_literal_arguments(vllm):
    assert vllm.release == "0.34.0"
    assert vllm.value("long_options") == [
        "--allow-credentials", "--config", "--disable-log-stats", "--enable-log-requests", "--headless",
        "--mamba-backend", "--mamba-cache-mode", "--model", "--numa-bind", "--port", "--replayssm-buffer-len",
        "--use-replayssm", "--version"]
    # bool fields (BooleanOptionalAction) and store_true literals of the serve parser only
    assert vllm.value("flags_without_value") == [
        "allow_credentials", "disable_log_stats", "enable_log_requests", "headless", "numa_bind", "use_replayssm"]
    items = vllm.facts["long_options"].items
    assert items["--numa-bind"] == "vllm/engine/arg_utils.py:7"
    assert items["--headless"] == "vllm/entrypoints/common/cli_args.py:6"


def test_vllm_architectures_per_platform_through_bases_flags_and_platform_imports(vllm):
    everywhere = ["FlagForCausalLM", "HybridAliasForCausalLM", "HybridForCausalLM", "SubForCausalLM"]
    assert vllm.value("supported.cuda") == sorted(everywhere + ["KimiForCausalLM"])
    assert vllm.value("supported.xpu") == sorted(everywhere + ["KimiForCausalLM"])
    # ROCm imports the amd class, which lacks the interface
    assert vllm.value("supported.rocm") == everywhere
    assert vllm.facts["supported.cuda"].items["KimiForCausalLM"] == \
        "vllm/model_executor/models/registry.py:7 -> vllm/models/kimi/nvidia.py:3"
    assert vllm.facts["supported.cuda"].items["SubForCausalLM"].endswith("-> vllm/model_executor/models/sub.py:3")
    # a platform test that cannot be evaluated is said, never guessed
    assert vllm.notes == ["OddForCausalLM: cannot tell which class vllm/models/odd/__init__.py binds on "
                          "cuda, rocm, xpu (if some_setting())"]
    assert vllm.value("kimi") == ["KimiForCausalLM"]
    # "all" is a choice, so the SupportsMambaPrefixCaching classes keep it
    assert vllm.value("cache_mode_choices") == ["align", "all", "none"]
    assert vllm.value("cache_mode_all_classes") == ["HybridAliasForCausalLM", "HybridForCausalLM", "SubForCausalLM"]


def test_vllm_scalars(vllm):
    assert vllm.value("backends") == ["triton", "flashinfer"]
    assert vllm.value("backend_default") == "triton"
    assert vllm.value("buffer_default") == 8
    assert vllm.value("disable_aliases") is True
    # CacheConfig is built without mamba_cache_mode: the option has no effect
    assert vllm.value("cache_mode_deprecated") is True
    assert vllm.value("runner") == "v2"
    assert vllm.value("v1_spec_methods") == ["suffix", "ngram"]
    assert vllm.value("validator_source").startswith("vllm/config/vllm.py:14-")


def test_vllm_rules_carry_messages_conditions_and_locations(vllm):
    raised = _messages(vllm, "raise")
    assert raised["--use-replayssm is not supported for architecture {self.architecture!r}"] == (
        "not self.supports_replayssm",)
    # a message bound to a name first
    assert raised["RecoverSSM requires --mamba-backend triton"] == ("self.spec > 0",)
    assert raised["Triton ReplaySSM requires Model Runner V1"] == (
        "not (self.spec > 0)", "not (self.backend == 'flashinfer')", "self.use_v2_model_runner")
    # outside the validator: only refusals that name an option
    assert "--use-replayssm requires tensor-parallel heads to divide evenly" in raised
    assert "ReplaySSM internal invariant" not in raised
    assert _messages(vllm, "v1 fallback") == {
        "speculative method {self.spec.method!r}": (
            "self.spec is not None and self.spec.method in ('suffix', 'ngram')",)}
    defaults = [r for r in vllm.rules if r.kind == "default"]
    assert [str(r.loc) for r in defaults] == ["vllm/engine/arg_utils.py:22"]


def test_a_wheel_reads_like_its_folder(vllm_tree, vllm, tmp_path):
    import zipfile

    wheel = tmp_path / "vllm-0.34.0-py3-none-any.whl"
    with zipfile.ZipFile(wheel, "w") as z:
        for path in synthetic.VLLM:
            z.write(os.path.join(vllm_tree, path), path)
    assert vllm_facts.extract(Tree(str(wheel))).as_json() == vllm.as_json()


# --- SGLang extraction --------------------------------------------------------------

def test_sglang_options_from_dataclass_fields_and_literal_arguments(sglang):
    assert sglang.value("long_options") == [
        "--adapters", "--buckets", "--checksum", "--config", "--cuda-graph-bs-decode", "--enable-linear-replayssm",
        "--fast", "--help", "--json-list", "--linear-replayssm-cache-len", "--mode", "--model", "--model-path",
        "--no-fast", "--no-toggle", "--old-const", "--old-flag", "--page-size", "--tensor-parallel-size",
        "--toggle"]
    # bool fields, BooleanOptionalAction (both spellings), an action whose nargs defaults to 0
    # unless the call says otherwise, argparse's --help
    assert sglang.value("valueless") == [
        "--enable-linear-replayssm", "--fast", "--help", "--no-fast", "--no-toggle", "--old-flag", "--toggle"]
    assert sglang.facts["long_options"].items["--page-size"] == "sglang/srt/arg_groups/fields/base.py:2"


def test_sglang_list_options(sglang):
    """nargs as add_cli_args_from_dataclass derives it: a List[X] field is "+" (unless a
    type_parser reads the whole word), an action's action_kwargs, Arg(nargs=...), a literal call."""
    assert sglang.value("nargs") == {"--adapters": "*", "--buckets": "+", "--checksum": "?",
                                     "--cuda-graph-bs-decode": "+"}
    assert sglang.value("list_types") == {"--buckets": "float", "--cuda-graph-bs-decode": "int"}


def test_sglang_architecture_sets(sglang):
    radix = sglang.value("radix_archs")
    assert radix[:3] == ["KimiLinearForCausalLM", "Qwen3NextForCausalLM", "GraniteMoeHybridForCausalLM"]
    assert sorted(radix[3:]) == ["FastForCausalLM", "GigaForCausalLM"]
    assert sglang.value("extra_buffer_archs") == ["Qwen3NextForCausalLM", "FastForCausalLM"]
    assert sglang.value("radix_by_layer_types") == ["GraniteMoeHybridForCausalLM"]
    assert sglang.value("linear_attn_backends") == ["triton", "flashinfer"]
    assert sglang.facts["radix_archs"].items["GigaForCausalLM"].startswith("sglang/srt/configs/giga.py:")


def test_sglang_rules(sglang):
    found = _messages(sglang)
    assert found["--enable-linear-replayssm requires the Triton linear-attn decode backend, "
                 "got --linear-attn-decode-backend={decode!r}."] == (
        "cfg.enable_linear_replayssm", "decode != 'triton'")
    assert found["no_buffer only supports page_size=1."] == ("not (view.page_size in (1, None))",)
    assert "--enable-linear-replayssm-spec ring too small" in found
    assert "unrelated" not in found and "ReplaySSM ring index out of range" not in found
    assert sglang.value("validator_source").startswith(
        "sglang/srt/arg_groups/attention_hook.py:1-") and "handle_linear_attn_backend" in sglang.value(
        "validator_source")


# --- diff ---------------------------------------------------------------------------

def test_diff_pairs_moved_reworded_and_reconditioned_rules(vllm, tmp_path):
    edits = {
        "vllm/config/vllm.py": ('raise ValueError("FlashInfer ReplaySSM does not support prefix caching yet")',
                                'raise ValueError("FlashInfer ReplaySSM: use --disable-prefix-caching")'),
        "vllm/model_executor/models/registry.py": ('"FlagForCausalLM": ("flag", "FlagForCausalLM"),', ""),
        "vllm/entrypoints/common/cli_args.py": ("allow_credentials: bool = False", "allow_credentials: bool = False\n"
                                                "    api_key: str = ''"),
    }
    newer = vllm_facts.extract(Tree(synthetic.write_tree(str(tmp_path), synthetic.VLLM, edits)))
    changes, unchanged = diff.pair_rules(vllm.rules, newer.rules)
    assert [(c.change, c.old.message, c.new.message) for c in changes] == [
        ("message", "FlashInfer ReplaySSM does not support prefix caching yet",
         "FlashInfer ReplaySSM: use --disable-prefix-caching")]
    assert unchanged == len(vllm.rules) - 1
    text = diff.report(vllm, newer)
    assert "- [ ] supported.cuda  ->  releases.toml [releases.\"X\"] supported.cuda" in text
    assert "      - FlagForCausalLM  (vllm/model_executor/models/registry.py:5" in text
    assert "      + --api-key  (vllm/entrypoints/common/cli_args.py:4)" in text
    assert "      old   FlashInfer ReplaySSM does not support prefix caching yet" in text


def test_diff_says_when_a_condition_changed(vllm, tmp_path):
    edits = {"vllm/config/vllm.py": ("elif self.use_v2_model_runner:", "elif self.use_v2_model_runner and self.x:")}
    newer = vllm_facts.extract(Tree(synthetic.write_tree(str(tmp_path), synthetic.VLLM, edits)))
    changes, _ = diff.pair_rules(vllm.rules, newer.rules)
    assert [(c.change, c.new.conditions[-1]) for c in changes] == [
        ("condition", "self.use_v2_model_runner and self.x")]


# --- check and write ----------------------------------------------------------------

def _data_copy(tmp_path: Path, engine: str) -> tables.Data:
    folder = tmp_path / engine
    shutil.copytree(PACKAGE / engine / "data", folder)
    return tables.Data(engine, str(folder))


def test_write_adds_a_new_release_table_that_extends_the_newest(vllm, tmp_path):
    data = _data_copy(tmp_path, "vllm")
    before = Path(data.path("releases.toml")).read_text()
    assert tables.compare(vllm, data)  # 0.34.0 is not in the data yet
    changes = tables.write([vllm], data)
    assert any("supported.rocm" in c for c in changes)
    assert tables.compare(vllm, data) == []
    after = Path(data.path("releases.toml")).read_text()
    assert after.startswith(before.rstrip("\n"))  # appended after the last release's checks
    table = data.load("releases.toml")["releases"]["0.34.0"]
    assert table["extends"] == "0.33.0"
    assert table["source"] == vllm.value("validator_source")
    assert table["supported"]["rocm"] == vllm.value("supported.rocm")
    assert "runner" not in table  # inherited from 0.33.0 unchanged
    assert data.load("options.toml")["backends"]["valid"] == ["triton", "flashinfer"]
    # written once, the second write finds nothing to do
    assert tables.write([vllm], data) == []


def test_write_for_an_older_release_leaves_the_newest_release_lists_alone(tmp_path):
    data = _data_copy(tmp_path, "vllm")
    older = Facts.from_json(json.loads((RECORDED / "vllm-0.32.0.json").read_text()))
    older.add("long_options", ["--only-this"], "x")
    assert tables.write([older], data) == []


def test_sglang_union_gains_a_release(sglang, tmp_path):
    data = _data_copy(tmp_path, "sglang")
    tables.write([sglang], data)
    argv = data.load("sglang_argv.toml")["argv"]
    assert {"--old-flag", "--toggle", "--no-fast"} <= set(argv["valueless"])
    assert len(argv["long_options"]) > 400  # the older releases' options stay
    assert "0.5.24" in data.argv_releases()
    # list options: the new release's nargs; the releases an option is in
    assert argv["nargs"]["--cuda-graph-bs-decode"] == "+" and argv["nargs"]["--buckets"] == "+"
    assert argv["list_types"]["--buckets"] == "float"
    assert argv["since"]["--buckets"] == "0.5.24" and argv["until"]["--encoder-urls"] == "0.5.23"
    assert argv["nargs"]["--encoder-urls"] == "+"  # the older releases' list options stay
    assert tables.compare(sglang, data) == []  # written, then equal
    release = data.load("sglang.toml")["releases"]["0.5.24"]
    assert release["extends"] == "0.5.23" and release["linear_attn_backends"] == ["triton", "flashinfer"]


def test_toml_edit_keeps_every_other_byte(tmp_path):
    text = (PACKAGE / "sglang" / "data" / "sglang.toml").read_text()
    toml = TomlText(text)
    toml.set('releases."0.5.22"', "radix_archs", ["A", "B"])
    edited = toml.text()
    assert 'source = "sglang/srt/arg_groups/attention_hook.py:280-524' in edited
    assert edited.count('radix_archs = ["A", "B"]') == 1
    assert edited.replace('\nradix_archs = ["A", "B"]', "", 1) == text


def test_cli_check_exit_codes_and_write(vllm_tree, tmp_path, capsys):
    data = _data_copy(tmp_path, "vllm")
    assert new_release.main(["vllm", "check", vllm_tree, "--data", data.folder]) == 1
    assert new_release.main(["vllm", "write", vllm_tree, "--data", data.folder]) == 0
    assert new_release.main(["vllm", "check", vllm_tree, "--data", data.folder]) == 0
    out = capsys.readouterr().out
    assert "vllm 0.34.0: generated parts equal the data" in out
    recorded = tmp_path / "facts.json"
    assert new_release.main(["vllm", "facts", "--record", vllm_tree]) == 0
    recorded.write_text(capsys.readouterr().out)
    raw = json.loads(recorded.read_text())
    assert all(rule["conditions"] == [] for rule in raw["rules"])
    assert new_release.main(["vllm", "diff", str(recorded), vllm_tree, "--format", "json"]) == 0
    assert json.loads(capsys.readouterr().out)["facts"] == []


# --- the real releases: recorded facts against the committed data -------------------

RECORDINGS = sorted(RECORDED.glob("*.json"))


@pytest.mark.parametrize("recording", RECORDINGS, ids=[p.stem for p in RECORDINGS])
def test_recorded_extraction_of_the_real_wheels_equals_the_committed_data(recording):
    facts = Facts.from_json(json.loads(recording.read_text()))
    assert tables.compare(facts, tables.Data(facts.engine)) == []
    data_messages = new_release.data_messages(tables.Data(facts.engine), facts.release)
    validator = [r for r in facts.rules if r.kind.startswith("raise")
                 and r.loc.path in ("vllm/config/vllm.py", "sglang/srt/arg_groups/attention_hook.py")
                 and "replayssm" in r.message.lower()]
    assert validator
    # every ReplaySSM refusal of the validator is one of the data's checks, in its wording
    assert diff.unmatched_messages(Facts(facts.engine, facts.release, rules=validator), data_messages) == []


def test_recorded_diff_lists_a_new_list_option():
    old, new = (Facts.from_json(json.loads((RECORDED / f"sglang-{v}.json").read_text())) for v in ("0.5.22", "0.5.23"))
    changes = {c["fact"]: c for c in diff.fact_changes(old, new)}
    assert [v for v, _ in changes["nargs"]["added"]] == ["--return-aux-hidden-state-layer-ids = '+'"]
    assert changes["nargs"]["removed"] == [] and "nargs" in diff.report(old, new)


def test_recorded_diff_reports_the_known_changes():
    old, new = (Facts.from_json(json.loads((RECORDED / f"vllm-{v}.json").read_text())) for v in ("0.32.0", "0.33.0"))
    changes = {c["fact"]: c for c in diff.fact_changes(old, new)}
    assert changes["supported.xpu"]["removed"][0][0] == "KimiLinearForCausalLM"
    assert (changes["disable_aliases"]["old"], changes["disable_aliases"]["new"]) == (False, True)
    assert (changes["cache_mode_deprecated"]["old"], changes["cache_mode_deprecated"]["new"]) == (False, True)
    reworded = [c for c in diff.pair_rules(old.rules, new.rules)[0] if c.change == "message"]
    assert "RecoverSSM with prefix caching requires VLLM_USE_V2_MODEL_RUNNER=1" in [c.new.message for c in reworded]


# --- the real wheels, when they are here --------------------------------------------

def _wheel(engine: str, release: str) -> str | None:
    found = glob.glob(os.path.join(WHEELS, f"{engine}-{release}-*.whl"))
    return found[0] if found else None


@pytest.mark.parametrize("recording", RECORDINGS, ids=[p.stem for p in RECORDINGS])
def test_real_wheel_extraction_equals_recording_and_data(recording):
    recorded = Facts.from_json(json.loads(recording.read_text()))
    wheel = _wheel(recorded.engine, recorded.release)
    if wheel is None:
        pytest.skip(f"no {recorded.engine} {recorded.release} wheel in {WHEELS} (pip download --no-deps "
                    f"{recorded.engine}=={recorded.release}; REPLAYSSM_WHEELS names another folder)")
    facts = new_release.load(recorded.engine, wheel)
    assert tables.compare(facts, tables.Data(facts.engine)) == []
    assert json.loads(facts.dumps(record=True)) == json.loads(recording.read_text())
