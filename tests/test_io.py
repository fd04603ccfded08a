"""guards: reading rows and writing Results (rewardkit.io): formats, bad lines, atomic writes."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from _support.cli import run_cli, strict_json
from rewardkit import InputError, Result, RewardLoop, Status
from rewardkit.errors import OutputError
from rewardkit.io import BadRow, RowWriter, count_rows, map_fields, parse_field_map, read_rows


def test_jsonl_bad_lines_become_bad_rows_in_place(tmp_path: Path) -> None:
    path = tmp_path / "in.jsonl"
    path.write_bytes(b'{"a": 1}\n{oops\n\n' + b'{"big": "' + b"x" * 5000 + b'"}\n{"a": 2}\n')
    rows = list(read_rows(path, max_row_bytes=1000))
    assert rows[0] == {"a": 1}
    assert isinstance(rows[1], BadRow) and "line 2" in rows[1].reason
    assert isinstance(rows[2], BadRow) and "over the 1,000-byte limit" in rows[2].reason
    assert rows[3] == {"a": 2}


def test_unreadable_inputs_raise_input_error(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="no such file"):
        read_rows(tmp_path / "missing.jsonl")
    with pytest.raises(InputError, match="unknown format"):
        read_rows(tmp_path / "rows.csv")
    bad = tmp_path / "bad.json"
    bad.write_text("{")
    with pytest.raises(InputError, match="not valid JSON"):
        read_rows(bad)
    broken = tmp_path / "broken.parquet"
    broken.write_bytes(b"PAR1 not really")
    with pytest.raises(InputError, match="parquet"):
        read_rows(broken)


def test_verl_parquet_layout_round_trips(tmp_path: Path) -> None:
    rows = [
        {
            "data_source": "openai/gsm8k",
            "prompt": [{"role": "user", "content": "q"}],
            "response": "#### 3",
            "reward_model": {"ground_truth": "3", "style": "rule"},
        }
    ]
    pq.write_table(pa.Table.from_pylist(rows), tmp_path / "in.parquet")
    assert list(read_rows(tmp_path / "in.parquet")) == rows

    results = [
        Result(0, Status.OK, score=1.0, extra={"acc": True}, row=rows[0]),
        Result(1, Status.TIMEOUT, error="timed out", row=rows[0]),
    ]
    with RowWriter(tmp_path / "out.parquet") as writer:
        for result in results:
            writer.write(result.to_row())
    table = pq.read_table(tmp_path / "out.parquet").to_pylist()
    assert [r["status"] for r in table] == ["ok", "timeout"]
    assert table[1]["score"] is None and json.loads(table[0]["extra"]) == {"acc": True}


@pytest.mark.parametrize("suffix", [".jsonl", ".json"])
def test_json_writers_produce_readable_files(tmp_path: Path, suffix: str) -> None:
    out = tmp_path / f"out{suffix}"
    with RowWriter(out) as writer:
        for i in range(3):
            writer.write({"i": i, "text": "\ud800 lone"})
    assert [r["i"] for r in read_rows(out)] == [0, 1, 2]


def test_gzip_round_trip_and_row_counts(tmp_path: Path) -> None:
    out = tmp_path / "out.jsonl.gz"
    with RowWriter(out) as writer:
        for i in range(5):
            writer.write({"i": i})
    assert [r["i"] for r in read_rows(out)] == [0, 1, 2, 3, 4]
    assert count_rows(out) is None  # compressed: unknown without reading it all
    plain = tmp_path / "in.jsonl"
    plain.write_text('{"a": 1}\n{"a": 2}\n{"a": 3}')  # no newline after the last row
    assert count_rows(plain) == 3


def test_a_truncated_gzip_ends_in_a_bad_row_not_a_crash(tmp_path: Path) -> None:
    path = tmp_path / "cut.jsonl.gz"
    with RowWriter(path) as writer:
        for i in range(2000):
            writer.write({"i": i, "pad": "x" * i})
    path.write_bytes(path.read_bytes()[:5000])
    rows = list(read_rows(path))
    assert isinstance(rows[-1], BadRow) and "ends early" in rows[-1].reason
    assert all(isinstance(r, dict) for r in rows[:-1])


def test_a_parquet_value_with_no_python_form_costs_its_row_only(tmp_path: Path) -> None:
    """A timestamp past year 9999 (pyarrow's to_pylist raises OverflowError) ended the
    run with a traceback and no output; now that row is a BadRow in its place."""
    path = tmp_path / "ts.parquet"
    stamps = pa.array([0, 0, 253402300800 * 1000, 0, 0], type=pa.timestamp("ms"))
    table = pa.table({"response": [f"#### {i}" for i in range(5)], "logged_at": stamps})
    pq.write_table(table, path, row_group_size=2)
    rows = list(read_rows(path))
    assert [r["response"] if isinstance(r, dict) else None for r in rows] == [
        "#### 0", "#### 1", None, "#### 3", "#### 4"
    ]  # fmt: skip
    assert isinstance(rows[2], BadRow) and rows[2].reason.startswith("row 3: a value cannot")
    assert "OverflowError" in rows[2].reason


def test_a_damaged_parquet_page_costs_its_row_group_and_keeps_the_count(tmp_path: Path) -> None:
    """A damaged data page: pyarrow cannot read past it, and the metadata says how many
    rows its row group holds, each of which gets a BadRow; the other groups are read."""
    clean, damaged = tmp_path / "clean.parquet", tmp_path / "damaged.parquet"
    responses = [f"#### {i} " + "x" * 40 for i in range(4000)]
    pq.write_table(pa.table({"response": responses}), clean, row_group_size=1000,
                   compression="none", use_dictionary=False)  # fmt: skip
    data = bytearray(clean.read_bytes())
    meta = pq.ParquetFile(clean).metadata.row_group(2).column(0)
    middle = meta.data_page_offset + meta.total_compressed_size // 2
    data[middle : middle + 64] = bytes(b ^ 0xFF for b in data[middle : middle + 64])
    damaged.write_bytes(bytes(data))
    rows = list(read_rows(damaged))
    assert len(rows) == 4000 == count_rows(damaged)
    bad = [i for i, row in enumerate(rows) if isinstance(row, BadRow)]
    assert bad and set(bad) <= set(range(2000, 3000)) and bad[-1] == 2999
    assert all(rows[i]["response"] == responses[i] for i in range(4000) if i not in bad)
    assert "row group 2 cannot be read" in rows[bad[0]].reason


def test_field_mapping_renames_and_reaches_into_objects() -> None:
    mapping = parse_field_map(["response=output", "ground_truth=reward_model.ground_truth"])
    rows = [
        {"output": "#### 3", "reward_model": {"ground_truth": "3"}},
        {"response": "x"},
        BadRow("b"),
    ]
    mapped = list(map_fields(rows, mapping))
    assert mapped[0]["response"] == "#### 3" and mapped[0]["ground_truth"] == "3"
    assert mapped[2] == BadRow("b")
    # a row without the source column is invalid, naming it: never scored on its own
    # "response" (a typo in the source column scored every row's draft, silently)
    assert isinstance(mapped[1], BadRow)
    assert mapped[1].reason == (
        "--field response=output: the row has no column 'output' (it has: response)"
    )
    with pytest.raises(InputError, match="TARGET=SOURCE"):
        parse_field_map(["response"])


def test_a_field_mapping_with_a_misspelt_source_names_the_likely_column() -> None:
    rows = [{"response": "draft: 4", "final_output": "#### 5", "ground_truth": "4"}]
    (mapped,) = map_fields(rows, parse_field_map(["response=final_ouput"]))
    assert isinstance(mapped, BadRow) and "did you mean 'final_output'?" in mapped.reason


def test_writer_replaces_its_target_only_when_closed(tmp_path: Path) -> None:
    target = tmp_path / "out.jsonl"
    target.write_text('{"old": true}\n')
    writer = RowWriter(target)
    writer.write({"new": 1})
    assert target.read_text() == '{"old": true}\n'  # still the old file while writing
    writer.close()
    assert _lines(target) == [{"new": 1}]
    assert oct(target.stat().st_mode & 0o777) != oct(0o600)  # not mkstemp's private mode
    discarded = RowWriter(target)
    discarded.write({"newer": 2})
    discarded.discard()
    assert _lines(target) == [{"new": 1}] and len(list(tmp_path.iterdir())) == 1


@pytest.mark.parametrize(
    ("target", "message"),
    [("missing/out.jsonl", "no such folder"), (".", "is a directory"), ("o.txt", "unknown format")],
)
def test_writer_refuses_unwritable_targets_at_once(
    tmp_path: Path, target: str, message: str
) -> None:
    with pytest.raises(OutputError, match=message):
        RowWriter(tmp_path / target)


def test_empty_parquet_output_is_still_readable(tmp_path: Path) -> None:
    with RowWriter(tmp_path / "none.parquet"):
        pass
    assert pq.read_table(tmp_path / "none.parquet").num_rows == 0


def _lines(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()]


# --- through `rewardkit score`: JSON Python cannot read costs one row, or one line ----


def test_json_the_reader_cannot_parse_costs_one_row_not_the_run(tmp_path: Path) -> None:
    """A JSONL line holding an integer of 5,000 digits (valid JSON, over Python's
    4,300-digit limit) or nesting 100,000 deep is one ``invalid`` row, not a traceback
    (exit 1) that loses every row."""
    good = json.dumps({"data_source": "openai/gsm8k", "response": "#### 4", "ground_truth": "4"})
    lines = [
        good,
        '{"data_source": "openai/gsm8k", "response": "#### 4", "ground_truth": ' + "9" * 5000 + "}",
        good,
        '{"data_source": "openai/gsm8k", "response": "#### 4", "ground_truth": '
        + "[" * 100_000
        + "]" * 100_000
        + "}",
        good,
        '{"data_source": "openai/gsm8k", "resp',  # a truncated last line
    ]
    path = tmp_path / "rows.jsonl"
    path.write_text("\n".join(lines))
    out = tmp_path / "out.jsonl"
    proc = run_cli("score", str(path), "-o", str(out), "reward.num_workers=1", "--no-progress")
    assert proc.returncode == 0, proc.stderr[-2000:]
    results = [strict_json(line) for line in out.read_text().splitlines()]
    assert [r["status"] for r in results] == ["ok", "invalid", "ok", "invalid", "ok", "invalid"]
    assert [results[i]["score"] for i in (0, 2, 4)] == [1.0, 1.0, 1.0]
    assert "line 2: not valid JSON" in results[1]["error"] and "4300 digits" in results[1]["error"]
    assert "line 4: not valid JSON (RecursionError" in results[3]["error"]
    assert "line 6: not valid JSON" in results[5]["error"]


def test_a_json_input_with_a_huge_integer_is_a_one_line_input_error(tmp_path: Path) -> None:
    path = tmp_path / "rows.json"
    path.write_text(
        '[{"data_source": "gsm8k", "response": "1", "ground_truth": ' + "7" * 5000 + "}]"
    )
    proc = run_cli("score", str(path), "-o", str(tmp_path / "out.jsonl"), "--no-progress")
    assert proc.returncode == 2
    assert "not valid JSON" in proc.stderr and "Traceback" not in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1


TOOL_TRAJECTORY = [
    {
        "role": "assistant",
        "content": None,
        "tool_calls": [{"type": "function", "function": {"name": "f", "arguments": '{"x": 5}'}}],
    },
    {"role": "tool", "tool_call_id": "c0", "name": "f", "content": "25"},
    {"role": "assistant", "content": [{"type": "text", "text": "#### 25"}]},
]


@pytest.mark.parametrize("suffix", [".parquet", ".jsonl", ".json"])
def test_trajectory_responses_round_trip_through_every_writer(tmp_path: Path, suffix: str) -> None:
    """Result rows holding trajectories (beside text rows) read back as the lists written:
    in Parquet the response column is JSON text, named in the file's metadata."""
    rows = [
        {"data_source": "gsm8k", "response": TOOL_TRAJECTORY, "ground_truth": "25"},
        {"data_source": "gsm8k", "response": "#### 5", "ground_truth": "5"},
        {"data_source": "gsm8k", "response": "[1, 2]", "ground_truth": "5"},  # text, not JSON
    ]
    out = tmp_path / f"out{suffix}"
    with RowWriter(out) as writer:
        for index, row in enumerate(rows):
            writer.write(Result(index, Status.OK, score=1.0, row=row).to_row())
    back = list(read_rows(out))
    assert [r["response"] for r in back] == [TOOL_TRAJECTORY, "#### 5", "[1, 2]"]


def test_a_parquet_list_of_struct_response_column_reads_as_trajectories(tmp_path: Path) -> None:
    """Trajectories as pandas or Hugging Face datasets store them (a list of structs: fields
    a message lacks read as null) score as trajectories."""
    rows = [
        {
            "data_source": "tool_call",
            "response": [
                {
                    "role": "assistant",
                    "content": "Let me look.",
                    "tool_calls": [
                        {"type": "function", "function": {"name": "f", "arguments": '{"x": 5}'}}
                    ],
                },
                {"role": "tool", "content": "25", "tool_calls": None},
            ],
            "ground_truth": json.dumps([{"name": "f", "arguments": {"x": 5}}]),
        },
        {
            "data_source": "tool_call",
            "response": [{"role": "assistant", "content": "No call.", "tool_calls": None}],
            "ground_truth": json.dumps([{"name": "f", "arguments": {"x": 5}}]),
        },
    ]
    table = pa.Table.from_pylist(rows)
    assert pa.types.is_list(table.schema.field("response").type)
    pq.write_table(table, tmp_path / "in.parquet")
    with RewardLoop({"reward": {"num_workers": 1}}) as loop:
        scored = loop.score(list(read_rows(tmp_path / "in.parquet")))
    assert [(r.status.value, r.score) for r in scored] == [("ok", 1.0), ("ok", 0.0)]
