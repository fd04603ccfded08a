"""Scoring: rows in, Results out, one module per job.

* :mod:`~rewardkit.scoring.engine`: :class:`~rewardkit.scoring.engine.RewardEngine`,
  the orchestration of a row's sources (rule verifier, user function, reward models,
  shaping) into its Result.
* :mod:`~rewardkit.scoring.rows`: the steps every row shares, whichever process ran its
  phases: the row's Context for its verifier, the fast-paths rule, verdicts to pieces,
  pieces to a Result.
* :mod:`~rewardkit.scoring.outcomes`: work done once (in-flight sharing, the LRU of
  finished outcomes) under typed keys.
* :mod:`~rewardkit.scoring.guard`: the guard around code that may hang or crash (the
  process pool, awaited user code) and the user's function behind it.
* :mod:`~rewardkit.scoring.spread`: a large batch's inline phases run in the workers.
* :mod:`~rewardkit.scoring.tasks`: the functions the workers run.

This package's ``__init__`` imports nothing: workers preload ``scoring.tasks`` alone.
"""
