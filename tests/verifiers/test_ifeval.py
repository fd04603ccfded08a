"""guards: ifeval.py, the IFEval verifier: one row per instruction family and hostile rows,
through the whole scorer (registry, engine, worker pool), strict, loose and partial.
"""

from __future__ import annotations

import json
import os
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from _support.cli import read_jsonl, score_file, write_jsonl
from rewardkit import RewardLoop
from rewardkit.config import load_config
from rewardkit.errors import ConfigError, InvalidSampleError, ScorerError
from rewardkit.verifiers import _ifeval_checks, registry
from rewardkit.verifiers.ifeval import IFEvalVerifier, answer_text, parse_ground_truth


def gt(instruction_id: str, **kwargs: Any) -> dict[str, Any]:
    return {"instruction_id_list": [instruction_id], "kwargs": [kwargs]}


AT_LEAST, LESS = "at least", "less than"
TWO_PARAGRAPHS = "First paragraph here.\n\n\n***\n\n\nSecond paragraph here."
HF_NULLS = {  # Hugging Face's google/IFEval layout: every argument key, unused ones null
    "instruction_id_list": ["punctuation:no_comma", "length_constraints:number_words"],
    "kwargs": [
        {"num_words": None, "relation": None, "keywords": None, "letter": None},
        {"num_words": 3, "relation": AT_LEAST, "keywords": None, "letter": None},
    ],
}

FAMILIES = [
    # (ground truth, followed, not followed): one pair per instruction family
    (gt("keywords:existence", keywords=["apple"]), "An Apple a day.", "A pear a day."),
    (gt("keywords:frequency", keyword="cat", frequency=2, relation=AT_LEAST), "cat and cat", "a cat"),
    (gt("keywords:forbidden_words", forbidden_words=["bad"]), "All good.", "Not bad."),
    (gt("keywords:letter_frequency", letter="#", let_frequency=2, let_relation=AT_LEAST), "#a #b", "#a"),
    (gt("language:response_language", language="en"), "This answer is written in plain English words.", "Ceci est une réponse écrite en français."),
    (gt("length_constraints:number_sentences", num_sentences=2, relation=LESS), "Dr. Smith went home.", "One. Two. Three."),
    (gt("length_constraints:number_paragraphs", num_paragraphs=2), TWO_PARAGRAPHS, "One paragraph."),
    (gt("length_constraints:number_words", num_words=3, relation=AT_LEAST), "one two three", "one two"),
    (gt("length_constraints:nth_paragraph_first_word", num_paragraphs=2, nth_paragraph=2, first_word="second"), "First one.\n\nSecond one.", "First one.\n\nThird one."),
    (gt("detectable_content:number_placeholders", num_placeholders=2), "[name] at [address]", "[name] only"),
    (gt("detectable_content:postscript", postscript_marker="P.S."), "Hi.\nP.S. bye", "Hi. Bye."),
    (gt("detectable_format:number_bullet_lists", num_bullets=2), "* one\n* two", "* one"),
    (gt("detectable_format:constrained_response"), "My answer is yes.", "Yes."),
    (gt("detectable_format:number_highlighted_sections", num_highlights=1), "An *important* point.", "No highlight."),
    (gt("detectable_format:multiple_sections", section_spliter="Section", num_sections=2), "Section 1\na\nSection 2\nb", "Section 1\na"),
    (gt("detectable_format:json_format"), '```json\n{"a": 1}\n```', "{'a': 1}"),
    (gt("detectable_format:title"), "<<My Poem>>\nRoses.", "My Poem\nRoses."),
    (gt("combination:two_responses"), "Yes.\n******\nNo.", "Yes.\n******\nYes."),
    (gt("combination:repeat_prompt", prompt_to_repeat="Say hi."), "Say hi. Hi!", "Hi! Say hi."),
    (gt("startend:end_checker", end_phrase="Any other questions?"), "Done. Any other questions?", "Any other questions? Done."),
    (gt("change_case:capital_word_frequency", capital_frequency=2, capital_relation=AT_LEAST), "THIS is VERY good", "THIS is good"),
    (gt("change_case:english_capital"), "THIS IS ALL IN CAPITAL LETTERS, IN ENGLISH.", "This is not all in capital letters."),
    (gt("change_case:english_lowercase"), "this is all in lowercase letters, in english.", "This is not all in lowercase letters."),
    (gt("punctuation:no_comma"), "No commas here.", "Commas, here."),
    (gt("startend:quotation"), '"Wrapped in quotes."', "Not wrapped."),
]  # fmt: skip

ROWS = [
    # (options, response, ground truth, status, score, why)
    ({}, "<think>I will add <<A Title>></think>\n\nNo title.", gt("detectable_format:title"), "ok", 0.0, "a title only in the thinking is none"),
    ({}, '<think>Plan: no quotes.</think>\n\n"Quoted answer."', gt("startend:quotation"), "ok", 1.0, "the answer after </think> is read, blank lines opening it aside"),
    ({}, "<think>many words in the thinking here</think>two", gt("length_constraints:number_words", num_words=3, relation=AT_LEAST), "ok", 0.0, "words of the thinking do not count"),
    ({}, "", gt("punctuation:no_comma"), "ok", 0.0, "an empty response follows nothing, not even 'no comma'"),
    ({}, "<think>no commas</think>  \n", gt("punctuation:no_comma"), "ok", 0.0, "nor does a blank answer after the thinking"),
    ({}, "[" * 5000 + "]" * 5000, gt("detectable_format:json_format"), "ok", 0.0, "JSON nested past Python's limit is not read, not an error"),
    ({}, "No commas in this answer", HF_NULLS, "ok", 1.0, "Hugging Face's null layout: the nulls are dropped"),
    ({}, "No commas in this answer", json.dumps(HF_NULLS), "ok", 1.0, "a JSON string of the ground truth (parquet's text)"),
    ({}, "Sure, here it is:\n\"Quoted.\"", gt("startend:quotation"), "ok", 0.0, "strict: the first line spoils it"),
    ({"mode": "loose"}, "Sure, here it is:\n\"Quoted.\"", gt("startend:quotation"), "ok", 1.0, "loose: without the first line it passes"),
    ({"mode": "loose"}, "Done. Any other questions?**", gt("startend:end_checker", end_phrase="Any other questions?"), "ok", 1.0, "loose: with '*' removed it passes"),
    ({"mode": "loose"}, "", gt("punctuation:no_comma"), "ok", 0.0, "loose: an empty response still follows nothing"),
    ({}, "Commas, here. <<T>>", {"instruction_id_list": ["punctuation:no_comma", "detectable_format:title"], "kwargs": [{}, {}]}, "ok", 0.0, "strict: one of two is not all"),
    ({"partial": True}, "Commas, here. <<T>>", {"instruction_id_list": ["punctuation:no_comma", "detectable_format:title"], "kwargs": [{}, {}]}, "ok", 0.5, "partial: the fraction followed"),
    # malformed ground truths: invalid, never a 0
    ({}, "text", None, "invalid", None, "no ground truth"),
    ({}, "text", "not json", "invalid", None, "a string that is no JSON"),
    ({}, "text", ["punctuation:no_comma"], "invalid", None, "a bare list of ids"),
    ({}, "text", {"instruction_id_list": [], "kwargs": []}, "invalid", None, "no instruction"),
    ({}, "text", {"instruction_id_list": ["punctuation:no_comma"]}, "invalid", None, "no kwargs"),
    ({}, "text", {"instruction_id_list": ["punctuation:no_comma"], "kwargs": [{}, {}]}, "invalid", None, "kwargs not aligned"),
    ({}, "text", gt("punctuation:no_semicolon"), "invalid", None, "an unknown instruction id"),
    ({}, "text", gt("punctuation:no_comma", strict=True), "invalid", None, "an argument the instruction does not take"),
    ({}, "text", gt("length_constraints:number_words", relation=AT_LEAST), "invalid", None, "a missing argument (the official code draws it)"),
    ({}, "text", gt("length_constraints:number_words", num_words=-1, relation=AT_LEAST), "invalid", None, "a negative count (the official code draws one)"),
    ({}, "text", gt("length_constraints:number_words", num_words=3, relation="more than"), "invalid", None, "a relation it does not know"),
    ({}, "text", gt("keywords:letter_frequency", letter="ab", let_frequency=1, let_relation=AT_LEAST), "invalid", None, "a 'letter' of two characters"),
    ({}, "text", gt("keywords:existence", keywords=["a(b"]), "invalid", None, "a keyword that is no regular expression, as the checker reads it"),
    # the official checkers put these into regular expressions as written, and an empty one matches every response
    ({}, "text", gt("detectable_content:postscript", postscript_marker="("), "invalid", None, "a postscript marker that is no regular expression"),
    ({}, "text", gt("detectable_content:postscript", postscript_marker=""), "invalid", None, "an empty postscript marker (every response has one)"),
    ({}, "text", gt("detectable_format:multiple_sections", section_spliter="(", num_sections=2), "invalid", None, "a section splitter that is no regular expression"),
    ({}, "text", gt("startend:end_checker", end_phrase=""), "invalid", None, "an empty end phrase (every response ends with it)"),
    ({}, "text", {"func_name": "validate_lowercase", "N": None}, "invalid", None, "Tulu's RLVR-IFeval layout is refused by name"),
]  # fmt: skip


@pytest.fixture(scope="module")
def loops() -> Iterator[dict[str, RewardLoop]]:
    made: dict[str, RewardLoop] = {}
    yield made
    for loop in made.values():
        loop.close()


def _score(loops: dict[str, RewardLoop], options: dict[str, Any], rows: list[Any]) -> list[Any]:
    key = json.dumps(options, sort_keys=True)
    if key not in loops:
        config = {"reward": {"num_workers": 1, "verifiers": {"ifeval": options}}}
        loops[key] = RewardLoop(config).start()
    return loops[key].score(rows)


def test_each_instruction_family(loops: dict[str, RewardLoop]) -> None:
    rows = [
        {"data_source": "google/IFEval", "response": response, "ground_truth": truth}
        for truth, followed, not_followed in FAMILIES
        for response in (followed, not_followed)
    ]
    results = _score(loops, {}, rows)
    got = {
        (row["ground_truth"]["instruction_id_list"][0], row["response"]): (r.status.value, r.score)
        for row, r in zip(rows, results, strict=True)
    }
    expected = {
        (truth["instruction_id_list"][0], response): ("ok", score)
        for truth, followed, not_followed in FAMILIES
        for response, score in ((followed, 1.0), (not_followed, 0.0))
    }
    assert got == expected
    ids = {truth["instruction_id_list"][0] for truth, _, _ in FAMILIES}
    assert len(ids) == 25  # every IFEval instruction id


@pytest.mark.parametrize(("options", "response", "truth", "status", "score", "why"), ROWS)
def test_row(
    loops: dict[str, RewardLoop],
    options: dict[str, Any],
    response: str,
    truth: Any,
    status: str,
    score: float | None,
    why: str,
) -> None:
    row = {"data_source": "ifeval", "response": response, "ground_truth": truth}
    [result] = _score(loops, options, [row])
    assert (result.status.value, result.score) == (status, score), (why, result.error)
    if status == "invalid" and truth is not None:  # (a missing one: the engine says so)
        assert result.error.startswith("ifeval: "), result.error


def test_extra_holds_the_per_instruction_verdicts(loops: dict[str, RewardLoop]) -> None:
    truth = {
        "instruction_id_list": ["punctuation:no_comma", "detectable_format:title", "startend:quotation"],
        "kwargs": [{}, {}, {}],
    }  # fmt: skip
    [result] = _score(
        loops, {}, [{"data_source": "ifeval", "response": "<<T>> a, b", "ground_truth": truth}]
    )
    assert result.extra["instruction_verdicts"] == [0, 1, 0]
    assert (result.extra["followed"], result.extra["instructions"], result.extra["acc"]) == (
        1,
        3,
        False,
    )


def test_errors_name_what_is_wrong() -> None:
    with pytest.raises(
        InvalidSampleError,
        match=r"instruction 0 \('length_constraints:number_words'\).*'num_words' is missing",
    ):
        parse_and_check(gt("length_constraints:number_words", relation=AT_LEAST))
    with pytest.raises(InvalidSampleError, match="kwargs must be a list aligned"):
        parse_ground_truth({"instruction_id_list": ["punctuation:no_comma"], "kwargs": {}})
    with pytest.raises(InvalidSampleError, match="RLVR-IFeval"):
        parse_ground_truth(json.dumps({"func_name": "verify_keywords"}))


def parse_and_check(truth: Any) -> list[bool]:
    return _ifeval_checks.follows(parse_ground_truth(truth), "some text", loose=False)


def test_dataframe_values_are_read_as_the_data_meant() -> None:
    # pandas stores an int column with nulls as floats and the nulls as NaN.
    truth = {
        "instruction_id_list": ["length_constraints:number_words"],
        "kwargs": [{"num_words": 3.0, "relation": AT_LEAST, "letter": float("nan")}],
    }
    assert parse_ground_truth(truth) == (
        ("length_constraints:number_words", {"num_words": 3, "relation": AT_LEAST}),
    )


def test_the_answer_is_read_after_the_last_think() -> None:
    assert answer_text("plain\n") == "plain\n"
    assert answer_text("<think>a</think>\n\nline one\nP.S. x\n") == "line one\nP.S. x\n"
    assert answer_text("<think>a</think>b</think>\n\nc") == "c"
    assert answer_text("<think>a</think>") == ""


@pytest.mark.parametrize(
    ("response", "answer"),
    [
        ("Done. Is there anything else?<|im_end|>", "Done. Is there anything else?"),
        ('"I like cats."<|eot_id|>', '"I like cats."'),
        ('"Hi."<|im_end|>\n<|im_start|>user\nthanks<|im_end|>', '"Hi."'),  # an invented turn
        ("Hi.<|im_end|>\n<|im_start|>tool\nresult", "Hi.<|im_end|>\n<|im_start|>tool\nresult"),
        # a sample dialogue the instruction asked for is the answer, not a turn
        ("Sample:\n\nUser: Hi\nAssistant: Hello!", "Sample:\n\nUser: Hi\nAssistant: Hello!"),
    ],
)
def test_the_answer_ends_where_the_turn_does(response: str, answer: str) -> None:
    """An end-of-turn mark a decoder left in counted as answer text ("... help with?
    <|im_end|>" failed end_checker, a quotation followed by it failed quotation); the
    other families read up to the mark, and so does IFEval now. A tool's turn after it
    (an agent loop's trajectory) is no invented turn."""
    assert answer_text(response) == answer


def test_verdicts_are_deterministic() -> None:
    # langdetect samples at random unless seeded: unseeded, it reads this text as English
    # in about 6 calls of 10 and as Swahili in the others.
    text = "Ciao ok yes hi"
    instructions = parse_ground_truth(gt("language:response_language", language="en"))
    first = _ifeval_checks.follows(instructions, text, loose=False)
    assert all(_ifeval_checks.follows(instructions, text, loose=False) == first for _ in range(20))


def test_options_are_validated_naming_the_key() -> None:
    with pytest.raises(ConfigError, match=r"verifiers\.ifeval\.mode"):
        load_config({"reward": {"verifiers": {"ifeval": {"mode": "lenient"}}}})
    with pytest.raises(ConfigError, match=r"verifiers\.ifeval\.partia"):
        load_config({"reward": {"verifiers": {"ifeval": {"partia": True}}}})
    section = load_config(
        {"reward": {"verifiers": {"ifeval": {"mode": "loose", "partial": True}}}}
    ).reward
    assert registry.match("google/IFEval").factory(section) == IFEvalVerifier(
        loose=True, partial=True
    )


@pytest.mark.parametrize("name", ["ifeval", "google/IFEval", "IFEval", "allenai/RLVR-IFeval"])
def test_names_a_user_would_have(name: str) -> None:
    entry = registry.match(name)
    assert entry is not None and entry.family == "ifeval"


@pytest.mark.parametrize("name", ["ifevaluation", "my_ifeval_v2", "eval"])
def test_names_that_are_not_ifeval(name: str) -> None:
    assert registry.match(name) is None
    assert "ifeval" in registry.suggest("ifevl")


def test_a_missing_extra_says_how_to_install_it(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in [m for m in sys.modules if m.split(".")[0] == "if_verifiable"] + ["if_verifiable"]:
        monkeypatch.setitem(sys.modules, name, None)  # imports fail, as when not installed
    _ifeval_checks._registry.cache_clear()
    try:
        with pytest.raises(ScorerError, match=r"pip install 'rewardkit\[ifeval\]'"):
            parse_and_check(gt("punctuation:no_comma"))
        _ifeval_checks.warm_up()  # the fork server's warm-up does not fail without it
    finally:
        monkeypatch.undo()
        _ifeval_checks._registry.cache_clear()


def test_rewardkit_score_on_a_jsonl(tmp_path: Path) -> None:
    rows = [
        {"id": "a", "data_source": "google/IFEval", "response": "No commas here.", "ground_truth": gt("punctuation:no_comma")},
        {"id": "b", "data_source": "ifeval", "response": "Commas, here.", "ground_truth": json.dumps(gt("punctuation:no_comma"))},
        {"id": "c", "data_source": "ifeval", "response": "x", "ground_truth": gt("punctuation:no_semicolon")},
    ]  # fmt: skip
    source = write_jsonl(tmp_path / "in.jsonl", rows)
    done = score_file(
        source, tmp_path / "out.jsonl", "reward.verifiers.ifeval.mode=loose", "reward.num_workers=1"
    )
    assert done.returncode == 0, done.stderr[-2000:]
    out = read_jsonl(tmp_path / "out.jsonl")
    assert [(r["id"], r["status"], r["score"]) for r in out] == [
        ("a", "ok", 1.0),
        ("b", "ok", 0.0),
        ("c", "invalid", None),
    ]
    assert out[0]["extra"]["instruction_verdicts"] == [1]


PUNKT_SENTENCES = [
    # (text, sentences as nltk's English Punkt pickle splits it)
    ("Dr. Smith paid $3.50 for it. He left.", 2),
    ("The U.S. economy grew. Analysts, e.g. Mr. Lee, agreed.", 3),  # Punkt ends one at "e.g."
    ("It rained on Jan. 5. We stayed in.", 2),
    ("Acme Inc. said yes... Then no!", 1),
    ("Wait... what? Really.", 2),
]


@pytest.mark.parametrize(("text", "count"), PUNKT_SENTENCES)
def test_sentence_counts_are_punkts(text: str, count: int) -> None:
    def at_least(n: int) -> bool:
        truth = gt("length_constraints:number_sentences", num_sentences=n, relation=AT_LEAST)
        return _ifeval_checks.follows(parse_ground_truth(truth), text, loose=False) == [True]

    assert (at_least(count), at_least(count + 1)) == (True, False)


def test_punkt_is_read_from_the_shipped_model() -> None:
    import nltk

    _ifeval_checks.warm_up()
    found = nltk.data.find("tokenizers/punkt_tab/english/")
    assert Path(str(found)).is_relative_to(_ifeval_checks.NLTK_DATA)


def test_hugging_face_rows_from_parquet(loops: dict[str, RewardLoop], tmp_path: Path) -> None:
    # google/IFEval's parquet: kwargs a list of structs holding every argument, nulls unused.
    import pyarrow as pa
    import pyarrow.parquet as pq

    from rewardkit.io import read_rows

    keys = {"num_words": None, "relation": None, "keywords": None}
    truths = [
        {"instruction_id_list": ["length_constraints:number_words"], "kwargs": [{**keys, "num_words": 3, "relation": AT_LEAST}]},
        {"instruction_id_list": ["keywords:existence", "punctuation:no_comma"], "kwargs": [{**keys, "keywords": ["tea"]}, dict(keys)]},
    ]  # fmt: skip
    table = pa.table(
        {
            "data_source": ["google/IFEval"] * 2,
            "response": ["only two", "Tea time, now."],
            "ground_truth": truths,
        }
    )
    pq.write_table(table, tmp_path / "rows.parquet")
    rows = list(read_rows(tmp_path / "rows.parquet"))
    results = _score(loops, {}, rows)
    assert [(r.status.value, r.score, r.extra.get("instruction_verdicts")) for r in results] == [
        ("ok", 0.0, [0]),
        ("ok", 0.0, [1, 0]),
    ]


def test_hardlinked_model_files_are_read_from_a_private_copy(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # An installer that hardlinks package files (uv's default) leaves them with two links,
    # and NLTK >= 3.10 refuses to open such a file: the model is read from a copy then.
    import nltk
    from nltk.data import FileSystemPathPointer
    from nltk.tokenize.punkt import load_punkt_params

    english = Path("tokenizers", "punkt_tab", "english")
    shipped = _ifeval_checks.NLTK_DATA / english
    link = tmp_path / "abbrev_types.txt"
    try:
        os.link(shipped / "abbrev_types.txt", link)
    except OSError:
        pytest.skip("no hardlink from here to the package")
    try:
        root = _ifeval_checks.punkt_root()
        assert root != _ifeval_checks.NLTK_DATA
        monkeypatch.setattr(nltk.data, "path", [str(_ifeval_checks.NLTK_DATA), str(root)])
        with pytest.raises(PermissionError, match="multiply-linked"):
            load_punkt_params(FileSystemPathPointer(str(shipped)))
        params = load_punkt_params(FileSystemPathPointer(str(root / english)))
        assert {"u.s", "dr", "jan"} <= params.abbrev_types
    finally:
        link.unlink()
    assert _ifeval_checks.punkt_root() == _ifeval_checks.NLTK_DATA


def test_a_check_past_the_hard_limit_is_a_timeout_row() -> None:
    # A keyword is a pattern to the checker; one that backtracks for ever is stopped by
    # the worker pool's hard limit, and the row after it is scored as usual.
    slow = {"instruction_id_list": ["keywords:existence"], "kwargs": [{"keywords": ["(a+)+$"]}]}
    rows = [
        {"data_source": "ifeval", "response": "a" * 40 + "!", "ground_truth": slow},
        {"data_source": "ifeval", "response": "No commas.", "ground_truth": gt("punctuation:no_comma")},
    ]  # fmt: skip
    with RewardLoop({"reward": {"num_workers": 1, "timeout_s": 1}}) as loop:
        # a worker forked before the warm-ups were done would load the checkers (about
        # 2.5 s) inside the row's 1 s: the pool's replacements come warm once they are
        pool = loop.engine.pool
        while pool.health().starting or pool.warming:
            time.sleep(0.01)
        first, second = loop.score(rows)
    assert first.status.value == "timeout", first.error
    assert (second.status.value, second.score) == ("ok", 1.0)


# What a collapsing policy writes (a run of one character), for the four checkers whose
# official patterns read such a run in quadratic time (an outside red team's finding:
# 0.3 to 2 s a check at 20,000 characters, 4 s in loose mode)
RUNS = [
    (("detectable_content:number_placeholders", {"num_placeholders": 2}), "[", " end."),
    (("detectable_content:number_placeholders", {"num_placeholders": 1}), "[", "] x [y]"),
    (("detectable_format:number_bullet_lists", {"num_bullets": 2}), "\n", "* a\n- b"),
    (("detectable_format:number_bullet_lists", {"num_bullets": 3}), " \n", "b"),
    (("detectable_content:postscript", {"postscript_marker": "P.S."}), " ", "p. s. bye"),
    (("detectable_content:postscript", {"postscript_marker": "Note:"}), "\n", "b"),
    (("detectable_format:title", {}), "<<", " end."),
    (("detectable_format:title", {}), "<<", "x>>"),
]


@pytest.mark.parametrize(("instruction", "unit", "tail"), RUNS)
def test_a_run_of_one_character_is_checked_as_officially_in_linear_time(
    instruction: tuple[str, dict[str, Any]], unit: str, tail: str
) -> None:
    from if_verifiable.ifeval import instructions_registry

    official = instructions_registry.INSTRUCTION_DICT[instruction[0]](instruction[0])
    official.build_description(**instruction[1])
    short = "a" + unit * (1000 // len(unit)) + tail  # short enough for the official code
    texts = _ifeval_checks.loose_variants(short)
    expected = any(text.strip() and official.check_following(text) for text in texts)
    assert _ifeval_checks.follows([instruction], short, loose=True) == [expected]
    long = "a" + unit * (20_000 // len(unit)) + tail
    started = time.process_time()
    verdicts = _ifeval_checks.follows([instruction], long, loose=True)
    assert time.process_time() - started < 0.5, "the official patterns took 1 to 4 s here"
    assert verdicts == [expected]  # the run's length changes nothing here


def test_a_cold_worker_loads_the_checkers_outside_the_rows_time() -> None:
    # The checkers, language profiles and sentence splitter take about 2 s to load on an
    # idle machine, far more on a loaded one; a worker that started before the warm-ups
    # were done loaded them inside the row's limit, and right answers ended "timeout".
    rows = [
        {"data_source": "google/IFEval", "response": f"spring is here {i}", "ground_truth":
         gt("punctuation:no_comma")}
        for i in range(4)
    ]  # fmt: skip
    with RewardLoop({"reward": {"num_workers": 2, "timeout_s": 0.5}}) as loop:
        results = loop.score(rows)
    assert [(r.status.value, r.score) for r in results] == [("ok", 1.0)] * 4, [
        r.error for r in results
    ]
