"""Reward shaping: what turns verdicts and lengths into the reward, not a verifier itself.

* :mod:`~rewardkit.shaping.format`: the format reward (``<think>...</think>`` then an
  answer), :func:`~rewardkit.shaping.format.format_score`.
* :mod:`~rewardkit.shaping.overlong`: DAPO's soft overlong penalty,
  :func:`~rewardkit.shaping.overlong.overlong_penalty`.
* :mod:`~rewardkit.shaping.scaled`: :class:`~rewardkit.shaping.scaled.Scaled`, a
  verifier's 0..1 verdict mapped onto another scale (verl's +1/-1).

The layer sits between the verifier interface (:mod:`rewardkit.verifiers.base`, which
``Scaled`` wraps) and the verifiers' registry, the engine and the token placement that
use it: nothing here imports a verifier, the registry or the engine.
"""
