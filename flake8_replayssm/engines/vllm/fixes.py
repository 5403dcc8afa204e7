"""Fixes for vLLM launches, planned with the shared planner's edits (:mod:`flake8_replayssm.fix.planner`).

[safe] always, [unsafe] only with ``--unsafe``; each for the launch's target release
(``judge(...).target.release``):

- RSM101 [safe]: ``--config=F`` -> ``--config F`` (two list items in an argv list).
- RSM103 [safe]: ``--model`` before a model given where vLLM reads no model (every other
  finding was about vLLM's default model, so nothing else is fixed in that round).
- RSM104 [safe]: ``--disable-prefix-caching`` before 0.33 -> ``--no-enable-prefix-caching``;
  ``--mamba-cache-mode all`` -> ``align`` on 0.32, dropped on 0.33.
- RSM105 [safe]: drop the deprecated ``--mamba-cache-mode X`` / ``mamba_cache_mode=...``.
- RSM107 [safe]: drop the mode vLLM sets to ``none`` because prefix caching is off (it runs
  with ``none`` either way) -- unless the same plan turns prefix caching on (RSM006), which
  makes the mode take effect.  Turning prefix caching on instead changes what the launch
  does, so the message only names it.
- RSM106 [safe]: ``--use-replayssm=true`` -> ``--use-replayssm``; ``--use-replayssm true``
  -> drop ``true``.  False-ish values (``=false``, ``false``) are left to the user.
- RSM002 [safe], only the "only in align mode" check: an explicit mode -> ``align``;
  no mode given (0.27 with prefix caching) -> pin ``--mamba-cache-mode align
  --mamba-backend triton`` after ``--use-replayssm`` (``mamba_cache_mode="align",
  mamba_backend="triton"`` after ``use_replayssm=True``).  Where only prefix caching off
  fixes it and prefix caching is on by default: pin it off; [unsafe] where it is on as written.
- RSM006 [safe]: add ``--enable-prefix-caching`` after the block size (not when prefix
  caching is set explicitly, nor on flashinfer); [unsafe] drop the block size on
  flashinfer, or turn an explicit "off" on.
- RSM008 [safe], the Triton-needs-V1 check on 0.30+ with the variable unset: run with
  ``VLLM_USE_V2_MODEL_RUNNER=0`` (:meth:`~flake8_replayssm.fix.planner.Planner.set_launch_env`:
  a prefix word at the start of a shell command, ``env VAR=0`` after ``nohup``/``srun``-like
  wrappers, ``docker run -e VAR=0``, an ``ENV`` line before a Dockerfile
  ``CMD``/``ENTRYPOINT`` of a vLLM image, ``env={**os.environ, ...}`` on a ``subprocess``
  call with an argv list literal when ``os`` is imported, compose ``environment:`` /
  Kubernetes ``env:`` entries) -- and pin ``--mamba-backend triton`` (plus
  ``--mamba-cache-mode align`` before 0.33, where that flag is deprecated, unless prefix
  caching is turned off: RSM107).  The pins are added only together with a real fix,
  never alone.  [unsafe]: the variable's value as written (``1`` -> ``0``, and ``0`` -> ``1``
  where vLLM asks for Model Runner V2).
- RSM008 [unsafe] for ``LLM(...)``/``EngineArgs(...)``: an ``os.environ[...] = "0"``
  line before the statement (it changes the whole process), plus the pins.
- RSM001 [unsafe]: drop ``--use-replayssm`` / ``use_replayssm=True``.
- RSM004 [unsafe]: switch the backend value to ``triton`` (not where the check asks
  for flashinfer).

In a ``vllm serve --config`` file (:func:`_plan_config`) the same fixes are key edits, and
RSM102 ``enable-prefix-caching: false`` becomes ``disable-prefix-caching: true`` (0.33) or
``no-enable-prefix-caching: true``; the environment cannot be set from such a file.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Sequence

from ...fix.config_file import option_key, prefix_caching_off
from ...fix.words import TRUE_WORDS
from ...fix.yaml_edits import node_is
from ...model import Finding, Launch, Setting

if TYPE_CHECKING:
    from ...fix.config_file import ConfigFile
    from ...fix.planner import Planner
    from ...fix.yaml_edits import Entry
    from ...verdicts import Verdict
    from .knowledge import Release

#: the variable that picks vLLM's model runner (0: V1, 1: V2)
ENV_RUNNER = "VLLM_USE_V2_MODEL_RUNNER"
#: the keys of a serve config that set prefix caching, with dashes
_PREFIX_CACHING_KEYS = frozenset({"enable-prefix-caching", "no-enable-prefix-caching",
                                  "disable-prefix-caching", "no-disable-prefix-caching"})


# ---------------------------------------------------------------------------
# What a finding's message asks for (vLLM's own wording, per release)
# ---------------------------------------------------------------------------
# The checks in data/releases.toml carry vLLM's message; several checks share a code but
# want different fixes (RSM002 is "use align mode" or "turn prefix caching off").

def backend_to_triton(message: str) -> bool:
    """RSM004 that switching to the triton backend fixes (not one that asks for flashinfer)."""
    return "requires --mamba-backend triton" in message and "requires --mamba-backend flashinfer" not in message


def wants_align_mode(message: str) -> bool:
    """RSM002 "prefix caching only in align mode": an explicit mode becomes align, or align is pinned."""
    return "only in align mode" in message


def wants_prefix_caching_off(message: str) -> bool:
    """RSM002 that only prefix caching off fixes (FlashInfer, Mamba2 speculative decoding)."""
    return "does not support --mamba-cache-mode align" in message or "does not support prefix caching" in message \
        or "requires --mamba-cache-mode none" in message


def triton_needs_v1(message: str) -> bool:
    """RSM008 "Triton ReplaySSM requires Model Runner V1": the launch must run with the V1 runner."""
    return message.startswith("Triton ReplaySSM requires Model Runner V1")


def needs_v2(message: str) -> bool:
    """RSM008 where vLLM asks for Model Runner V2 (Kimi RecoverSSM with prefix caching)."""
    return "requires VLLM_USE_V2_MODEL_RUNNER=1" in message


def replayssm_unsupported(findings: Sequence[Finding]) -> bool:
    """RSM001 among a launch's findings: vLLM refuses ReplaySSM for the model whatever else the
    launch sets, so no fix pins the runner, the backend or the cache mode for it (the launch
    would still fail); only dropping the flag (``--unsafe``) makes it start."""
    return any(f.code == "RSM001" for f in findings)


def _asks(findings: Sequence[Finding], code: str, wants: Any) -> bool:
    return any(f.code == code and wants(f.message) for f in findings)


# ---------------------------------------------------------------------------
# Plans
# ---------------------------------------------------------------------------

def plan(planner: Planner, verdict: Verdict, findings: Sequence[Finding]) -> None:
    """Edits for one vLLM launch (see the module docstring): its serve config, keywords or argv."""
    if verdict.target.release is None:  # a release without ReplaySSM: nothing to fix it with
        planner.skip(findings, f"vLLM {verdict.target.version} has no ReplaySSM")
        return
    planner.plan_by_form(verdict, findings, config_file=_plan_config if planner.serve_config else None,
                         keywords=_plan_kwargs, command_line=_plan_argv, option_block=_plan_config)


def _drops_overridden_mode(planner: Planner, findings: Sequence[Finding], mode: Setting | None) -> bool:
    """RSM107 at ``mode``, and this plan does not turn prefix caching on (RSM006's fix would
    make the mode take effect, so it stays)."""
    return mode is not None and any(f.code == "RSM107" and f.span == mode.span for f in findings) \
        and not planner.planned("RSM006")


def _prefix_caching_off(launch: Launch) -> bool:
    """The launch turns prefix caching off, so a pinned mode would only be overridden (RSM107)."""
    setting = launch.options.get("enable_prefix_caching")
    return setting is not None and setting.value is False


def _run_with_v1(planner: Planner, launch: Launch, release: Release, findings: Sequence[Finding], *,
                 keywords: bool) -> bool:
    """RSM008 "Triton needs V1" on 0.30+: ``VLLM_USE_V2_MODEL_RUNNER=0`` for a launch that does not
    set it (for a keyword launch an ``os.environ`` line, which changes the whole process: only
    with --unsafe), or the value as written becomes 0 (--unsafe).  Whether it was fixed."""
    if not _asks(findings, "RSM008", triton_needs_v1) or release.key < (0, 30) or keywords and not planner.unsafe:
        return False
    runner = launch.env.get(ENV_RUNNER)
    if runner is None and not launch.env_open_ended:
        if keywords:
            return planner.add_environ_line(launch, ENV_RUNNER, "0", "RSM008")
        return planner.set_launch_env(launch, ENV_RUNNER, "0", "RSM008")
    if runner is not None and planner.unsafe:  # VLLM_USE_V2_MODEL_RUNNER=1 as written
        return planner.set_env_value(runner, "0", "RSM008")
    return False


def _run_with_v2(planner: Planner, launch: Launch, findings: Sequence[Finding]) -> None:
    """[unsafe] RSM008 where vLLM asks for Model Runner V2 and the launch pins V1 as written."""
    runner = launch.env.get(ENV_RUNNER)
    if _asks(findings, "RSM008", needs_v2) and planner.unsafe and runner is not None and str(runner.value) == "0":
        planner.set_env_value(runner, "1", "RSM008")


# -- command lines -------------------------------------------------------------

def _plan_argv(planner: Planner, verdict: Verdict, findings: Sequence[Finding]) -> None:
    launch = verdict.launch
    codes = {f.code for f in findings}
    opts = launch.options
    use = opts.get("use_replayssm")
    stray = None
    for f in findings:
        if f.code == "RSM106" and "is a stray argument" in f.message:
            stray = f.span
    rsm103 = next((f for f in findings if f.code == "RSM103"), None)
    if rsm103 is not None:  # --model MODEL first: every other verdict was for vLLM's default model
        planner.insert_words_before(rsm103.span, ["--model"], "RSM103")
        return
    if planner.unsafe and "RSM001" in codes and use is not None and use.value is True:
        planner.delete_words([use.span] + ([stray] if stray is not None else []), "RSM001")
        return
    _fix_words(planner, verdict, findings)
    mode = opts.get("mamba_cache_mode")
    if _drops_overridden_mode(planner, findings, mode):
        assert mode is not None
        planner.delete_option(mode, "RSM107")
    if not replayssm_unsupported(findings):
        _pin_words(planner, verdict, findings, stray)


def _fix_words(planner: Planner, verdict: Verdict, findings: Sequence[Finding]) -> None:
    """The fixes of single findings on a command line, in the findings' order."""
    launch, release = verdict.launch, verdict.target.release
    opts = launch.options
    for f in findings:
        if f.code == "RSM106" and "takes no value (argument" in f.message:
            setting = next((s for s in opts.values() if s.span == f.span and s.value is True), None)
            if setting is not None:
                planner.drop_true_value(f.span, setting.spelling, "RSM106")
        elif f.code == "RSM106" and "is a stray argument" in f.message:
            planner.delete_true_word(f.span, "RSM106")
        elif f.code == "RSM101":
            planner.fix_config_equals(f.span)
        elif f.code == "RSM105":
            mode = opts.get("mamba_cache_mode")
            if mode is not None:
                planner.delete_option(mode, "RSM105")
        elif f.code == "RSM104":
            mode = opts.get("mamba_cache_mode")
            if mode is not None and f.span in (mode.span, mode.value_span) and "choice" in f.message:
                if release.cache_mode_deprecated:
                    planner.delete_option(mode, "RSM104")
                elif "align" in release.cache_mode_choices:
                    planner.replace_value(mode, "align", "RSM104")
                continue
            alias = next((s for s in opts.values() if s.span == f.span), None)
            if alias is not None and alias.name == "enable_prefix_caching" and alias.value is False \
                    and alias.spelling.replace("_", "-") == "--disable-prefix-caching":
                planner.replace_word(f.span, "--no-enable-prefix-caching", "RSM104")
        elif f.code == "RSM004" and planner.unsafe and backend_to_triton(f.message):
            backend = opts.get("mamba_backend")
            if backend is not None and isinstance(backend.value, str):
                planner.replace_value(backend, "triton", "RSM004")
        elif f.code == "RSM006":
            block = opts.get("mamba_block_size")
            backend = opts.get("mamba_backend")
            prefix = opts.get("enable_prefix_caching")
            if block is not None and prefix is None and not launch.open_ended \
                    and not (backend is not None and backend.value == "flashinfer"):
                planner.insert_words_after(block.value_span or block.span, ["--enable-prefix-caching"], "RSM006")
            elif planner.unsafe and block is not None and backend is not None and backend.value == "flashinfer":
                planner.delete_option(block, "RSM006")  # FlashInfer needs prefix caching off: no use for it
            elif planner.unsafe and prefix is not None and prefix.value is False:  # an explicit "off"
                planner.switch_flag(prefix, "--enable-prefix-caching", "RSM006")


def _pin_words(planner: Planner, verdict: Verdict, findings: Sequence[Finding], stray: Any) -> None:
    """RSM002/RSM008: the mode, backend and prefix caching a fix needs, after ``--use-replayssm``."""
    launch, release = verdict.launch, verdict.target.release
    opts = launch.options
    use = opts.get("use_replayssm")
    pins: list[str] = []
    pin_codes: list[str] = []
    align = _asks(findings, "RSM002", wants_align_mode)
    if align:
        mode = opts.get("mamba_cache_mode")
        if mode is not None:
            if isinstance(mode.value, str):
                planner.replace_value(mode, "align", "RSM002")
        else:
            pins += ["--mamba-cache-mode", "align"]
            pin_codes.append("RSM002")
    off = "--disable-prefix-caching" if release.disable_aliases else "--no-enable-prefix-caching"
    if _asks(findings, "RSM002", wants_prefix_caching_off):
        prefix = opts.get("enable_prefix_caching")
        if prefix is None and not launch.open_ended:  # on by default: off is what vLLM requires
            pins.append(off)
            pin_codes.append("RSM002")
        elif prefix is not None and prefix.value is True and planner.unsafe:  # on as written
            planner.switch_flag(prefix, off, "RSM002")
    env_fixed = _run_with_v1(planner, launch, release, findings, keywords=False)
    if env_fixed and not release.cache_mode_deprecated and "mamba_cache_mode" not in opts \
            and "--mamba-cache-mode" not in pins and not _prefix_caching_off(launch) \
            and "--disable-prefix-caching" not in pins and "--no-enable-prefix-caching" not in pins:
        pins += ["--mamba-cache-mode", "align"]
        pin_codes.append("RSM008")
    _run_with_v2(planner, launch, findings)
    if (align and "--mamba-cache-mode" in pins or env_fixed) and "mamba_backend" not in opts \
            and not launch.open_ended:
        pins += ["--mamba-backend", "triton"]
        pin_codes.append("RSM008" if env_fixed else "RSM002")
    if pins and use is not None and use.value is True:
        target = stray if stray is not None and not planner.written_true(stray) else use.span
        planner.insert_words_after(target, pins, ",".join(dict.fromkeys(pin_codes)))


# -- Python keywords -----------------------------------------------------------

def _plan_kwargs(planner: Planner, verdict: Verdict, findings: Sequence[Finding]) -> None:
    launch = verdict.launch
    opts = launch.options
    use = opts.get("use_replayssm")
    use_at = planner.kw_target(use)
    if planner.unsafe and "RSM001" in {f.code for f in findings} and use_at is not None and use is not None \
            and use.value is True:
        planner.delete_keyword(use_at, "RSM001")
        return
    mode = opts.get("mamba_cache_mode")
    mode_at = planner.kw_target(mode)
    _fix_keywords(planner, verdict, findings)
    if mode_at is not None and _drops_overridden_mode(planner, findings, mode):
        planner.delete_keyword(mode_at, "RSM107")
    if not replayssm_unsupported(findings):
        _pin_keywords(planner, verdict, findings)


def _fix_keywords(planner: Planner, verdict: Verdict, findings: Sequence[Finding]) -> None:
    """The fixes of single findings on a keyword launch, in the findings' order."""
    launch, release = verdict.launch, verdict.target.release
    opts = launch.options
    mode = opts.get("mamba_cache_mode")
    mode_at = planner.kw_target(mode)
    for f in findings:
        if f.code == "RSM105" and mode_at is not None:
            planner.delete_keyword(mode_at, "RSM105")
        elif f.code == "RSM104" and mode is not None and f.span in (mode.span, mode.value_span):
            if release.cache_mode_deprecated and mode_at is not None:
                planner.delete_keyword(mode_at, "RSM104")
            elif "align" in release.cache_mode_choices:
                planner.replace_kwarg_value(mode, "align", "RSM104")
        elif f.code == "RSM004" and planner.unsafe and backend_to_triton(f.message):
            backend = opts.get("mamba_backend")
            if backend is not None and isinstance(backend.value, str):
                planner.replace_kwarg_value(backend, "triton", "RSM004")
        elif f.code == "RSM006":
            block_at = planner.kw_target(opts.get("mamba_block_size"))
            call = planner.call_info(launch)
            backend = opts.get("mamba_backend")
            if block_at is not None and call is not None and not launch.open_ended \
                    and "enable_prefix_caching" not in opts \
                    and not any(a["keyword"] == "enable_prefix_caching" for a in call["args"]) \
                    and not (backend is not None and backend.value == "flashinfer"):
                planner.insert_keywords_after(block_at, [("enable_prefix_caching", True)], "RSM006")


def _pin_keywords(planner: Planner, verdict: Verdict, findings: Sequence[Finding]) -> None:
    """RSM002/RSM006/RSM008 on a keyword launch: values as written, and the keywords a fix
    needs after ``use_replayssm=True``."""
    launch, release = verdict.launch, verdict.target.release
    opts = launch.options
    codes = {f.code for f in findings}
    use = opts.get("use_replayssm")
    use_at = planner.kw_target(use)
    mode = opts.get("mamba_cache_mode")
    pins: list[tuple[str, Any, str]] = []
    present = planner.written_keywords(launch)
    if _asks(findings, "RSM002", wants_align_mode):
        if mode is not None:
            if isinstance(mode.value, str):
                planner.replace_kwarg_value(mode, "align", "RSM002")
        elif "mamba_cache_mode" not in present:
            pins.append(("mamba_cache_mode", "align", "RSM002"))
    prefix = opts.get("enable_prefix_caching")
    if _asks(findings, "RSM002", wants_prefix_caching_off):
        if prefix is None and "enable_prefix_caching" not in present and not launch.open_ended:
            pins.append(("enable_prefix_caching", False, "RSM002"))
        elif prefix is not None and prefix.value is True and planner.unsafe:
            planner.replace_kwarg_literal(prefix, "False", "RSM002")
    block_at = planner.kw_target(opts.get("mamba_block_size"))
    backend = opts.get("mamba_backend")
    if "RSM006" in codes and planner.unsafe and block_at is not None and backend is not None \
            and backend.value == "flashinfer":
        planner.delete_keyword(block_at, "RSM006")  # FlashInfer needs prefix caching off
    elif "RSM006" in codes and planner.unsafe and prefix is not None and prefix.value is False:
        planner.replace_kwarg_literal(prefix, "True", "RSM006")
    env_fixed = _run_with_v1(planner, launch, release, findings, keywords=True)
    if env_fixed and not release.cache_mode_deprecated and "mamba_cache_mode" not in present \
            and mode is None and not any(name == "mamba_cache_mode" for name, _, _ in pins) \
            and not _prefix_caching_off(launch) and not any(v is False for _, v, _ in pins):
        pins.append(("mamba_cache_mode", "align", "RSM008"))
    _run_with_v2(planner, launch, findings)
    if (env_fixed or any(name == "mamba_cache_mode" for name, _, _ in pins)) and "mamba_backend" not in present \
            and "mamba_backend" not in opts and not launch.open_ended:
        pins.append(("mamba_backend", "triton", "RSM008" if env_fixed else "RSM002"))
    if pins and use_at is not None and use is not None and use.value is True:
        planner.insert_keywords_after(use_at, [(n, v) for n, v, _ in pins],
                                      ",".join(dict.fromkeys(code for _, _, code in pins)))


# -- serve config files ----------------------------------------------------------

def _plan_config(planner: Planner, verdict: Verdict, findings: Sequence[Finding]) -> None:
    """Fixes inside a ``vllm serve --config`` file (the file judged as ``vllm serve --config FILE``).

    The environment cannot be set from such a file, so RSM008 is left alone (and
    with it the pins that come only with a real fix).
    """
    cfg = planner.config_file()
    if cfg is None:
        return
    launch, release = verdict.launch, verdict.target.release
    opts = launch.options
    codes = {f.code for f in findings}
    use = cfg.entry(opts.get("use_replayssm"))
    # without a `model:` key the model comes from the command line (`vllm serve MODEL --config F`):
    # verdicts about "the" model are not about the model this file is used with
    model_known = cfg.model_known
    if planner.unsafe and model_known and "RSM001" in codes and use is not None and opts["use_replayssm"].value is True:
        cfg.delete(use, "RSM001")
        return
    mode_setting = opts.get("mamba_cache_mode")
    mode = cfg.entry(mode_setting)
    prefix_keys = [e for e in cfg.entries if option_key(e.key) in _PREFIX_CACHING_KEYS]
    for f in findings:
        if f.span.source is not None:
            continue
        if f.code == "RSM105" and mode is not None:
            cfg.delete(mode, "RSM105")
        elif f.code == "RSM104":
            on_mode = mode_setting is not None and f.span in (mode_setting.span, mode_setting.value_span)
            if mode is not None and on_mode and "choice" in f.message:
                if release.cache_mode_deprecated:
                    cfg.delete(mode, "RSM104")
                elif "align" in release.cache_mode_choices:
                    cfg.set_value(mode, "align", "RSM104")
                continue
            entry = cfg.at(f.span)
            if entry is not None and option_key(entry.key) == "disable-prefix-caching" \
                    and str(entry.value_node.value).lower() in TRUE_WORDS and len(prefix_keys) == 1:
                cfg.rename(entry, "no-enable-prefix-caching", "RSM104")
        elif f.code == "RSM106" and "is a stray argument" in f.message and use is not None:
            node = use.value_node
            if node_is(node, "scalar") and (f.span.line, f.span.col) == (node.start_mark.line + 1,
                                                                         node.start_mark.column) \
                    and str(node.value).lower() in TRUE_WORDS:
                cfg.set_value(use, "true", "RSM106", raw=True)
        elif f.code == "RSM004" and planner.unsafe and model_known and backend_to_triton(f.message):
            backend = cfg.entry(opts.get("mamba_backend"))
            if backend is not None:
                cfg.set_value(backend, "triton", "RSM004")
        elif f.code == "RSM006":
            _config_prefix_caching_on(planner, cfg, launch, prefix_keys, model_known)
        elif f.code == "RSM102":
            entry = cfg.at(f.span)
            if entry is None or option_key(entry.key) != "enable-prefix-caching" or len(prefix_keys) != 1 \
                    or "mamba_block_size" in opts:  # prefix caching off would reject the block size
                continue
            new = "disable-prefix-caching" if release.disable_aliases else "no-enable-prefix-caching"
            cfg.rename(entry, new, "RSM102")
            cfg.set_value(entry, "true", "RSM102", raw=True)
    if mode is not None and _drops_overridden_mode(planner, findings, mode_setting):
        cfg.delete(mode, "RSM107")
    if not replayssm_unsupported(findings):
        _pin_config(planner, cfg, verdict, findings, prefix_keys, model_known)


def _config_prefix_caching_on(planner: Planner, cfg: ConfigFile, launch: Launch, prefix_keys: list[Entry],
                              model_known: bool) -> None:
    """RSM006 in a serve config: ``enable-prefix-caching: true`` after the block size; [unsafe]
    the block size dropped on flashinfer, or prefix caching turned off as written turned on."""
    opts = launch.options
    block = cfg.entry(opts.get("mamba_block_size"))
    backend = opts.get("mamba_backend")
    flashinfer = backend is not None and backend.value == "flashinfer"
    if block is not None and not prefix_keys and not launch.open_ended and not flashinfer:
        cfg.insert_after(block, [("enable-prefix-caching", "true")], "RSM006")
    elif planner.unsafe and model_known and flashinfer and block is not None:
        cfg.delete(block, "RSM006")  # FlashInfer needs prefix caching off: the block size has no use
    elif planner.unsafe and model_known and len(prefix_keys) == 1 \
            and _prefix_caching_value(prefix_keys[0]) is False:
        entry = prefix_keys[0]  # turned off as written: turn it on, as the message says
        cfg.rename(entry, "enable-prefix-caching", "RSM006")
        cfg.set_value(entry, "true", "RSM006", raw=True)


def _pin_config(planner: Planner, cfg: ConfigFile, verdict: Verdict, findings: Sequence[Finding],
                prefix_keys: list[Entry], model_known: bool) -> None:
    """RSM002 (and [unsafe] RSM008 by FlashInfer): keys after ``use-replayssm``, values as written."""
    launch, release = verdict.launch, verdict.target.release
    opts = launch.options
    use = cfg.entry(opts.get("use_replayssm"))
    mode_setting = opts.get("mamba_cache_mode")
    mode = cfg.entry(mode_setting)
    pins: list[tuple[str, str, str]] = []  # one insertion after `use-replayssm`, whatever asks for it
    if _asks(findings, "RSM002", wants_align_mode):
        if mode is not None:
            if isinstance(mode_setting.value, str):  # type: ignore[union-attr]
                cfg.set_value(mode, "align", "RSM002")
        elif "mamba_cache_mode" not in opts:
            pins.append(("mamba-cache-mode", "align", "RSM002"))
            if "mamba_backend" not in opts and not launch.open_ended:
                pins.append(("mamba-backend", "triton", "RSM002"))
    off, off_value = prefix_caching_off(cfg, release.disable_aliases)
    prefix_off = _asks(findings, "RSM002", wants_prefix_caching_off)
    runner = _asks(findings, "RSM008", triton_needs_v1)
    if runner and planner.unsafe and model_known and "speculative_config" not in opts:
        # the environment cannot be set from this file: the message's other way is FlashInfer,
        # with prefix caching off (a different kernel, so only with --unsafe)
        backend = cfg.entry(opts.get("mamba_backend"))
        if backend is not None:
            cfg.set_value(backend, "flashinfer", "RSM008")
        elif "mamba_backend" not in opts:
            pins.append(("mamba-backend", "flashinfer", "RSM008"))
        prefix_off = True
    if prefix_off:
        explicit = [e for e in prefix_keys if _prefix_caching_value(e) is not None]
        if not prefix_keys and not launch.open_ended:  # on by default: off is what vLLM requires
            pins.append((off, off_value, "RSM002"))
        elif planner.unsafe and len(explicit) == 1 and len(prefix_keys) == 1 and _prefix_caching_value(explicit[0]):
            cfg.rename(explicit[0], off, "RSM002")
            cfg.set_value(explicit[0], off_value, "RSM002", raw=True)
    if pins and use is not None:
        cfg.insert_after(use, [(k, v) for k, v, _ in pins], ",".join(dict.fromkeys(c for _, _, c in pins)))


def _prefix_caching_value(entry: Entry) -> bool | None:
    """Whether a prefix-caching key turns prefix caching on (True), off (False), or cannot say."""
    node = entry.value_node
    if not node_is(node, "scalar"):
        return None
    value = str(node.value).lower()
    if value not in TRUE_WORDS and value not in ("false", "no", "off", "0"):
        return None
    on = value in TRUE_WORDS
    return on if option_key(entry.key) in ("enable-prefix-caching", "no-disable-prefix-caching") else not on
