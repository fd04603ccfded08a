from __future__ import annotations

import json
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from rewardkit import InputError, Result, Status
from rewardkit.io import BadRow, RowWriter, read_rows


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
