"""What the trainer adapters share: a process-wide scorer and the failure policy.

Trainers call a reward function per row or per batch, from threads, from Ray actors
and from forked children, and never tell it when training ends. So each process
lazily starts one :class:`~rewardkit.RewardLoop` per distinct configuration (or one
:class:`rewardkit.client.RewardClient` per server URL), keeps it warm across steps,
rebuilds it after a fork and closes it at interpreter exit.

Where neither a config nor a URL is given, ``REWARDKIT_CONFIG`` (a YAML path) and
``REWARDKIT_URL`` (a ``rewardkit serve`` address, with ``REWARDKIT_API_KEY`` when the
server has ``server.api_key``) are read: the way to configure a
function that a trainer imports by file path and calls with its own arguments only.
"""

from __future__ import annotations

import asyncio
import atexit
import concurrent.futures.thread  # noqa: F401  its exit hook must be registered before ours (_at_exit)
import contextlib
import dataclasses
import json
import logging
import os
import threading
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, Protocol
from urllib.parse import urlsplit

from rewardkit.aggregate import refuse_aggregated
from rewardkit.config import ConfigSource, RewardConfig, load_config
from rewardkit.errors import ConfigError, ScorerError
from rewardkit.trainer_rows import plain  # re-exported: the adapters import it from here
from rewardkit.types import BadRow, Result, Sample, Status

__all__ = [
    "ENV_API_KEY",
    "ENV_CONFIG",
    "ENV_URL",
    "Backend",
    "FailurePolicy",
    "OnFailure",
    "check_server_url",
    "close_backends",
    "describe_failures",
    "get_backend",
    "plain",
]

ENV_CONFIG = "REWARDKIT_CONFIG"
ENV_URL = "REWARDKIT_URL"
ENV_API_KEY = "REWARDKIT_API_KEY"

OnFailure = Literal["raise", "fill", "drop"]

logger = logging.getLogger("rewardkit.integrations")


class Backend(Protocol):
    """Scores Sample-shaped rows: one Result per row, in order."""

    config: RewardConfig | None
    """The config it scores with; None for a server (which scores with its own)."""

    def score(self, rows: Sequence[Mapping[str, Any] | Sample | BadRow]) -> list[Result]: ...

    async def ascore(self, row: Mapping[str, Any] | Sample | BadRow) -> Result: ...


class _LocalBackend:
    """A RewardLoop in this process, started on first use."""

    def __init__(self, config: RewardConfig) -> None:
        from rewardkit.loop import RewardLoop  # the engine imports workers; only when used

        self.config: RewardConfig | None = config
        self._loop = RewardLoop(config)
        self._lock = threading.Lock()
        self._started = False

    def _started_loop(self) -> Any:
        with self._lock:  # trainers call from several threads at once
            if not self._started:
                self._loop.start()
                self._started = True
        return self._loop

    def score(self, rows: Sequence[Mapping[str, Any] | Sample | BadRow]) -> list[Result]:
        return self._started_loop().score(rows)

    async def ascore(self, row: Mapping[str, Any] | Sample | BadRow) -> Result:
        # Starting takes seconds (worker processes, models): off the caller's event loop,
        # where verl's agent loop awaits every other sample of the step meanwhile.
        loop = self._loop if self._started else await asyncio.to_thread(self._started_loop)
        return await loop.ascore(row)

    def close(self) -> None:
        with self._lock:
            if self._started:
                self._loop.close()
                self._started = False


class _RemoteBackend:
    """A rewardkit server, through its client."""

    def __init__(self, url: str) -> None:
        from rewardkit.client import RewardClient  # part of rewardkit: never optional

        self._client = RewardClient(url, api_key=os.environ.get(ENV_API_KEY) or None)
        self.config: RewardConfig | None = None

    def score(self, rows: Sequence[Mapping[str, Any] | Sample | BadRow]) -> list[Result]:
        # A BadRow (a row an adapter could not build) is invalid here, as the engine makes
        # it; it has no JSON form to send.
        sendable = [row for row in rows if not isinstance(row, BadRow)]
        scored = iter(self._client.score(sendable) if sendable else [])
        return [
            Result(i, Status.INVALID, error=row.reason)
            if isinstance(row, BadRow)
            else dataclasses.replace(next(scored), index=i)
            for i, row in enumerate(rows)
        ]

    async def ascore(self, row: Mapping[str, Any] | Sample | BadRow) -> Result:
        if isinstance(row, BadRow):
            return Result(0, Status.INVALID, error=row.reason)
        [result] = await self._client.ascore([row])
        refuse_aggregated(result, "a per-sample call (ascore)")
        return result

    def close(self) -> None:
        """Nothing to close: the client opens its connections per call."""


_LOCK = threading.Lock()
_BACKENDS: dict[str, _LocalBackend | _RemoteBackend] = {}
_CANONICAL: dict[str, str] = {}  # how a config was given -> its validated JSON
_OWNER_PID = os.getpid()


def get_backend(config: ConfigSource = None, url: str | None = None) -> Backend:
    """This process's scorer for ``config`` (local) or ``url`` (remote); created once, then reused.

    With neither, ``$REWARDKIT_URL`` or ``$REWARDKIT_CONFIG`` decide (both unset: the
    default configuration). Giving both is a ConfigError: a server scores with its own.
    """
    if url is not None:
        check_server_url(url)
    elif config is None:
        url = os.environ.get(ENV_URL) or None
        config = os.environ.get(ENV_CONFIG) or None
        if url is not None:
            check_server_url(url, f"${ENV_URL}")
    if config is not None and url is not None:
        raise ConfigError(
            "give a rewardkit config or a server URL, not both: the server scores with its own "
            f"config (url={url!r})"
        )
    global _OWNER_PID
    with _LOCK:
        if os.getpid() != _OWNER_PID:
            # A forked child inherits the dicts but not the loops' threads: start afresh.
            _BACKENDS.clear()
            _OWNER_PID = os.getpid()
        if url is not None:
            key = f"url:{url}"
            if key not in _BACKENDS:
                _BACKENDS[key] = _RemoteBackend(url)
            return _BACKENDS[key]
        raw = _raw_key(config)
        loaded = None
        if raw not in _CANONICAL:
            # Equal configs share one loop however they are written (dict, YAML, kwargs).
            loaded = load_config(config)
            _CANONICAL[raw] = loaded.model_dump_json()
        key = _CANONICAL[raw]
        if key not in _BACKENDS:
            _BACKENDS[key] = _LocalBackend(loaded or load_config(config))
        return _BACKENDS[key]


def check_server_url(url: str, name: str = "rewardkit_url") -> str:
    """``url`` if it names a ``rewardkit serve`` (a scheme and a host), else ConfigError.

    ``localhost:8000`` would otherwise fail on every row with the HTTP client's own error.
    """
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise ConfigError(
            f"{name}={url!r}: a rewardkit serve address needs a scheme and a host, e.g. "
            f"'http://{url.split('://')[-1]}'"
        )
    return url


def close_backends() -> None:
    """Close every scorer this process started (also run at interpreter exit)."""
    with _LOCK:
        if os.getpid() != _OWNER_PID:
            _BACKENDS.clear()
            return
        backends = list(_BACKENDS.values())
        _BACKENDS.clear()
    for backend in backends:
        try:
            backend.close()
        except Exception as exc:  # closing is best effort at exit; say so, do not mask the exit
            logger.warning("rewardkit: closing a scorer failed: %s", exc)


def _at_exit(hook: Any) -> None:
    """Run ``hook`` at interpreter exit while thread pools still take work.

    Closing a loop stops its worker pool through ``asyncio.to_thread``; by the time
    ``atexit`` hooks run, ``concurrent.futures`` refuses new work ("cannot schedule new
    futures after shutdown"), so the pool was not stopped cleanly and every trainer run
    ended with a warning. Hooks of ``threading._register_atexit`` run earlier, in
    reverse order of registration: ours, registered after concurrent.futures' own, runs
    before it. ``atexit`` runs it again (it is idempotent) for a scorer that a
    non-daemon thread started after the main thread ended, and where that hook is absent.
    """
    register = getattr(threading, "_register_atexit", None)
    if register is not None:
        with contextlib.suppress(RuntimeError):  # imported while the interpreter shuts down
            register(hook)
    atexit.register(hook)


_at_exit(close_backends)


def _raw_key(config: ConfigSource) -> str:
    """A cheap key for how the config was given (the YAML is read once per path)."""
    if config is None:
        return "default"
    if isinstance(config, RewardConfig):
        return "model:" + config.model_dump_json()
    if isinstance(config, Mapping):
        return "dict:" + json.dumps(config, sort_keys=True, default=repr)
    return "path:" + str(Path(config).resolve())


@dataclass(frozen=True, slots=True)
class FailurePolicy:
    """What a trainer adapter does with rows that have no score (``reward.on_failure``).

    ``raise``: raise ScorerError naming the failed rows, because a trainer that needs a
    number for every row would otherwise learn from an invented one. ``fill``: give those
    rows ``fill_score`` and keep their status visible in the trainer's per-row logs
    (``status``, ``error``). ``drop``: no reward at all (None: TRL's way to leave a row
    out of its group's baseline); only for a trainer that takes None.
    """

    on_failure: OnFailure = "raise"
    fill_score: float = 0.0

    def __post_init__(self) -> None:
        if self.on_failure not in ("raise", "fill", "drop"):
            raise ConfigError(
                f"on_failure must be 'raise', 'fill' or 'drop', got {self.on_failure!r}"
            )

    @classmethod
    def resolve(
        cls,
        on_failure: OnFailure | None,
        fill_score: float | None,
        config: RewardConfig | None,
        *,
        default: OnFailure,
        no_drop: str | None = None,
    ) -> FailurePolicy:
        """The policy an adapter applies: its own argument, else ``reward.on_failure`` and
        ``reward.fill_score`` of the config it scores with, else ``default``. ``no_drop``:
        why this trainer cannot take ``drop`` (a ConfigError that says so and offers
        raise and fill)."""
        section = config.reward if config is not None else None
        if on_failure is None:
            on_failure = section.on_failure if section and section.on_failure else default
        if fill_score is None:
            fill_score = section.fill_score if section is not None else 0.0
        if on_failure == "drop" and no_drop is not None:
            raise ConfigError(
                f"on_failure='drop' (reward.on_failure): {no_drop}; use 'raise' (stop with "
                "the failed rows named) or 'fill' (reward.fill_score, the status kept in "
                "the logs)"
            )
        return cls(on_failure, fill_score)

    def values(self, results: Sequence[Result]) -> list[float | None]:
        """One reward per row: the score; for a failed row ``fill_score`` (fill), None
        (drop), or ScorerError (raise)."""
        failed = [r for r in results if not r.ok]
        if failed and self.on_failure == "raise":
            message = describe_failures(failed, len(results))
            logger.error("%s", message)  # some trainers swallow exceptions from reward functions
            raise ScorerError(
                f"{message}. rewardkit does not turn failures into rewards: fix the cause, or pass "
                f"on_failure='fill' to give failed rows {self.fill_score} with their status logged"
            )
        fill = None if self.on_failure == "drop" else self.fill_score
        return [r.score if r.score is not None else fill for r in results]

    def scores(self, results: Sequence[Result]) -> list[float]:
        """:meth:`values` for a trainer that needs a number for every row (never ``drop``)."""
        if self.on_failure == "drop":
            raise ConfigError(
                "on_failure='drop' gives no number for a failed row; this trainer needs one"
            )
        return [0.0 if value is None else value for value in self.values(results)]


def describe_failures(failed: Sequence[Result], total: int) -> str:
    """One line: how many rows failed, by status, and the first one's reason."""
    counts = Counter(r.status.value for r in failed)
    by_status = ", ".join(f"{status}: {n}" for status, n in sorted(counts.items()))
    first = failed[0]
    source = first.row.get("data_source", "?") if isinstance(first.row, Mapping) else "?"
    return (
        f"rewardkit: {len(failed)} of {total} rows failed to score ({by_status}); first: "
        f"row {first.index} [{source}] {first.status.value}: {first.error}"
    )
