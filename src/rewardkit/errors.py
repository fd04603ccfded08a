"""The one exception hierarchy of rewardkit.

Everything rewardkit raises on purpose derives from :class:`RewardkitError`, so a
caller can catch the library's failures in one clause. Foreign exceptions are
mapped at the boundary (``raise ConfigError(...) from exc``).

Scoring a *row* never raises: a row that fails becomes a :class:`~rewardkit.Result`
with a typed status. These exceptions are for the caller's mistakes (a bad config,
an unreadable file) and for the internals that turn into those statuses.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

__all__ = [
    "ConfigError",
    "HttpStatusError",
    "InputError",
    "InvalidSampleError",
    "JudgeParseError",
    "OutputError",
    "PoolUnavailable",
    "QuerySplitError",
    "RemoteError",
    "RewardkitError",
    "ScorerError",
    "ScorerTimeout",
    "StopTraining",
    "WorkerCrashed",
]


class RewardkitError(Exception):
    """Root of every error rewardkit raises."""


class ConfigError(RewardkitError):
    """The configuration is invalid. The message names every offending key."""


class InputError(RewardkitError):
    """An input file or stream cannot be read (missing, unknown format, corrupt)."""


class OutputError(RewardkitError):
    """An output file or stream cannot be written (missing folder, a directory, disk full)."""


class InvalidSampleError(RewardkitError):
    """One row does not have the Sample shape. Becomes status ``invalid``."""


class ScorerError(RewardkitError):
    """A scorer (verifier, user function, model) failed on a row. Becomes status ``error``."""


class WorkerCrashed(ScorerError):
    """The worker process scoring a row died (segfault, ``os._exit``, OOM kill)."""


class PoolUnavailable(ScorerError):
    """No worker can take the row: every Ray actor is gone and none could be placed again.

    A row that meets it gets status ``error``; :meth:`rewardkit.RewardLoop.score` then
    raises it rather than return batch after batch of errors. ``results`` holds every row
    of the call already scored (typed, in input order), so finished work is not lost.
    """

    def __init__(self, message: str, results: list[Any] | None = None) -> None:
        super().__init__(message)
        self.results: list[Any] = list(results or [])


class RemoteError(ScorerError):
    """A remote endpoint (model server, sandbox) failed after its retry budget."""


class HttpStatusError(RemoteError):
    """The endpoint answered with a non-2xx status (after retries, for the transient ones)."""

    def __init__(self, message: str, *, status: int, body: str) -> None:
        super().__init__(message)
        self.status = status
        self.body = body


JUDGE_TEXT_IN_EXTRA = 2000
"""How much of a judge's text a row's ``extra["judge_text"]`` keeps."""


class JudgeParseError(ScorerError):
    """The judge answered, but no score could be read from its text.

    ``text`` is what the judge wrote (all samples); ``extra`` is what the row's
    ``extra`` should carry (``judge_text``), so the failure can be inspected.
    """

    def __init__(self, message: str, text: str) -> None:
        super().__init__(message)
        self.text = text
        self.extra: Mapping[str, Any] = {"judge_text": text[:JUDGE_TEXT_IN_EXTRA]}


class ScorerTimeout(BaseException):
    """A row ran past its hard time limit. Becomes status ``timeout``.

    Derives from BaseException on purpose (as Math-Verify's TimeoutException does):
    a scorer's own ``except Exception`` must not be able to swallow it.
    """


class QuerySplitError(InvalidSampleError):
    """An OpenRLHF query whose response cannot be told apart from its prompt (OpenRLHF cut
    the prompt from the left): the row is ``invalid`` with this reason, never scored on
    text that may hold the prompt (:func:`rewardkit.trainer_rows.split_response`)."""


class StopTraining(BaseException):
    """Rows failed to score and the trainer must stop (OpenRLHF's reward file under
    ``on_failure="raise"``).

    A BaseException, as :class:`ScorerTimeout` is: OpenRLHF catches every ``Exception``
    from ``reward_func`` and logs it at INFO (``openrlhf/utils/agent.py``), which would
    hide the reason and leave a None reward that fails the run later with an unrelated
    message. The message is rewardkit's (which rows failed, how, the first reason); the
    :class:`ScorerError` is its ``__cause__``.
    """
