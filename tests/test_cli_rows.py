"""guards: the CLI never loses rows (scoring_run, io, report): overwrites, --resume, SIGTERM."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from _support.cli import read_jsonl, score_file, slow_function, write_jsonl
from rewardkit.io import read_rows

ROOT = Path(__file__).resolve().parents[1]


def _cli(*args: str, cwd: Path = ROOT, **kwargs: object) -> subprocess.CompletedProcess[str]:
    argv = [sys.executable, "-m", "rewardkit.cli", *args]
    options: dict[str, object] = {"capture_output": True, "text": True, "timeout": 300}
    return subprocess.run(argv, cwd=cwd, **{**options, **kwargs})  # type: ignore[call-overload]


def _gsm8k(path: Path, count: int, **extra: object) -> Path:
    rows = [
        {"data_source": "openai/gsm8k", "response": f"#### {i}", "ground_truth": str(i)}
        for i in range(count)
    ]
    path.write_text("".join(json.dumps({**row, **extra}) + "\n" for row in rows))
    return path


def _read(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def _one_line_error(proc: subprocess.CompletedProcess[str], code: int = 2) -> str:
    assert proc.returncode == code, proc.stderr
    assert "Traceback" not in proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1, proc.stderr
    assert lines[0].startswith("rewardkit: error:"), lines[0]
    return lines[0]


# ---------------------------------------------------------------------- outputs over inputs


def _refused_overwrites(tmp: Path) -> list[tuple[str, list[str], str | None, str | None, str]]:
    """(name, argv, file on stdin, file stdout appends to, words the one line must hold)."""
    (tmp / "link.jsonl").symlink_to(tmp / "in.jsonl")
    return [
        ("stdin redirected from the -o file", ["score", "-", "-o", "in.jsonl", "--no-progress"],
         "in.jsonl", None,
         "-o in.jsonl is the input file (on stdin)"),
        ("stdout appended to the input", ["score", "in.jsonl", "-o", "-", "--no-progress"], None, "in.jsonl",
         "-o - (stdout) is the input file"),
        ("--summary-json at the input by a symlink",
         ["score", "link.jsonl", "-o", "out.jsonl", "--summary-json", "./in.jsonl"], None, None,
         "--summary-json ./in.jsonl is the input file"),
        ("--report at the input on stdin", ["score", "-", "--report", "in.jsonl", "--no-progress"], "in.jsonl",
         None, "--report in.jsonl is the input file (on stdin)"),
        ("--summary-json at the -o file",
         ["score", "in.jsonl", "-o", "out.jsonl", "--summary-json", "./out.jsonl"], None, None,
         "--summary-json ./out.jsonl is also the -o file"),
        ("--report at the --summary-json file",
         ["score", "in.jsonl", "--summary-json", "s.json", "--report", "s.json"], None, None,
         "is also the"),
        ("report's -o at its input", ["report", "scored.jsonl", "-o", "./scored.jsonl"], None,
         None, "-o ./scored.jsonl is the input file"),
    ]  # fmt: skip


def test_outputs_that_would_destroy_an_input_are_refused_before_anything_is_written(
    tmp_path: Path,
) -> None:
    source = _gsm8k(tmp_path / "in.jsonl", 4)
    scored = tmp_path / "scored.jsonl"
    assert _cli("score", str(source), "-o", str(scored), "--no-progress").returncode == 0
    earlier = tmp_path / "out.jsonl"
    earlier.write_text('{"kept": "from an earlier run"}\n')
    files = {p.name: p.read_bytes() for p in tmp_path.iterdir()}
    for name, argv, stdin, stdout, words in _refused_overwrites(tmp_path):
        with open(tmp_path / (stdin or os.devnull), "rb") as feed:
            with open(tmp_path / stdout, "ab") if stdout else open(os.devnull, "wb") as sink:
                proc = subprocess.run(
                    [sys.executable, "-m", "rewardkit.cli", *argv],
                    cwd=tmp_path, stdin=feed, stdout=sink, stderr=subprocess.PIPE,
                    text=True, timeout=300,
                )  # fmt: skip
        assert words in _one_line_error(proc), name
        after = {p.name: p.read_bytes() for p in tmp_path.iterdir() if p.name != "link.jsonl"}
        assert after == files, name  # nothing written, nothing left behind


# ---------------------------------------------------------------------- --resume


def test_resume_refuses_an_output_scored_from_another_input(tmp_path: Path) -> None:
    first = _gsm8k(tmp_path / "first.jsonl", 6)
    out = tmp_path / "out.jsonl"
    assert (
        _cli("score", str(first), "-o", str(out), "--limit", "3", "--no-progress").returncode == 0
    )
    before = out.read_bytes()
    assert all(len(row["input_digest"]) == 16 for row in _read(out))

    other = tmp_path / "other.jsonl"  # the same rows but the second: the output's row 2 is foreign
    rows = _read(first)
    rows[1]["response"] = "#### 41"
    other.write_text("".join(json.dumps(r) + "\n" for r in rows))
    line = _one_line_error(_cli("score", str(other), "-o", str(out), "--resume", "--no-progress"))
    assert f"row 2 of {out} was not scored from row 2 of the input" in line
    assert "response '#### 1' there, '#### 41' in the input" in line
    assert out.read_bytes() == before

    # The same input with another --field mapping is another input, too.
    line = _one_line_error(
        _cli("score", str(first), "-o", str(out), "--resume", "--field", "ground_truth=response")
    )
    assert "row 1 of" in line and out.read_bytes() == before

    # An output longer than the input.
    short = _gsm8k(tmp_path / "short.jsonl", 2)
    line = _one_line_error(_cli("score", str(short), "-o", str(out), "--resume"))
    assert "holds more rows than the input (2)" in line and out.read_bytes() == before

    # An output written before rows carried input_digest is checked by its echoed response.
    old = tmp_path / "old.jsonl"
    old.write_text("".join(json.dumps({k: v for k, v in r.items() if k != "input_digest"}) + "\n"
                           for r in _read(out)))  # fmt: skip
    line = _one_line_error(_cli("score", str(other), "-o", str(old), "--resume"))
    assert "row 2 of" in line and "response '#### 1' there" in line

    # The right input resumes: three rows kept, three scored.
    proc = _cli("score", str(first), "-o", str(out), "--resume", "--no-progress")
    assert proc.returncode == 0, proc.stderr
    assert "resuming: 3 rows kept" in proc.stderr
    assert [r["response"] for r in _read(out)] == [f"#### {i}" for i in range(6)]


def test_sigterm_keeps_the_finished_rows_exits_143_and_resume_finishes(tmp_path: Path) -> None:
    fn, go = slow_function(tmp_path)
    source = tmp_path / "in.jsonl"
    source.write_text("".join(json.dumps({"data_source": "x", "response": f"r{i}"}) + "\n"
                              for i in range(400)))  # fmt: skip
    out = tmp_path / "out.jsonl"
    argv = [sys.executable, "-m", "rewardkit.cli", "score", str(source), "-o", str(out)]
    argv += ["--no-progress", "reward.num_workers=2", f"reward.custom_reward_function.path={fn}"]
    # A session of its own: the signal goes to the whole process group, as a scheduler's does.
    child = subprocess.Popen(argv, cwd=ROOT, stderr=subprocess.PIPE, text=True,
                             start_new_session=True)  # fmt: skip
    deadline = time.monotonic() + 120  # start-up, then rows at 0.05 s each on 2 workers
    while time.monotonic() < deadline and not any(
        p.stat().st_size for p in tmp_path.glob(".out.jsonl.*.partial")
    ):
        time.sleep(0.2)  # until some rows are on disk: a loaded machine starts slowly
    os.killpg(child.pid, signal.SIGTERM)
    _, err = child.communicate(timeout=120)
    assert child.returncode == 143, err
    assert "Traceback" not in err
    kept = _read(out)  # every line whole
    assert 0 < len(kept) < 400
    assert [r["response"] for r in kept] == [f"r{i}" for i in range(len(kept))]
    assert all(r["status"] == "ok" for r in kept)
    assert f"terminated (SIGTERM) after {len(kept):,} rows" in err and "--resume" in err
    assert not list(tmp_path.glob(".out.jsonl.*"))  # the .partial file became the output

    go.touch()  # the resumed rows need not nap
    proc = _cli(*argv[3:], "--resume")
    assert proc.returncode == 0, proc.stderr
    assert f"resuming: {len(kept):,} rows kept" in proc.stderr
    done = _read(out)
    assert [r["response"] for r in done] == [f"r{i}" for i in range(400)]
    assert all(r["status"] == "ok" for r in done)


# ---------------------------------------------------------------------- Parquet


def test_parquet_columns_of_mixed_types_round_trip_through_report_and_resume(
    tmp_path: Path,
) -> None:
    rows = [
        {"data_source": "openai/gsm8k", "response": "#### 1", "ground_truth": "1",
         "prompt": "one?", "extra_info": {"uid": 7}, "tag": 1},
        {"data_source": "openai/gsm8k", "response": "#### 2", "ground_truth": 2,
         "prompt": [{"role": "user", "content": "two?"}], "extra_info": {"uid": "a"}, "tag": "b"},
        {"data_source": "openai/gsm8k", "response": "#### 3", "ground_truth": ["3", 3.0],
         "prompt": None, "extra_info": {}, "tag": None},
        {"data_source": "openai/gsm8k", "response": 4, "ground_truth": {"x": 1}},
    ]  # fmt: skip
    source = tmp_path / "in.jsonl"
    source.write_text("".join(json.dumps(r) + "\n" for r in rows))
    out = tmp_path / "out.parquet"
    proc = _cli("score", str(source), "-o", str(out), "--limit", "2", "--no-progress")
    assert proc.returncode == 0, proc.stderr
    proc = _cli("score", str(source), "-o", str(out), "--resume", "--no-progress")
    assert proc.returncode == 0, proc.stderr
    assert "resuming: 2 rows kept" in proc.stderr

    table = pq.read_table(out)
    assert str(table.schema.field("ground_truth").type) == "string"  # JSON text
    assert table.column("ground_truth").to_pylist()[:2] == ['"1"', "2"]
    # rewardkit reads back what it wrote: "1" stays text, 2 stays a number.
    back = list(read_rows(out))
    assert [r["ground_truth"] for r in back] == ["1", 2, ["3", 3.0], {"x": 1}]
    assert [r["prompt"] for r in back][:2] == ["one?", [{"role": "user", "content": "two?"}]]
    assert [r["tag"] for r in back] == [1, "b", None, None]
    assert [r["status"] for r in back] == ["ok", "ok", "ok", "invalid"]
    assert back[0]["components"] == {"rule": 1.0}

    report = tmp_path / "report.html"
    proc = _cli("report", str(out), "-o", str(report))
    assert proc.returncode == 0, proc.stderr
    assert "report on 4 rows" in proc.stderr and report.stat().st_size > 1000


# ---------------------------------------------------------------------- report, fields, -o


def test_report_refuses_an_unscored_file(tmp_path: Path) -> None:
    source = _gsm8k(tmp_path / "rollouts.jsonl", 3)
    line = _one_line_error(_cli("report", str(source), "-o", str(tmp_path / "r.html")))
    assert "rows are not scored (no 'status' or 'score' field)" in line
    assert "rewardkit score" in line and not (tmp_path / "r.html").exists()


def test_a_misspelt_field_target_is_refused_with_the_closest_name(tmp_path: Path) -> None:
    source = _gsm8k(tmp_path / "in.jsonl", 2)
    line = _one_line_error(_cli("score", str(source), "--field", "respnse=output"))
    assert "'respnse' is not a Sample field; did you mean response?" in line
    line = _one_line_error(_cli("score", str(source), "--field", "score=output"))
    assert "'score' is not a Sample field" in line and "did you mean" not in line


def test_missing_or_null_fields_say_which_and_how_to_map_them(tmp_path: Path) -> None:
    rows = [
        {"data_source": "openai/gsm8k", "output": "#### 1", "ground_truth": "1"},
        {"data_source": "openai/gsm8k", "response": None, "ground_truth": "1"},
        {"response": "#### 1", "ground_truth": "1"},
        {"data_source": None, "response": "#### 1", "ground_truth": "1"},
        {"data_source": "openai/gsm8k", "response": "#### 1", "answer": "1"},
        {"data_source": "openai/gsm8k", "response": 1, "ground_truth": "1"},
    ]
    source = tmp_path / "in.jsonl"
    source.write_text("".join(json.dumps(r) + "\n" for r in rows))
    out = tmp_path / "out.jsonl"
    proc = _cli("score", str(source), "-o", str(out), "--no-progress")
    assert proc.returncode == 0, proc.stderr
    errors = [r["error"] for r in _read(out)]
    assert all(r["status"] == "invalid" for r in _read(out))
    assert (
        errors[0] == "field 'response' is missing: the row has 'output' "
        "(rewardkit score: --field response=output reads it from there)"
    )
    assert errors[1].startswith("field 'response' is null: ") and "--field response=" in errors[1]
    assert errors[2].startswith(
        "field 'data_source' is missing: give the row one, or set reward.default_data_source"
    )
    assert errors[3].startswith("field 'data_source' is null: ")
    assert "needs a ground_truth (missing or null)" in errors[4]
    assert "--field ground_truth=COLUMN" in errors[4]
    assert errors[5] == "field 'response' must be a string or a list of chat messages (got int)"


def test_without_output_the_summary_says_the_rows_were_not_kept(tmp_path: Path) -> None:
    source = _gsm8k(tmp_path / "in.jsonl", 2)
    proc = _cli("score", str(source), "--no-progress", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == ""
    last = proc.stderr.strip().splitlines()[-1]
    assert last == (
        "rewardkit: no output written: the scored rows were not kept "
        "(use -o FILE to keep them, or -o - for JSONL on stdout)"
    )
    assert sorted(p.name for p in tmp_path.iterdir()) == ["in.jsonl"]


@pytest.mark.parametrize("flag", ["-o", "--summary-json"])
def test_the_input_by_another_name_is_still_the_input(tmp_path: Path, flag: str) -> None:
    source = _gsm8k(tmp_path / "in.jsonl", 2)
    os.link(source, tmp_path / "hard.jsonl")  # a hard link: another path, the same inode
    before = source.read_bytes()
    line = _one_line_error(_cli("score", str(source), flag, str(tmp_path / "hard.jsonl")))
    assert "is the input file" in line and source.read_bytes() == before


def test_group_normalization_refuses_resume(tmp_path: Path) -> None:
    """normalize_then_sum scores a row against its whole group (RewardLoop.iter_score
    takes the whole input): a --resume would aggregate the new rows without the kept ones."""
    from rewardkit.scoring_run import input_digest

    rows = [
        {"data_source": "openai/gsm8k", "prompt": "a", "response": r, "ground_truth": "72"}
        for r in ("#### 72", "#### 7")
    ]
    source = write_jsonl(tmp_path / "in.jsonl", rows)
    kept = {**rows[0], "score": 0.7, "status": "ok", "input_digest": input_digest(rows[0])}
    out = write_jsonl(tmp_path / "out.jsonl", [kept])
    proc = score_file(source, out, "reward.aggregation=normalize_then_sum", "--resume")
    assert proc.returncode != 0
    assert "--resume: reward.aggregation=normalize_then_sum" in proc.stderr
    assert read_jsonl(out) == [kept]  # the output is left as it was
