"""SGLang's linear ReplaySSM (``--enable-linear-replayssm``, 0.5.15-0.5.23): the second engine.

The same shape as vLLM's (:mod:`..base`):

- :mod:`.knowledge`: the release data (``data/sglang.toml``, ``data/sglang_argv.toml``);
- :mod:`.argv`: SGLang's command line (``sglang serve``, ``python -m
  sglang.launch_server``, ``--config`` YAML); :mod:`.kwargs`: ``sglang.Engine`` /
  ``ServerArgs`` keywords, read into a Launch with ``engine="sglang"``;
- :mod:`.resolve`: what SGLang derives from a launch on one release and GPU (the
  radix-cache strategy ``auto``, the overlap scheduler, the decode backend);
- :mod:`.overrides`: the per-model overrides on Blackwell (attention backend, page size);
- :mod:`.checks`: the release's checks (RSM301-RSM309); :mod:`.form`: the spelling
  codes (RSM104-RSM106) for SGLang flags;
- :mod:`.target`: which SGLang release a verdict is for; :mod:`.judge`: the verdict;
- ``data/rules.toml``: the codes' documentation; :mod:`.fixes`: the edits that fix a launch.

The core calls it through :class:`~flake8_replayssm.engines.base.Engine`, which reads
``data/engine.toml`` (how it is recognised) and imports these modules when first asked:
a tree without SGLang launches never reads SGLang's other tables.
"""
