"""SGLang's linear ReplaySSM (``--enable-linear-replayssm``): the second engine.

The frontends, the :class:`~flake8_replayssm.model.Launch` model, the fix planner and
the outputs are shared with vLLM; what is SGLang's own lives here:

- :mod:`.knowledge`: the release data (``data/sglang.toml``, ``data/sglang_argv.toml``);
- :mod:`.argv`: SGLang's command line (``sglang serve``, ``python -m
  sglang.launch_server``, ``--config`` YAML) and ``sglang.Engine`` / ``ServerArgs``
  keywords, read into a Launch with ``engine="sglang"``;
- :mod:`.resolve`: what SGLang derives from a launch on one release and GPU (the
  radix-cache strategy ``auto``, the overlap scheduler, the decode backend);
- :mod:`.checks`: the release's checks (RSM301-RSM308) and the spelling codes
  (RSM104-RSM106) for SGLang flags;
- :mod:`.target`: which SGLang release a verdict is for;
- :mod:`.judge`: the verdict for one launch.

Everything here is imported lazily: a tree without SGLang launches never loads it.
"""
