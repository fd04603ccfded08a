"""Reading Sample rows and writing Result rows: ``.jsonl``, ``.jsonl.gz``, ``.json``, ``.parquet``.

JSONL and Parquet stream (memory stays flat over millions of rows); a ``.json``
file is one array and is read whole; ``-`` is JSONL on stdin/stdout. A line that is
not valid JSON, or is larger than ``max_row_bytes``, does not stop the file: it
becomes a :class:`BadRow`, which the scoring loop turns into a Result with status
``invalid``, in its place.

A :class:`RowWriter` writes to a temporary file beside its target and renames it
into place on :meth:`~RowWriter.close`: the target is never half-replaced, and an
output path that cannot be written fails before any row is scored. In Parquet, every
column whose type may differ by row (``ground_truth`` ``"1"`` here, ``2`` there) is JSON
text, named in the file's metadata; :func:`read_rows` decodes it back. The ``response``
column is text, or JSON text when the file's first rows (a writer's first 4,096) hold a
trajectory (a list of chat messages): a trajectory written after a file's text rows is
kept as its JSON text. A Parquet input may also hold trajectories as a list-of-struct
column (pandas, Hugging Face datasets): each row reads as its list of messages.
"""

from __future__ import annotations

import contextlib
import difflib
import gzip
import json
import os
import sys
import tempfile
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import IO, Any, TextIO

from rewardkit.errors import InputError, OutputError
from rewardkit.types import BadRow, finite_json  # BadRow: defined with the other row types

__all__ = [
    "BadRow",
    "RowWriter",
    "count_rows",
    "decode_result_row",
    "dumps_json",
    "map_fields",
    "parse_field_map",
    "read_rows",
    "write_text",
]

_Binary = IO[bytes] | gzip.GzipFile  # a file opened "rb", compressed or not

FORMATS = (".jsonl", ".jsonl.gz", ".json", ".parquet")


def _format(path: Path) -> str:
    name = path.name.lower()
    for suffix in sorted(FORMATS, key=len, reverse=True):
        if name.endswith(suffix):
            return suffix
    found = "".join(path.suffixes[-2:]) or "(none)"
    raise InputError(f"{path}: unknown format {found!r}; use one of {', '.join(FORMATS)}")


def read_rows(path: str | Path, *, max_row_bytes: int = 16 * 1024 * 1024) -> Iterator[Any]:
    """Yield the rows of a file (``-``: JSONL on stdin) as dicts or BadRow.

    InputError, before the first row, if the file cannot be read.
    """
    if str(path) == "-":
        return _read_jsonl_handle(sys.stdin.buffer, max_row_bytes)
    path = Path(path)
    kind = _format(path)
    if not path.is_file():
        raise InputError(f"{path}: no such file" if not path.exists() else f"{path}: not a file")
    if kind == ".jsonl":
        return _read_jsonl(path.open("rb"), max_row_bytes)
    if kind == ".jsonl.gz":
        return _read_jsonl(gzip.open(path, "rb"), max_row_bytes, path)
    if kind == ".json":
        return iter(_read_json(path))
    return _read_parquet(path)


def count_rows(path: str | Path) -> int | None:
    """The number of rows in a file when it is cheap to know (for a progress total), else None."""
    if str(path) == "-":
        return None
    path = Path(path)
    try:
        kind = _format(path)
        if kind == ".parquet":
            import pyarrow.parquet as pq

            return int(pq.ParquetFile(path).metadata.num_rows)
        if kind != ".jsonl":
            return None
        lines, last = 0, b"\n"
        with path.open("rb") as handle:
            while block := handle.read(1 << 20):
                lines += block.count(b"\n")
                last = block[-1:]
        return lines + (last != b"\n")
    except Exception:  # only a progress total: never worth failing the run for
        return None


def _read_jsonl(handle: _Binary, max_row_bytes: int, path: Path | None = None) -> Iterator[Any]:
    with handle:
        try:
            yield from _read_jsonl_handle(handle, max_row_bytes)
        except (EOFError, OSError, gzip.BadGzipFile) as exc:  # a truncated or corrupt .gz
            yield BadRow(f"{path}: the compressed stream ends early or is corrupt ({exc})")


def _read_jsonl_handle(handle: _Binary, max_row_bytes: int) -> Iterator[Any]:
    for number, line in enumerate(_bounded_lines(handle, max_row_bytes), start=1):
        if isinstance(line, BadRow):
            yield BadRow(f"line {number}: {line.reason}")
            continue
        if not line.strip():
            continue
        try:
            yield json.loads(line)
        except _UNREADABLE_JSON as exc:
            yield BadRow(f"line {number}: not valid JSON ({_one_line(exc)})")


# What json.loads raises for text it cannot read: a syntax or encoding error
# (JSONDecodeError, UnicodeDecodeError), an integer over Python's 4,300-digit limit
# (plain ValueError) or nesting too deep for its recursive parser (RecursionError).
# Each is one bad row, never the end of the run.
_UNREADABLE_JSON = (ValueError, RecursionError)


def _one_line(exc: BaseException) -> str:
    return " ".join(f"{type(exc).__name__}: {exc}".split())[:300]


def _bounded_lines(handle: _Binary, limit: int) -> Iterator[bytes | BadRow]:
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
    except _UNREADABLE_JSON as exc:
        raise InputError(f"{path}: not valid JSON ({_one_line(exc)})") from exc
    if isinstance(data, Mapping) and isinstance(data.get("samples"), list):
        data = data["samples"]  # the body of POST /v1/score
    if not isinstance(data, list):
        raise InputError(f"{path}: a .json input must hold an array of rows")
    return data


def _read_parquet(path: Path) -> Iterator[dict[str, Any] | BadRow]:
    import pyarrow.parquet as pq

    try:  # opened here, not in the generator, so a bad file fails before scoring starts
        parquet = pq.ParquetFile(path)
    except Exception as exc:  # pyarrow raises several unrelated types for a bad file
        raise InputError(f"{path}: not a readable parquet file ({exc})") from exc
    rows = _parquet_rows(parquet, path)
    encoded = _json_columns(parquet.schema_arrow.metadata)
    return _decoded(rows, encoded) if encoded else rows


def _parquet_rows(parquet: Any, path: Path) -> Iterator[dict[str, Any] | BadRow]:
    """Each row of an open parquet file, in order, or a BadRow in its place: a value
    pyarrow cannot turn into Python (a timestamp past year 9999) costs its row, and a
    damaged page the rest of its row group (the metadata says how many rows; pyarrow
    cannot read past the page). Every row still has one output row, so --resume lines up."""
    first = 0
    for group in range(parquet.metadata.num_row_groups):
        size = parquet.metadata.row_group(group).num_rows
        done = 0
        try:
            for batch in parquet.iter_batches(batch_size=1024, row_groups=[group]):
                for row in _batch_rows(batch, first + done):
                    yield row
                    done += 1
        except Exception as exc:  # pyarrow raises OSError, ArrowInvalid, ... for a bad page
            reason = f"{path}: row group {group} cannot be read from its row {done + 1} on"
            for number in range(first + done + 1, first + size + 1):
                yield BadRow(f"row {number}: {reason} ({_one_line(exc)})")
        first += size


def _batch_rows(batch: Any, before: int) -> list[dict[str, Any] | BadRow]:
    """A record batch's rows as dicts; ``before``: the rows of the file before it."""
    try:
        rows: list[dict[str, Any] | BadRow] = batch.to_pylist()
        return rows
    except Exception:  # a value with no Python form: find its row, keep the others
        pass
    rows = []
    for at in range(batch.num_rows):
        try:
            rows.append(batch.slice(at, 1).to_pylist()[0])
        except Exception as exc:
            rows.append(BadRow(f"row {before + at + 1}: a value cannot be read ({_one_line(exc)})"))
    return rows


def _json_columns(metadata: Mapping[bytes, bytes] | None) -> frozenset[str]:
    """The columns a RowWriter stored as JSON text (named in the file's schema metadata)."""
    try:
        names = json.loads((metadata or {}).get(JSON_COLUMNS_KEY, b"[]"))
    except (ValueError, TypeError):
        return frozenset()
    if not isinstance(names, list):
        return frozenset()
    return frozenset(name for name in names if isinstance(name, str))


def _decoded(
    rows: Iterable[dict[str, Any] | BadRow], columns: frozenset[str]
) -> Iterator[dict[str, Any] | BadRow]:
    """Rows with their JSON-text columns read back to the values that were written."""
    for row in rows:
        if isinstance(row, BadRow):
            yield row
            continue
        for name in columns & row.keys():
            value = row[name]
            if isinstance(value, str):
                with contextlib.suppress(*_UNREADABLE_JSON):
                    row[name] = json.loads(value)
        yield row


# ---------------------------------------------------------------------- column mapping

SAMPLE_FIELDS = ("data_source", "prompt", "response", "ground_truth", "extra_info", "id")
"""The fields of a Sample row: what ``--field TARGET=SOURCE`` may fill."""


def parse_field_map(items: Iterable[str]) -> dict[str, str]:
    """``["response=output", "ground_truth=gts"]`` -> ``{"response": "output", ...}``.

    The source may be dotted (``ground_truth=reward_model.ground_truth``) to reach into
    a nested object. InputError naming the item when one is malformed or its target is
    not a Sample field (with the closest field: ``respnse`` -> did you mean response?).
    """
    mapping: dict[str, str] = {}
    for item in items:
        target, sep, source = item.partition("=")
        if not sep or not target.strip() or not source.strip():
            raise InputError(f"--field wants TARGET=SOURCE (e.g. response=output), got {item!r}")
        target = target.strip()
        if target not in SAMPLE_FIELDS:
            close = difflib.get_close_matches(target, SAMPLE_FIELDS, n=1, cutoff=0.6)
            hint = f"did you mean {close[0]}? " if close else ""
            raise InputError(
                f"--field {item}: {target!r} is not a Sample field; {hint}"
                f"TARGET is one of {', '.join(SAMPLE_FIELDS)}"
            )
        mapping[target] = source.strip()
    return mapping


def map_fields(rows: Iterable[Any], mapping: Mapping[str, str]) -> Iterator[Any]:
    """Copy each row's ``source`` column into ``target``. A row lacking a source column is
    a BadRow (``invalid``, naming the column and the columns it has): scoring its own
    ``target`` column instead would score what the mapping was given to replace (a typo,
    ``--field response=final_ouput``, scored every row's draft)."""
    if not mapping:
        yield from rows
        return
    for row in rows:
        if isinstance(row, Mapping):
            row = dict(row)
            for target, source in mapping.items():
                found, value = _lookup(row, source)
                if not found:
                    row = BadRow(_no_source(target, source, row))
                    break
                row[target] = value
        yield row


def _no_source(target: str, source: str, row: Mapping[str, Any]) -> str:
    columns = sorted(map(str, row))
    close = difflib.get_close_matches(source, columns, n=1)
    hint = f"; did you mean {close[0]!r}?" if close else ""
    shown = ", ".join(columns[:12]) + (", ..." if len(columns) > 12 else "")
    return f"--field {target}={source}: the row has no column {source!r}{hint} (it has: {shown})"


def _lookup(row: Mapping[str, Any], dotted: str) -> tuple[bool, Any]:
    if dotted in row:
        return True, row[dotted]
    value: Any = row
    for part in dotted.split("."):
        if not isinstance(value, Mapping) or part not in value:
            return False, None
        value = value[part]
    return True, value


# ---------------------------------------------------------------------- writing


class RowWriter:
    """Write Result rows to ``.jsonl``/``.jsonl.gz``/``.json``/``.parquet``, or JSONL to stdout for ``-``.

    A regular file is written beside its target under a temporary name and renamed
    into place by :meth:`close`, so a crash never leaves a half-replaced target and
    the input of a run is never truncated before it is read. A target that is not a
    regular file (``/dev/stdout``, a FIFO) is written directly. OutputError, at
    construction, for a target that cannot be written.
    """

    def __init__(self, path: str | Path) -> None:
        self.path = str(path)
        self.kind = ".jsonl" if self.path == "-" else _output_format(Path(self.path))
        self._text: TextIO | None = None
        self._parquet: Any = None
        self._schema: Any = None
        self._buffer: list[dict[str, Any]] = []
        self._temp: str | None = None
        self._closed = False
        self.count = 0
        self._stdout: TextIO | None = None
        if self.path == "-":
            self._text = self._stdout = sys.stdout
            # The rows own stdout while the writer is open: anything else this process
            # prints (an async reward function's print, running on the loop) would land
            # between them and break the JSONL stream, so it goes to stderr instead.
            sys.stdout = sys.stderr
            return
        self._sink = self._open_sink(Path(self.path))
        if self.kind in (".jsonl", ".json"):
            self._text = self._guard(lambda: open(self._sink, "w", encoding="utf-8"))
        elif self.kind == ".jsonl.gz":
            self._text = self._guard(lambda: gzip.open(self._sink, "wt", encoding="utf-8"))
        if self.kind == ".json":
            self._guard(lambda: self._text.write("["))  # type: ignore[union-attr]

    def _open_sink(self, target: Path) -> str:
        """The path written to: a temporary file beside a regular target, else the target."""
        if target.is_dir():
            raise OutputError(f"{target}: is a directory")
        parent = target.parent
        if not parent.is_dir():
            raise OutputError(f"{target}: no such folder {str(parent)!r}")
        if target.exists() and not target.is_file():
            return str(target)  # a device or FIFO: nothing to rename over
        try:
            temp = _temp_beside(target)
        except OSError as exc:
            raise OutputError(f"{target}: cannot write there ({exc.strerror})") from exc
        self._temp = temp
        return temp

    def _guard(self, action: Any) -> Any:
        """Run a write; map an OS failure (disk full, closed pipe stays BrokenPipeError) to OutputError."""
        try:
            return action()
        except BrokenPipeError:
            raise
        except OSError as exc:
            raise OutputError(f"{self.path}: cannot write ({exc.strerror or exc})") from exc

    def write(self, row: Mapping[str, Any]) -> None:
        if self.kind == ".parquet":
            self._buffer.append(dict(row))
            if len(self._buffer) >= 4096:
                self._flush_parquet()
        else:
            text = self._text
            assert text is not None
            separator = "," if self.kind == ".json" and self.count else ""
            self._guard(lambda: text.write(separator + _dumps(row) + "\n"))
        self.count += 1

    def close(self) -> None:
        """Finish the file and move it into place (the rows written so far are kept). Idempotent."""
        if self._closed:
            return
        self._closed = True
        try:
            self._finish()
        except BaseException:
            self._discard()
            raise
        finally:
            self._give_back_stdout()
        temp = self._temp
        if temp is not None:
            self._guard(lambda: os.replace(temp, self.path))
            self._temp = None

    def _finish(self) -> None:
        if self.kind == ".parquet":
            self._flush_parquet()
            if self._parquet is None:  # no rows: still a readable (empty) file
                self._open_parquet(None)
            self._guard(self._parquet.close)
            return
        text = self._text
        assert text is not None
        if self.kind == ".json":
            self._guard(lambda: text.write("]\n"))
        self._guard(text.flush if text is self._stdout else text.close)

    def discard(self) -> None:
        """Close without moving anything into place: the target keeps what it held before."""
        if self._closed:
            return
        self._closed = True
        self._give_back_stdout()
        if self._text is not None and self._text is not self._stdout:
            with contextlib.suppress(OSError):
                self._text.close()
        if self._parquet is not None:
            with contextlib.suppress(Exception):
                self._parquet.close()
        self._discard()

    def _give_back_stdout(self) -> None:
        if self._stdout is not None and sys.stdout is sys.stderr:
            sys.stdout = self._stdout

    def _discard(self) -> None:
        if self._temp is not None:
            Path(self._temp).unlink(missing_ok=True)
            self._temp = None

    def __enter__(self) -> RowWriter:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def _open_parquet(self, schema: Any) -> None:
        import pyarrow as pa
        import pyarrow.parquet as pq

        self._schema = schema if schema is not None else pa.schema([("status", pa.string())])
        self._parquet = self._guard(lambda: pq.ParquetWriter(self._sink, self._schema))

    def _flush_parquet(self) -> None:
        import pyarrow as pa

        if not self._buffer:
            return
        if self._schema is None:
            self._open_parquet(_result_schema(self._buffer))
        names = self._schema.names
        encoded = _json_columns(self._schema.metadata)
        columns = {
            name: [_parquet_cell(name, row.get(name), name in encoded) for row in self._buffer]
            for name in names
        }
        table = pa.Table.from_pydict(columns, schema=self._schema)  # every cell fits its column
        self._guard(lambda: self._parquet.write_table(table))
        self._buffer = []


def _umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def _output_format(path: Path) -> str:
    if path.is_dir():
        raise OutputError(f"{path}: is a directory")
    if path.exists() and not path.is_file():
        return ".jsonl"  # a device or FIFO (/dev/stdout, /dev/full): JSON lines
    try:
        return _format(path)
    except InputError as exc:
        raise OutputError(str(exc)) from None


def _dumps(row: Any) -> str:
    """Compact UTF-8 JSON of a row (or of one Parquet cell); escaped ASCII when it holds
    text UTF-8 cannot encode (lone surrogates); NaN and infinities as null (as the server
    sends them), never the bare ``NaN`` that strict JSON readers (jq, JavaScript, Go)
    refuse, losing the whole file."""
    try:
        text = json.dumps(row, ensure_ascii=False, default=str, allow_nan=False)
    except ValueError:  # a NaN in an echoed input or a user function's extra
        row = finite_json(row)
        text = json.dumps(row, ensure_ascii=False, default=str)
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        text = json.dumps(row, default=str)
    return text


def dumps_json(value: Any) -> str:
    """Indented JSON of a summary or a report: NaN and infinities as null (strict JSON
    readers refuse the bare ``Infinity`` a mean of huge scores gives)."""
    try:
        return json.dumps(value, indent=2, ensure_ascii=False, allow_nan=False) + "\n"
    except ValueError:
        return json.dumps(finite_json(value), indent=2, ensure_ascii=False) + "\n"


def _temp_beside(target: Path) -> str:
    """An empty file beside ``target`` under a temporary name, with the permissions a plain
    ``open()`` would give (mkstemp makes 0600): written, then renamed over the target."""
    fd, temp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".partial", dir=target.parent)
    os.close(fd)
    os.chmod(temp, 0o666 & ~_umask())
    return temp


def write_text(path: str | Path, text: str, *, what: str = "output") -> None:
    """Write a whole text file (a summary, a report) as the row writer writes: beside its
    target under a temporary name, then renamed into place, so that a failed write leaves
    the target as it was; a device (``/dev/full``) is written in place. OutputError, one
    line naming the path, where it cannot be written (a full disk, a read-only file)."""
    target = Path(path)
    temp: str | None = None
    try:
        if target.exists() and not target.is_file():
            target.write_text(text, encoding="utf-8")
            return
        temp = _temp_beside(target)
        with open(temp, "w", encoding="utf-8") as file:
            file.write(text)
        os.replace(temp, target)
        temp = None
    except OSError as exc:
        raise OutputError(f"{target}: cannot write the {what} ({exc.strerror or exc})") from exc
    finally:
        if temp is not None:
            with contextlib.suppress(OSError):
                os.unlink(temp)


# Parquet needs one type per column, fixed by the first rows written. rewardkit's own
# columns and the Sample's text fields have one type; every other column (ground_truth,
# prompt, extra_info, components, extra, any column echoed from the input) may hold a
# different JSON type in each row (`"1"` here, `2` there), so it is stored as JSON text,
# named in the file's metadata under JSON_COLUMNS_KEY and decoded again by read_rows.
JSON_COLUMNS_KEY = b"rewardkit.json_columns"
_FLOAT_COLUMNS = frozenset({"score", "elapsed_s"})
_TEXT_COLUMNS = frozenset({"status", "error", "data_source", "response", "id", "input_digest"})


def _result_schema(rows: list[dict[str, Any]]) -> Any:
    """One column per key of the first rows (in order of appearance), with its storage type."""
    import pyarrow as pa

    names = list(dict.fromkeys(key for row in rows for key in row))
    fields = [
        pa.field(name, pa.float64() if name in _FLOAT_COLUMNS else pa.string()) for name in names
    ]
    text = _TEXT_COLUMNS
    if any(not isinstance(row.get("response"), str | None) for row in rows):
        text = text - {"response"}  # trajectories: JSON text, decoded back by read_rows
    encoded = [name for name in names if name not in _FLOAT_COLUMNS | text]
    return pa.schema(fields, metadata={JSON_COLUMNS_KEY: json.dumps(encoded).encode()})


def _parquet_cell(name: str, value: Any, encoded: bool = False) -> Any:
    """``value`` as its column stores it: a float, text, or JSON text (``encoded``: the
    column is named JSON in the file's metadata; None stays null)."""
    if value is None:
        return None
    if name in _FLOAT_COLUMNS:
        ok = isinstance(value, int | float) and not isinstance(value, bool)
        return float(value) if ok else None
    if name in _TEXT_COLUMNS and not encoded:
        return _utf8(value) if isinstance(value, str) else _dumps(value)
    if name in ("components", "extra") and isinstance(value, str):
        return _utf8(value)  # already JSON text: a row kept from an older parquet file
    return _dumps(value)


def _utf8(text: str) -> str:
    """Text Parquet can store: lone surrogates (valid in Python, not in UTF-8) replaced."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return text.encode("utf-8", "replace").decode("utf-8")
    return text


def decode_result_row(row: Mapping[str, Any]) -> dict[str, Any]:
    """A Result row read back from any output format: JSON-text columns (parquet) decoded."""
    out = dict(row)
    for key in ("components", "extra"):
        value = out.get(key)
        if isinstance(value, str):
            try:
                out[key] = json.loads(value)
            except json.JSONDecodeError:
                out[key] = {}
    return out
