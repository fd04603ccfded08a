"""Two-stage parsing for latex2sympy's ANTLR parser: SLL prediction first, full LL on error.

math-verify reads LaTeX with latex2sympy, whose ANTLR parser predicts in ANTLR's default
LL mode. Full-context (LL) predictions are never cached in the parser's DFA, so a worker
recomputes them on every answer it parses. ANTLR documents SLL prediction as returning
either the very parse tree LL would return, or a syntax error (``PredictionMode.SLL`` in
the ANTLR 4 runtime); the standard remedy is to parse with SLL and, on a syntax error
only, parse again with LL. latex2sympy raises on the first syntax error (its error
listener), so a parse that SLL completes is LL's parse, and every other input is parsed
again exactly as before: verdicts cannot change, only the time they take.

Measured on the real-output corpus (``benchmarks/worker_warmth.py``, BENCHMARKS.md) and
checked verdict for verdict there and in ``tests/verifiers/test_two_stage.py``.

The SLL stage also answers two costly predictions without simulating them, where the
answer is provable from the tokens (:class:`_Shortcuts`). The grammar's top rule and its
``element`` rule choose between a set, a ``±`` expression and a relation; SLL scans the
whole input to choose, and learns DFA states for every new token sequence it scans: half
a worker's prediction time on a first pass over the rows left to math-verify
(``benchmarks/worker_warmth.py --decisions``). Where only one alternative can match the
input (the others need a first token that is not next, or a ``±`` token the input lacks),
SLL's simulation could end in nothing but that alternative or a syntax error, and the
parse that follows fails on the same token in the second case: the same answer, without
the scan.
"""

from __future__ import annotations

import logging
from typing import Any

__all__ = ["install", "installed"]

_MARK = "_rewardkit_two_stage"
logger = logging.getLogger(__name__)


def install() -> bool:
    """Make latex2sympy's parser two-stage; False (and unchanged) where its internals differ.

    Idempotent. Called where math-verify is imported (workers only). A latex2sympy whose
    parser factory is not the one this wraps keeps parsing in LL mode: slower, never wrong.
    """
    try:
        from antlr4.atn.PredictionMode import PredictionMode
        from latex2sympy2_extended import latex2sympy2
    except ImportError:
        return False
    converter = getattr(latex2sympy2, "_Latex2Sympy", None)
    create = getattr(converter, "create_parser", None)
    if converter is None or create is None:
        logger.debug("latex2sympy has no _Latex2Sympy.create_parser: LL parsing kept")
        return False
    if getattr(create, _MARK, False):
        return True
    shortcuts = _Shortcuts.of(latex2sympy2)

    def create_parser(self: Any, latex_str: str) -> Any:
        parser = create(self, latex_str)
        full_context = parser.math

        def math() -> Any:
            parser._interp.predictionMode = PredictionMode.SLL
            if shortcuts is not None:
                parser._interp.adaptivePredict = shortcuts.bind(parser)
            try:
                return full_context()
            except Exception as exc:
                if not _retries(exc):
                    raise  # a caller's time limit (a signal handler's raise): LL's too
                # A syntax error in SLL mode: a real one, or an input only LL can parse.
                # A fresh parser in ANTLR's default (LL) mode decides which.
                return create(self, latex_str).math()

        parser.math = math
        return parser

    setattr(create_parser, _MARK, True)
    converter.create_parser = create_parser
    return True


# The decisions answered from the tokens: (rule, the alternative predicted when the
# others cannot match). The top rule picks a set relation, a list of elements or a set
# expression; an element a ``±`` expression, a set atom or a relation.
_DECISIONS = (("math", 2), ("element", 3), ("element_no_relation", 3))

# Tokens an alternative may need (tried in order): a ``±``; a set membership or assignment.
_NEEDED = (("PLUS_MINUS",), ("IN", "ASSIGNMENT", "NOTIN"))

_NEVER: frozenset[int] = frozenset()  # the alternative cannot start with the next token


class _Shortcuts:
    """Predictions the SLL stage answers from the tokens, for latex2sympy's grammar.

    For each decision of :data:`_DECISIONS` the rule's other alternatives are checked
    against the next token: one cannot match when the token starts none of its paths, or
    when every path that starts with the token goes on to match a token of a needed set
    (:data:`_NEEDED`) and no such token is left in the input. What an alternative needs is
    read from the parser's own ATN (:func:`_free_path`), once per (decision, alternative,
    token). When every other alternative is out, the decision predicts the one left.
    """

    def __init__(self, parser: Any) -> None:
        self.atn = parser.atn
        self.choices: dict[int, int] = {}
        for rule, alternative in _DECISIONS:
            decision = _only_decision(self.atn, parser.ruleNames.index(rule))
            if len(self.atn.decisionToState[decision].transitions) != 3:
                raise LookupError(f"latex2sympy's rule {rule} changed")
            self.choices[decision] = alternative
        self.needed = [frozenset(getattr(parser, name) for name in names) for names in _NEEDED]
        self.needs: dict[tuple[int, int, int], frozenset[int] | None] = {}

    @classmethod
    def of(cls, latex2sympy2: Any) -> _Shortcuts | None:
        try:
            return cls(latex2sympy2.PSParser)
        except (AttributeError, LookupError, ValueError, StopIteration):
            logger.debug("latex2sympy's grammar differs: every prediction simulated")
            return None

    def bind(self, parser: Any) -> Any:
        """The parser's ``adaptivePredict``, answering this grammar's decisions first."""
        simulate = parser._interp.adaptivePredict
        last_seen: dict[int, int] = {}

        def predict(stream: Any, decision: int, outer: Any) -> int:
            alternative = self.choices.get(decision)
            if alternative is not None and self._only(alternative, decision, stream, last_seen):
                return alternative
            return simulate(stream, decision, outer)

        return predict

    def _only(
        self, alternative: int, decision: int, stream: Any, last_seen: dict[int, int]
    ) -> bool:
        """Whether no alternative but ``alternative`` can match the input from here."""
        token = stream.LA(1)
        for other in (1, 2, 3):
            if other == alternative:
                continue
            needs = self._needs(decision, other, token)
            if needs is None:
                return False
            if needs and self._ahead(needs, stream, last_seen):
                return False
        return True

    def _needs(self, decision: int, alternative: int, token: int) -> frozenset[int] | None:
        """:data:`_NEVER` when the alternative cannot start with ``token``; else a token set
        every path of it starting with ``token`` matches; None when neither is proven."""
        key = (decision, alternative, token)
        if key not in self.needs:
            start = self.atn.decisionToState[decision].transitions[alternative - 1].target
            if token not in self.atn.nextTokens(start):
                self.needs[key] = _NEVER
            else:
                stop = self.atn.ruleToStopState[self.atn.decisionToState[decision].ruleIndex]
                self.needs[key] = next(
                    (tokens for tokens in self.needed
                     if not _free_path(self.atn, start, stop, token, tokens, depth=8)),
                    None,
                )  # fmt: skip
        return self.needs[key]

    @staticmethod
    def _ahead(tokens: frozenset[int], stream: Any, last_seen: dict[int, int]) -> bool:
        """Whether a token of ``tokens`` is at or after the stream's position."""
        if not last_seen:
            stream.fill()  # the whole input lexed (a lexer error raises: SLL fails, LL decides)
            for item in stream.tokens:
                last_seen[item.type] = item.tokenIndex
            last_seen.setdefault(-1, -1)  # filled, even for an input without tokens
        return any(last_seen.get(kind, -1) >= stream.index for kind in tokens)


def _only_decision(atn: Any, rule: int) -> int:
    """The rule's first decision state: for these rules, the choice between alternatives."""
    return next(d for d, state in enumerate(atn.decisionToState) if state.ruleIndex == rule)


def _free_path(
    atn: Any, start: Any, stop: Any, first: int, needed: frozenset[int], depth: int
) -> bool:
    """Whether ``stop`` is reachable from ``start`` on a path that begins with ``first``
    and matches no token of ``needed`` after it (or ends before matching anything).

    Rule calls are followed ``depth`` deep; deeper ones are assumed to match anything but
    only what their first tokens allow at the start: an over-approximation, so a False
    (every path matches a needed token) is a proof.
    """
    return bool(_exits(atn, start, stop, first, needed, depth, matched=False, cache={}))


def _exits(
    atn: Any,
    start: Any,
    stop: Any,
    first: int,
    needed: frozenset[int],
    depth: int,
    matched: bool,
    cache: dict[Any, frozenset[bool]],
) -> frozenset[bool]:
    """The ``matched`` flags (first token matched yet) with which ``stop`` is reachable."""
    from antlr4.atn.Transition import RuleTransition, WildcardTransition

    key = (start.stateNumber, stop.stateNumber, depth, matched)
    if key in cache:
        return cache[key]
    cache[key] = frozenset({True, False})  # a recursive call while computing: assume free
    exits: set[bool] = set()
    seen: set[tuple[int, bool]] = set()
    todo = [(start, matched)]
    while todo:
        state, done = todo.pop()
        if (state.stateNumber, done) in seen:
            continue
        seen.add((state.stateNumber, done))
        if state is stop:
            exits.add(done)
            continue
        for move in state.transitions:
            if isinstance(move, RuleTransition):
                rule = move.target.ruleIndex
                if depth > 0:
                    inner = _exits(
                        atn, atn.ruleToStartState[rule], atn.ruleToStopState[rule],
                        first, needed, depth - 1, done, cache,
                    )  # fmt: skip
                else:
                    inner = _unknown_rule(atn, move.target, first, done)
                todo.extend((move.followState, flag) for flag in inner)
            elif move.isEpsilon:
                todo.append((move.target, done))
            else:
                labels = None if isinstance(move, WildcardTransition) else move.label
                if not done:
                    if labels is None or first in labels:
                        todo.append((move.target, True))
                elif labels is None or not all(kind in needed for kind in labels):
                    todo.append((move.target, True))
    cache[key] = frozenset(exits)
    return cache[key]


def _unknown_rule(atn: Any, start: Any, first: int, matched: bool) -> frozenset[bool]:
    """What a rule not looked into may leave: anything once the first token is matched;
    before it, a match when it can start with that token, nothing when it can be empty."""
    if matched:
        return frozenset({True})
    starts = atn.nextTokens(start)
    flags = set()
    if first in starts:
        flags.add(True)
    if -2 in starts:  # Token.EPSILON: the rule can match nothing
        flags.add(False)
    return frozenset(flags)


def _retries(exc: Exception) -> bool:
    """Whether an SLL parse's exception is the parser's own, which LL may not raise:
    latex2sympy's error listener raises a plain ``Exception`` on a syntax error, and
    prediction may recurse deeper in one mode. Anything else came from outside the
    parse (math-verify's ``parsing_timeout`` raises from a SIGALRM handler): retrying
    would swallow it and run the LL parse past the caller's limit."""
    return type(exc) is Exception or isinstance(exc, RecursionError)


def installed() -> bool:
    """Whether latex2sympy parses two-stage in this process."""
    try:
        from latex2sympy2_extended import latex2sympy2
    except ImportError:
        return False
    create = getattr(getattr(latex2sympy2, "_Latex2Sympy", None), "create_parser", None)
    return bool(getattr(create, _MARK, False))
