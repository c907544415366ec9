"""mockbroker's data pipeline on Spark: rebalance analytics over event logs and an assignor lab.

- ``mockbroker_pipeline.analyze``: event logs (JSON Lines, docs/events.md) -> one row per (run, group,
  generation), per-group and per-run summaries; Parquet and a summary on stdout.
- ``mockbroker_pipeline.lab``: scenario grids run through every registered assignor on Spark executors.
- ``mockbroker_pipeline.report``: one self-contained HTML file (inline SVG) for both.
- ``mockbroker_pipeline.replay`` and ``mockbroker_pipeline.scenarios`` are the pure-Python cores the Spark jobs run.

Commands: ``mockbroker analyze`` and ``mockbroker assignor-lab`` (docs/pipeline.md).
"""
