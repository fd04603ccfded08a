"""The verifier interface: three phases so that most rows never need a worker.

1. ``extract(response)`` finds the final answer. It runs in the scoring loop's own
   process, so it must be *bounded*: linear time in the response, no regex that can
   backtrack, no sympy.
2. ``quick_check(extracted, ground_truth)`` decides the easy cases (exact match after
   normalisation, plain numbers, no answer at all) with the same bound, or returns
   None to say "needs the slow path".
3. ``check(extracted, ground_truth)`` is the slow path (math-verify, sympy). It runs
   in a supervised worker process that is killed at ``reward.timeout_s``.

The loop deduplicates on ``(verifier.key, ground_truth, extracted.answer,
extracted.extra["source"])``, so repeated answers within a group of rollouts are checked
once (the source counts: a fallback passage and a box with the same text are read
differently).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol, TypeAlias, runtime_checkable

from rewardkit._pickling import pickled_by_fields

if TYPE_CHECKING:  # annotations only: nothing here is needed at run time
    from typing_extensions import TypeIs

    from rewardkit.config import RewardSection

__all__ = [
    "ALSO_OFFERED",
    "CALLED_WRONG",
    "MAX_QUESTION_NUMBERS",
    "NO_CONTEXT",
    "AnyVerifier",
    "AsyncVerifier",
    "Context",
    "Entry",
    "Extracted",
    "Matcher",
    "Verdict",
    "Verifier",
    "extract_with",
    "is_async",
    "is_truncated",
    "number_key",
    "preparations",
    "question_numbers",
]


@pickled_by_fields
@dataclass(frozen=True, slots=True)
class Context:
    """What a verifier may know of a row besides its response, for the rule that reads the
    final answer (:mod:`rewardkit.verifiers._final`): the prompt's lines that hold an
    answer form (a box, an ``<answer>`` tag, "answer:"), so that the response repeating
    one is no answer given; the numbers the prompt writes (a response recalling one after
    its result states no second result) and its words (a phrase of the question that a
    last sentence restates hedges nothing); and whether the trainer cut the response at
    its length limit.

    A verifier whose class sets ``reads_context = True`` is called ``extract(response,
    context)``; any other ``extract(response)`` (:func:`extract_with`). The engine builds
    it on the loop for every path a row takes (``rewardkit.scoring.rows.context_of``):
    inline, whole in a worker, in a spread task. It is not part of a check's cache key
    (``check`` reads only the extracted answer). An :class:`AsyncVerifier` that needs the
    whole prompt says so with ``reads_prompt`` instead, and is handed its text.

    A verifier whose class sets ``reads_trajectory = True`` reads the whole response when
    it is a list of chat messages: ``trajectory`` holds them (None for a text response),
    and it is called ``extract(response, context)`` with ``response`` the final assistant
    message's text, as every verifier is. Its extracted answer must then hold all it
    read of the trajectory: that answer keys the cache."""

    prompt: str = ""
    truncated: bool = False
    trajectory: tuple[Mapping[str, Any], ...] | None = field(default=None, compare=False)
    # not compared nor hashed: messages are dicts, and a Context may key a cache
    asks_for_wrong: bool = False
    # the prompt asks for what is wrong ("Which statement is incorrect?", "... NOT ...",
    # "... EXCEPT"): then "Option C is incorrect." after "Answer: C" restates the answer
    quantities: frozenset[str] = frozenset()
    # the numbers the prompt writes (question_numbers): a number of the question that a
    # response recalls after its result ("... $109$ years old 10 years from now") is no
    # second result
    question: str = ""
    # the prompt's words (question_words): a phrase of the question that a response's
    # last sentence restates ("factors of 34 or multiples of 7") hedges nothing

    @classmethod
    def of(
        cls,
        prompt: Any,
        extra_info: Mapping[str, Any] | None,
        *,
        max_response_length: int | None = None,
    ) -> Context:
        """The context of a row: its prompt (a string or chat messages) and extra_info
        (with the trainer's response length limit, where the config gives it)."""
        truncated = is_truncated(extra_info or {}, max_response_length)
        text = _prompt_text(prompt)
        if not text and not truncated:
            return NO_CONTEXT
        return (
            _context(text, truncated)
            if cls is Context
            else cls(_answer_form_lines(text), truncated)
        )


NO_CONTEXT = Context()


@functools.lru_cache(maxsize=256)
def _context(text: str, truncated: bool) -> Context:
    # One object for the rollouts of a prompt: read once, and pickled once in a spread
    # task (pickle sends an object it has seen as a reference).
    asks = _ASKS_FOR_WRONG.search(text) is not None
    return Context(
        _answer_form_lines(text),
        truncated,
        asks_for_wrong=asks,
        quantities=question_numbers(text),
        question=question_words(text),
    )


_QUESTION_NUMBER = re.compile(r"(?<![\w.])\d[\d,]*(?:\.\d+)?")
MAX_QUESTION_NUMBERS = 64
"""Numbers of a prompt kept in its Context at most (a table of data in a prompt: its first
ones), so that a Context stays small to pickle."""


def question_numbers(text: str) -> frozenset[str]:
    """The numbers ``text`` writes, as :func:`number_key` spells them ("1,200" and
    "1200.0" alike), the first :data:`MAX_QUESTION_NUMBERS` distinct ones."""
    found: set[str] = set()
    for number in _QUESTION_NUMBER.finditer(text):
        found.add(number_key(number.group()))
        if len(found) >= MAX_QUESTION_NUMBERS:
            break
    return frozenset(found)


QUESTION_CHARS = 4000
"""Characters of a prompt's words kept in its Context at most: its end, where the question
is (a few-shot prompt's examples come first)."""


def question_words(text: str) -> str:
    """``text``'s words as a restatement is compared with them
    (:func:`words_key`), its last :data:`QUESTION_CHARS` characters."""
    return words_key(text)[-QUESTION_CHARS:]


def words_key(text: str) -> str:
    """Words for comparing a phrase with the prompt's: lower case, no math delimiters
    (``$n$`` and ``\\( n \\)`` alike), runs of blanks one space."""
    return " ".join(_MATH_DELIMITER.sub(" ", text).lower().split())


_MATH_DELIMITER = re.compile(r"\\[()\[\]]|\$")


def number_key(text: str) -> str:
    """A plain number's spelling for comparing by value: no ``,`` or ``$``, no trailing
    decimal zeros ("1,200.50" -> "1200.5", "7.0" -> "7")."""
    plain = text.replace(",", "").replace("$", "")
    if "." in plain:
        plain = plain.rstrip("0").rstrip(".")
    return plain


_ASKS_FOR_WRONG = re.compile(
    r"(?i:\b(?:incorrect|untrue|false|wrong|inaccurate|not[ \t]+(?:true|correct|accurate)"
    r"|least[ \t]+likely)\b)|\b(?:NOT|EXCEPT)\b"
)


def _prompt_text(prompt: Any) -> str:
    if isinstance(prompt, str):
        return prompt
    if isinstance(prompt, list | tuple):
        parts = [m.get("content") for m in prompt if isinstance(m, Mapping)]
        return "\n".join(part for part in parts if isinstance(part, str))
    return ""


_ANSWER_FORM_WORDS = ("\\boxed", "\\fbox", "<answer>", "answer")


def _answer_form_lines(text: str) -> str:
    """The lines of ``text`` that may hold an answer form (all a response line repeating
    the prompt can be found in): a small string, whatever the prompt's length."""
    low = text.lower()
    if not any(word in low for word in _ANSWER_FORM_WORDS):
        return ""
    return "\n".join(
        line for line in low.splitlines() if any(w in line for w in _ANSWER_FORM_WORDS)
    )


def is_truncated(extra_info: Mapping[str, Any], max_response_length: int | None = None) -> bool:
    """Whether the trainer says the response was cut at its length limit: ``truncated``
    true, ``finish_reason``/``stop_reason`` ``"length"``, or verl's ``response_length``
    at (or past) ``max_response_length`` (or ``max_resp_len``) of ``extra_info``, else
    the limit given (``reward.overlong_buffer.max_resp_len``)."""
    if extra_info.get("truncated") is True:
        return True
    if any(extra_info.get(key) == "length" for key in ("finish_reason", "stop_reason")):
        return True
    length = extra_info.get("response_length")
    limit = extra_info.get("max_response_length", extra_info.get("max_resp_len"))
    limit = max_response_length if limit is None else limit
    if type(length) is int and type(limit) is int:
        return 0 < limit <= length
    return False


def extract_with(verifier: Verifier, response: str, context: Context) -> Extracted:
    """``verifier.extract``, given the row's context when the verifier reads it (its
    prompt's answer forms, or its trajectory)."""
    if context is not NO_CONTEXT and (
        getattr(verifier, "reads_context", False) or getattr(verifier, "reads_trajectory", False)
    ):
        return verifier.extract(response, context)  # type: ignore[call-arg]
    return verifier.extract(response)


@pickled_by_fields
@dataclass(frozen=True, slots=True)
class Extracted:
    """The final answer found in a response (None: no answer) and what was seen on the way.

    A check reads ``answer`` and, from ``extra``, only ``source`` (how it was found),
    :data:`ALSO_OFFERED` and :data:`CALLED_WRONG`: the engine shares a check between
    rows equal in those.
    """

    answer: str | None
    extra: Mapping[str, Any] = field(default_factory=dict)


ALSO_OFFERED = "also_offered"
"""The ``extra`` key of the final answers a response offers besides the one found that
cannot be told the same or different at extraction (``<answer>2 + 11 = 13</answer>``,
then "Actually, $14$"; ``106^\\circ`` after ``105^\\circ``). A check credits the answer
only if each of them is right too: two final answers earn nothing unless both are the
gold (what cannot be told apart is not taken as the same)."""

CALLED_WRONG = "called_wrong"
"""The ``extra`` key of a value that a fallback passage's last sentence calls wrong ("...
$57,500.\n\nHmm, 57500 is wrong."): the passage goes to the check without that sentence,
and the answer read from it is no answer when it is that value."""


@pickled_by_fields
@dataclass(frozen=True, slots=True)
class Verdict:
    """A verifier's score for one answer, with reward_extra_info (``acc``, ``pred``, ...)."""

    score: float
    extra: Mapping[str, Any] = field(default_factory=dict)


class Keyed(Protocol):
    """What every verifier, sync or async, has: a stable name that is part of cache keys."""

    @property
    def key(self) -> str:
        """Stable name including options, e.g. ``gsm8k:strict``; part of cache keys."""
        ...


@runtime_checkable
class Verifier(Keyed, Protocol):
    """A rule-based scorer. Instances are small frozen dataclasses: picklable and hashable."""

    def extract(self, response: str) -> Extracted:
        """Find the final answer. Bounded: linear in ``len(response)``."""
        ...

    def quick_check(self, extracted: Extracted, ground_truth: Any) -> Verdict | None:
        """Decide cheaply, or return None to send the row to ``check`` in a worker."""
        ...

    def check(self, extracted: Extracted, ground_truth: Any) -> Verdict:
        """The full (possibly slow) check. Runs in a killable worker process."""
        ...


@runtime_checkable
class AsyncVerifier(Keyed, Protocol):
    """A scorer that waits on something else (a sandbox, a server) rather than the CPU.

    Awaited on the scoring loop's event loop, many at once; the thing it waits on
    enforces its own hard limits (the sandbox kills a run at ``run_timeout``), and the
    loop bounds the whole call with ``asyncio.wait_for`` as a second guard.
    """

    @property
    def extra_info_keys(self) -> tuple[str, ...]:
        """The ``extra_info`` keys :meth:`ascore` reads: the engine's cache key holds these
        (with the ground truth and the response), so identical rows run once."""
        ...

    @property
    def reads_prompt(self) -> bool:
        """Whether :meth:`ascore` reads the row's prompt: the engine then passes it (as
        text) and its cache key holds it."""
        ...

    async def ascore(
        self, response: str, ground_truth: Any, extra_info: Mapping[str, Any], prompt: str = ""
    ) -> Verdict:
        """Score one response. Raise ScorerError (or a subclass) for an infrastructure failure."""
        ...

    async def aclose(self) -> None:
        """Release what this event loop's calls opened (sandboxes, HTTP pools)."""
        ...


AnyVerifier: TypeAlias = Verifier | AsyncVerifier
"""What a registry entry's factory returns: a three-phase verifier or an async one."""


def preparations(verifiers: Iterable[object]) -> tuple[Callable[[], None], ...]:
    """What the checks of ``verifiers`` need loaded once per worker process, once each in
    order: each verifier's optional ``prepare`` (IFEval's checkers and language models).
    The pool runs it before a worker's first such check, outside the check's time limit
    (:meth:`rewardkit.execution.pool.WorkerPool.run`)."""
    steps: list[Callable[[], None]] = []
    for verifier in verifiers:
        step = getattr(verifier, "prepare", None)
        if step is not None and step not in steps:
            steps.append(step)
    return tuple(steps)


def is_async(verifier: AnyVerifier) -> TypeIs[AsyncVerifier]:
    """Whether the verifier is awaited on the event loop (else its phases run inline/pooled).

    An attribute test, not ``isinstance`` on the protocol (which costs 12 us a row)."""
    return hasattr(verifier, "ascore")


@dataclass(frozen=True, slots=True)
class Matcher:
    """Which ``data_source`` names an entry handles: exact ``names``, name ``prefixes``,
    or a ``predicate`` for looser families. ``listed`` are extra names for suggestions."""

    names: frozenset[str] = frozenset()
    prefixes: tuple[str, ...] = ()
    predicate: Callable[[str], bool] | None = None
    listed: tuple[str, ...] = ()

    def __call__(self, data_source: str) -> bool:
        if data_source in self.names or data_source.startswith(self.prefixes):
            return True
        return self.predicate is not None and self.predicate(data_source)

    @property
    def known(self) -> tuple[str, ...]:
        """Names to list and suggest; ``*`` marks a prefix family."""
        return (*sorted(self.names), *(f"{p}*" for p in self.prefixes), *self.listed)


@dataclass(frozen=True, slots=True)
class Entry:
    """One row of the verifier registry: data sources it matches, and how to build its
    verifier from the ``reward`` config section (once per engine).

    A module of :mod:`rewardkit.verifiers` registers entries by defining ``ENTRIES``; see
    ``docs/verifiers.md``. ``asynchronous`` says which kind the factory returns (checked
    by the registry's tests); ``priority`` orders overlapping entries (higher first);
    ``warm_up`` runs in the worker fork server, so workers start with it done.
    """

    family: str
    matches: Matcher
    factory: Callable[[RewardSection], AnyVerifier]
    asynchronous: bool = False
    priority: int = 0
    warm_up: Callable[[], None] | None = None
