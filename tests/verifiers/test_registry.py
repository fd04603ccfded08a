"""guards: registry.py: which verifier scores which data_source (verl's default_compute_score)."""

from __future__ import annotations

import pytest

from rewardkit.config import VerifierOptions
from rewardkit.errors import InvalidSampleError
from rewardkit.shaping.scaled import Scaled
from rewardkit.verifiers.base import Extracted, Verifier
from rewardkit.verifiers.choice import ChoiceVerifier
from rewardkit.verifiers.geometry import GeometryVerifier, last_boxed, think_then_boxed
from rewardkit.verifiers.gsm8k import GSM8KVerifier
from rewardkit.verifiers.math import MathVerifier
from rewardkit.verifiers.registry import KNOWN_DATA_SOURCES, resolve, suggest
from rewardkit.verifiers.search_qa import SearchQAVerifier, normalize_answer

OPTIONS = VerifierOptions()


@pytest.mark.parametrize(
    ("data_source", "kind"),
    [
        ("openai/gsm8k", GSM8KVerifier),
        ("gsm8k", GSM8KVerifier),
        ("lighteval/MATH", MathVerifier),
        ("DigitalLearningGmbH/MATH-lighteval", MathVerifier),
        ("HuggingFaceH4/MATH-500", MathVerifier),
        ("math", Scaled),
        ("math_dapo", Scaled),
        ("math_dapo_reasoning", Scaled),
        ("aime2024", Scaled),
        ("aime25", Scaled),
        ("hiyouga/geometry3k", GeometryVerifier),
        ("searchR1_nq", SearchQAVerifier),
        ("searchR1_bamboogle", SearchQAVerifier),
        ("searchR1_2wikimultihopqa", SearchQAVerifier),
        ("numina_olympiads", MathVerifier),
        ("numina_cn_k12", MathVerifier),
        ("numina_something_new", MathVerifier),
        ("mcq", ChoiceVerifier),
        ("multiple_choice", ChoiceVerifier),
        ("cais/mmlu", ChoiceVerifier),
        ("TIGER-Lab/MMLU-Pro", ChoiceVerifier),
        ("Idavidrein/gpqa", ChoiceVerifier),
        ("gpqa_diamond", ChoiceVerifier),
        ("allenai/ai2_arc", ChoiceVerifier),
        ("arc_challenge", ChoiceVerifier),
        ("ARC-Easy", ChoiceVerifier),
        ("tau/commonsense_qa", ChoiceVerifier),
        ("allenai/openbookqa", ChoiceVerifier),
        ("m-a-p/SuperGPQA", ChoiceVerifier),
    ],
)
def test_known_sources(data_source: str, kind: type) -> None:
    assert isinstance(resolve(data_source, OPTIONS), kind)


@pytest.mark.parametrize(
    "data_source",
    [
        "",
        "unknown",
        "MATH",
        "openai/gsm8k-v2",
        "archive",
        "arcade_qa",
        "codecontests",
        "apps",
        "taco",
        "humaneval",
    ],
)
def test_unknown_and_code_sources_are_not_handled_here(data_source: str) -> None:
    assert resolve(data_source, OPTIONS) is None


def test_gsm8k_method_comes_from_the_options() -> None:
    flexible = resolve("openai/gsm8k", VerifierOptions(gsm8k_method="flexible"))
    assert flexible == GSM8KVerifier(method="flexible")
    assert resolve("openai/gsm8k", OPTIONS) == GSM8KVerifier(method="auto")


def test_math_extraction_comes_from_the_options() -> None:
    strict = resolve(
        "lighteval/MATH", VerifierOptions.model_validate({"math": {"extraction": "strict"}})
    )
    assert strict == MathVerifier(extraction="strict")
    assert resolve("lighteval/MATH", OPTIONS) == MathVerifier()
    both = VerifierOptions.model_validate({"math": {"extraction": "strict"}, "fast_paths": False})
    assert resolve("lighteval/MATH", both) == MathVerifier(extraction="strict", fast_paths=False)
    assert resolve("lighteval/MATH", both).key == "math:strict:fast_paths=false"
    # aime* is on verl's -1/+1 scale: the same verifier, wrapped.
    assert resolve("aime2024", both) == Scaled(
        MathVerifier(extraction="strict", fast_paths=False), low=-1.0, high=1.0
    )


def test_every_documented_source_resolves() -> None:
    for name in KNOWN_DATA_SOURCES:
        assert resolve(name.rstrip("*"), OPTIONS) is not None, name


# verl's scale per data source (verl/utils/reward_score/__init__.py, default_compute_score):
# math_dapo.compute_score returns +1/-1; the others return 0/1 (geo3k and search-R1: fractions).
@pytest.mark.parametrize(
    ("data_source", "wrong", "right"),
    [
        ("math_dapo", -1.0, 1.0),
        ("math_dapo_reasoning", -1.0, 1.0),
        ("math", -1.0, 1.0),
        ("aime2025", -1.0, 1.0),
        ("lighteval/MATH", 0.0, 1.0),
        ("numina_olympiads", 0.0, 1.0),
        ("openai/gsm8k", 0.0, 1.0),
    ],
)
def test_scores_follow_verls_scale_unless_unit(
    data_source: str, wrong: float, right: float
) -> None:
    verifier = resolve(data_source, OPTIONS)
    assert verifier is not None
    response = "#### 72 so \\boxed{72}" if "gsm8k" in data_source else "\\boxed{72}"
    assert _score(verifier, response, "72") == right
    assert _score(verifier, response.replace("72", "71"), "72") == wrong
    assert (
        _score(verifier, "no answer here", "72") == wrong
    )  # unanswered scores as wrong, as in verl
    unit = resolve(data_source, OPTIONS, "unit")
    assert unit is not None and _score(unit, response.replace("72", "71"), "72") == 0.0


def test_scaled_key_differs_so_caches_never_mix_scales() -> None:
    scaled, unit = resolve("math", OPTIONS), resolve("math", OPTIONS, "unit")
    assert scaled is not None and unit is not None and scaled.key != unit.key


def _score(verifier: Verifier, response: str, ground_truth: object) -> float:
    extracted = verifier.extract(response)
    verdict = verifier.quick_check(extracted, ground_truth)
    return (verdict or verifier.check(extracted, ground_truth)).score


# Search-R1 exact match, as verl's search_r1_like_qa_em.compute_score decides (one row each).
@pytest.mark.parametrize(
    ("response", "ground_truth", "score", "why"),
    [
        ("<answer>Paris</answer>", {"target": ["Paris"]}, 1.0, "plain match"),
        ("<answer> the  Paris. </answer>", {"target": ["paris"]}, 1.0, "SQuAD normalisation"),
        (
            "<answer>Lyon</answer> <answer>Paris</answer>",
            {"target": "Paris"},
            0.0,
            "two different answers: hedged",
        ),
        (
            "<answer>Paris</answer> <answer>Lyon</answer>",
            {"target": ["Paris"]},
            0.0,
            "last span wins",
        ),
        ("Paris", {"target": ["Paris"]}, 0.0, "no answer tag"),
        ("<answer>Paris", {"target": ["Paris"]}, 0.0, "unclosed tag"),
        ("<answer>Paris is big</answer>", {"target": ["Paris"]}, 0.0, "exact, not substring"),
        (
            "<answer>Paris</answer>" * 12,
            {"target": ["Paris"]},
            0.25,
            "tag spam",
        ),
        ("<answer>Rome</answer>", ["Paris", "Rome"], 1.0, "a bare list of targets"),
    ],
)
def test_search_qa_exact_match(response: str, ground_truth: object, score: float, why: str) -> None:
    verifier = resolve("searchR1_nq", OPTIONS)
    assert verifier is not None
    assert _score(verifier, response, ground_truth) == score, why


def test_search_qa_bad_ground_truth_is_invalid_not_wrong() -> None:
    verifier = SearchQAVerifier()
    with pytest.raises(InvalidSampleError, match="target"):
        verifier.quick_check(Extracted("x"), {"target": []})
    with pytest.raises(InvalidSampleError, match="string"):
        verifier.quick_check(Extracted("x"), {"target": [1]})


def test_search_qa_extraction_is_linear_on_hostile_input() -> None:
    import time

    hostile = "<answer>" * 200_000 + "x"  # many opens, no close
    start = time.process_time()
    assert SearchQAVerifier().extract(hostile).answer is None
    assert time.process_time() - start < 2.0
    assert normalize_answer("The  Eiffel-Tower!") == "eiffeltower"


# Geometry3K: verl's geo3k.compute_score = 0.9 * accuracy + 0.1 * format.
@pytest.mark.parametrize(
    ("response", "score"),
    [
        ("<think>angles sum</think> so \\boxed{30}", 1.0),
        ("so \\boxed{30}", 0.9),  # right, no think block
        ("<think>x</think> \\boxed{31}", 0.1),  # wrong, right format
        ("<think>x</think> 30", 0.0),  # no box: no answer and no format
        ("\\boxed{\\frac{60}{2}}", 0.9),  # equal value
    ],
)
def test_geometry3k(response: str, score: float) -> None:
    verifier = resolve("hiyouga/geometry3k", OPTIONS)
    assert verifier is not None
    assert _score(verifier, response, "30") == pytest.approx(score)


def test_geometry_helpers() -> None:
    assert last_boxed("\\boxed{1} then \\boxed{\\frac{1}{2}}") == "\\frac{1}{2}"
    assert last_boxed("\\boxed{1") is None and last_boxed("none") is None
    assert think_then_boxed("<think>a</think>b\\boxed{c}d")
    assert not think_then_boxed(" <think>a</think>\\boxed{c}")  # must start the response
    assert not think_then_boxed("<think>a</think>\\boxed{c")


@pytest.mark.parametrize(
    ("data_source", "hint"),
    [
        ("openai/gsm8", "openai/gsm8k"),
        ("lighteval/math", "lighteval/MATH"),
        ("searchR1_hotpot", "searchR1_hotpotqa"),
        ("hiyouga/geometry3", "hiyouga/geometry3k"),
    ],
)
def test_unknown_sources_suggest_the_closest_name(data_source: str, hint: str) -> None:
    assert suggest(data_source) == f" (did you mean {hint!r}?)"
    assert suggest("completely-unrelated-thing-xyz") == ""


def test_an_unknown_data_source_row_names_the_closest_one() -> None:
    from rewardkit import RewardLoop

    with RewardLoop({"reward": {"num_workers": 1}}) as loop:
        [result] = loop.score(
            [{"data_source": "openai/gsm8", "response": "#### 1", "ground_truth": "1"}]
        )
    assert result.status.value == "invalid"
    assert "unknown data_source 'openai/gsm8' (did you mean 'openai/gsm8k'?)" in (
        result.error or ""
    )


def test_every_public_verifier_module_holds_a_verifier() -> None:
    """Discovery reads every public module: one that is not a verifier belongs elsewhere
    (a private ``_helper``, or rewardkit.shaping for reward shaping)."""
    import importlib
    import inspect
    import pkgutil

    import rewardkit.verifiers as package

    infrastructure = {"base", "registry"}  # the interface and this table
    public = [i.name for i in pkgutil.iter_modules(package.__path__) if i.name[0] != "_"]
    assert infrastructure < set(public)
    for name in sorted(set(public) - infrastructure):
        module = importlib.import_module(f"rewardkit.verifiers.{name}")
        own = [
            cls
            for cls in vars(module).values()
            if inspect.isclass(cls) and cls.__module__ == module.__name__
        ]
        assert any(c.__name__.endswith("Verifier") for c in own), f"{name} holds no verifier"
