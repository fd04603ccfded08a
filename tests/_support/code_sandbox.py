"""The code verifier on the embedded sandbox, driven synchronously: shared by the test
files that attack it (``tests/verifiers/test_code_hacks.py``)."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator

import pytest

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


def fenced(code: str, tag: str = "python") -> str:
    """A response whose last code block holds ``code`` under the fence tag ``tag``."""
    return f"My answer.\n```{tag}\n{code}\n```\n"


def installed_languages(verifier: CodeVerifier) -> tuple[str, ...]:
    """The languages the embedded sandbox has on this machine."""

    async def languages() -> tuple[str, ...]:
        box = verifier._runner().sandbox  # type: ignore[attr-defined]
        await box.start()
        return box.languages

    return verifier._loop.run_until_complete(languages())  # type: ignore[attr-defined]


def skip_unless_installed(verifier: CodeVerifier, language: str) -> None:
    """Skip the test where the embedded sandbox lacks ``language``."""
    if language not in installed_languages(verifier):
        pytest.skip(f"{language} is not installed here")
