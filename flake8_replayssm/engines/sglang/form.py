"""Spellings and values one SGLang release does not have: RSM104, RSM105, RSM106.

The parser (:mod:`.argv`, :mod:`.kwargs`) records every spelling it read; which
of them a release accepts is decided here, per release:

- a flag or keyword the release does not have (``--enable-linear-replayssm`` before
  0.5.15, ``--enable-linear-replayssm-spec`` in 0.5.16, the aliases removed in
  0.5.20, the RFC's ``--enable-gdn-replayssm``) is RSM104, with "did you mean";
- a deprecated alias that still works is RSM105, and so is an abbreviation that
  argparse quietly reads as a *different* flag than meant (``--enable-gdn-replayssm``
  is a unique prefix of the spec-verify flag in 0.5.16-0.5.19);
- an abbreviation that is ambiguous in the release is RSM106;
- a linear-attn backend the release does not list is RSM104 when a later release
  has it, RSM106 otherwise.

A spelling the release rejects never reaches SGLang's checks (:func:`accepted`).
"""

from __future__ import annotations

from ...model import Finding, Launch, Setting
from ...versions import in_range
from .knowledge import Knowledge, Release

#: fields whose existence starts with ReplaySSM (absent from releases before the first)
REPLAYSSM_FIELDS = frozenset({"enable_linear_replayssm", "linear_replayssm_cache_len",
                              "enable_linear_replayssm_spec"})
_BACKEND_FIELDS = ("linear_attn_backend", "linear_attn_decode_backend", "linear_attn_prefill_backend",
                   "linear_attn_verify_backend")


def _available(flag: str, release: Release, know: Knowledge) -> bool:
    """Whether ``flag`` (an exact long option) exists in ``release``."""
    spelling = know.spellings.get(flag)
    if spelling is not None:
        return in_range(release.version, spelling.since, spelling.until)
    option = know.by_cli.get(flag)
    if option is not None and option.name in REPLAYSSM_FIELDS:
        return in_range(release.version, know.first_release, None)
    return in_range(release.version, know.option_since.get(flag), know.option_until.get(flag))


def _candidates(prefix: str, release: Release, know: Knowledge) -> list[str]:
    """The long options of ``release`` that a word abbreviates (argparse's allow_abbrev): itself,
    or every option of the release it is a prefix of (``--cuda-graph-bs`` from 0.5.20)."""
    names = set(know.long_options) | set(know.by_cli)
    if prefix in names and _available(prefix, release, know):
        return [prefix]
    return sorted(o for o in names if o.startswith(prefix) and o != prefix and _available(o, release, know))


def _flag_problem(setting: Setting, release: Release, know: Knowledge) -> Finding | None:
    spelling = setting.spelling
    version = release.version
    matches = _candidates(spelling, release, know)
    proposal = know.proposal_names.get(spelling)
    if not matches:
        if spelling in know.by_cli or spelling in know.spellings:
            return Finding(setting.span, "RSM104", _missing_message(spelling, release, know))
        meant = proposal or _closest_name(setting, know)
        return Finding(setting.span, "RSM104", (
            f"{spelling} does not exist in SGLang {version} (argparse rejects it: unrecognized arguments)"
            + (f"; fix: did you mean {meant}?" if meant else _range_note(spelling, release, know))))
    if len(matches) > 1:
        return Finding(setting.span, "RSM106", (
            f"argument {spelling}: ambiguous option: could match {', '.join(matches)} [SGLang {version}]; "
            f"fix: write the whole flag"))
    flag = matches[0]
    if proposal is not None:
        return Finding(setting.span, "RSM105", (
            f"{spelling} is not a flag of SGLang {version}: argparse reads it as an abbreviation of {flag}, "
            f"the spec-verify variant, so the decode flag stays off; fix: did you mean {proposal}?"))
    info = know.spellings.get(flag)
    if info is not None and info.deprecated_since and in_range(version, info.deprecated_since, None):
        until = f", removed after {info.until}" if info.until else ""
        return Finding(setting.span, "RSM105", (
            f"{spelling} is a deprecated alias in SGLang {version} (SGLang warns{until}); fix: write "
            f"{info.instead}"))
    return None


def _missing_message(flag: str, release: Release, know: Knowledge) -> str:
    version = release.version
    info = know.spellings.get(flag)
    head = f"{flag} does not exist in SGLang {version} (argparse rejects it: unrecognized arguments)"
    if info is None:  # a ReplaySSM flag on a release before the first with it
        return f"{head}; it is first in SGLang {know.first_release}; fix: target SGLang {know.first_release} or later"
    if info.since and in_range(version, None, info.since) and info.instead_before:
        return f"{head}; fix: write {info.instead_before} (this flag's name before {info.since})"
    if info.until and not in_range(version, None, info.until):
        return f"{head}: removed after SGLang {info.until}; fix: write {info.instead}"
    return f"{head}; it is first in SGLang {info.since}"


def _range_note(flag: str, release: Release, know: Knowledge) -> str:
    """When an option of other releases is: ``--cuda-graph-max-bs`` is gone from 0.5.20."""
    since, until = know.option_since.get(flag), know.option_until.get(flag)
    if since and not in_range(release.version, since, None):
        return f"; it is first in SGLang {since}"
    if until and not in_range(release.version, None, until):
        return f": removed after SGLang {until}"
    return ""


def _closest_name(setting: Setting, know: Knowledge) -> str | None:
    option = know.options.get(setting.name)
    return option.cli[0] if option is not None else None


def _keyword_problem(setting: Setting, release: Release, know: Knowledge) -> Finding | None:
    keyword = setting.spelling.rstrip("=")
    version = release.version
    proposal = know.proposal_names.get(keyword)
    option = know.options.get(keyword)
    if option is not None and option.name in REPLAYSSM_FIELDS | {"enable_gdn_replayssm_spec"} \
            and not in_range(version, know.first_release, None):
        exists = False
    elif option is not None:
        exists = in_range(version, option.keyword_since, option.keyword_until)
    else:
        exists = proposal is None
    if exists:
        return None
    meant = proposal
    if option is not None and option.same_as:
        meant = f"{know.options[option.same_as].name}="
    elif option is not None and option.keyword_since and not in_range(version, option.keyword_since, None):
        meant = next((f"{o.name}=" for o in know.options.values() if o.same_as == option.name
                      and in_range(version, o.keyword_since, o.keyword_until)), None)
    return Finding(setting.span, "RSM104", (
        f"{keyword}= is not a field of ServerArgs in SGLang {version} (TypeError: __init__() got an "
        f"unexpected keyword argument {keyword!r})" + (f"; fix: did you mean {meant.rstrip('=')}=?" if meant else "")))


def _value_problem(setting: Setting, release: Release, know: Knowledge) -> Finding | None:
    if setting.name not in _BACKEND_FIELDS or not isinstance(setting.value, str):
        return None
    value = setting.value
    if value in release.linear_attn_backends or value in know.options[setting.name].extra_choices:
        return None
    later = [r.version for r in sorted(know.releases.values(), key=lambda r: r.key)
             if value in r.linear_attn_backends and r.key > release.key]
    shown = ", ".join(repr(c) for c in release.linear_attn_backends)
    what = f"argument {setting.spelling or setting.name}: invalid choice: {value!r} (choose from {shown})"
    if later:
        return Finding(setting.value_span or setting.span, "RSM104",
                       f"{what} [SGLang {release.version}]: {value} is first in SGLang {later[0]}; "
                       "fix: use triton")
    return Finding(setting.value_span or setting.span, "RSM106", f"{what}; fix: use triton")


def _positional_problem(setting: Setting, launch: Launch, release: Release, know: Knowledge) -> Finding | None:
    if launch.entry != "serve" or in_range(release.version, know.positional_model_since, None):
        return None
    return Finding(setting.span, "RSM104", (
        f"'sglang serve MODEL' (a positional model) does not exist in SGLang {release.version}: it needs "
        f"--model-path (first in {know.positional_model_since}); fix: write --model-path {setting.value}"))


def problem(setting: Setting, launch: Launch, release: Release, know: Knowledge) -> Finding | None:
    """What ``release`` says about one written setting (None: accepted as written)."""
    if setting.name == "model" and (launch.form == "kwargs" or setting.spelling == ""):
        return _positional_problem(setting, launch, release, know) if launch.form == "argv" else None
    if launch.form == "kwargs":
        return _keyword_problem(setting, release, know)
    return _flag_problem(setting, release, know) or _value_problem(setting, release, know)


def accepted(setting: Setting, launch: Launch, release: Release, know: Knowledge) -> bool:
    """Whether SGLang ``release`` reads ``setting`` as written (RSM105 is still read)."""
    found = problem(setting, launch, release, know)
    return found is None or found.code == "RSM105"


def form_findings(launch: Launch, release: Release, know: Knowledge) -> list[Finding]:
    """The release-dependent form findings, plus those the parser found."""
    findings = list(launch.form_findings)
    for setting in launch.history:
        found = problem(setting, launch, release, know)
        if found is not None:
            findings.append(found)
    return findings
