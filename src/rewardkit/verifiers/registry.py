"""Which verifier scores a ``data_source``: one table of :class:`~rewardkit.verifiers.base.Entry`.

The table is data: the built-in rule families below (verl's ``default_compute_score``
mapping) plus the ``ENTRIES`` of every public module of :mod:`rewardkit.verifiers`
(the code verifier registers itself that way, and so does a new verifier: see
``docs/verifiers.md``). Entries are tried by ``priority`` (higher first), then in
table order; the first that matches builds the verifier.

Names are matched as verl matches them: exact names, plus the prefixes ``aime``
(``aime2024``, ``aime25``) and ``numina_``. Multiple-choice families are matched on
the last path segment, case-insensitively, as a prefix ending at a non-letter
(``cais/mmlu``, ``TIGER-Lab/MMLU-Pro``, ``arc_challenge``, but not ``archive``).

Scores follow verl's scale per data source (``score_scale="verl"``, the default):
``math_dapo``, ``math_dapo_reasoning``, ``math`` and ``aime*`` score a wrong answer -1.0,
as verl's ``math_dapo`` does; ``score_scale="unit"`` keeps every verifier's 0..1.
"""

from __future__ import annotations

import difflib
import functools
import importlib
import pkgutil
from collections.abc import Iterable
from typing import Literal

from rewardkit.config import RewardSection, VerifierOptions
from rewardkit.shaping.scaled import Scaled
from rewardkit.verifiers._answer import ExtractionMode
from rewardkit.verifiers.base import AnyVerifier, Entry, Matcher, Verifier, is_async
from rewardkit.verifiers.choice import ChoiceVerifier
from rewardkit.verifiers.geometry import GeometryVerifier
from rewardkit.verifiers.gsm8k import GSM8KVerifier
from rewardkit.verifiers.math import Decimals, MathVerifier, warm_up
from rewardkit.verifiers.search_qa import SearchQAVerifier

__all__ = [
    "CODE_DATA_SOURCES",  # noqa: F822 (computed by __getattr__ from the live table)
    "KNOWN_DATA_SOURCES",  # noqa: F822
    "VerifierTable",
    "entries",
    "refresh",
    "resolve",
    "suggest",
]

ScoreScale = Literal["verl", "unit"]

_GSM8K_NAMES = frozenset({"openai/gsm8k", "gsm8k"})
_MATH_NAMES = frozenset(
    {
        "lighteval/MATH",
        "DigitalLearningGmbH/MATH-lighteval",
        "HuggingFaceH4/MATH-500",
        "math",
        "math_dapo",
        "math_dapo_reasoning",
        # verl's NuminaMath names (all also covered by the "numina_" prefix)
        "numina_aops_forum",
        "numina_synthetic_math",
        "numina_amc_aime",
        "numina_synthetic_amc",
        "numina_cn_k12",
        "numina_olympiads",
    }
)
_MATH_PREFIXES = ("aime", "numina_")  # aime* is on the plus-minus scale, numina_* is not
# verl scores these with math_dapo: +1 right, -1 wrong.
_PLUS_MINUS_NAMES = frozenset({"math", "math_dapo", "math_dapo_reasoning"})
_PLUS_MINUS_PREFIXES = ("aime",)
_GEOMETRY_NAMES = frozenset({"hiyouga/geometry3k"})
_SEARCH_QA_NAMES = frozenset(
    f"searchR1_{name}"
    for name in ("nq", "triviaqa", "popqa", "hotpotqa", "2wikimultihopqa", "musique", "bamboogle")
)
_CHOICE_NAMES = frozenset({"mcq", "multiple_choice"})
_CHOICE_PREFIXES = (
    "mmlu",
    "gpqa",
    "ai2_arc",
    "arc",
    "commonsense_qa",
    "openbookqa",
    "supergpqa",
)


def _gsm8k(section: RewardSection) -> Verifier:
    return GSM8KVerifier(method=section.verifiers.gsm8k_method)


def _math(section: RewardSection) -> Verifier:
    options = section.verifiers.math
    return _math_verifier(options.extraction, section.verifiers.fast_paths, False, options.decimals)


def _math_plus_minus(section: RewardSection) -> Verifier:
    """verl scores these with math_dapo: +1 right, -1 wrong (unless score_scale is unit)."""
    plus_minus = section.score_scale == "verl"
    options = section.verifiers.math
    return _math_verifier(
        options.extraction, section.verifiers.fast_paths, plus_minus, options.decimals
    )


@functools.cache
def _math_verifier(
    extraction: ExtractionMode, fast_paths: bool, plus_minus: bool, decimals: Decimals = "exact"
) -> Verifier:
    """One MATH verifier per (options, scale): instances are shared, so cache keys match."""
    verifier: Verifier = MathVerifier(
        extraction=extraction, fast_paths=fast_paths, decimals=decimals
    )
    return Scaled(verifier, low=-1.0, high=1.0) if plus_minus else verifier


def _is_choice_family(data_source: str) -> bool:
    name = data_source.rpartition("/")[2].lower()
    for prefix in _CHOICE_PREFIXES:
        if name.startswith(prefix):
            following = name[len(prefix) : len(prefix) + 1]
            if not following.isalpha():
                return True
    return False


_CHOICE = ChoiceVerifier()
_GEOMETRY = GeometryVerifier()
_SEARCH_QA = {answers: SearchQAVerifier(answers=answers) for answers in ("hedged", "last")}

BUILTIN: tuple[Entry, ...] = (
    Entry("gsm8k", Matcher(names=_GSM8K_NAMES), _gsm8k),
    Entry(
        "math (verl scale: -1 wrong)",
        Matcher(names=_PLUS_MINUS_NAMES, prefixes=_PLUS_MINUS_PREFIXES),
        _math_plus_minus,
        warm_up=warm_up,
    ),
    Entry(
        "math",
        Matcher(
            names=_MATH_NAMES - _PLUS_MINUS_NAMES,
            prefixes=tuple(p for p in _MATH_PREFIXES if p not in _PLUS_MINUS_PREFIXES),
        ),
        _math,
        warm_up=warm_up,
    ),
    Entry("geometry3k", Matcher(names=_GEOMETRY_NAMES), lambda _: _GEOMETRY),
    Entry(
        "search-QA",
        Matcher(names=_SEARCH_QA_NAMES),
        lambda section: _SEARCH_QA[section.verifiers.search_qa.answers],
    ),
    Entry(
        "multiple choice",
        Matcher(
            names=_CHOICE_NAMES,
            predicate=_is_choice_family,
            listed=tuple(f"{prefix}*" for prefix in _CHOICE_PREFIXES),
        ),
        lambda _: _CHOICE,
    ),
)
"""The rule families verl's ``default_compute_score`` knows (its order)."""


@functools.cache
def entries() -> tuple[Entry, ...]:
    """The whole table: built-ins plus every verifier module's ``ENTRIES``, by priority."""
    import rewardkit.verifiers as package

    found: list[Entry] = list(BUILTIN)
    # Every public module is a verifier (helpers are private, shaping lives elsewhere);
    # base and this registry are imported already and register nothing.
    for info in pkgutil.iter_modules(package.__path__):  # sorted by name: a stable order
        if info.name.startswith("_"):
            continue
        module = importlib.import_module(f"{package.__name__}.{info.name}")
        found.extend(getattr(module, "ENTRIES", ()))
    return tuple(sorted(found, key=lambda entry: -entry.priority))  # stable: ties keep order


def refresh() -> None:
    """Forget the table, so that the next lookup discovers the verifier modules again."""
    entries.cache_clear()


def match(data_source: str, table: Iterable[Entry] | None = None) -> Entry | None:
    """The first entry that handles ``data_source``, or None."""
    for entry in entries() if table is None else table:
        if entry.matches(data_source):
            return entry
    return None


def resolve(
    data_source: str, options: VerifierOptions, scale: ScoreScale = "verl"
) -> Verifier | None:
    """The rule (three-phase) verifier for ``data_source``, or None when no rule verifier
    handles it (code data sources are scored by an async verifier: see :class:`VerifierTable`).

    ``scale="verl"`` puts each data source on verl's scale (see the module docstring).
    """
    entry = match(data_source)
    if entry is None or entry.asynchronous:
        return None
    verifier = entry.factory(RewardSection(verifiers=options, score_scale=scale))
    return None if is_async(verifier) else verifier


class VerifierTable:
    """The engine's registry: every entry's verifier, built once from the config (so a
    factory's complaint about the config comes at start, not on some later row), and
    each row's pick.

    Async verifiers hold per-loop resources; :meth:`aclose` releases them.
    """

    _MAX_REMEMBERED = 4096  # data source names remembered; rows choose them, so bounded

    def __init__(self, section: RewardSection, table: Iterable[Entry] | None = None) -> None:
        self._table = [
            (entry.matches, entry.factory(section))
            for entry in (entries() if table is None else table)
        ]
        self._picked: dict[str, AnyVerifier | None] = {}

    def pick(self, data_source: str) -> AnyVerifier | None:
        """The verifier for ``data_source``, or None when no entry matches."""
        if data_source in self._picked:
            return self._picked[data_source]
        verifier = next((v for matches, v in self._table if matches(data_source)), None)
        if len(self._picked) >= self._MAX_REMEMBERED:
            self._picked.clear()
        self._picked[data_source] = verifier
        return verifier

    async def aclose(self) -> None:
        """Close the async verifiers (their runners on the running event loop)."""
        for _, verifier in self._table:
            if is_async(verifier):
                await verifier.aclose()


def _known(asynchronous: bool) -> tuple[str, ...]:
    return tuple(
        name
        for entry in entries()
        if entry.asynchronous is asynchronous
        for name in entry.matches.known
    )


def __getattr__(name: str) -> tuple[str, ...]:
    # Computed from the live table, so that a module added to rewardkit.verifiers counts.
    if name == "KNOWN_DATA_SOURCES":
        return _known(asynchronous=False)  # the data sources resolve() knows; * marks a prefix
    if name == "CODE_DATA_SOURCES":
        return _known(asynchronous=True)  # scored by async (code) verifiers
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def suggest(data_source: str) -> str:
    """A hint for an unknown data source: `` (did you mean 'x'?)``, or "" when none is close."""
    names = [n.rstrip("*") for entry in entries() for n in entry.matches.known]
    close = difflib.get_close_matches(data_source, names, n=1, cutoff=0.6)
    if not close:
        lowered = {n.lower(): n for n in names}
        close = [lowered[m] for m in difflib.get_close_matches(data_source.lower(), lowered, n=1)]
    return f" (did you mean {close[0]!r}?)" if close else ""
