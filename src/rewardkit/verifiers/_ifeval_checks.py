"""IFEval's 25 instruction checkers, run as Google's ``evaluation_lib`` runs them.

The checkers are if-verifiable's copy of google-research's ``instruction_following_eval``
(the ``ifeval`` extra: ``pip install 'rewardkit[ifeval]'``); this module is the glue, run
in the worker processes (never imported by the registry):

* **Offline.** NLTK's English Punkt model ships with rewardkit (``_nltk_data/``) and goes
  first on ``nltk.data.path`` (:func:`punkt_root`), so sentence counts are Punkt's and
  nothing is downloaded.
* **Deterministic.** langdetect is seeded (``DetectorFactory.seed = 0``; unseeded, it
  samples at random). Where the official code draws an argument at random (a missing
  ``num_words``, a negative count, no ``relation``), the row is ``invalid`` instead,
  naming the argument. ``keywords:letter_frequency`` counts the character it is given,
  as google-research's current code does (``#``, ``!`` included; the 2023 code, which
  if-verifiable copies, drew a random letter for any character outside a-z).
* **A ground truth the checker cannot read is bad data**, refused on the scoring loop
  before any check (:mod:`~rewardkit.verifiers._ifeval_args`).
* **Strict and loose** are ``test_instruction_following_strict``/``_loose``: an empty
  response (after ``strip()``) follows nothing; loose passes when any of the 8 variants
  passes (the response, without its first line, its last line, both; each also with
  every ``*`` removed). A response JSON nested deeper than Python's recursion limit is
  not JSON to ``json.loads`` (it raises ``RecursionError``, which the official code does
  not catch): ``detectable_format:json_format`` is not followed.
"""

from __future__ import annotations

import atexit
import contextlib
import functools
import re
import shutil
import tempfile
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from types import ModuleType
from typing import Any

from rewardkit.errors import InvalidSampleError, ScorerError
from rewardkit.verifiers import _ifeval_linear

__all__ = ["INSTALL_HINT", "Instruction", "follows", "loose_variants", "punkt_root", "warm_up"]

INSTALL_HINT = "pip install 'rewardkit[ifeval]'"
NLTK_DATA = Path(__file__).with_name("_nltk_data")
"""Holds ``tokenizers/punkt_tab/english/``: NLTK's English Punkt model (see its README)."""

Instruction = tuple[str, Mapping[str, Any]]
"""One instruction of a ground truth: its id and its arguments (nulls already dropped)."""


PUNKT_FILES = ("abbrev_types.txt", "collocations.tab", "sent_starters.txt", "ortho_context.tab")


def punkt_root() -> Path:
    """The folder to put on ``nltk.data.path``: rewardkit's, or a private copy of it when
    an installer hardlinked its files (uv does, by default), which NLTK >= 3.10 refuses
    to open (``refusing multiply-linked file``)."""
    english = NLTK_DATA / "tokenizers" / "punkt_tab" / "english"
    if all((english / name).stat().st_nlink == 1 for name in PUNKT_FILES):
        return NLTK_DATA
    private = Path(tempfile.mkdtemp(prefix="rewardkit-punkt-"))
    shutil.copytree(NLTK_DATA / "tokenizers", private / "tokenizers")
    atexit.register(shutil.rmtree, private, True)
    return private


@functools.cache
def _registry() -> dict[str, Callable[[str], Any]]:
    """The checker classes by instruction id, with the library set up (once per process)."""
    try:
        import langdetect
        import nltk
        from if_verifiable.ifeval import (
            instructions,
            instructions_registry,
        )
    except ImportError as exc:
        raise ScorerError(
            f"ifeval: the IFEval checkers are not installed ({exc}): {INSTALL_HINT}"
        ) from None
    root = str(punkt_root())
    if root not in nltk.data.path:
        nltk.data.path.insert(0, root)
    langdetect.DetectorFactory.seed = 0
    table = dict(instructions_registry.INSTRUCTION_DICT)
    table["keywords:letter_frequency"] = _letter_frequency_class(instructions)
    table.update(_linear_classes(instructions))
    return table


def _linear_classes(instructions: ModuleType) -> dict[str, type]:
    """Four official checkers whose patterns read a run of ``[``, ``<<`` or blanks in
    quadratic time, with the same verdicts read in one pass (:mod:`._ifeval_linear`)."""

    class Placeholders(instructions.PlaceholderChecker):  # type: ignore[name-defined]
        def check_following(self, value: str) -> bool:
            return _ifeval_linear.placeholder_count(value) >= self._num_placeholders

    class Bullets(instructions.BulletListChecker):  # type: ignore[name-defined]
        def check_following(self, value: str) -> bool:
            return _ifeval_linear.bullet_count(value) == self._num_bullets

    class Postscript(instructions.PostscriptChecker):  # type: ignore[name-defined]
        def check_following(self, value: str) -> bool:
            pattern = _ifeval_linear.postscript_pattern(self._postscript_marker)
            if pattern is None:
                return bool(super().check_following(value))
            return re.search(pattern, value.lower(), flags=re.MULTILINE) is not None

    class Title(instructions.TitleChecker):  # type: ignore[name-defined]
        def check_following(self, value: str) -> bool:
            return _ifeval_linear.has_title(value)

    return {
        "detectable_content:number_placeholders": Placeholders,
        "detectable_format:number_bullet_lists": Bullets,
        "detectable_content:postscript": Postscript,
        "detectable_format:title": Title,
    }


def _letter_frequency_class(instructions: ModuleType) -> type:
    base = instructions.LetterFrequencyChecker

    class LetterFrequency(base):  # type: ignore[misc,valid-type]
        """The official checker, its arguments read as google-research's current code
        reads them: any one character (``#``, ``!``), lowercased."""

        def build_description(self, *, letter: Any = None, **rest: Any) -> str:
            if not isinstance(letter, str) or len(letter) != 1:
                raise _Drawn("letter")  # checked on the loop: only a disagreement lands here
            description: str = super().build_description(letter="a", **rest)
            self._letter = letter.strip().lower()
            return description

    return LetterFrequency


class _Drawn(Exception):
    """The checker was about to draw an argument at random."""


class _NoDraws:
    def __getattr__(self, name: str) -> Any:
        raise _Drawn(name)


@contextlib.contextmanager
def _no_draws() -> Iterator[None]:
    """While a checker is built, its modules' ``random`` refuses to draw."""
    from if_verifiable.ifeval import (
        instructions,
        instructions_util,
    )

    modules = (instructions, instructions_util)
    saved = [module.random for module in modules]
    for module in modules:
        module.random = _NoDraws()
    try:
        yield
    finally:
        for module, original in zip(modules, saved, strict=True):
            module.random = original


def _checker(position: int, instruction: Instruction) -> Any:
    """The built checker of one instruction (its arguments were checked on the loop:
    :mod:`~rewardkit.verifiers._ifeval_args`; a draw here would mean the two disagree)."""
    instruction_id, kwargs = instruction
    where = f"ifeval: instruction {position} ({instruction_id!r})"
    cls = _registry().get(instruction_id)
    if cls is None:
        raise InvalidSampleError(f"{where} is no IFEval instruction id")
    checker = cls(instruction_id)
    try:
        with _no_draws():
            checker.build_description(**kwargs)
    except _Drawn:
        raise InvalidSampleError(
            f"{where}: an argument is out of range ({dict(kwargs)}; the official checker "
            "would draw one at random)"
        ) from None
    return checker


def loose_variants(response: str) -> tuple[str, ...]:
    """The 8 texts of IFEval's loose reading (``test_instruction_following_loose``)."""
    lines = response.split("\n")
    without_first = "\n".join(lines[1:]).strip()
    without_last = "\n".join(lines[:-1]).strip()
    without_both = "\n".join(lines[1:-1]).strip()
    texts = (response, without_first, without_last, without_both)
    return texts + tuple(text.replace("*", "") for text in texts)


def _passes(checker: Any, text: str, where: str) -> bool:
    if not text.strip():
        return False
    try:
        return bool(checker.check_following(text))
    except RecursionError:  # json.loads on a deeply nested response: no JSON it reads
        return False
    except re.error as exc:
        raise InvalidSampleError(f"{where}: an argument is no regular expression: {exc}") from None


def follows(instructions: Sequence[Instruction], response: str, *, loose: bool) -> list[bool]:
    """Whether ``response`` follows each instruction, as the official checker decides."""
    texts = loose_variants(response) if loose else (response,)
    verdicts = []
    for position, instruction in enumerate(instructions):
        checker = _checker(position, instruction)
        where = f"ifeval: instruction {position} ({instruction[0]!r})"
        verdicts.append(any(_passes(checker, text, where) for text in texts))
    return verdicts


def warm_up() -> None:
    """Load the checkers, langdetect's profiles and the Punkt model before the first row
    (in the worker fork server); nothing when the ``ifeval`` extra is not installed."""
    try:
        _registry()
    except ScorerError:
        return
    sentences = {"num_sentences": 1, "relation": "at least"}
    instructions: list[Instruction] = [
        ("language:response_language", {"language": "en"}),
        ("length_constraints:number_sentences", sentences),
        (
            "change_case:capital_word_frequency",
            {"capital_frequency": 1, "capital_relation": "at least"},
        ),
    ]
    follows(instructions, "This is a sentence. Here is ANOTHER one.", loose=False)
