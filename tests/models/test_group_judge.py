"""guards: rewardkit.models.group_judge and models.gathering: a judge that sees a whole GRPO
group, on a real HTTP judge that grades by a rule, a dead endpoint and a tiny local LM.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

from _support.model_fakes import FakeModelServer, ServerThread, scored_by
from _support.ranking_judge import RankingJudge, rows
from _support.serving import free_port, running_server
from rewardkit import RewardLoop
from rewardkit.config import GroupJudgeConfig, JudgeConfig, RewardModelConfig, load_config
from rewardkit.errors import ConfigError, InvalidSampleError, JudgeParseError, ScorerError
from rewardkit.models import build_model_scorers
from rewardkit.models.group_judge import (
    GroupJudge,
    listwise_scores,
    load_group_template,
    parse_score_list,
)
from rewardkit.types import Sample, Status

QUICK = {"timeout_s": 10, "max_retries": 0}


def config(address: str, group: dict[str, Any], **rm: Any) -> dict[str, Any]:
    """A RewardLoop config with a group judge at ``address`` (``rm``: other reward_model keys)."""
    judge = {"group": group, **rm.pop("judge", {})}
    model = {"enable": True, "kind": "generative", "backend": "openai", "url": address}
    return {
        "reward": {"num_workers": 1, "reward_model": {**model, "http": QUICK, "judge": judge, **rm}}
    }


def scorer(url: str, **group: Any) -> GroupJudge:
    cfg = load_config(config(url, group)).reward.reward_model
    return GroupJudge(cfg)


@pytest.fixture(scope="module")
def judge() -> Iterator[tuple[str, RankingJudge]]:
    ranking = RankingJudge()
    with ServerThread(ranking.app) as url:
        yield url, ranking


@pytest.fixture
def ranking(judge: tuple[str, RankingJudge]) -> tuple[str, RankingJudge]:
    url, server = judge
    server.requests.clear()
    return url, server


@pytest.fixture(scope="module")
def listwise(judge: tuple[str, RankingJudge]) -> Iterator[RewardLoop]:
    group = {"mode": "listwise", "gather_timeout_s": 5, "max_size": 300}
    with RewardLoop(config(judge[0], group)) as loop:
        yield loop


# ---------------------------------------------------------------------- listwise, batch calls


def test_listwise_gives_each_sample_the_score_the_judge_gave_it(
    listwise: RewardLoop, ranking: tuple[str, RankingJudge]
) -> None:
    _, server = ranking
    results = listwise.score(rows("a", [3, 7, 9]) + rows("b", [10, 0]))
    assert [r.status for r in results] == [Status.OK] * 5
    assert [r.score for r in results] == pytest.approx([0.3, 0.7, 0.9, 1.0, 0.0])
    assert results[0].components == {"group_judge": pytest.approx(0.3)}
    assert results[1].extra["judge_raw"] == 7.0 and results[1].extra["group_size"] == 3
    # one request per group, each showing the whole group in input order
    assert sorted(server.listed(i) for i in range(2)) == [[3, 7, 9], [10, 0]]


def test_rows_of_a_group_are_gathered_wherever_they_sit(
    listwise: RewardLoop, ranking: tuple[str, RankingJudge]
) -> None:
    _, server = ranking
    a, b = rows("a", [1, 2, 3]), rows("b", [4, 5, 6])
    interleaved = [a[0], b[0], a[1], b[1], a[2], b[2]]
    results = listwise.score(interleaved)
    assert [r.score for r in results] == pytest.approx([0.1, 0.4, 0.2, 0.5, 0.3, 0.6])
    assert len(server.requests) == 2


def test_a_group_longer_than_a_chunk_is_one_group(
    listwise: RewardLoop, ranking: tuple[str, RankingJudge]
) -> None:
    """iter_score sends rows in chunks of 256; a group must not be cut between two."""
    _, server = ranking
    group = rows("long", [i % 11 for i in range(260)])
    results = listwise.score(group)
    assert all(r.ok for r in results)
    assert len(server.requests) == 1 and len(server.listed(0)) == 260


def test_groups_by_prompt_when_extra_info_names_none(
    listwise: RewardLoop, ranking: tuple[str, RankingJudge]
) -> None:
    _, server = ranking
    batch = rows("x", [2, 8]) + rows("y", [5])
    for row in batch:
        del row["extra_info"]["uid"]
    results = listwise.score(batch)
    assert [r.score for r in results] == pytest.approx([0.2, 0.8, 0.5])
    assert sorted(server.listed(i) for i in range(2)) == [[2, 8], [5]]


def test_a_slow_group_does_not_hold_another_groups_results(
    listwise: RewardLoop, ranking: tuple[str, RankingJudge]
) -> None:
    batch = rows("slow", [1, 2], prompt="SLOW2") + rows("fast", [4, 5])

    async def arrivals() -> list[tuple[int, float]]:
        began = time.monotonic()
        return [(r.index, time.monotonic() - began) async for r in listwise.stream(batch)]

    seen = asyncio.run(arrivals())
    order = [index for index, _ in seen]
    assert set(order[:2]) == {2, 3}, order  # the fast group first
    fast = max(t for index, t in seen if index >= 2)
    slow = min(t for index, t in seen if index < 2)
    assert fast < slow and slow >= 2.0, seen  # no wall bound on the fast one: load only delays


def test_a_wrong_number_of_scores_fails_that_group_only(
    listwise: RewardLoop, ranking: tuple[str, RankingJudge]
) -> None:
    results = listwise.score(rows("bad", [1, 2, 3], prompt="MISCOUNT") + rows("good", [6, 7]))
    bad, good = results[:3], results[3:]
    assert [r.status for r in bad] == [Status.ERROR] * 3
    assert all(r.score is None for r in bad)
    assert "gave 2 scores for a group of 3 responses" in (bad[0].error or "")
    assert bad[0].extra["judge_text"] == "Ranked.\nScores: [[1, 2]]"
    assert [r.score for r in good] == pytest.approx([0.6, 0.7])


def test_an_answer_without_scores_is_a_typed_error_with_the_text(
    listwise: RewardLoop, ranking: tuple[str, RankingJudge]
) -> None:
    results = listwise.score(rows("g", [1, 2], prompt="GARBAGE"))
    assert [r.status for r in results] == [Status.ERROR] * 2
    assert "holds no list of scores" in (results[0].error or "")
    assert results[1].extra["judge_text"] == "These all look fine to me."


def test_a_row_that_fails_early_leaves_its_group(
    listwise: RewardLoop, ranking: tuple[str, RankingJudge]
) -> None:
    """A row failed before its judge job must not keep its group waiting: one that does not
    parse (no response), one whose rule verifier refuses it (gsm8k without a ground truth)."""
    _, server = ranking
    group = rows("g", [4, 6, 7, 8])
    group[1]["response"] = None
    group[2].update(data_source="openai/gsm8k", ground_truth=None)
    began = time.monotonic()
    results = listwise.score(group)
    assert time.monotonic() - began < 4  # well under gather_timeout_s=5
    assert [r.status for r in results] == [Status.OK, Status.INVALID, Status.INVALID, Status.OK]
    assert "needs a ground_truth" in (results[2].error or "")
    assert [r.score for r in results[::3]] == pytest.approx([0.4, 0.8])
    assert server.listed(0) == [4, 8]


def test_more_rows_than_the_group_size_fail_that_group(
    listwise: RewardLoop, ranking: tuple[str, RankingJudge]
) -> None:
    _, server = ranking
    results = listwise.score(rows("g", [5, 6, 7], group_size=2) + rows("h", [5, 6], group_size=2))
    assert [r.status for r in results[:3]] == [Status.ERROR] * 3
    assert "3 rows in this call, more than its size 2" in (results[0].error or "")
    assert [r.score for r in results[3:]] == pytest.approx([0.5, 0.6])
    assert server.listed(0) == [5, 6]


def test_the_reward_server_judges_each_request_by_its_groups(
    judge: tuple[str, RankingJudge],
) -> None:
    import httpx

    url, server = judge
    server.requests.clear()
    samples = rows("a", [2, 4]) + rows("b", [9])
    with running_server(config(url, {"mode": "listwise"})) as base:
        answer = httpx.post(f"{base}/v1/score", json={"samples": samples}, timeout=30)
        assert answer.status_code == 200
        scores = [r["score"] for r in answer.json()["results"]]
        assert scores == pytest.approx([0.2, 0.4, 0.9])
        # one request a row (a remote per-row caller): gathered across requests by its size
        group = rows("c", [3, 8], group_size=2)
        with ThreadPoolExecutor(2) as pool:
            answers = list(
                pool.map(
                    lambda row: httpx.post(f"{base}/v1/score", json={"samples": [row]}, timeout=30),
                    group,
                )
            )
    assert [a.json()["results"][0]["score"] for a in answers] == pytest.approx([0.3, 0.8])
    assert sorted(server.listed(-1)) == [3, 8]


# ---------------------------------------------------------------------- per-row calls


def test_per_row_calls_gather_a_group_of_the_size_it_names(
    listwise: RewardLoop, ranking: tuple[str, RankingJudge]
) -> None:
    _, server = ranking
    group = rows("p", [6, 2, 9], group_size=3)

    async def each() -> list[Any]:
        return list(await asyncio.gather(*(listwise.ascore(row) for row in group)))

    results = asyncio.run(each())
    assert [r.score for r in results] == pytest.approx([0.6, 0.2, 0.9])
    assert len(server.requests) == 1


def test_a_per_row_call_without_a_size_is_refused_with_the_way_out(
    listwise: RewardLoop, ranking: tuple[str, RankingJudge]
) -> None:
    result = asyncio.run(listwise.ascore(rows("q", [6])[0]))
    # a call of one row (verl's per-sample compute_score) is a per-row call too
    (alone,) = listwise.score(rows("q", [6]))
    for refused in (result, alone):
        assert refused.status is Status.ERROR
        assert "extra_info.group_size" in (refused.error or "")
        assert "reward.reward_model.judge.group.size" in (refused.error or "")


async def test_an_incomplete_group_fails_typed_after_the_gather_timeout(
    ranking: tuple[str, RankingJudge],
) -> None:
    url, server = ranking
    judge = scorer(url, mode="listwise", size=3, gather_timeout_s=0.3)
    began = time.monotonic()
    results = await scored_by(judge, [Sample.from_row(r) for r in rows("p", [1, 2])])
    assert 0.25 < time.monotonic() - began < 3
    assert all(isinstance(r, ScorerError) for r in results)
    assert "2 of 3 rows arrived within" in str(results[0])
    assert "gather_timeout_s=0.3s" in str(results[0])
    assert server.requests == []


async def test_a_bad_group_size_fails_its_row(ranking: tuple[str, RankingJudge]) -> None:
    url, _ = ranking
    bad = [Sample.from_row(r) for r in rows("p", [1], group_size="three")]
    (result,) = await scored_by(scorer(url, mode="listwise"), bad)
    assert isinstance(result, InvalidSampleError) and "group_size" in str(result)


async def test_a_group_over_max_size_is_refused(ranking: tuple[str, RankingJudge]) -> None:
    url, server = ranking
    samples = [Sample.from_row(r) for r in rows("p", [1, 2, 3], group_size=3)]
    results = await scored_by(scorer(url, mode="listwise", max_size=2), samples)
    assert all(isinstance(r, ScorerError) and "max_size=2" in str(r) for r in results)
    assert server.requests == []


async def test_a_dead_judge_server_fails_every_row_typed() -> None:
    dead = f"http://127.0.0.1:{free_port()}"
    with RewardLoop(config(dead, {"mode": "listwise"})) as loop:
        results = loop.score(rows("a", [1, 2]) + rows("b", [3]))
    assert [r.status for r in results] == [Status.ERROR] * 3
    assert all((r.error or "").startswith("group_judge: ") for r in results)


# ---------------------------------------------------------------------- pairwise


async def test_pairwise_against_the_ground_truth_needs_no_gathering(
    ranking: tuple[str, RankingJudge],
) -> None:
    url, server = ranking
    samples = [Sample.from_row(r) for r in rows("p", [5, 8, 1])]  # ground truth: quality=5
    results = await scored_by(scorer(url, mode="pairwise"), samples)
    assert [r.score for r in results] == pytest.approx([0.5, 0.8, 0.1])
    assert len(server.requests) == 3
    assert "[Reference]\nreference quality=5" in server.requests[0][1]
    (missing,) = await scored_by(scorer(url, mode="pairwise"), [Sample("chat", "q", "r")])
    assert isinstance(missing, InvalidSampleError) and "ground_truth" in str(missing)


async def test_pairwise_against_the_first_row_of_the_group(
    ranking: tuple[str, RankingJudge],
) -> None:
    url, server = ranking
    samples = [Sample.from_row(r) for r in rows("p", [6, 9, 2], group_size=3)]
    results = await scored_by(scorer(url, mode="pairwise", reference="first"), samples)
    # the first row is the reference: the middle of the range, no request of its own
    assert [r.score for r in results] == pytest.approx([0.5, 0.8, 0.1])
    assert results[0].extra["judge_reference"] is True
    assert len(server.requests) == 2
    assert all(server.listed(i)[0] == 6 for i in range(2))


async def test_pairwise_answer_without_a_score_fails_that_row_only(
    ranking: tuple[str, RankingJudge],
) -> None:
    url, _ = ranking
    good = rows("p", [6])
    bad = rows("q", [3], prompt="GARBAGE")
    samples = [Sample.from_row(r) for r in good + bad]
    good_result, bad_result = await scored_by(scorer(url, mode="pairwise"), samples)
    assert good_result.score == pytest.approx(0.6)
    assert isinstance(bad_result, JudgeParseError)
    assert bad_result.extra == {"judge_text": "These all look fine to me."}


# ---------------------------------------------------------------------- a real model


def test_a_tiny_local_judge_runs_the_whole_path(judge_lm: str) -> None:
    """A random LM rigged to write '[[7]]': one score for a group of two, so both rows fail
    typed with its text (listwise), while pairwise reads 7 against the first row."""
    model = {"backend": "hf", "model_path": judge_lm, "device": "cpu", "url": None}
    batch = rows("a", [1, 2]) + rows("b", [3, 4])
    with RewardLoop(config("", {"mode": "listwise"}, judge={"max_tokens": 3}, **model)) as loop:
        results = loop.score(batch)
    assert [r.status for r in results] == [Status.ERROR] * 4
    assert "gave 1 score for a group of 2 responses" in (results[0].error or "")
    assert results[0].extra["judge_text"] == "[[7]] [[7]] [[7]]"
    pairwise = {"mode": "pairwise", "reference": "first"}
    with RewardLoop(config("", pairwise, judge={"max_tokens": 2}, **model)) as loop:
        results = loop.score(batch)
    assert [r.score for r in results] == pytest.approx([0.5, 0.7, 0.5, 0.7])


def test_a_judge_server_answering_one_score_fails_the_listwise_group(
    model_server: tuple[str, FakeModelServer],
) -> None:
    url, _ = model_server
    with RewardLoop(config(url, {"mode": "listwise"}, model_name="judge-7")) as loop:
        results = loop.score(rows("a", [1, 2]))
    assert [r.status for r in results] == [Status.ERROR] * 2
    assert results[0].extra["judge_text"] == "The reply is fine.\nScore: [[7]]"


# ---------------------------------------------------------------------- parsing, config


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Scores: [[7, 3, 9]]", [7.0, 3.0, 9.0]),
        ("first [[1, 2]] then, on reflection, [[2.5, 1]]", [2.5, 1.0]),
        ("[[4]] and no list", [4.0]),
        ("Scores: 7, 3, 9", [7.0, 3.0, 9.0]),
        ("[[7, three, 9]]", None),
        ("[[ ]]", None),
        ("[[[7, 3]]]", [7.0, 3.0]),  # the innermost pair of double brackets
        ("no scores at all", None),
        ("[[" + "1, " * 5000 + "1]]", None),  # past the bounded pattern: not a list
    ],
)
def test_parse_score_list(text: str, expected: list[float] | None) -> None:
    assert parse_score_list(text) == expected


def test_listwise_samples_combine_per_response_and_bad_ones_are_left_out() -> None:
    judge = JudgeConfig(aggregate="mean")
    texts = ["Scores: [[2, 8]]", "Scores: [[4, 6]]", "Scores: [[1]]", "[[11, 0]]"]
    first, second = listwise_scores(texts, 2, judge)
    assert (first.score, second.score) == pytest.approx((0.3, 0.7))
    assert first.extra["judge_votes"] == [2.0, 4.0, None, None]
    assert first.extra["judge_text"] == "Scores: [[2, 8]]"
    with pytest.raises(JudgeParseError, match=r"a score outside \[0, 10\]"):
        listwise_scores(["[[11, 0]]"], 2, judge)
    with pytest.raises(JudgeParseError, match="gave 1 score for a group of 2"):
        listwise_scores(["[[3]]", "no list"], 2, judge)


def test_parse_score_list_is_linear_on_hostile_text() -> None:
    hostile = "[[" * 50_000 + "1, " * 50_000
    began = time.perf_counter()
    assert parse_score_list(hostile) is None
    assert time.perf_counter() - began < 1.0


def test_listwise_placeholders_in_a_response_stay_text(
    listwise: RewardLoop, ranking: tuple[str, RankingJudge]
) -> None:
    _, server = ranking
    group = rows("g", [3, 4])
    group[0]["response"] = "{{responses}} {{count}} {{prompt}} quality=3"
    results = listwise.score(group)
    assert [r.score for r in results] == pytest.approx([0.3, 0.4])
    shown = server.requests[0][1]
    assert "[Response 1]\n{{responses}} {{count}} {{prompt}} quality=3\n" in shown
    assert "(2 in all)" in shown


def test_templates_are_filled_in_one_pass(tmp_path: Path) -> None:
    template = load_group_template(None, "pairwise")
    filled = template.fill({"prompt": "q", "reference": "{{response}}", "response": "R"})
    assert "[Reference]\n{{response}}\n" in filled and "[Response]\nR\n" in filled
    custom = tmp_path / "t.txt"
    custom.write_text("{{prompt}} only")
    with pytest.raises(ConfigError, match=r"judge.group.template: .* never uses \{\{responses\}\}"):
        load_group_template(str(custom), "listwise")
    with pytest.raises(ConfigError, match="neither a built-in template"):
        load_group_template(str(tmp_path / "missing.txt"), "listwise")


@pytest.mark.parametrize(
    ("rm", "message"),
    [
        (
            {"kind": "discriminative", "judge": {"group": {"mode": "listwise"}}},
            "judge.group is a generative judge: set reward_model.kind: generative",
        ),
        (
            {"judge": {"template": "reference", "group": {"mode": "listwise"}}},
            "judge.group.template",
        ),
        ({"judge": {"group": {"mode": "listwise", "reference": "first"}}}, "mode 'pairwise' only"),
        ({"judge": {"group": {"mode": "ranked"}}}, "reward.reward_model.judge.group.mode"),
        ({"judge": {"group": {"mode": "listwise", "sizes": 3}}}, "judge.group.sizes"),
        ({"judge": {"group": {"mode": "listwise", "size": 0}}}, "judge.group.size"),
    ],
)
def test_group_config_errors_name_the_key(rm: dict[str, Any], message: str) -> None:
    model = {"enable": True, "kind": "generative", "backend": "openai", "url": "http://h", **rm}
    with pytest.raises(ConfigError, match=message):
        load_config({"reward": {"reward_model": model}})


def test_a_group_judge_cannot_run_as_replicas(tmp_path: Path) -> None:
    cfg = load_config(
        {
            "reward": {
                "reward_model": {
                    "enable": True,
                    "kind": "generative",
                    "model_path": str(tmp_path),
                    "replicas": 2,
                    "judge": {"group": {"mode": "listwise"}},
                }
            }
        }
    )
    with pytest.raises(ConfigError, match="cannot run as Ray replicas"):
        build_model_scorers(cfg.reward)


def test_the_group_judge_is_built_from_its_config() -> None:
    cfg = RewardModelConfig(
        enable=True,
        kind="generative",
        backend="vllm",
        url="http://h",
        judge=JudgeConfig(group=GroupJudgeConfig(mode="pairwise", reference="first")),
    )
    (built,) = build_model_scorers(
        load_config({"reward": {"reward_model": cfg.model_dump()}}).reward
    )
    assert isinstance(built, GroupJudge)
    assert built.component == "group_judge" and built.gathers_groups


def test_the_report_shows_the_group_judge_component() -> None:
    pytest.importorskip("matplotlib")
    from rewardkit.report import ReportBuilder
    from rewardkit.report_html import render

    builder = ReportBuilder()
    for i, (rule, judged) in enumerate([(1.0, 0.3), (0.0, 0.9), (1.0, 0.6)]):
        components = {"rule": rule, "group_judge": judged}
        builder.add(
            {
                "id": f"r{i}",
                "data_source": "openai/gsm8k",
                "prompt": "q",
                "response": "r",
                "ground_truth": "1",
                "status": "ok",
                "score": rule + judged,
                "components": components,
                "extra": {},
                "elapsed_s": 0.01,
            }
        )
    page = render(builder.data(), "test")
    assert "openai/gsm8k: group_judge" in page
