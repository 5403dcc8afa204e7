"""vLLM's ``--use-replayssm`` (0.27.0-0.33.0): the first engine, in the shape of :mod:`..base`.

- :mod:`.knowledge`: the release data (``data/releases.toml``, ``data/options.toml``);
- :mod:`.argv`: vLLM's command line (``vllm serve``, ``python -m vllm.entrypoints...``,
  the ``vllm/vllm-openai`` image, ``--config`` YAML); :mod:`.kwargs`: ``LLM(...)`` /
  ``EngineArgs(...)`` keywords; :mod:`.config_file`: a ``vllm serve --config`` file;
- :mod:`.resolve`: what vLLM derives from a launch on one release (prefix caching,
  the mamba cache mode, the model runner), as scenarios over what is unknown;
- :mod:`.checks`: the release's validator checks (RSM001-RSM009, RSM107, RSM201);
  :mod:`.form`: spellings and values per release (RSM102, RSM104, RSM105);
- :mod:`.target`: which release a verdict is for; :mod:`.judge`: the verdict;
- ``data/rules.toml``: the codes' documentation; :mod:`.fixes`: the edits that fix a launch.

The core calls it through :class:`~flake8_replayssm.engines.base.Engine`, which reads
``data/engine.toml`` (how it is recognised) and imports these modules when first asked.
"""
