"""Code verifiers: run the response's last fenced code block against the row's tests.

Data sources (:func:`is_code_source`): ``codecontests``, ``apps``, ``taco``, ``codeforces``
(stdin/stdout or APPS call-based tests) and ``humaneval``/``mbpp`` (assert-style tests),
also under their hub names (``deepmind/code_contests``, ``codeparrot/apps``,
``likaixin/TACO-verified``, ``openai_humaneval``, ``google-research-datasets/mbpp``, ...).

Ground truth formats (a dict, or the same as a JSON string, as verl's datasets store it):

* ``{"inputs": [...], "outputs": [...]}``: one run per case, the input on stdin, the
  output compared after ``\\r\\n`` -> ``\\n``, trailing whitespace on each line and trailing
  blank lines ignored (verl compares after ``rstrip("\\n")``; this also forgives a
  trailing space). Inputs/outputs given as lists of lines are joined with newlines.
* the same with ``"fn_name"`` (APPS/TACO call-based, Python): each input is the argument
  list (or a string of JSON values, one per line, as PRIME's preprocessing stores it);
  the function (or ``Solution().fn_name``, LeetCode style) is called with it and the
  result compared to the output, also when the output is wrapped in a one-item list.
  The solution is preceded by APPS's usual imports (``typing``, ``collections``, ...).
* ``{"input_output": <one of the above>}``: APPS's raw column.
* ``{"assert_case": [...]}``, ``{"test_list": [...]}`` (MBPP) or a plain list of assert
  statements: one run per assert (with ``test_setup_code`` / ``test_imports`` /
  ``import_prefix`` when given).
* ``{"test": "def check(candidate): ...", "entry_point": "f"}`` (HumanEval): one run of
  the test, then ``check(f)``; a plain non-JSON string holding ``assert`` is run the same
  way.

Python assert-style tests are never appended to the code: the Python test
harness (``_python_harness.py``) runs them in a process of its own, calling the solution's
functions in another process and comparing plain-data results with its own builtins, and
a case passes only on the harness's verdict line carrying that run's nonce. Early exits, killed
processes, patched builtins and "always equal" objects therefore fail (see
``tests/verifiers/test_code_hacks.py``). A HumanEval row's prompt helpers
(``encode_cyclic``, ``poly``: :mod:`rewardkit.verifiers._code_prompt`), from
``ground_truth["prompt"]`` or else the row's prompt, run before the solution (which may
call them) and again in the tests' namespace after it, so the tests never call a
solution's redefinition (``tests/verifiers/test_code_namespace.py``).

Other languages' assert programs run after the code in one program; for cpp, bash and
nodejs the test ends by printing a fresh nonce, and a case passes only with that line and
exit status 0, so code that exits 0 first scores 0 (``tests/verifiers/test_code_hacks.py``; what remains: "completion
lines" below). Other languages pass on exit status 0.

A ``"language"`` key (ground truth or ``extra_info``) picks the language; else, for
stdin/stdout tests only, the fence's tag does (```cpp, ```java, ...); else Python. Assert
tests are code in one language, so a fence cannot pick another: a ```bash block holding
``exit 0`` would otherwise pass every MBPP assert run after it. A response without a complete fenced code
block scores 0 (``extra["reason"] = "no code block"``).

Scores: ``continuous`` (default, verl's sandbox rule) is the fraction of the first
``max_cases`` (10) cases that pass; ``all_or_nothing`` is 1 only if every case passes and
stops at the first failure. ``extra`` holds ``acc``, ``passed``, ``total`` and
``verdicts``, one of ``passed``, ``wrong_answer``, ``runtime_error``, ``timeout``,
``compile_error`` (or ``skipped``) per case. A sandbox that cannot run the code (down,
queue full, the row's language missing) raises :class:`~rewardkit.errors.ScorerError`, so
the row becomes an error, never a silent 0. A language the *response's* fence picked and
the embedded sandbox lacks is the answer's fault: every case is a ``compile_error`` (0),
since a row error would spare a wrong answer its reward (TRL: no advantage; verl: the
run stops).

The runs go to the embedded :class:`~rewardkit.sandbox.Sandbox` in this process
when ``reward.sandbox_fusion.url`` is null, else to that SandboxFusion-compatible server.
Either way its ``max_concurrent`` slots are shared fairly between requests
(:class:`~rewardkit._fair.FairSlots`), and a row's wait for one is reported to its clock:
the engine's time limit (``reward.async_timeout_s``) counts the row's runs, its wait is
bounded by ``reward.sandbox_fusion.queue_timeout_s``.
"""

from __future__ import annotations

import asyncio
import base64
import json
import re
import secrets
import weakref
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Literal, Protocol, TypeVar, cast, get_args
from urllib.parse import urlsplit, urlunsplit

from pydantic import ValidationError

from rewardkit._fair import FairSlots
from rewardkit._system import usable_cores
from rewardkit.config import HttpOptions, RewardSection, SandboxFusionConfig
from rewardkit.errors import InvalidSampleError, RemoteError, ScorerError
from rewardkit.sandbox import (
    CommandRunStatus,
    Language,
    RunCodeRequest,
    RunCodeResponse,
    RunStatus,
    SandboxOptions,
)
from rewardkit.verifiers._code_prompt import Helper, fenced_blocks, prompt_helpers
from rewardkit.verifiers.base import Entry, Matcher, Verdict

__all__ = [
    "CODE_SOURCES",
    "ENTRIES",
    "CodeOptions",
    "CodeVerifier",
    "extract_code",
    "is_code_source",
    "make_code_verifier",
    "parse_tests",
]

CODE_SOURCES = ("codecontests", "apps", "taco", "codeforces", "humaneval", "mbpp")
"""The data-source families scored by running code (matched loosely, see is_code_source)."""

Mode = Literal["continuous", "all_or_nothing"]
CaseVerdict = Literal[
    "passed", "wrong_answer", "runtime_error", "timeout", "compile_error", "skipped"
]

_T = TypeVar("_T")

_FENCE_TAGS = {
    "python": "python", "python3": "python", "py": "python", "py3": "python",
    "cpp": "cpp", "c++": "cpp", "cc": "cpp", "cxx": "cpp",
    "java": "java", "javascript": "nodejs", "js": "nodejs", "node": "nodejs", "nodejs": "nodejs",
    "go": "go", "golang": "go", "rust": "rust", "rs": "rust", "bash": "bash", "sh": "bash",
    "perl": "perl", "ruby": "ruby", "rb": "ruby", "php": "php", "lua": "lua",
}  # fmt: skip

_LANGUAGES = frozenset(get_args(Language))

# APPS/TACO solutions assume these are imported (their own test harness prepends them).
_CALL_PRELUDE = (
    "from typing import *\nimport sys, os, math, re, json, heapq, bisect, string, random, itertools, "
    "functools, collections, operator\nfrom collections import *\nfrom itertools import *\n"
    "from functools import *\nfrom heapq import *\nfrom bisect import *\nfrom math import *\n"
)
_RESULT_MARKER = "\x1erewardkit-result:"
_HARNESS_SOURCE = (Path(__file__).parent / "_python_harness.py").read_text(encoding="utf-8")
_HARNESS_MARKER = "\x1erewardkit-harness:"
_HARNESS_VERDICTS = ("passed", "wrong_answer", "runtime_error", "timeout")
_HARNESS_BATCH = 4
"""Cases per harness run. Each has a host process forked up front, and processes count
against the run's RLIMIT_NPROC (32): MBPP's 3 asserts fit in one run, leaving the
solution 26 processes or threads."""
_CALL_HARNESS = """\
import json, sys
sys.setrecursionlimit(max(sys.getrecursionlimit(), 100000))
with open("args.json") as fh:
    args = json.load(fh)
import solution
fn = getattr(solution, {name!r}, None)
if fn is None and hasattr(solution, "Solution"):
    fn = getattr(solution.Solution(), {name!r})
if fn is None:
    raise SystemExit("no function named " + {name!r})
result = fn(*args)
if isinstance(result, tuple):
    result = list(result)
sys.stdout.write("\\n" + {marker!r} + json.dumps(result, default=repr) + "\\n")
"""


# ---------------------------------------------------------------------- options and tests


@dataclass(frozen=True, slots=True)
class CodeOptions:
    """How code rows are scored."""

    mode: Mode = "continuous"
    max_cases: int | None = 10
    """continuous: score the first this many cases (verl: 10); None: all of them."""
    run_timeout_s: float = 10.0
    compile_timeout_s: float = 10.0
    memory_limit_mb: int = 1024
    default_language: str = "python"

    def __post_init__(self) -> None:
        if self.mode not in ("continuous", "all_or_nothing"):
            raise ValueError(f"mode must be 'continuous' or 'all_or_nothing', got {self.mode!r}")
        if self.max_cases is not None and self.max_cases < 1:
            raise ValueError("max_cases must be at least 1 (or None for all cases)")


@dataclass(frozen=True, slots=True)
class _Case:
    """One test: what to run, and how its output is checked."""

    code: str
    stdin: str | None = None
    files: Mapping[str, str] = field(default_factory=dict)
    expected: Any = None
    check: Literal["stdout", "call", "exit", "harness"] = "exit"
    run_timeout_s: float | None = None
    """None: the verifier's per-case limit (a harness run holds several cases)."""


@dataclass(frozen=True, slots=True)
class TestSuite:
    """A row's tests, parsed from its ground truth (see the module docstring)."""

    __test__ = False  # not a pytest class

    kind: Literal["stdio", "call", "assert", "program"]
    cases: tuple[Any, ...]
    """stdio: (input, output) pairs; call: (args, expected); assert/program: code strings."""
    fn_name: str | None = None
    setup: str = ""
    language: str | None = None
    entry_point: str | None = None
    """HumanEval: the function the tests check (``check(entry_point)``)."""
    helpers: tuple[Helper, ...] = ()
    """The task prompt's definitions the tests call (:func:`prompt_helpers`)."""

    def build(self, code: str, index: int, language: str = "python") -> _Case:
        """The run for case ``index`` of ``code`` (in ``language``)."""
        case = self.cases[index]
        if self.kind == "stdio":
            stdin, expected = case
            return _Case(code=code, stdin=stdin, expected=expected, check="stdout")
        if self.kind == "call":
            args, expected = case
            files = {"solution.py": _b64(_CALL_PRELUDE + code), "args.json": _b64(json.dumps(args))}
            harness = _CALL_HARNESS.format(name=self.fn_name, marker=_RESULT_MARKER)
            return _Case(code=harness, files=files, expected=expected, check="call")
        prefix = f"{self.setup}\n" if self.setup else ""
        nonce = secrets.token_hex(16)
        program = _run_to_the_end(language, f"{prefix}{code}\n\n", case, nonce)
        if program is None:  # no completion line for this language: its exit status alone
            return _Case(code=f"{prefix}{code}\n\n{case}\n")
        return _Case(code=program, expected=nonce)

    def in_harness(self, language: str) -> bool:
        """Whether these tests run in the Python test harness (assert-style tests)."""
        return language == "python" and self.kind in ("assert", "program")

    def build_harness_run(self, code: str, indices: range, timeout_s: float, stop: bool) -> _Case:
        """One harness run (``_python_harness.py``) for the cases ``indices``, each with its
        own host.

        The tests and a fresh nonce travel on the harness's stdin; the solution runs in
        processes that see neither, so only the harness can print the verdict lines.
        """
        nonce = secrets.token_hex(16)
        tests = [self.cases[i] for i in indices]
        helpers = [[list(h.names), h.source, h.in_tests] for h in self.helpers]
        spec = {"nonce": nonce, "setup": self.setup, "helpers": helpers, "tests": tests,
                "path": "solution.py", "timeout": timeout_s,
                "stop_at_first_failure": stop}  # fmt: skip
        return _Case(
            code=_HARNESS_SOURCE,
            stdin=f"{len(tests)}\n{json.dumps(spec)}",
            files={"solution.py": _b64(code)},
            expected=(nonce, len(tests), stop),
            check="harness",
            run_timeout_s=timeout_s * len(tests) + 5.0,  # the harness times each case itself
        )


def parse_tests(ground_truth: Any) -> TestSuite:
    """Parse a row's ground truth into tests; InvalidSampleError names what is wrong."""
    value = ground_truth
    if isinstance(value, str | bytes):
        try:
            value = json.loads(value)
        except (json.JSONDecodeError, UnicodeDecodeError):
            text = value.decode(errors="replace") if isinstance(value, bytes) else value
            if "assert" in text:
                return TestSuite("program", (text,))
            raise InvalidSampleError(
                "code ground truth is neither JSON nor assert statements"
            ) from None
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return _nonempty(TestSuite("assert", tuple(value)))
    if not isinstance(value, Mapping):
        raise InvalidSampleError(
            f"code ground truth must be an object or a list, got {type(value).__name__}"
        )
    if "input_output" in value:
        inner = parse_tests(value["input_output"])
        language = value.get("language") or inner.language
        return TestSuite(inner.kind, inner.cases, inner.fn_name, inner.setup, language)
    language = value.get("language") if isinstance(value.get("language"), str) else None
    if "inputs" in value and "outputs" in value:
        return _nonempty(_io_suite(value, language))
    for key in ("assert_case", "test_list"):
        if isinstance(value.get(key), list):
            setup = _setup_code(
                [value.get(k) for k in ("import_prefix", "test_imports", "test_setup_code")]
            )
            asserts = tuple(str(a) for a in value[key])
            return _nonempty(TestSuite("assert", asserts, setup=setup, language=language))
    if isinstance(value.get("test"), str):
        test = value["test"]
        entry = value.get("entry_point")
        if entry and not re.search(r"^check\(", test, re.M):
            test += f"\n\ncheck({entry})\n"
        entry = entry if isinstance(entry, str) and entry.isidentifier() else None
        prompt = value.get("prompt")  # openai_humaneval's rows carry it
        helpers = prompt_helpers(prompt, entry) if entry and isinstance(prompt, str) else ()
        return TestSuite("program", (test,), language=language, entry_point=entry, helpers=helpers)
    raise InvalidSampleError(
        "code ground truth needs 'inputs'/'outputs', 'assert_case', 'test_list' or 'test' "
        f"(got keys {sorted(map(str, value))[:8]})"
    )


def _io_suite(value: Mapping[str, Any], language: str | None) -> TestSuite:
    inputs, outputs = value["inputs"], value["outputs"]
    if not isinstance(inputs, list) or not isinstance(outputs, list):
        raise InvalidSampleError("'inputs' and 'outputs' must be lists")
    if len(inputs) != len(outputs):
        raise InvalidSampleError(f"{len(inputs)} inputs but {len(outputs)} outputs")
    fn_name = value.get("fn_name")
    if fn_name:
        calls = tuple(_call_case(i, o) for i, o in zip(inputs, outputs, strict=True))
        return TestSuite("call", calls, fn_name=str(fn_name), language=language)
    cases = tuple((_text(i, newline=True), _text(o)) for i, o in zip(inputs, outputs, strict=True))
    return TestSuite("stdio", cases, language=language)


def _call_case(args: Any, expected: Any) -> tuple[list[Any], Any]:
    if isinstance(args, str):  # PRIME's layout: one JSON value per line, outputs as JSON too
        try:
            parsed = [json.loads(line) for line in args.split("\n") if line.strip()]
            expected = json.loads(expected) if isinstance(expected, str) else expected
        except json.JSONDecodeError as exc:
            raise InvalidSampleError(f"call-based input is not JSON lines: {exc}") from None
        return parsed, expected
    return (list(args) if isinstance(args, list | tuple) else [args]), expected


def _text(value: Any, *, newline: bool = False) -> str:
    if isinstance(value, list):
        joined = "\n".join(str(v) for v in value)
        return joined + "\n" if newline and joined and not joined.endswith("\n") else joined
    return value if isinstance(value, str) else str(value)


def _setup_code(parts: Sequence[Any]) -> str:
    """MBPP's setup fields: strings or lists of lines (``test_imports``), in order."""
    lines: list[str] = []
    for part in parts:
        for chunk in part if isinstance(part, list) else [part]:
            lines.extend(line for line in str(chunk or "").split("\n") if line.strip())
    return "\n".join(lines)


def _nonempty(suite: TestSuite) -> TestSuite:
    if not suite.cases:
        raise InvalidSampleError("code ground truth has no test cases")
    return suite


# ---------------------------------------------------------------------- completion lines

# A non-Python assert program is the code, then the row's test, in one program: code that
# exits 0 before the test (a C++ static initializer calling exit, bash `exit 0`) used to
# pass on the exit status. The test now ends by printing a fresh nonce (never in the
# response, so the code cannot print it) and a case passes only with that line and exit
# status 0. What remains: the code runs in the same program as the test, so it can read
# the nonce from its own source or binary and print it, or rewrite the test (a C++ macro,
# a bash function named like a command the test uses); only a checking process apart
# from the solution, as _python_harness.py is for Python, closes that. Languages without a completion
# line here (java, go, rust, perl, ruby, php, lua, ...) are still judged by exit status.
_DONE_MARKER = "\x1erewardkit-done:"


def _run_to_the_end(language: str, code: str, test: str, nonce: str) -> str | None:
    """The program: ``code``, then ``test`` ending with the nonce's completion line; None
    for a language without one."""
    if language == "cpp":
        return _cpp_program(code, test, nonce)
    if language == "bash":
        return _bash_program(code, test, nonce)
    if language == "nodejs":
        return _nodejs_program(code, test, nonce)
    return None


def _bash_program(code: str, test: str, nonce: str) -> str:
    """The line follows the test, printed only if its last status is 0 (or by the test's
    own ``exit 0``) and if the line set just before the test ran: code that ends in an
    open here-document or quote, to skip the test up to a line it guessed, skips that too.
    ``case`` is a reserved word: the code cannot redefine it as it can ``[`` or ``test``."""
    started = f"rewardkit_started_{nonce}"
    done = f"case ${{{started}-}} in 1) printf '\\n%s\\n' '{_DONE_MARKER}{nonce}' ;; esac"
    test = re.sub(r"\bexit\s+0\b", lambda _: f"{{ {done}; exit 0; }}", test)
    return f"{code}\n{started}=1\n{test}\ncase $? in 0) {done} ;; *) exit 1 ;; esac\n"


def _nodejs_program(code: str, test: str, nonce: str) -> str:
    """The line is written as the process exits with status 0, if the test's synchronous
    part ran to its end (a failed asynchronous assert still sets a non-zero status) or
    the test itself called ``process.exit(0)``."""
    flag = f"__rewardkit_done_{nonce}"
    line = json.dumps(f"\n{_DONE_MARKER}{nonce}\n")
    test = re.sub(
        r"\bprocess\.exit\(\s*0?\s*\)", lambda _: f"({flag} = true, process.exit(0))", test
    )
    return (
        f"{code}\n;var {flag} = false;\n"
        f"process.on('exit', (c) => {{ if (c === 0 && {flag}) process.stdout.write({line}); }});\n"
        f"{test}\n;{flag} = true;\n"
    )


def _cpp_program(code: str, test: str, nonce: str) -> str:
    """The test's ``main`` renamed and called by ours, which prints the line when it
    returns 0 (an exit from a constructor, ``atexit``, ``_exit`` or a signal handler
    never gets there). ``NDEBUG`` and ``assert`` are reset before the test, so the code
    cannot switch the test's asserts off."""
    body = _cpp_main(test)
    if body is None:
        raise InvalidSampleError(
            "a cpp assert test needs an `int main(...) { ... }` the verifier can find, "
            "to check that it ran to its end"
        )
    name, close_brace = body
    renamed = f"rewardkit_main_{nonce}"
    head = test[:name] + renamed + test[name + len("main") : close_brace]
    test = f"{head}\nreturn 0;\n{test[close_brace:]}"  # main's implicit return, kept
    guard = "\n#undef NDEBUG\n#undef assert\n#include <cassert>\n"
    return f"{code}{guard}{test}\n{_CPP_MAIN_WRAPPER.format(main=renamed, nonce=nonce)}"


_CPP_MAIN_WRAPPER = """\
#include <cstdio>
#include <type_traits>
template <class F> static int rewardkit_call_{nonce}(F f, int argc, char** argv) {{
  if constexpr (std::is_invocable_v<F, int, char**>) return f(argc, argv);
  else return f();
}}
int main(int argc, char** argv) {{
  int status = rewardkit_call_{nonce}({main}, argc, argv);
  if (status != 0) return status;
  std::fputs("\\n\\x1e" "rewardkit-done:{nonce}\\n", stdout);
  std::fflush(stdout);
  return 0;
}}
"""

_CPP_MAIN_NAME = re.compile(r"\bmain\s*\(")


def _cpp_main(test: str) -> tuple[int, int] | None:
    """Where the test defines ``main``: its name and its body's closing ``}``; None if
    not found (the test is the row's, trusted, but not parsed beyond this)."""
    code = _blank_comments_and_literals(test)
    for match in _CPP_MAIN_NAME.finditer(code):
        close = _matching(code, match.end() - 1)
        if close is None:
            return None
        after = close + 1
        while after < len(code) and code[after].isspace():
            after += 1
        if after < len(code) and code[after] == "{":
            end = _matching(code, after)
            return None if end is None else (match.start(), end)
    return None


def _matching(code: str, start: int) -> int | None:
    """The index of the bracket closing ``code[start]`` (comments and literals blanked)."""
    opener, closer = code[start], {"(": ")", "{": "}"}[code[start]]
    depth = 0
    for i in range(start, len(code)):
        depth += (code[i] == opener) - (code[i] == closer)
        if depth == 0:
            return i
    return None


_CPP_SKIPPED = re.compile(
    r"//[^\n]*|/\*.*?(?:\*/|\Z)|\"(?:\\.|[^\"\\\n])*\"?|(?<![0-9A-Za-z_])'(?:\\.|[^'\\\n])*'?", re.S
)


def _blank_comments_and_literals(text: str) -> str:
    """``text`` with comments and string/char literals turned to spaces (same length),
    so that a ``main(`` or brace inside them is not taken for code. A ``'`` after a
    digit or letter is a digit separator (``1'000``) or a prefix, not a literal."""
    return _CPP_SKIPPED.sub(lambda m: " " * len(m.group()), text)


# ---------------------------------------------------------------------- extraction


def extract_code(response: str) -> tuple[str, str | None] | None:
    """The last complete fenced code block and its tag, or None. Linear in the response."""
    blocks = fenced_blocks(response)
    return blocks[-1] if blocks else None


# Short family names count only at the start of the name (``apps_train``), longer ones
# anywhere in it (``deepmind/code_contests``, ``openai_humaneval``).
_PREFIX_ONLY = ("apps", "taco")


def is_code_source(data_source: str) -> bool:
    """Whether rows of this data source are scored by running code (a family of
    :data:`CODE_SOURCES` in its last path segment, ignoring case and punctuation)."""
    name = data_source.strip().lower().rsplit("/", 1)[-1]
    key = re.sub(r"[^a-z0-9]", "", name)
    if key.startswith(_PREFIX_ONLY):
        return True
    return any(family in key for family in CODE_SOURCES if family not in _PREFIX_ONLY)


# ---------------------------------------------------------------------- runners


class _Runner(Protocol):
    async def run(self, request: RunCodeRequest) -> RunCodeResponse: ...

    async def supports(self, language: str) -> bool: ...

    async def aclose(self) -> None: ...


class _EmbeddedRunner:
    """The in-process sandbox: the same ``run_code`` the HTTP server calls, no HTTP."""

    def __init__(self, options: SandboxOptions) -> None:
        from rewardkit.sandbox.core import Sandbox  # only where one runs here

        self.sandbox = Sandbox(options)

    async def run(self, request: RunCodeRequest) -> RunCodeResponse:
        return await self.sandbox.run_code(request)

    async def supports(self, language: str) -> bool:
        """Whether this machine has ``language``; True if the sandbox cannot start (its
        run then answers the reason as a sandbox error)."""
        try:
            await self.sandbox.start()
        except RuntimeError:
            return True
        return language in self.sandbox.languages

    async def aclose(self) -> None:
        await self.sandbox.close()


class _RemoteRunner:
    """A SandboxFusion-compatible server (``reward.sandbox_fusion.url``) over pooled HTTP.

    Its ``max_concurrent`` requests in flight are slots shared fairly between requesters,
    as the embedded sandbox's are; the client's own limit then never queues.
    """

    def __init__(
        self, url: str, max_concurrent: int, timeout_s: float, api_key: str | None = None
    ) -> None:
        from rewardkit.http import HttpClient

        base, self.path = _split_url(url)
        options = HttpOptions(timeout_s=timeout_s, max_concurrent=max_concurrent, api_key=api_key)
        self.client = HttpClient(base, options)
        self.slots = FairSlots(range(max_concurrent))

    async def run(self, request: RunCodeRequest) -> RunCodeResponse:
        async with self.slots.take():
            body = await self.client.post_json(self.path, request.model_dump())
        try:
            return RunCodeResponse.model_validate(body)
        except ValidationError as exc:
            raise RemoteError(f"sandbox answered an unexpected body: {str(body)[:200]}") from exc

    async def supports(self, language: str) -> bool:
        """Unknown here: a language the server lacks is its error (SandboxError)."""
        return True

    async def aclose(self) -> None:
        await self.client.aclose()


def _split_url(url: str) -> tuple[str, str]:
    """verl's setting is the full ``.../run_code`` URL; a bare server URL is accepted too."""
    parts = urlsplit(url)
    path = parts.path.rstrip("/")
    if not path.endswith("/run_code"):
        path += "/run_code"
    base_path, _, leaf = path.rpartition("/")
    return urlunsplit((parts.scheme, parts.netloc, base_path, "", "")), leaf


# ---------------------------------------------------------------------- the verifier


class CodeVerifier:
    """An :class:`~rewardkit.verifiers.base.AsyncVerifier` for code rows.

    ``runner_factory`` makes the runner for an event loop (one per loop: sandboxes and
    HTTP pools belong to the loop that made them); :func:`make_code_verifier` builds it
    from the configuration.
    """

    def __init__(self, options: CodeOptions, runner_factory: Callable[[], _Runner]) -> None:
        self.options = options
        self._factory = runner_factory
        self._runners: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, _Runner] = (
            weakref.WeakKeyDictionary()
        )

    extra_info_keys: tuple[str, ...] = ("language",)
    """The only part of ``extra_info`` a run depends on (part of the engine's cache key)."""

    reads_prompt: bool = True
    """HumanEval helpers come from the row's prompt when the ground truth has none."""

    @property
    def key(self) -> str:
        opts = self.options
        return f"code:{opts.mode}:{opts.max_cases}:{opts.run_timeout_s:g}"

    async def ascore(
        self, response: str, ground_truth: Any, extra_info: Mapping[str, Any], prompt: str = ""
    ) -> Verdict:
        """Run the response's code on the row's tests. ScorerError if the sandbox fails.

        ``prompt``: the row's prompt as text. A HumanEval row whose ground truth has no
        ``prompt`` of its own takes the helper definitions its tests call from it.
        """
        suite = parse_tests(ground_truth)
        if suite.entry_point and not suite.helpers and prompt:
            suite = replace(suite, helpers=prompt_helpers(prompt, suite.entry_point))
        found = extract_code(response)
        if found is None:
            return Verdict(0.0, {"acc": False, "passed": 0, "total": 0, "reason": "no code block"})
        code, tag = found
        language = _language(suite, extra_info, tag, self.options.default_language)
        if suite.kind == "call":
            language = "python"  # call-based tests call a Python function
        if language not in _LANGUAGES:
            raise InvalidSampleError(
                f"unknown language {language!r} (SandboxFusion's names: python, cpp, ...)"
            )
        if _picked_by_fence(suite, extra_info) and not await self._runner().supports(language):
            return _not_installed(language, self._case_count(suite))
        verdicts = await self._run_suite(suite, code, language)
        passed = sum(v == "passed" for v in verdicts)
        total = len(verdicts)
        if self.options.mode == "all_or_nothing":
            score = 1.0 if passed == total else 0.0
        else:
            score = passed / total
        return Verdict(
            score, {"acc": passed == total, "passed": passed, "total": total, "verdicts": verdicts}
        )

    async def aclose(self) -> None:
        """Close this event loop's runner (sandbox spawner or HTTP pool)."""
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            return
        runner = self._runners.pop(loop, None)
        if runner is not None:
            await runner.aclose()

    def _case_count(self, suite: TestSuite) -> int:
        count = len(suite.cases)
        if self.options.mode == "continuous" and self.options.max_cases is not None:
            count = min(count, self.options.max_cases)
        return count

    async def _run_suite(self, suite: TestSuite, code: str, language: str) -> list[CaseVerdict]:
        count = self._case_count(suite)
        runner = self._runner()
        if suite.in_harness(language):
            return await self._harness_batches(runner, suite, code, count)
        jobs = [self._one(runner, suite.build(code, i, language), language) for i in range(count)]
        if self.options.mode == "all_or_nothing":
            return await _until_first_failure(jobs)
        return await _all_or_raise(jobs)

    async def _harness_batches(
        self, runner: _Runner, suite: TestSuite, code: str, count: int
    ) -> list[CaseVerdict]:
        """Harness runs of up to ``_HARNESS_BATCH`` cases: all at once (continuous), or one
        after another stopping at the first failure (all_or_nothing)."""
        stop = self.options.mode == "all_or_nothing"
        batches = [
            range(i, min(i + _HARNESS_BATCH, count)) for i in range(0, count, _HARNESS_BATCH)
        ]
        cases = [
            suite.build_harness_run(code, b, self.options.run_timeout_s, stop) for b in batches
        ]
        if not stop:
            runs = [self._run(runner, case, "python") for case in cases]
            answers = await _all_or_raise(runs)
            return [v for case, answer in zip(cases, answers, strict=True)
                    for v in _harness_verdicts(answer, case)]  # fmt: skip
        verdicts: list[CaseVerdict] = []
        for case in cases:
            if any(v != "passed" for v in verdicts):
                verdicts += ["skipped"] * case.expected[1]
                continue
            verdicts += _harness_verdicts(await self._run(runner, case, "python"), case)
        return verdicts

    async def _one(self, runner: _Runner, case: _Case, language: str) -> CaseVerdict:
        return _verdict(await self._run(runner, case, language), case)

    async def _run(self, runner: _Runner, case: _Case, language: str) -> RunCodeResponse:
        opts = self.options
        request = RunCodeRequest(
            code=case.code,
            language=cast(Language, language),  # an unknown one fails the model's validation
            stdin=case.stdin,
            files=dict(case.files),
            run_timeout=case.run_timeout_s or opts.run_timeout_s,
            compile_timeout=opts.compile_timeout_s,
            memory_limit_MB=opts.memory_limit_mb,
        )
        return await runner.run(request)

    def _runner(self) -> _Runner:
        loop = asyncio.get_running_loop()
        runner = self._runners.get(loop)
        if runner is None:
            runner = self._runners[loop] = self._factory()
        return runner


async def _all_or_raise(jobs: Sequence[Awaitable[_T]]) -> list[_T]:
    """Every case's verdict; if one raises (the sandbox failed), the others are cancelled."""
    tasks = [asyncio.ensure_future(job) for job in jobs]
    try:
        return list(await asyncio.gather(*tasks))
    except BaseException:
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        raise


async def _until_first_failure(jobs: Sequence[Awaitable[CaseVerdict]]) -> list[CaseVerdict]:
    """Run all cases at once; at the first failure cancel the rest (marked ``skipped``)."""
    tasks = [asyncio.ensure_future(job) for job in jobs]
    verdicts: list[CaseVerdict] = ["skipped"] * len(tasks)
    try:
        for finished in asyncio.as_completed(tasks):
            await finished
            for i, task in enumerate(tasks):
                if task.done() and not task.cancelled() and task.exception() is None:
                    verdicts[i] = task.result()
            if any(v not in ("passed", "skipped") for v in verdicts):
                break
    finally:
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
    return verdicts


def _verdict(response: RunCodeResponse, case: _Case) -> CaseVerdict:
    if response.status == RunStatus.SANDBOX_ERROR:
        raise ScorerError(f"sandbox error: {response.message[:300]}")
    compiled = response.compile_result
    if compiled is not None and (
        compiled.status != CommandRunStatus.FINISHED or compiled.return_code != 0
    ):
        return "compile_error"
    run = response.run_result
    if run is None:
        raise ScorerError(f"sandbox answered {response.status} without a run result")
    if run.status == CommandRunStatus.TIME_LIMIT_EXCEEDED:
        return "timeout"
    if run.status == CommandRunStatus.ERROR:
        raise ScorerError(f"sandbox could not run the program: {(run.stderr or '')[:300]}")
    if run.return_code != 0:
        # A failed assert in an assert-style test is a wrong answer, other errors are not.
        failed_assert = case.check == "exit" and _last_line(run.stderr or "").startswith(
            "AssertionError"
        )
        return "wrong_answer" if failed_assert else "runtime_error"
    if case.check == "stdout":
        return "passed" if _same_output(run.stdout or "", case.expected) else "wrong_answer"
    if case.check == "call":
        return "passed" if _same_value(run.stdout or "", case.expected) else "wrong_answer"
    if case.expected is not None and f"{_DONE_MARKER}{case.expected}" not in _lines(
        run.stdout or ""
    ):
        return "runtime_error"  # exit status 0, but the test never reached its end
    return "passed"


def _harness_verdicts(response: RunCodeResponse, case: _Case) -> list[CaseVerdict]:
    """Each case's verdict from the harness's own lines (``<mark><nonce>:<i>:<verdict>``).

    A case without its line was not judged: ``timeout`` if the run hit its limit,
    ``skipped`` after a failure when the harness stops at the first one, else
    ``runtime_error`` (the run died first).
    """
    if response.status == RunStatus.SANDBOX_ERROR:
        raise ScorerError(f"sandbox error: {response.message[:300]}")
    run = response.run_result
    if run is None or run.status == CommandRunStatus.ERROR:
        raise ScorerError(f"sandbox could not run the test harness: {response.message[:300]}")
    nonce, count, stop = case.expected
    found: dict[int, str] = {}
    for line in (run.stdout or "").split("\n"):
        head, _, rest = line.partition(f"{_HARNESS_MARKER}{nonce}:")
        index, _, verdict = rest.partition(":")
        if _ and not head and index.isdigit() and verdict.strip() in _HARNESS_VERDICTS:
            found.setdefault(int(index), verdict.strip())
    missing: CaseVerdict = (
        "timeout" if run.status == CommandRunStatus.TIME_LIMIT_EXCEEDED else "runtime_error"
    )
    verdicts: list[CaseVerdict] = []
    for i in range(count):
        if i in found:
            verdicts.append(found[i])  # type: ignore[arg-type]
        elif stop and any(v != "passed" for v in verdicts):
            verdicts.append("skipped")
        else:
            verdicts.append(missing)
    return verdicts


def _last_line(text: str) -> str:
    lines = _lines(text[-2000:])
    return lines[-1] if lines else ""


def _lines(text: str) -> list[str]:
    lines = [line.rstrip() for line in text.replace("\r\n", "\n").split("\n")]
    while lines and not lines[-1]:
        lines.pop()
    return lines


def _same_output(actual: str, expected: Any) -> bool:
    return _lines(actual) == _lines(_text(expected))


def _same_value(stdout: str, expected: Any) -> bool:
    marker = stdout.rfind(_RESULT_MARKER)
    if marker < 0:
        return False
    try:
        value = json.loads(stdout[marker + len(_RESULT_MARKER) :])
    except json.JSONDecodeError:
        return False
    expected = json.loads(json.dumps(expected, default=repr))  # tuples -> lists, as the result
    return value == expected or (
        isinstance(expected, list) and len(expected) == 1 and value == expected[0]
    )


def _language(
    suite: TestSuite, extra_info: Mapping[str, Any], tag: str | None, default: str
) -> str:
    named = suite.language or extra_info.get("language")
    if isinstance(named, str) and named:
        return _FENCE_TAGS.get(named.lower(), named)
    if suite.kind in ("assert", "program"):
        # The tests are code in the row's language: a ```bash fence must not turn MBPP's
        # Python asserts into shell commands run after the code's own `exit 0`.
        return default
    return _FENCE_TAGS.get(tag or "", default)


def _picked_by_fence(suite: TestSuite, extra_info: Mapping[str, Any]) -> bool:
    """Whether the response, not the row, chose the language (see :func:`_language`)."""
    named = suite.language or extra_info.get("language")
    return not (isinstance(named, str) and named) and suite.kind == "stdio"


def _not_installed(language: str, count: int) -> Verdict:
    """A fence naming a language this sandbox lacks: the answer's choice, so it cannot
    run (compile_error, 0), not a row error that would spare it a wrong answer's reward."""
    verdicts: list[CaseVerdict] = ["compile_error"] * count
    reason = f"{language} is not installed in the sandbox"
    extra = {"acc": False, "passed": 0, "total": count, "verdicts": verdicts, "reason": reason}
    return Verdict(0.0, extra)


def _b64(text: str) -> str:
    return base64.b64encode(text.encode()).decode()


def make_code_verifier(
    cfg: SandboxFusionConfig, *, mode: Mode = "continuous", **options: Any
) -> CodeVerifier:
    """The code verifier the scoring loop uses: embedded sandbox when ``cfg.url`` is null.

    The embedded sandbox runs ``min(cfg.max_concurrent, cores)`` programs at once (more
    would only queue on the CPU); a remote one gets ``cfg.max_concurrent`` requests in
    flight. ``options`` are further :class:`CodeOptions` fields.
    """
    settings: dict[str, Any] = {
        "mode": cfg.mode if mode == "continuous" else mode,
        "max_cases": cfg.max_cases,
        "run_timeout_s": cfg.run_timeout_s,
        "compile_timeout_s": cfg.compile_timeout_s,
        "memory_limit_mb": cfg.memory_limit_mb,
    }
    code_options = CodeOptions(**{**settings, **options})
    if cfg.url:
        url = cfg.url
        # Per attempt: both steps at their limits, plus queueing on a busy server.
        timeout = code_options.run_timeout_s + code_options.compile_timeout_s + 60.0
        key = cfg.api_key
        return CodeVerifier(
            code_options, lambda: _RemoteRunner(url, cfg.max_concurrent, timeout, key)
        )
    sandbox_options = SandboxOptions(
        max_concurrent=min(cfg.max_concurrent, usable_cores()),
        # A row's wait, in all, is bounded by the engine's guard at cfg.queue_timeout_s; the
        # sandbox's bound on one wait is a backstop just past it (the guard's message wins).
        queue_timeout_s=cfg.queue_timeout_s + 1.0,
        memory_limit_mb=cfg.memory_limit_mb,
        max_memory_mb=cfg.memory_limit_mb,  # the configured limit, whatever it is
        python_executable=cfg.python_executable,
        allow_unisolated=cfg.allow_unisolated,
    )
    return CodeVerifier(code_options, lambda: _EmbeddedRunner(sandbox_options))


def _from_config(section: RewardSection) -> CodeVerifier:
    return make_code_verifier(section.sandbox_fusion)


ENTRIES = (
    Entry(
        "code",
        Matcher(predicate=is_code_source, listed=CODE_SOURCES),
        _from_config,
        asynchronous=True,
        priority=10,  # before the rule families, as a matched code row must run its tests
    ),
)
"""This module's rows of the verifier registry (:mod:`rewardkit.verifiers.registry`)."""
