"""Rule-based verifiers: pure functions over (response, ground truth).

* :mod:`~rewardkit.verifiers.base`: the three-phase :class:`Verifier` interface.
* :mod:`~rewardkit.verifiers.registry`: ``resolve(data_source, options)``, the mapping
  from verl's data-source names to verifiers, and ``KNOWN_DATA_SOURCES``.
* :mod:`~rewardkit.verifiers.gsm8k`, :mod:`~rewardkit.verifiers.math`,
  :mod:`~rewardkit.verifiers.choice`: the verifiers.
* :mod:`~rewardkit.verifiers.format`, :mod:`~rewardkit.verifiers.overlong`: the format
  reward and DAPO's overlong penalty, plain functions.

Submodules are imported on demand: importing the interface must not pull in sympy.
"""
