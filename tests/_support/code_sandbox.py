"""The code verifier on the embedded sandbox, driven synchronously: shared by the test
files that attack it (``test_code_attacks.py``, ``test_code_hacks7.py``)."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator

from rewardkit.config import SandboxFusionConfig
from rewardkit.verifiers.code import CodeVerifier, make_code_verifier


def embedded_code_verifier() -> Iterator[CodeVerifier]:
    """A module fixture's body: one verifier and one event loop for the module's tests
    (3 s per run, so that a hanging attack costs little)."""
    loop = asyncio.new_event_loop()
    verifier = make_code_verifier(SandboxFusionConfig(allow_unisolated=True, run_timeout_s=3.0))
    verifier._loop = loop  # type: ignore[attr-defined]
    yield verifier
    loop.run_until_complete(verifier.aclose())
    loop.close()


def score_response(verifier: CodeVerifier, response: str, tests: dict) -> tuple[float, list[str]]:
    """The row's score and each test case's verdict."""
    loop = verifier._loop  # type: ignore[attr-defined]
    verdict = loop.run_until_complete(verifier.ascore(response, json.dumps(tests), {}))
    return verdict.score, verdict.extra.get("verdicts", [])
