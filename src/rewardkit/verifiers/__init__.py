"""Rule-based verifiers: pure functions over (response, ground truth).

* :mod:`~rewardkit.verifiers.base`: the three-phase :class:`Verifier` interface, the
  :class:`AsyncVerifier` one, and :class:`Entry`, a row of the registry.
* :mod:`~rewardkit.verifiers.registry`: the table from data-source names to verifiers
  (built-in families plus each module's ``ENTRIES``; ``docs/verifiers.md`` adds one),
  ``resolve(data_source, options)`` and ``KNOWN_DATA_SOURCES``.
* :mod:`~rewardkit.verifiers.gsm8k`, :mod:`~rewardkit.verifiers.math`,
  :mod:`~rewardkit.verifiers.choice`: the verifiers.
* :mod:`~rewardkit.verifiers.code`, :mod:`~rewardkit.verifiers.geometry`,
  :mod:`~rewardkit.verifiers.search_qa`, :mod:`~rewardkit.verifiers.ifeval`: more
  verifiers (code runs in :mod:`rewardkit.sandbox`; ifeval's checkers come with the
  ``ifeval`` extra).

Besides base and registry, every public module here is a verifier; helpers are private
(``_answer``, ``_python_harness``, ...). The format reward, the overlong penalty and the
score scaling are reward shaping, in :mod:`rewardkit.shaping`.

Submodules are imported on demand: importing the interface must not pull in sympy.
"""
