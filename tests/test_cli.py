"""guards: the command line (rewardkit.cli): `rewardkit score` run as a user runs it, a real
subprocess on real files."""

from __future__ import annotations

import gzip
import json
import os
import pty
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml

from _support.cli import CLI, ROOT, read_jsonl, run_cli, score_file, slow_function, write_jsonl
from _support.wrong_math import expected_math_scores, math_rows
from rewardkit.cli import main


def test_score_the_bundled_example_end_to_end(tmp_path: Path) -> None:
    out = tmp_path / "scored.jsonl"
    proc = run_cli(
        "score", "examples/grpo_math.jsonl", "-o", str(out), "reward.num_workers=2", "--no-progress"
    )
    assert proc.returncode == 0, proc.stderr
    inputs = [
        json.loads(line)
        for line in (ROOT / "examples/grpo_math.jsonl").read_text().splitlines()
        if line.strip()
    ]
    outputs = [json.loads(line) for line in out.read_text().splitlines()]
    assert len(outputs) == len(inputs)
    assert [o["response"] for o in outputs] == [i["response"] for i in inputs]  # input order kept
    assert all(o["status"] == "ok" for o in outputs)
    assert (
        "rows/s" in proc.stderr
        and "lighteval/MATH" in proc.stderr
        and "openai/gsm8k" in proc.stderr
    )


def test_hostile_rows_get_results_and_exit_zero(tmp_path: Path) -> None:
    path = tmp_path / "hostile.jsonl"
    rows = [
        {
            "data_source": "lighteval/MATH",
            "response": r"\boxed{9^{9^{9^{9^{9}}}}}",
            "ground_truth": "3",
        },
        {
            "data_source": "lighteval/MATH",
            "response": "\\boxed{" + "(" * 5000 + ")" * 5000 + "}",
            "ground_truth": "1",
        },
        {
            "data_source": "openai/gsm8k",
            "response": "pad " * 250_000 + "#### 4",
            "ground_truth": "4",
        },
        {"data_source": "openai/gsm8k", "response": "nul\x00 and \ud800 #### 4", "ground_truth": 4},
        {"data_source": "openai/gsm8k", "response": None, "ground_truth": "4"},
        {"data_source": "unknown/source", "response": "x", "ground_truth": "4"},
        {"data_source": "openai/gsm8k", "response": "#### 4", "ground_truth": "4"},
    ]
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n{broken json\n")
    out = tmp_path / "out.jsonl"
    proc = score_file(path, out, "reward.num_workers=2", "reward.timeout_s=3")
    assert proc.returncode == 0, proc.stderr
    results = [json.loads(line) for line in out.read_text().splitlines()]
    assert len(results) == len(rows) + 1
    statuses = [r["status"] for r in results]
    assert statuses[2:] == ["ok", "ok", "invalid", "invalid", "ok", "invalid"]
    assert statuses[0] in ("ok", "timeout") and statuses[1] in ("ok", "timeout")
    assert results[0]["score"] in (0.0, None)
    assert "unknown/source" in results[5]["error"]
    assert "line 8" in results[7]["error"]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["score", "missing.jsonl"], "no such file"),
        (["score", "examples/grpo_math.jsonl", "reward.timeout_s=never"], "reward.timeout_s"),
        (["score", "examples/grpo_math.jsonl", "reward.nope=1"], "reward.nope: unknown key"),
        (["score", "examples/grpo_math.jsonl", "not-an-override"], "key=value"),
        (  # accepted, it would be ignored: rows carry no log-probs to compute a KL from
            ["score", "examples/grpo_math.jsonl", "algorithm.use_kl_in_reward=true"],
            "algorithm.use_kl_in_reward: `rewardkit score` returns scores before any KL",
        ),
        (["serve", "algorithm.use_kl_in_reward=true"], "apply rewardkit.kl.apply_kl_penalty"),
    ],
)
def test_bad_input_or_config_exits_2_with_one_message(
    args: list[str], message: str, capsys, monkeypatch
) -> None:
    monkeypatch.chdir(ROOT)
    assert main(args) == 2
    err = capsys.readouterr().err
    assert err.startswith("rewardkit: error:") and message in err


# --- outputs, signals and mistakes: the CLI ends in one line, keeps rows, resumes ------

STRING_FN = """
def compute_score(data_source, solution_str, ground_truth, extra_info=None):
    return "1.0"   # the bug: a string, not a number
"""


def _rows(path: Path, count: int, **extra: object) -> Path:
    with path.open("w") as handle:
        for i in range(count):
            handle.write(json.dumps({"data_source": "x", "response": f"r{i}", **extra}) + "\n")
    return path


def _one_line_error(proc: subprocess.CompletedProcess[str], code: int = 2) -> str:
    assert proc.returncode == code, proc.stderr
    assert "Traceback" not in proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1, proc.stderr
    return lines[0]


def test_output_over_the_input_is_refused_and_the_input_kept(tmp_path: Path) -> None:
    source = tmp_path / "x.jsonl"
    source.write_text((ROOT / "examples/grpo_math.jsonl").read_text())
    before = source.read_bytes()
    line = _one_line_error(run_cli("score", str(source), "-o", str(source), "--no-progress"))
    assert "is the input file" in line
    # The same file by another name is caught too.
    line = _one_line_error(
        run_cli("score", str(source), "-o", str(tmp_path / "." / "x.jsonl"), "--no-progress")
    )
    assert source.read_bytes() == before


@pytest.mark.parametrize(
    ("target", "message"),
    [
        ("missing/out.jsonl", "no such folder"),
        (".", "is a directory"),
        ("/dev/full", "No space left on device"),
        ("missing/out.parquet", "no such folder"),
        ("out.csv", "unknown format"),
    ],
)
def test_unwritable_outputs_end_in_one_line(tmp_path: Path, target: str, message: str) -> None:
    source = _rows(tmp_path / "in.jsonl", 5, ground_truth="1")
    out = target if target.startswith("/") else str(tmp_path / target)
    proc = run_cli("score", str(source), "-o", out, "--no-progress", "reward.num_workers=1")
    assert message in _one_line_error(proc)
    if target != "/dev/full":
        # Checked before scoring: no summary was printed, so no row was scored.
        assert "rows in" not in proc.stderr


def test_a_summary_that_cannot_be_written_ends_in_one_line(tmp_path: Path) -> None:
    """After the rows are written: the run's rows are kept, the summary's failure is one
    line, not a traceback (a red team's finding)."""
    source = _rows(tmp_path / "in.jsonl", 2, ground_truth="1")
    out = tmp_path / "out.jsonl"
    proc = run_cli(
        "score", str(source), "-o", str(out), "--summary-json", "/dev/full", "--no-progress",
        "reward.num_workers=1",
    )  # fmt: skip
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert proc.stderr.strip().splitlines()[-1] == (
        "rewardkit: error: /dev/full: cannot write the summary (No space left on device)"
    )
    assert len(out.read_text().splitlines()) == 2


@pytest.mark.parametrize("flag", ["--summary-json", "--report"])
def test_a_summary_or_report_to_dash_is_refused_not_written_to_a_file_named_dash(
    tmp_path: Path, flag: str
) -> None:
    """``-o -`` is stdout; ``--summary-json -`` wrote a file named ``-`` in the working
    directory, silently."""
    source = _rows(tmp_path / "in.jsonl", 2, ground_truth="1")
    proc = run_cli("score", str(source), flag, "-", "--no-progress", "reward.num_workers=1",
                   cwd=tmp_path)  # fmt: skip
    assert proc.returncode == 2 and f"{flag} -: give a file path" in _one_line_error(proc)
    assert not (tmp_path / "-").exists()


def test_the_summary_json_writes_no_bare_infinity(tmp_path: Path) -> None:
    """A mean of huge scores overflows to inf: the summary file says null, as the rows do
    (strict JSON readers refuse ``Infinity``)."""
    source = tmp_path / "in.jsonl"
    module = tmp_path / "big.py"
    module.write_text("def compute_score(data_source, solution_str, ground_truth, extra_info=None):\n"
                      "    return float(solution_str)\n")  # fmt: skip
    source.write_text("".join(
        json.dumps({"data_source": "custom", "response": r, "ground_truth": "1"}) + "\n"
        for r in ("1e308", "1e308")
    ))  # fmt: skip
    summary = tmp_path / "summary.json"
    proc = run_cli(
        "score", str(source), "-o", str(tmp_path / "out.jsonl"), "--summary-json", str(summary),
        "--no-progress", "reward.num_workers=1", f"reward.custom_reward_function.path={module}",
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "Infinity" not in summary.read_text()
    json.loads(summary.read_text(), parse_constant=lambda name: pytest.fail(name))


def test_a_failed_write_keeps_the_previous_output(tmp_path: Path) -> None:
    source = _rows(tmp_path / "in.jsonl", 3)
    out = tmp_path / "out.json"
    out.write_text("[]\n")
    proc = run_cli("score", str(source), "-o", str(out), "bad-override", "--no-progress")
    assert proc.returncode == 2 and out.read_text() == "[]\n"
    assert not list(tmp_path.glob(".out.json.*"))  # no temporary file left behind


def test_stdout_closed_by_head_ends_in_one_line(tmp_path: Path) -> None:
    source = tmp_path / "big.jsonl"
    text = (ROOT / "examples/grpo_math.jsonl").read_text()
    source.write_text(text * 20)  # 2,560 rows, far more than a pipe buffer
    shell = (
        f"{sys.executable} -m rewardkit.cli score {source} -o - --no-progress "
        "reward.num_workers=1 2>err.txt | head -n 2 > head.txt; echo ${PIPESTATUS[0]} > rc.txt"
    )
    subprocess.run(["bash", "-c", shell], cwd=tmp_path, timeout=300, check=True)
    assert len((tmp_path / "head.txt").read_text().splitlines()) == 2
    assert (tmp_path / "rc.txt").read_text().strip() == "1"
    err = (tmp_path / "err.txt").read_text()
    assert "Traceback" not in err and err.strip().splitlines() == [
        "rewardkit: output pipe closed by the reader; stopped"
    ]


def test_ctrl_c_stops_cleanly_keeps_rows_and_resume_finishes(tmp_path: Path) -> None:
    fn, go = slow_function(tmp_path)
    source = _rows(tmp_path / "in.jsonl", 400)
    out = tmp_path / "out.jsonl"
    argv = [*CLI, "score", str(source), "-o", str(out)]
    argv += ["--no-progress", "reward.num_workers=2", f"reward.custom_reward_function.path={fn}"]
    child = subprocess.Popen(argv, cwd=ROOT, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 120  # start-up, then rows at 0.05 s each on 2 workers
    while time.monotonic() < deadline and not any(
        p.stat().st_size for p in tmp_path.glob(".out.jsonl.*.partial")
    ):
        time.sleep(0.2)  # until some rows are on disk: a loaded machine starts slowly
    child.send_signal(signal.SIGINT)
    _, err = child.communicate(timeout=120)
    assert child.returncode == 130, err
    assert "Traceback" not in err and "Event loop is closed" not in err
    kept = read_jsonl(out)  # every line whole
    assert 0 < len(kept) < 400
    assert [r["response"] for r in kept] == [f"r{i}" for i in range(len(kept))]
    assert f"interrupted after {len(kept):,} rows" in err and "--resume" in err

    go.touch()  # the resumed run need not nap: what it keeps and adds is what is checked
    proc = run_cli(*argv[3:], "--resume")
    assert proc.returncode == 0, proc.stderr
    assert f"resuming: {len(kept):,} rows kept" in proc.stderr
    assert f"{400 - len(kept):,} rows in" in proc.stderr  # the rate is over rows scored now
    assert f"{len(kept):,} kept from the earlier run" in proc.stderr
    done = read_jsonl(out)
    assert [r["response"] for r in done] == [f"r{i}" for i in range(400)]
    assert all(r["status"] == "ok" for r in done)
    assert re.search(r"^x\s+400\s", proc.stderr, re.M)  # the summary counts the kept rows too


def _fork_server_of(pid: int) -> bool:
    """Whether ``pid`` has a child running multiprocessing's fork server."""
    for status in Path("/proc").glob("[0-9]*/status"):
        try:
            lines = status.read_text().splitlines()
            cmdline = (status.parent / "cmdline").read_bytes()
        except OSError:
            continue
        if f"PPid:\t{pid}" in lines and b"forkserver" in cmdline:
            return True
    return False


def test_ctrl_c_while_the_workers_start_prints_no_traceback(tmp_path: Path) -> None:
    """A terminal's Ctrl-C reaches the whole process group, the fork server too, which
    is still importing (a second or so): it starts with SIGINT ignored, so only the CLI's
    one line is printed (a 15-40 line traceback from the fork server was: a red team's
    finding)."""
    source = _rows(tmp_path / "in.jsonl", 50, ground_truth="1")
    argv = [*CLI, "score", str(source), "--no-progress", "reward.num_workers=2"]
    child = subprocess.Popen(
        argv, cwd=ROOT, stderr=subprocess.PIPE, text=True, start_new_session=True
    )
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and not _fork_server_of(child.pid):
        time.sleep(0.01)
    os.killpg(child.pid, signal.SIGINT)
    _, err = child.communicate(timeout=60)
    assert child.returncode in (0, 130), err  # 0: the 50 rows were done before the signal
    assert "Traceback" not in err and "KeyboardInterrupt" not in err, err


def test_limit_stdin_gzip_and_field_mapping(tmp_path: Path) -> None:
    # verl's rollout dumps name the columns `output` and `gts`.
    rows = [
        {"data_source": "openai/gsm8k", "output": f"#### {i}", "gts": str(i if i % 2 else 0)}
        for i in range(1, 31)
    ]
    text = "".join(json.dumps(r) + "\n" for r in rows)
    out = tmp_path / "out.jsonl.gz"
    argv = [*CLI, "score", "-", "-o", str(out), "--limit", "10"]
    argv += ["--field", "response=output", "--field", "ground_truth=gts", "--no-progress"]
    proc = subprocess.run(argv, input=text, capture_output=True, text=True, timeout=300, cwd=ROOT)
    assert proc.returncode == 0, proc.stderr
    with gzip.open(out, "rt") as handle:
        results = [json.loads(line) for line in handle]
    assert len(results) == 10
    assert [r["score"] for r in results] == [1.0 if i % 2 else 0.0 for i in range(1, 11)]
    # .jsonl.gz in, too (the same main(), in this process).
    again = tmp_path / "again.jsonl"
    assert main(["score", str(out), "-o", str(again), "--no-progress"]) == 0
    assert len(read_jsonl(again)) == 10


def test_summary_json_and_fail_on_error_when_every_row_fails(tmp_path: Path) -> None:
    fn = tmp_path / "fn.py"
    fn.write_text(STRING_FN)
    source = _rows(tmp_path / "in.jsonl", 6)
    summary = tmp_path / "summary.json"
    argv = ["score", str(source), "-o", str(tmp_path / "out.jsonl"), "--no-progress"]
    argv += ["--summary-json", str(summary), f"reward.custom_reward_function.path={fn}"]
    proc = run_cli(*argv, "--fail-on-error", "0.5")
    assert proc.returncode == 1
    assert "100.0% of rows failed, over --fail-on-error 0.5" in proc.stderr
    # No "accuracy 100%" next to "ok 0": accuracy is over ok rows, and there are none.
    assert "6 of 6 rows failed" in proc.stderr and "100.00%" not in proc.stderr
    assert "returned str, expected a number" in proc.stderr  # the commonest failure, named
    data = json.loads(summary.read_text())
    assert data["failed_share"] == 1.0 and data["total"]["accuracy"] is None
    assert data["total"]["statuses"]["error"] == 6
    assert data["top_errors"][0]["count"] == 6
    # The same main() in this process (no second interpreter and worker warm-up to pay):
    # at a limit of 1 the run passes.
    assert main([*argv, "--fail-on-error", "1"]) == 0


def test_summary_is_not_truncated_in_logs(tmp_path: Path) -> None:
    name = "a-very-long-data-source-name/with-a-version-suffix-v2024.11-that-must-stay-whole"
    source = tmp_path / "in.jsonl"
    source.write_text(json.dumps({"data_source": name, "response": "#### 1"}) + "\n")
    proc = run_cli("score", str(source), "--no-progress", "reward.num_workers=1")  # stderr: a pipe
    assert proc.returncode == 0
    assert name in proc.stderr and "…" not in proc.stderr


def test_version_and_config_show(tmp_path: Path) -> None:
    proc = run_cli("--version")
    assert proc.returncode == 0 and proc.stdout.startswith("rewardkit ")
    proc = run_cli(
        "config", "show", "reward.timeout_s=5", "reward.reward_model.http.api_key=s3cret"
    )
    assert proc.returncode == 0, proc.stderr
    shown = yaml.safe_load(proc.stdout)
    assert shown["reward"]["timeout_s"] == 5.0
    assert shown["reward"]["cache_size"] == 100_000  # defaults included
    assert (
        "s3cret" not in proc.stdout and shown["reward"]["reward_model"]["http"]["api_key"] == "***"
    )
    bad = run_cli("config", "show", "reward.nope=1")
    assert bad.returncode == 2 and "reward.nope" in bad.stderr and "Traceback" not in bad.stderr


@pytest.mark.parametrize(
    ("override", "message"),
    [
        ("reward.reward_model.url=http://127.0.0.1:9/v1", "ends in '/v1'"),
        ("reward.reward_model.url=127.0.0.1:9", "needs a scheme"),
        ("reward.reward_model.model_path=Skywork/Skywork-Reward-V2-Llama-3.1-8B", "model hub id"),
        ("reward.reward_model.http.api_key=${oc.env:REWARDKIT_TEST_UNSET_VAR}", "is not set"),
    ],
)
def test_config_mistakes_are_caught_at_load(override: str, message: str) -> None:
    argv = ["score", "examples/grpo_math.jsonl", "--no-progress", "reward.reward_model.enable=true"]
    argv += ["reward.reward_model.backend=openai", "reward.reward_model.kind=generative"]
    if "url=" not in override:
        argv.append("reward.reward_model.url=http://127.0.0.1:9")
    proc = run_cli(*argv, override)
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert message in proc.stderr and "rows in" not in proc.stderr
    assert "KeyError" not in proc.stderr


def test_progress_bar_shows_the_total_and_time_left_on_a_terminal(tmp_path: Path) -> None:
    fn, _ = slow_function(tmp_path)
    source = _rows(tmp_path / "in.jsonl", 60)  # 1.5 s of naps: fifteen redraws of the bar
    primary, secondary = pty.openpty()  # stderr is a terminal, as when a person runs it
    argv = [*CLI, "score", str(source), "-o", str(tmp_path / "o.jsonl")]
    argv += ["reward.num_workers=2", f"reward.custom_reward_function.path={fn}"]
    child = subprocess.Popen(argv, cwd=ROOT, stderr=secondary, stdout=subprocess.DEVNULL)
    os.close(secondary)
    seen = b""
    while True:
        try:
            chunk = os.read(primary, 65536)
        except OSError:  # the child closed the terminal
            break
        if not chunk:
            break
        seen += chunk
    os.close(primary)
    assert child.wait(timeout=120) == 0
    text = seen.decode("utf-8", "replace")
    assert re.search(r"\d+/60", text)  # done of the total
    assert "eta" in text
    assert "starting 2 workers" in text  # while the fork server imports and warms up


def test_the_summary_counts_degenerate_rows_and_shows_the_wall_time(tmp_path: Path) -> None:
    """A row that ends in a loop is ok, scored wrong, extra.degenerate = 1, and counted; the
    first line gives the scoring rate and, beside it, the wall time with the workers'
    start-up (a short run is mostly start-up)."""
    loop = "So the answer is \\boxed{4}. " + "\\boxed{} " * 3000
    rows = [
        {"data_source": "lighteval/MATH", "response": loop, "ground_truth": "4"},
        {"data_source": "math_dapo", "response": loop, "ground_truth": "4"},
        {"data_source": "lighteval/MATH", "response": "\\boxed{4}", "ground_truth": "4"},
    ]
    source = write_jsonl(tmp_path / "rows.jsonl", rows)
    proc = score_file(source, tmp_path / "out.jsonl", "--summary-json", str(tmp_path / "s.json"))
    assert proc.returncode == 0, proc.stderr
    results = read_jsonl(tmp_path / "out.jsonl")
    assert [(r["status"], r["score"]) for r in results] == [("ok", 0.0), ("ok", -1.0), ("ok", 1.0)]
    assert [r["extra"].get("degenerate") for r in results] == [1, 1, None]
    assert "2 rows degenerate" in proc.stderr
    first = next(line for line in proc.stderr.splitlines() if "rows in" in line)
    found = re.search(r"3 rows in ([\d.]+)s of scoring .*; ([\d.]+)s wall with start-up", first)
    assert found and float(found[2]) > float(found[1]), first
    summary = json.loads((tmp_path / "s.json").read_text())
    assert summary["total"]["degenerate"] == 2 and summary["wall_seconds"] > summary["seconds"]
    assert summary["by_source"]["math_dapo"]["degenerate"] == 1


def test_wrong_math_answers_score_zero_with_rewardkit_score(tmp_path: Path) -> None:
    source = write_jsonl(tmp_path / "rows.jsonl", math_rows())
    proc = run_cli("score", str(source), "-o", "out.jsonl", "--no-progress", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    results = read_jsonl(tmp_path / "out.jsonl")
    assert [r["status"] for r in results] == ["ok"] * len(results)
    assert [r["score"] for r in results] == expected_math_scores()


# ---------------------------------------------------------------------- rewardkit bench


def test_bench_outside_a_checkout_says_where_to_run_it(tmp_path: Path, capsys, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)  # no benchmarks/ here: the installed package is no checkout
    assert main(["bench", "scoring"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("rewardkit: error: no bench_*.py in")
    assert "source checkout" in err and "--dir" in err


def test_bench_runs_the_scripts_of_the_folder_it_is_given(tmp_path: Path, capsys) -> None:
    folder = tmp_path / "mine"
    folder.mkdir()
    ran = tmp_path / "ran.txt"
    (folder / "bench_hello.py").write_text(
        f"import sys\nopen({str(ran)!r}, 'w').write(' '.join(sys.argv[1:]))\n"
    )
    assert main(["bench", "hello", "--quick", "--dir", str(folder)]) == 0
    assert ran.read_text() == "--quick"
    assert main(["bench", "nope", "--dir", str(folder)]) == 2
    assert "unknown benchmark 'nope'; available: hello" in capsys.readouterr().err
