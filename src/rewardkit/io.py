"""Reading Sample rows and writing Result rows: ``.jsonl``, ``.json`` and ``.parquet``.

JSONL and Parquet stream (memory stays flat over millions of rows); a ``.json``
file is one array and is read whole. A line that is not valid JSON, or is larger
than ``max_row_bytes``, does not stop the file: it becomes a :class:`BadRow`, which
the scoring loop turns into a Result with status ``invalid``, in its place.
"""

from __future__ import annotations

import io
import json
import sys
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TextIO

from rewardkit.errors import InputError

__all__ = ["BadRow", "RowWriter", "read_rows"]

FORMATS = (".jsonl", ".json", ".parquet")


@dataclass(frozen=True, slots=True)
class BadRow:
    """A row that could not be parsed; scored as ``invalid`` with this reason."""

    reason: str


def _format(path: Path) -> str:
    suffix = path.suffix.lower()
    if suffix not in FORMATS:
        raise InputError(
            f"{path}: unknown format {suffix or '(none)'!r}; use one of {', '.join(FORMATS)}"
        )
    return suffix


def read_rows(path: str | Path, *, max_row_bytes: int = 16 * 1024 * 1024) -> Iterator[Any]:
    """Yield the rows of a file as dicts (or BadRow). InputError if the file can't be read."""
    path = Path(path)
    kind = _format(path)
    if not path.is_file():
        raise InputError(f"{path}: no such file")
    if kind == ".jsonl":
        return _read_jsonl(path, max_row_bytes)
    if kind == ".json":
        return iter(_read_json(path))
    return _read_parquet(path)


def _read_jsonl(path: Path, max_row_bytes: int) -> Iterator[Any]:
    with path.open("rb") as handle:
        for number, line in enumerate(_bounded_lines(handle, max_row_bytes), start=1):
            if isinstance(line, BadRow):
                yield BadRow(f"line {number}: {line.reason}")
                continue
            if not line.strip():
                continue
            try:
                yield json.loads(line)
            except (json.JSONDecodeError, UnicodeDecodeError) as exc:
                yield BadRow(f"line {number}: not valid JSON ({exc})")


def _bounded_lines(handle: io.BufferedReader, limit: int) -> Iterator[bytes | BadRow]:
    """Lines of at most ``limit`` bytes; a longer one is skipped, never held in memory."""
    while True:
        line = handle.readline(limit + 1)
        if not line:
            return
        if len(line) > limit and not line.endswith(b"\n"):
            size = len(line)
            while line and not line.endswith(b"\n"):  # drain the rest of the oversized line
                line = handle.readline(1024 * 1024)
                size += len(line)
            yield BadRow(f"row is {size:,} bytes, over the {limit:,}-byte limit")
            continue
        yield line


def _read_json(path: Path) -> list[Any]:
    try:
        data = json.loads(path.read_bytes())
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise InputError(f"{path}: not valid JSON ({exc})") from exc
    if isinstance(data, Mapping) and isinstance(data.get("samples"), list):
        data = data["samples"]  # the body of POST /v1/score
    if not isinstance(data, list):
        raise InputError(f"{path}: a .json input must hold an array of rows")
    return data


def _read_parquet(path: Path) -> Iterator[dict[str, Any]]:
    import pyarrow.parquet as pq

    try:  # opened here, not in the generator, so a bad file fails before scoring starts
        parquet = pq.ParquetFile(path)
    except Exception as exc:  # pyarrow raises several unrelated types for a bad file
        raise InputError(f"{path}: not a readable parquet file ({exc})") from exc
    return (row for batch in parquet.iter_batches(batch_size=1024) for row in batch.to_pylist())


class RowWriter:
    """Write Result rows to ``.jsonl``/``.json``/``.parquet``, or JSONL to stdout for ``-``."""

    def __init__(self, path: str | Path) -> None:
        self.path = str(path)
        self.kind = ".jsonl" if self.path == "-" else _format(Path(self.path))
        self._text: TextIO | None = None
        self._parquet: Any = None
        self._schema: Any = None
        self._buffer: list[dict[str, Any]] = []
        self._count = 0
        if self.path == "-":
            self._text = sys.stdout
        elif self.kind != ".parquet":
            self._text = Path(self.path).open("w", encoding="utf-8")
            if self.kind == ".json":
                self._text.write("[")

    def write(self, row: Mapping[str, Any]) -> None:
        if self.kind == ".parquet":
            self._buffer.append(_parquet_ready(row))
            if len(self._buffer) >= 4096:
                self._flush_parquet()
        else:
            assert self._text is not None
            separator = "," if self.kind == ".json" and self._count else ""
            self._text.write(separator + _dumps(row) + "\n")
        self._count += 1

    def close(self) -> None:
        if self.kind == ".parquet":
            self._flush_parquet()
            if self._parquet is not None:
                self._parquet.close()
            return
        assert self._text is not None
        if self.kind == ".json":
            self._text.write("]\n")
        if self._text is not sys.stdout:
            self._text.close()
        else:
            self._text.flush()

    def __enter__(self) -> RowWriter:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def _flush_parquet(self) -> None:
        import pyarrow as pa
        import pyarrow.parquet as pq

        if not self._buffer:
            return
        if self._schema is None:
            self._schema = _result_schema(pa.Table.from_pylist(self._buffer).schema)
            self._parquet = pq.ParquetWriter(self.path, self._schema)
        try:
            table = pa.Table.from_pylist(self._buffer, schema=self._schema)
        except (pa.ArrowInvalid, pa.ArrowTypeError) as exc:
            raise InputError(f"{self.path}: rows do not share one parquet schema ({exc})") from exc
        self._parquet.write_table(table)
        self._buffer = []


def _dumps(row: Mapping[str, Any]) -> str:
    """Compact UTF-8 JSON; escaped ASCII when the row holds text UTF-8 cannot encode (lone surrogates)."""
    text = json.dumps(row, ensure_ascii=False, default=str)
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        text = json.dumps(row, default=str)
    return text


def _parquet_ready(row: Mapping[str, Any]) -> dict[str, Any]:
    """Parquet needs one schema for every row: free-form objects are stored as JSON text."""
    out = dict(row)
    for key in ("components", "extra"):
        if key in out:
            out[key] = json.dumps(out[key], ensure_ascii=False, default=str)
    return out


def _result_schema(inferred: Any) -> Any:
    """The inferred schema with rewardkit's own columns pinned (an all-null batch infers 'null')."""
    import pyarrow as pa

    pinned = {
        "score": pa.float64(),
        "status": pa.string(),
        "error": pa.string(),
        "components": pa.string(),
        "extra": pa.string(),
    }
    for name, type_ in pinned.items():
        index = inferred.get_field_index(name)
        if index >= 0:
            inferred = inferred.set(index, pa.field(name, type_))
    return inferred
