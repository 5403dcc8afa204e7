"""Fixes for SGLang launches, planned with the shared planner's edits (:mod:`flake8_replayssm.fix.planner`).

[safe] always, [unsafe] only with ``--unsafe``; each for the launch's target release:

- RSM302 [safe] where ``auto`` resolved to ``extra_buffer`` because the overlap scheduler
  is on, and RSM305 [safe] for an explicit ``no_buffer`` under the overlap scheduler: add
  ``--disable-overlap-schedule`` (``disable_overlap_schedule=True``, a
  ``disable-overlap-schedule: true`` key).  This is what SGLang itself does when ``auto``
  picks ``no_buffer``, so nothing the user asked for changes.
- RSM302 [unsafe] for an explicit ``extra_buffer*``: ``no_buffer``, plus the line above.
- RSM301 [safe] where SGLang would switch an unset decode backend to FlashInfer on
  Blackwell: pin ``--linear-attn-decode-backend triton``; [unsafe] a decode backend the
  user chose becomes ``triton``.
- RSM104 / RSM105 [safe]: removed or deprecated aliases and the RFC's names become the
  release's spelling (``--mamba-scheduler-strategy`` -> ``--mamba-radix-cache-strategy``,
  ``--enable-gdn-replayssm-spec`` <-> ``--enable-linear-replayssm-spec``,
  ``--gdn-replayssm-cache-len`` -> ``--linear-replayssm-cache-len``); the RFC's
  ``--enable-gdn-replayssm``, which 0.5.16-0.5.19 read as the spec-verify flag (RSM105),
  becomes ``--enable-linear-replayssm`` only with ``--unsafe`` (it changes what runs).
- RSM106 [safe]: ``--flag_name`` -> ``--flag-name``; ``--enable-linear-replayssm=true`` /
  ``... true`` -> the bare switch; RSM101 [safe]: ``--config=F`` -> ``--config F``.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any, Sequence

from ...model import Finding
from .knowledge import knowledge

if TYPE_CHECKING:
    from ...fix.planner import Planner
    from ...verdicts import Verdict

OFF = "--disable-overlap-schedule"


def _needs_overlap_off(findings: Sequence[Finding]) -> bool:
    return any(
        (f.code == "RSM302" and "because the overlap scheduler is on" in f.message)
        or (f.code == "RSM305" and f.message.startswith("no_buffer do not support overlap schedule"))
        for f in findings)


def _switched_decode(findings: Sequence[Finding]) -> bool:
    return any(f.code == "RSM301" and "switches an unset --linear-attn-decode-backend" in f.message
               for f in findings)


def _chosen_decode(findings: Sequence[Finding]) -> bool:
    return any(f.code == "RSM301" and "switches an unset" not in f.message for f in findings)


def _explicit_extra(findings: Sequence[Finding]) -> bool:
    return any(f.code == "RSM302" and "because the overlap scheduler is on" not in f.message
               and "resolves to extra_buffer" not in f.message for f in findings)


def _renamed(spelling: str, message: str) -> str | None:
    """The spelling an RSM104/RSM105 finding asks for, taken from its ``fix:``."""
    match = re.search(r"fix: (?:did you mean |write )(--[a-z0-9-]+)", message)
    if match is None or match.group(1) == spelling:
        return None
    return match.group(1)


def plan(planner: Planner, verdict: Verdict, findings: Sequence[Finding]) -> None:
    """Edits for one SGLang launch (see the module docstring)."""
    launch = verdict.launch
    know = knowledge()
    if verdict.target.release.key < tuple(int(p) for p in know.first_release.split(".")):
        planner.skip(findings, f"SGLang {verdict.target.name} has no ReplaySSM")
        return
    config_file = _plan_config if launch.label == "sglang serve --config" else None
    planner.plan_by_form(verdict, findings, config_file=config_file, keywords=_plan_kwargs, command_line=_plan_argv,
                         option_block=_plan_config)


def _plan_argv(planner: Planner, verdict: Verdict, findings: Sequence[Finding]) -> None:
    launch = verdict.launch
    opts = launch.options
    flag = opts.get("enable_linear_replayssm") or opts.get("enable_linear_replayssm_spec")
    history = {(s.span.line, s.span.col): s for s in launch.history}
    for f in findings:
        setting = history.get((f.span.line, f.span.col))
        if f.code == "RSM101":
            planner.fix_config_equals(f.span)
        elif f.code == "RSM106" and "does not read '_' as '-'" in f.message:
            head, eq, tail = planner.raw(f.span).strip("'\"").partition("=")
            planner.replace_word(f.span, head.replace("_", "-") + eq + tail, "RSM106")
        elif f.code == "RSM106" and "ignored explicit argument" in f.message and setting is not None:
            planner.drop_true_value(f.span, setting.spelling, "RSM106")
        elif f.code == "RSM106" and "is a stray argument" in f.message:
            planner.delete_true_word(f.span, "RSM106")
        elif f.code in ("RSM104", "RSM105") and setting is not None and setting.spelling.startswith("--"):
            new = _renamed(setting.spelling, f.message)
            changes_meaning = f.code == "RSM105" and "spec-verify variant" in f.message
            if new is not None and (planner.unsafe or not changes_meaning):
                planner.replace_word(setting.span, new, f.code)
    if flag is None or launch.open_ended:
        return
    strategy = opts.get("mamba_radix_cache_strategy")
    decode = opts.get("linear_attn_decode_backend")
    pins: list[str] = []
    if planner.unsafe and _explicit_extra(findings) and strategy is not None \
            and isinstance(strategy.value, str) and strategy.value.startswith("extra_buffer"):
        planner.replace_value(strategy, "no_buffer", "RSM302")
        if "disable_overlap_schedule" not in opts:
            pins.append(OFF)
    elif _needs_overlap_off(findings) and "disable_overlap_schedule" not in opts:
        pins.append(OFF)
    if _switched_decode(findings) and decode is None:
        pins += ["--linear-attn-decode-backend", "triton"]
    elif planner.unsafe and _chosen_decode(findings) and decode is not None and isinstance(decode.value, str):
        planner.replace_value(decode, "triton", "RSM301")
    if pins:
        planner.insert_words_after(flag.span, pins, "RSM302" if OFF in pins else "RSM301")


def _plan_kwargs(planner: Planner, verdict: Verdict, findings: Sequence[Finding]) -> None:
    launch = verdict.launch
    opts = launch.options
    flag = opts.get("enable_linear_replayssm") or opts.get("enable_linear_replayssm_spec")
    at = planner.kw_target(flag)
    for f in findings:  # keywords a release does not have: the name the finding asks for
        setting = next((s for s in launch.history if s.span == f.span), None)
        match = re.search(r"did you mean ([a-z0-9_]+)=", f.message)
        if f.code == "RSM104" and setting is not None and match is not None:
            planner.rename_keyword(setting, match.group(1), "RSM104")
    if at is None or flag is None or launch.unseen or launch.open_ended:
        return
    present = planner.written_keywords(launch)
    items: list[tuple[str, Any]] = []
    strategy = opts.get("mamba_radix_cache_strategy")
    if planner.unsafe and _explicit_extra(findings) and strategy is not None \
            and isinstance(strategy.value, str) and strategy.value.startswith("extra_buffer"):
        planner.replace_kwarg_value(strategy, "no_buffer", "RSM302")
        if "disable_overlap_schedule" not in opts and "disable_overlap_schedule" not in present:
            items.append(("disable_overlap_schedule", True))
    elif _needs_overlap_off(findings) and "disable_overlap_schedule" not in opts \
            and "disable_overlap_schedule" not in present:
        items.append(("disable_overlap_schedule", True))
    if _switched_decode(findings) and "linear_attn_decode_backend" not in opts \
            and "linear_attn_decode_backend" not in present:
        items.append(("linear_attn_decode_backend", "triton"))
    if items:
        code = "RSM302" if items[0][0] == "disable_overlap_schedule" else "RSM301"
        planner.insert_keywords_after(at, items, code)


def _plan_config(planner: Planner, verdict: Verdict, findings: Sequence[Finding]) -> None:
    """Fixes inside an SGLang ``--config`` file (judged as ``sglang serve --config FILE``)."""
    cfg = planner.config_file()
    if cfg is None:
        return
    launch = verdict.launch
    opts = launch.options
    for f in findings:
        entry = cfg.at(f.span)
        if entry is None:
            continue
        if f.code == "RSM106" and "does not read '_' as '-'" in f.message:
            cfg.replace_key(entry, entry.key.replace("_", "-"), "RSM106")
        elif f.code in ("RSM104", "RSM105") and not (f.code == "RSM105" and "spec-verify" in f.message):
            new = _renamed("--" + entry.key, f.message)
            if new is not None:
                cfg.replace_key(entry, new[2:], f.code)
    flag = cfg.entry(opts.get("enable_linear_replayssm") or opts.get("enable_linear_replayssm_spec"))
    if flag is None or launch.open_ended:
        return
    pairs: list[tuple[str, str]] = []
    if _needs_overlap_off(findings) and "disable_overlap_schedule" not in opts:
        pairs.append(("disable-overlap-schedule", "true"))
    if _switched_decode(findings) and "linear_attn_decode_backend" not in opts:
        pairs.append(("linear-attn-decode-backend", "triton"))
    if pairs:
        cfg.insert_after(flag, pairs, "RSM302" if pairs[0][0].startswith("disable") else "RSM301")
