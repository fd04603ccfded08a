"""One run of `rewardkit score`: paths checked first, rows streamed, nothing lost on Ctrl-C.

The order matters to a user: every path and flag is checked before a worker starts
(a bad output path costs nothing; an output that is the input, or another output, by
any name, is refused), the output is written beside its target and renamed at the end,
and Ctrl-C or SIGTERM stops between rows, so every row written is whole and
``--resume`` can carry on. Each output row carries ``input_digest``, a hash of the
input row it was scored from: ``--resume`` checks every kept row against its input
row with it, so the rows of another input are never kept in place of this one's.
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import itertools
import json
import os
import signal
import stat
import sys
import time
from collections import deque
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any

from rewardkit.aggregate import needs_groups
from rewardkit.errors import OutputError
from rewardkit.io import (
    BadRow,
    RowWriter,
    count_rows,
    decode_result_row,
    dumps_json,
    map_fields,
    parse_field_map,
    read_rows,
    write_text,
)
from rewardkit.loop import RewardLoop
from rewardkit.summary import Summary

__all__ = ["ScoringRun", "Terminated", "check_target", "input_digest", "refuse_overwrites"]


class ScoringRun:
    """The `score` subcommand's work, given its parsed arguments."""

    def __init__(self, args: argparse.Namespace) -> None:
        self.args = args
        self.output: str | None = args.output
        self._check_paths()
        self.mapping = parse_field_map(args.field)
        # An unreadable input fails here, before any work.
        self.rows: Iterator[Any] = map_fields(read_rows(args.input), self.mapping)
        self.kept = self._check_resume() if args.resume else 0

    def _check_paths(self) -> None:
        args = self.args
        if args.resume and (not self.output or self.output == "-"):
            raise OutputError("--resume needs -o OUTPUT, a file holding the rows done so far")
        files = [("--report", args.report), ("--summary-json", args.summary_json)]
        refuse_overwrites(args.input, [("-o", self.output), *files])
        for flag, path in files:
            if path:
                check_target(flag, Path(path))
        if args.report:
            _require_matplotlib()

    def _check_resume(self) -> int:
        """How many whole rows OUTPUT holds, each checked against its input row (consumed here).

        OutputError naming the first row of OUTPUT that was not scored from the same row of
        this input: keeping it would put another input's result in that row's place.
        """
        output = str(self.output)
        if not Path(output).exists():
            return 0
        kept = 0
        for done in read_rows(output):
            if isinstance(done, BadRow) or not isinstance(done, dict):
                break  # a torn last line: that row is scored again
            number = kept + 1
            source = next(self.rows, _END)
            if source is _END:
                raise OutputError(
                    f"--resume: {output} holds more rows than the input ({kept:,}): it was "
                    f"scored from another input; write to a new -o file, or delete {output}"
                )
            problem = _mismatch(decode_result_row(done), source)
            if problem:
                raise OutputError(
                    f"--resume: row {number:,} of {output} was not scored from row {number:,} "
                    f"of the input ({problem}); write to a new -o file, or delete {output}"
                )
            kept += 1
        return kept

    def execute(self, loop: RewardLoop) -> int:
        """Score, write, summarize; the exit status (0, 1 for --fail-on-error, 130 on Ctrl-C,
        143 on SIGTERM)."""
        args = self.args
        if self.kept and needs_groups(loop.config.reward):
            raise OutputError(
                f"--resume: reward.aggregation={loop.config.reward.aggregation} / "
                f"reward.scale_rewards={loop.config.reward.scale_rewards} score each row against "
                "its whole group, which the kept rows were not scored with; score the input "
                "again to a new -o file"
            )
        summary = Summary()
        report = _report_builder() if args.report else None
        stopped: KeyboardInterrupt | None = None
        seconds = 0.0
        began = time.perf_counter()  # the wall clock: start-up and shut-down included
        with _Interrupts() as interrupts:  # SIGTERM from here on: whatever is done is kept
            writer = RowWriter(self.output) if self.output else None
            try:
                self._keep_previous(writer, summary, report)
                digests: deque[str] = deque()
                rows = _digested(itertools.islice(self.rows, self._remaining()), digests)
                with _starting(loop, disabled=args.no_progress):
                    loop.start()  # the workers' start-up: counted in the wall time only
                    _workers_up(loop)
                with loop:
                    started = time.perf_counter()  # after start-up: the steady state's rate
                    with _progress(self._total(), disabled=args.no_progress) as advance:
                        try:
                            for result in loop.iter_score(rows):
                                with interrupts.between_rows():
                                    row = result.to_row()
                                    row["input_digest"] = digests.popleft()
                                    summary.add(result)
                                    if writer is not None:
                                        writer.write(row)
                                    if report is not None:
                                        report.add(row)
                                    advance()
                        except KeyboardInterrupt as exc:  # Ctrl-C, or SIGTERM (Terminated)
                            stopped = exc
                    seconds = time.perf_counter() - started
            except BaseException:
                interrupts.hold()  # a second signal must not cut short the write of the rows
                if writer is not None:  # keep what was scored; never replace a file with less
                    with contextlib.suppress(Exception):
                        # Stopped while copying the kept rows: the old target is still whole.
                        writer.close() if writer.count > self.kept else writer.discard()
                raise
            interrupts.hold()
            if writer is not None:
                if stopped is not None and writer.count <= self.kept:
                    writer.discard()  # nothing new: the old target stays as it was
                else:
                    writer.close()  # also when stopped: the rows done so far are kept
            stopped = stopped or interrupts.take()  # a signal during the close: it is done
        wall = time.perf_counter() - began
        return self._finish(summary, report, seconds, stopped, writer, wall)

    def _keep_previous(self, writer: RowWriter | None, summary: Summary, report: Any) -> None:
        """With --resume, copy the rows of the earlier output that _check_resume vouched for."""
        if not self.kept or writer is None:
            return
        for row in itertools.islice(read_rows(str(self.output)), self.kept):
            row = decode_result_row(row)
            writer.write(row)
            summary.add_row(row, writer.count - 1)
            if report is not None:
                report.add(row)
        print(f"resuming: {self.kept:,} rows kept from {self.output}", file=sys.stderr)

    def _remaining(self) -> int | None:
        limit = self.args.limit
        return None if limit is None else max(limit - self.kept, 0)

    def _total(self) -> int | None:
        total = count_rows(self.args.input)
        if self.args.limit is not None:
            total = self.args.limit if total is None else min(total, self.args.limit)
        return None if total is None else max(total - self.kept, 0)

    def _finish(
        self,
        summary: Summary,
        report: Any,
        seconds: float,
        stopped: KeyboardInterrupt | None,
        writer: RowWriter | None,
        wall: float | None = None,
    ) -> int:
        args = self.args
        scored = summary.total.rows - self.kept
        print(summary.text(seconds, scored, wall=wall), file=sys.stderr)
        if args.summary_json:
            summary_json = dumps_json(summary.to_json(seconds, scored, wall=wall))
            write_text(args.summary_json, summary_json, what="summary")
        if report is not None:
            report.write(args.report, title=f"rewardkit report: {Path(args.input).name}")
            print(f"report written to {args.report}", file=sys.stderr)
        if writer is None:
            print(
                "rewardkit: no output written: the scored rows were not kept "
                "(use -o FILE to keep them, or -o - for JSONL on stdout)",
                file=sys.stderr,
            )
        elif writer.count and self.output != "-":
            print(f"results written to {self.output}", file=sys.stderr)
        if stopped is not None:
            how = "terminated (SIGTERM)" if isinstance(stopped, Terminated) else "interrupted"
            where = f"; continue with --resume -o {self.output}" if writer is not None else ""
            print(f"rewardkit: {how} after {summary.total.rows:,} rows{where}", file=sys.stderr)
            return 143 if isinstance(stopped, Terminated) else 130
        if args.fail_on_error is not None and summary.failed_share > args.fail_on_error:
            print(
                f"rewardkit: {summary.failed_share:.1%} of rows failed, over "
                f"--fail-on-error {args.fail_on_error:g}",
                file=sys.stderr,
            )
            return 1
        return 0


_END = object()


def input_digest(row: Any) -> str:
    """A hash of one input row (after --field mapping), stored in its output row as
    ``input_digest``: 16 hex digits of the SHA-256 of the row's canonical JSON."""
    payload = ["unreadable row", row.reason] if isinstance(row, BadRow) else row
    try:
        text = json.dumps(payload, sort_keys=True, default=str, separators=(",", ":"))
    except (TypeError, ValueError, RecursionError):  # keys of mixed types; nesting too deep
        text = repr(payload)
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:16]


def _digested(rows: Iterable[Any], digests: deque[str]) -> Iterator[Any]:
    """The rows, each one's digest appended to ``digests`` as it is read (results come back
    one per row, in input order: the oldest digest is the next result's)."""
    for row in rows:
        digests.append(input_digest(row))
        yield row


def _mismatch(done: Mapping[str, Any], source: Any) -> str | None:
    """Why the output row ``done`` was not scored from the input row ``source`` (None if it was).

    By ``input_digest``; an output written before rows carried one is checked by its
    echoed ``id``, else its ``response``.
    """
    stored = done.get("input_digest")
    if isinstance(stored, str):
        if stored == input_digest(source):
            return None
        differs = _first_difference(done, source)
        return differs or "its input_digest differs: another input, or another --field mapping"
    if not isinstance(source, Mapping):
        return "the input row is unreadable and the output row carries no input_digest"
    for key in ("id", "response"):
        if key in done and key in source:
            return None if done[key] == source[key] else _first_difference(done, source, (key,))
    return "the output row carries no input_digest, id or response to check it by"


def _first_difference(
    done: Mapping[str, Any],
    source: Any,
    keys: Iterable[str] = ("id", "data_source", "response", "prompt", "ground_truth"),
) -> str | None:
    if not isinstance(source, Mapping):
        return "the input row is unreadable"
    for key in keys:
        if done.get(key) != source.get(key):
            return f"{key} {_clip(done.get(key))} there, {_clip(source.get(key))} in the input"
    return None


def _clip(value: Any, limit: int = 40) -> str:
    text = " ".join(repr(value).split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def refuse_overwrites(source: str, targets: Iterable[tuple[str, str | None]]) -> None:
    """OutputError, before anything is written, when an output would destroy the input or
    another output: the same file by any name (a symlink, a hard link, ``./x``), or the
    file redirected onto stdin (``< in.jsonl``) or stdout (``-o - >> in.jsonl``)."""
    given = [(flag, path) for flag, path in targets if path]
    seen = _identity(source, stdio=0)
    where = "the input file" if source != "-" else "the input file (on stdin)"
    for flag, path in given:
        if seen is not None and _identity(path, stdio=1) == seen:
            shown = "- (stdout)" if path == "-" else path
            raise OutputError(
                f"{flag} {shown} is {where}: write it elsewhere (the input would be lost)"
            )
    files = [(flag, path) for flag, path in given if path != "-"]
    for i, (flag, path) in enumerate(files):
        for other_flag, other in files[:i]:
            if _same_target(path, other):
                raise OutputError(
                    f"{flag} {path} is also the {other_flag} file: give each its own path "
                    f"(one would overwrite the other)"
                )


def _identity(path: str, *, stdio: int) -> tuple[int, int] | None:
    """(device, inode) of a regular file, following symlinks; ``-`` is the file descriptor
    ``stdio`` (stdin for an input, stdout for an output) when redirected from or to a file."""
    try:
        info = os.fstat(stdio) if path == "-" else os.stat(path)
    except (OSError, ValueError):
        return None
    return (info.st_dev, info.st_ino) if stat.S_ISREG(info.st_mode) else None


def _same_target(a: str, b: str) -> bool:
    try:
        return Path(a).resolve() == Path(b).resolve() or os.path.samefile(a, b)
    except (OSError, ValueError):
        return False


def check_target(flag: str, path: Path) -> None:
    """OutputError now, not after the work, for a path whose folder is missing or that is a
    folder, or for ``-``, which means stdout to ``-o`` but would be a file named ``-`` here."""
    if str(path) == "-":
        raise OutputError(
            f"{flag} -: give a file path (stdout is for the rows, -o -; the summary table "
            "goes to stderr)"
        )
    if path.is_dir():
        raise OutputError(f"{flag} {path}: is a directory")
    if not path.parent.is_dir():
        raise OutputError(f"{flag} {path}: no such folder {str(path.parent)!r}")


def _require_matplotlib() -> None:
    """--report needs matplotlib: say so before scoring, not after."""
    try:
        import matplotlib  # noqa: F401
    except ImportError as exc:
        raise OutputError(
            f"--report needs matplotlib: pip install 'rewardkit[report]' ({exc})"
        ) from exc


def _report_builder() -> Any:
    from rewardkit.report import ReportBuilder

    return ReportBuilder()


class Terminated(KeyboardInterrupt):
    """SIGTERM (a scheduler's pre-emption, ``kill``), handled as Ctrl-C is; exit status 143."""


class _Interrupts:
    """Ctrl-C and SIGTERM land between rows, never inside one row's write (so no torn line
    on disk): each raises where the run can keep what is finished (Terminated for SIGTERM)."""

    def __init__(self) -> None:
        self._shielded = False
        self._pending: KeyboardInterrupt | None = None
        self._previous: dict[int, Any] = {}

    def __enter__(self) -> _Interrupts:
        for signum in (signal.SIGINT, signal.SIGTERM):
            self._previous[signum] = signal.signal(signum, self._handle)
        return self

    def __exit__(self, *exc_info: object) -> None:
        for signum, previous in self._previous.items():
            signal.signal(signum, previous)

    def _handle(self, signum: int, frame: Any) -> None:
        stop = Terminated() if signum == signal.SIGTERM else KeyboardInterrupt()
        if self._shielded:
            self._pending = self._pending or stop
            return
        raise stop

    def hold(self) -> None:
        """From now on a signal is only noted, for :meth:`take`: what follows (moving the
        finished rows into place) must not be cut short."""
        self._shielded = True

    def take(self) -> KeyboardInterrupt | None:
        """The signal noted while shielded, if any (and forget it)."""
        stop, self._pending = self._pending, None
        return stop

    @contextlib.contextmanager
    def between_rows(self) -> Iterator[None]:
        self._shielded = True
        try:
            yield
        finally:
            self._shielded = False
        stop = self.take()
        if stop is not None:
            raise stop


@contextlib.contextmanager
def _starting(loop: RewardLoop, *, disabled: bool) -> Iterator[None]:
    """Say "starting N workers" on stderr while the loop starts (a terminal only, as the
    progress bar): the fork server's imports and warm-up take seconds, before any row."""
    if disabled or not sys.stderr.isatty():
        yield
        return
    from rich.console import Console

    with Console(stderr=True).status(starting_text(loop.config.reward)):
        yield


def _workers_up(loop: RewardLoop) -> None:
    """Wait until the loop's local workers are all up (they start in the background),
    so that the scoring time is the steady state's and the wall time has the start-up."""
    pool = loop.engine.pool
    while pool is not None and pool.health().starting:
        time.sleep(0.01)


def starting_text(section: Any) -> str:
    """What the CLI shows while the loop starts."""
    where = " (Ray actors)" if section.backend == "ray" else ""
    models = " and the reward model" if section.reward_model.enable else ""
    return f"starting {section.workers} workers{where}{models}"


@contextlib.contextmanager
def _progress(total: int | None, *, disabled: bool) -> Iterator[Any]:
    """A progress bar on stderr (rows done, of the total when known, and the time left)."""
    if disabled or not sys.stderr.isatty():
        yield lambda: None
        return
    from rich.console import Console
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        ProgressColumn,
        TimeElapsedColumn,
        TimeRemainingColumn,
    )

    columns: list[str | ProgressColumn] = [
        "scoring",
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        "eta",
        TimeRemainingColumn(),
    ]
    with Progress(*columns, console=Console(stderr=True), transient=True) as progress:
        task = progress.add_task("scoring", total=total)
        yield lambda: progress.advance(task)
