"""``python -m sglang_router.launch_server``: the router launcher's own options, and the SGLang
releases it cannot start with (every sglang-router release fails at import with 0.5.15-0.5.19)."""

from __future__ import annotations

import pytest

from flake8_replayssm.config import LintConfig
from flake8_replayssm.judging import judge
from flake8_replayssm.recognise import launch_from_command
from flake8_replayssm.engines.sglang.knowledge import knowledge

from conftest import command

QWEN_NEXT = "Qwen/Qwen3-Next-80B-A3B-Instruct"
ROUTER = f"python -m sglang_router.launch_server --model-path {QWEN_NEXT}"
FLAGS = "--enable-linear-replayssm --disable-overlap-schedule"
IMPORT_ERROR = "cannot import name 'is_port_available' from 'sglang.srt.utils'"


def findings(cmdline: str, release: str = "0.5.23", **settings) -> dict[str, str]:
    launch = launch_from_command(command(cmdline))
    assert launch is not None and launch.engine == "sglang", cmdline
    verdict = judge(launch, LintConfig(sglang_version=release, gpu="hopper", **settings))
    return {f.code: f.message for f in verdict.findings}


@pytest.mark.parametrize("release", ["0.5.15", "0.5.16", "0.5.17", "0.5.18", "0.5.19"])
def test_the_launcher_does_not_start_before_0_5_20(release):
    found = findings(f"{ROUTER} {FLAGS}", release)
    assert list(found) == ["RSM309"]
    assert IMPORT_ERROR in found["RSM309"] and f"SGLang {release}" in found["RSM309"]
    assert "python -m sglang_router.launch_router" in found["RSM309"]  # the router alone imports no SGLang


@pytest.mark.parametrize("release", ["0.5.20", "0.5.23"])
def test_the_launcher_starts_from_0_5_20(release):
    assert findings(f"{ROUTER} {FLAGS}", release) == {}


def test_never_accepted_without_effect_where_the_launcher_fails():
    """A dense model: the worker would start without effect (RSM308), but the launcher never starts."""
    dense = "python -m sglang_router.launch_server --model-path meta-llama/Llama-3.1-8B-Instruct " \
            "--enable-linear-replayssm"
    assert list(findings(dense, "0.5.19")) == ["RSM309"]
    assert list(findings(dense, "0.5.20")) == ["RSM308"]


def test_the_same_arguments_under_sglang_serve_start():
    assert findings(f"sglang serve --model-path {QWEN_NEXT} {FLAGS}", "0.5.19") == {}


def test_no_finding_without_a_replayssm_flag():
    """Like every RSM3xx check, the launcher's refusal is reported on ReplaySSM launches only."""
    assert findings(f"{ROUTER} --disable-overlap-schedule", "0.5.19") == {}


@pytest.mark.parametrize("words", [
    "--worker-urls http://127.0.0.1:1 http://127.0.0.1:2",
    "--router-selector app=a tier=b",
    "--router-request-id-headers x-a x-b",
    "--router-prometheus-duration-buckets 0.1 1",
    "--router-policy cache_aware --dp-size 2",
    "--router-policy=round_robin",
    "--router-pol round_robin",  # a unique prefix of a router option
    "--router-enable-igw",
    "--router-dp-worker-base-port 32000",
])
def test_router_options_take_the_words_its_parser_gives_them(words):
    assert findings(f"{ROUTER} {words} {FLAGS}") == {}
    assert findings(f"{ROUTER} {FLAGS} {words}") == {}


@pytest.mark.parametrize("words, fragment", [
    ("--router-policy fastest", "argument --router-policy: invalid choice: 'fastest' (choose from 'random', "),
    ("--router-pol=fastest", "argument --router-pol: invalid choice: 'fastest'"),
    ("--router-balance-abs-threshold", "argument --router-balance-abs-threshold: expected one argument"),
])
def test_router_option_values_its_parser_refuses(words, fragment):
    found = findings(f"{ROUTER} {words} {FLAGS}")
    assert list(found) == ["RSM106"] and fragment in found["RSM106"]
    assert f"sglang-router {knowledge().router.release}" in found["RSM106"]


def test_router_options_are_the_launchers_only():
    """``sglang serve`` has no router options: a list option's second word stays a stray word."""
    found = findings(f"sglang serve --model-path {QWEN_NEXT} --worker-urls http://a:1 http://b:2 {FLAGS}")
    assert list(found) == ["RSM106"] and "'http://b:2'" in found["RSM106"]
    assert findings(f"sglang serve --model-path {QWEN_NEXT} --router-policy fastest {FLAGS}") == {}


def test_router_table_is_the_routers_own():
    """The generated table holds the launcher's options, none of ServerArgs'."""
    router = knowledge().router
    assert "--router-policy" in router.long_options and "--worker-urls" in router.long_options
    assert not router.long_options & set(knowledge().long_options)
    assert router.valueless <= router.long_options and set(router.nargs) <= router.long_options
    assert router.nargs["--worker-urls"] == "*"
