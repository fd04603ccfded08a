"""rewardkit's Python test harness, run inside the sandbox as the program (stdlib only).

Not an LLM judge (that is :mod:`rewardkit.models.judge`): this decides pass or fail of
Python test cases by running them.

The code verifier sends this file as the program of every Python ``assert``-style run
(MBPP, HumanEval), with up to a few cases per run. The submitted code never runs where
the verdict is made:

* the **harness** (this file as ``main.py``) reads the number of cases, forks one host per
  case, makes itself undumpable (the solution, under the same uid, can then neither
  ptrace it nor open its ``/proc`` files, descriptors included), reads the tests and a
  per-run nonce from its stdin, runs each case itself under the case's time limit and
  prints ``\\x1erewardkit-harness:<nonce>:<case>:<verdict>`` on its stdout;
* a **host** (forked before the tests were read, so it holds no copy of them) loads
  ``solution.py`` and answers the harness's calls for one case on two pipes. It never sees
  the tests, the nonce or the harness's stdout (its own stdin and stdout are /dev/null).

Every value that crosses from host to harness is plain data (None, bool, int, float,
complex, str, bytes, list, tuple, set, frozenset, dict, and the exact numbers Fraction
and Decimal) rebuilt by the harness from a
tagged JSON form, or an opaque handle that compares equal only to itself. So the test's
``==`` runs on the harness's own builtins: an "always equal" object, a patched ``assert``,
``sys.exit(0)``, ``os._exit(0)``, killing either process, ``atexit`` hooks or monkey
patches in the solution can fail a test but never pass one.

The test's namespace is built by the harness, never taken whole from the host: the
solution's plain names (no dunder, no stdlib module's name unless it is that real module;
no builtin's name, nor a comparison tool such as ``isclose`` or ``Counter`` but the
stdlib's own, unless it is the one solution name the test reads: the task's function),
then the harness's own ``__name__`` and builtins, the row's setup, and the task prompt's
helper definitions (``encode_cyclic`` for ``decode_cyclic``), which a solution's
redefinitions cannot replace.
"""

# Annotations are never evaluated: the file runs on whatever Python the sandbox has.
from __future__ import annotations

import sys

if __name__ == "__main__":
    del sys.path[0]  # the harness imports nothing from the workspace the solution can write

import builtins
import json
import os
import signal
from collections.abc import Callable
from typing import IO, Any

# Tagged JSON: what crosses the pipes. Handles turn an object into (or from) a reference.
Json = Any

if hasattr(sys, "set_int_max_str_digits"):
    sys.set_int_max_str_digits(0)

_MARK = "\x1erewardkit-harness:"


# ---------------------------------------------------------------------- the codec


def encode(obj: Any, handle: Callable[[Any], Json]) -> Json:
    """Plain data as tagged JSON; anything else through ``handle`` (an opaque reference)."""
    if obj is None or obj is True or obj is False or type(obj) is str:
        return obj
    kind = type(obj)
    if kind is int:
        return ["i", str(obj)]
    if kind is float:
        return ["f", repr(obj)]
    if kind is complex:
        return ["c", repr(obj.real), repr(obj.imag)]
    if kind is bytes:
        return ["y", obj.decode("latin-1")]
    if kind in (list, tuple, set, frozenset):
        tags: dict[type[Any], str] = {list: "l", tuple: "t", set: "s", frozenset: "z"}
        tag = tags[kind]
        return [tag, [encode(x, handle) for x in obj]]
    if kind is dict:
        return ["d", [[encode(k, handle), encode(v, handle)] for k, v in obj.items()]]
    if kind.__module__ in ("fractions", "decimal"):  # exact numbers: Fraction(1, 2) == 0.5
        import decimal
        import fractions

        if kind is fractions.Fraction:
            return ["q", str(obj.numerator), str(obj.denominator)]
        if kind is decimal.Decimal:
            return ["D", str(obj)]
    return handle(obj)


def decode(value: Json, handle: Callable[[int], Any]) -> Any:
    """The harness's own objects from tagged JSON; ValueError/TypeError if malformed."""
    if value is None or value is True or value is False or type(value) is str:
        return value
    if type(value) is not list or not value or type(value[0]) is not str:
        raise ValueError("malformed value")
    tag, rest = value[0], value[1:]
    if tag in ("i", "f", "y", "r") and (len(rest) != 1 or type(rest[0]) is not str):
        raise ValueError("malformed scalar")
    if tag == "i":
        return int(rest[0])
    if tag == "f":
        return float(rest[0])
    if tag == "y":
        return rest[0].encode("latin-1")
    if tag == "r":
        return handle(int(rest[0]))
    if tag == "c" and len(rest) == 2 and all(type(x) is str for x in rest):
        return complex(float(rest[0]), float(rest[1]))
    if tag in ("q", "D") and all(type(x) is str for x in rest):
        return _exact_number(tag, rest)
    if len(rest) != 1 or type(rest[0]) is not list:
        raise ValueError("malformed container")
    items = rest[0]
    if tag == "d":
        return {decode(k, handle): decode(v, handle) for k, v in items}
    builders: dict[str, type[Any]] = {"l": list, "t": tuple, "s": set, "z": frozenset}
    build = builders.get(tag)
    if build is None:
        raise ValueError(f"unknown tag {tag!r}")
    return build(decode(x, handle) for x in items)


def _exact_number(tag: str, parts: list[str]) -> Any:
    """A Fraction (``q``: numerator, denominator) or a Decimal (``D``: its text), the
    harness's own stdlib classes: the test's ``==`` runs on them, never on the solution's."""
    if tag == "q" and len(parts) == 2 and int(parts[1]) != 0:
        import fractions

        return fractions.Fraction(int(parts[0]), int(parts[1]))
    if tag == "D" and len(parts) == 1 and len(parts[0]) <= 5000:
        import decimal

        try:
            return decimal.Decimal(parts[0])
        except decimal.InvalidOperation as exc:
            raise ValueError("malformed decimal") from exc
    raise ValueError("malformed exact number")


# ---------------------------------------------------------------------- the host


def _plain(obj: Any) -> Any:
    """The host's view of a result as data: builtin subclasses and numpy scalars unwrapped."""
    scalars: tuple[type[Any], ...] = (bool, int, float, complex, str, bytes)
    for base in scalars:
        if isinstance(obj, base) and type(obj) is not base:
            return base(obj) if base is not str else str.__str__(obj)
    if type(obj).__module__ == "numpy" and getattr(obj, "shape", None) == ():
        return obj.item()  # a numpy scalar: np.int64(3) == 3 in Python, so here too
    containers: tuple[type[Any], ...] = (list, tuple, dict, set, frozenset)
    for base in containers:
        if isinstance(obj, base) and type(obj) is not base:
            return base(obj)
    return obj


class Host:
    """The solution's side: loads it, then runs what the harness asks, replying in data."""

    def __init__(self) -> None:
        self.objects: dict[
            int, object
        ] = {}  # id -> object the harness holds a handle to (kept alive here)

    def handle(self, obj: object) -> Json:
        plain = _plain(obj)
        if plain is not obj:
            return encode(plain, self.handle)
        self.objects[id(obj)] = obj
        return ["r", str(id(obj))]

    def resolve(self, hid: int) -> Any:
        return self.objects[hid]

    def load(self, message: dict[str, Any]) -> dict[str, list[Json]]:
        """Run setup, the prompt's helpers and the solution as ``__main__`` (HumanEval's
        program is prompt + completion: a solution may call ``encode_cyclic`` without
        copying it); describe its names for the harness."""
        import types

        module = types.ModuleType("__main__")
        module.__file__ = message["path"]
        sys.modules["__main__"] = module
        exec(compile(message["setup"], "<setup>", "exec"), module.__dict__)
        for _, helper, _ in message.get("helpers", []):
            try:
                exec(compile(helper, "<prompt>", "exec"), module.__dict__)
            except Exception:
                pass  # as in the harness: the name stays undefined
        with open(message["path"], encoding="utf-8") as fh:
            source = fh.read()
        exec(compile(source, message["path"], "exec"), module.__dict__)
        names: dict[str, list[Json]] = {}
        for name, value in list(module.__dict__.items()):
            if name.startswith("__"):
                continue
            if isinstance(value, types.ModuleType):
                names[name] = ["m", value.__name__]
            elif isinstance(value, (list, tuple, dict, set, frozenset)) and len(value) > 1000:
                # A big table the solution precomputed: by reference, not copied each run.
                self.objects[id(value)] = value
                names[name] = ["v", ["r", str(id(value))]]
            else:
                names[name] = ["v", encode(value, self.handle)]
        return names

    def serve(self, message: dict[str, Any]) -> Json:
        """One request: ``load``, ``call`` or an operation on a handle."""
        op = message["op"]
        if op == "load":
            return self.load(message)
        target = self.resolve(int(message["h"]))
        arg: Any = decode(message.get("a"), self.resolve) if "a" in message else None
        if op == "call":
            kwargs = {k: decode(v, self.resolve) for k, v in message["k"].items()}
            return encode(target(*arg, **kwargs), self.handle)
        operations: dict[str, Callable[[], object]] = {
            "attr": lambda: getattr(target, arg),
            "iter": lambda: list(target),
            "len": lambda: len(target),
            "bool": lambda: bool(target),
            "str": lambda: str(target),
            "item": lambda: target[arg],
        }
        return encode(operations[op](), self.handle)


def host_main(request_fd: int, reply_fd: int) -> None:
    """Answer the harness's requests until it closes the pipe."""
    host = Host()
    requests = os.fdopen(request_fd, "r", encoding="utf-8")
    replies = os.fdopen(reply_fd, "w", encoding="utf-8")
    for line in requests:
        try:
            reply = {"v": host.serve(json.loads(line))}
        except BaseException as exc:  # the solution's SystemExit too: the harness decides
            reply = {"x": type(exc).__name__, "m": _text_of(exc)}
        replies.write(json.dumps(reply) + "\n")
        replies.flush()


def _text_of(exc: BaseException) -> str:
    try:
        return str(exc)[:300]
    except BaseException:  # the solution's own exception type may fail even at this
        return "?"


# ---------------------------------------------------------------------- the harness


class HostGone(Exception):
    """The solution's process exited, was killed or broke the protocol."""


class SolutionExit(BaseException):
    """The solution raised SystemExit (or another BaseException): never caught by tests."""


class SolutionError(Exception):
    """The solution raised an exception the harness cannot rebuild as a builtin one."""


class Remote:
    """An object of the solution (a function, a class, an instance): only the host runs it."""

    __slots__ = ("_rk_channel", "_rk_id")

    def __init__(self, hid: int, channel: Channel) -> None:
        object.__setattr__(self, "_rk_id", hid)
        object.__setattr__(self, "_rk_channel", channel)

    def _rk(self, op: str, *arg: object, **extra: Json) -> Any:
        message = {"op": op, "h": str(self._rk_id), **extra}
        if arg:
            message["a"] = self._rk_channel.encode(arg[0])
        return self._rk_channel.request(message)

    def __call__(self, *args: object, **kwargs: object) -> Any:
        encoded = {str(k): self._rk_channel.encode(v) for k, v in kwargs.items()}
        return self._rk("call", list(args), k=encoded)

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__") and name.endswith("__"):
            raise AttributeError(name)
        return self._rk("attr", name)

    def __iter__(self) -> Any:
        return iter(self._rk("iter"))

    def __len__(self) -> Any:
        return self._rk("len")

    def __bool__(self) -> Any:
        return self._rk("bool")

    def __str__(self) -> Any:
        return self._rk("str")

    def __getitem__(self, key: object) -> Any:
        return self._rk("item", key)

    def __contains__(self, key: object) -> bool:
        # Decided here, over the items as data: the solution's own __contains__ (or items
        # whose __eq__ is always True) would answer every `x in result` test with True.
        return any(item is key or item == key for item in self)

    def __repr__(self) -> str:
        return f"<solution object {self._rk_id}>"


class Channel:
    """The harness's end of the pipes to the host."""

    def __init__(self, pid: int, requests: IO[str], replies: IO[str]) -> None:
        self.pid = pid
        self.requests = requests
        self.replies = replies
        self.remotes: dict[int, Remote] = {}

    def remote(self, hid: int) -> Remote:
        if hid not in self.remotes:
            self.remotes[hid] = Remote(hid, self)
        return self.remotes[hid]

    def encode(self, value: object) -> Json:
        def handle(obj: object) -> Json:
            if type(obj) is Remote:
                return ["r", str(obj._rk_id)]
            raise TypeError(f"cannot pass a {type(obj).__name__} to the solution")

        return encode(value, handle)

    def request(self, message: dict[str, Any], raw: bool = False) -> Any:
        try:
            self.requests.write(json.dumps(message) + "\n")
            self.requests.flush()
            line = self.replies.readline()
        except OSError as exc:
            raise HostGone(f"the solution's process is gone ({exc})") from None
        if not line:
            raise HostGone("the solution's process exited or was killed")
        try:
            reply = json.loads(line)
            if "x" in reply:
                raised = _rebuilt(str(reply["x"]), str(reply.get("m", "")))
            else:
                return reply["v"] if raw else decode(reply["v"], self.remote)
        except (ValueError, TypeError, KeyError, AttributeError, RecursionError) as exc:
            raise HostGone(f"the solution's process broke the protocol ({exc})") from None
        raise raised


def _rebuilt(name: str, message: str) -> BaseException:
    """The solution's exception as the harness's builtin one (tests may catch ValueError)."""
    cls = getattr(builtins, name, None)
    if not (isinstance(cls, type) and issubclass(cls, BaseException)):
        return SolutionError(f"{name}: {message}")
    if not issubclass(cls, Exception) or cls in (StopIteration, StopAsyncIteration):
        return SolutionExit(f"{name}: {message}")
    try:
        return cls(message)
    except Exception:
        return SolutionError(f"{name}: {message}")


def _undumpable() -> None:
    """No ptrace, no /proc/<pid>/fd or mem for processes of our uid: the host included."""
    try:
        import ctypes

        ctypes.CDLL(None).prctl(4, 0, 0, 0, 0)  # PR_SET_DUMPABLE = 4
    except Exception:
        pass


def _start_host() -> Channel:
    """Fork the host *before* the tests are read: it inherits nothing secret, and its stdin
    and stdout become /dev/null (the tests are still unread in the stdin pipe)."""
    req_r, req_w = os.pipe()
    rep_r, rep_w = os.pipe()
    pid = os.fork()
    if pid == 0:
        try:
            null = os.open(os.devnull, os.O_RDWR)
            os.dup2(null, 0)
            os.dup2(null, 1)
            low, high = sorted((req_r, rep_w))
            os.closerange(3, low)  # the other hosts' pipes too: each talks only to the harness
            os.closerange(low + 1, high)
            os.closerange(high + 1, 1 << 16)
            sys.path.insert(0, "")  # the solution may import files of its workspace
            host_main(req_r, rep_w)
        finally:
            os._exit(0)
    os.close(req_r)
    os.close(rep_w)
    return Channel(
        pid, os.fdopen(req_w, "w", encoding="utf-8"), os.fdopen(rep_r, "r", encoding="utf-8")
    )


def _namespace(channel: Channel, names: Any, used: set[str]) -> dict[str, Any]:
    """The test's globals, built here: the solution's plain names as remotes (or data), its
    stdlib modules imported here, then this process's own ``__name__`` and builtins.

    ``names`` is the host's reply, which the solution can forge (patch ``json.dumps``,
    write to the pipe): a dunder name (``__builtins__`` above all, whose dict would
    replace ``abs`` or ``set`` for every line of the test) or anything that is not an
    identifier is never taken from it, and the harness's own dunders are set last.

    ``used``: the names the test (and the row's setup) read. When the test reads only
    one of the solution's names, that is the task's function, whatever it is called
    (``def max(xs)`` for ``assert max([1, 5, 3]) == 5``, HumanEval's ``check(sum)``).
    When it reads several, the task's function sits among helpers that wrap it: a
    builtin's name stays the builtin, and a name a test takes from the stdlib
    (:data:`_TEST_TOOLS`: ``isclose``, ``Counter``, ``sqrt``) is the stdlib's own, so a
    solution's ``def isclose(*a): return True`` beside its wrong ``area`` fails
    ``assert isclose(area(2), 12.566)``.
    """
    if type(names) is not dict:
        raise HostGone("the solution's process broke the protocol (names)")
    namespace: dict[str, Any] = {}
    allowed = getattr(sys, "stdlib_module_names", ())
    read = [n for n in names if type(n) is str and n in used and names[n][0] != "m"]
    task = read[0] if len(read) == 1 else None
    for name, (kind, value) in names.items():
        if not (type(name) is str and name.isidentifier()) or name.startswith("__"):
            continue
        if hasattr(builtins, name) and name != task:
            # A solution's `abs`, `set` or `sorted` would run on both sides of the test's
            # comparison (`abs(f(x) - y) < eps` with abs returning 0): builtins stay the harness's.
            continue
        tool = _test_tool(name) if name != task and name in used else None
        if tool is not None:
            namespace[name] = tool
            continue
        if kind != "m" and name in allowed and name != task:
            # A class named `math` with an `isclose` always True: MBPP tests that use the
            # solution's `import math` get only a real module (or nothing) under that name.
            continue
        if kind == "m":
            if name in allowed and value != name:
                continue  # `math` is the real math module or nothing (not cmath)
            if str(value).split(".")[0] in allowed:
                try:
                    namespace[name] = __import__(str(value), fromlist=["_"])
                except Exception:
                    pass
        else:
            namespace[name] = decode(value, channel.remote)
    namespace.update(__name__="__rewardkit_test__", __builtins__=builtins)
    return namespace


# What a test takes from the stdlib to compare results (a solution imports it for the
# test, as MBPP's rows expect): never a task's function name (gcd, factorial, product)
_TEST_TOOLS = {
    "math": ("isclose", "isnan", "isinf", "isfinite", "inf", "nan", "pi", "sqrt", "fabs"),
    "collections": ("Counter", "defaultdict", "OrderedDict", "deque", "namedtuple"),
    "fractions": ("Fraction",),
    "decimal": ("Decimal",),
}


def _test_tool(name: str) -> Any:
    """The stdlib's own object for a :data:`_TEST_TOOLS` name (imported here, never taken
    from the solution), or None."""
    for module_name, tools in _TEST_TOOLS.items():
        if name in tools:
            try:
                return getattr(__import__(module_name), name)
            except (ImportError, AttributeError):
                return None
    return None


def _names_read(sources: list[str]) -> set[str]:
    """Every name the given Python sources read or call (one that does not parse: none)."""
    import ast

    read: set[str] = set()
    for source in sources:
        try:
            tree = ast.parse(source)
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            continue
        read.update(node.id for node in ast.walk(tree) if isinstance(node, ast.Name))
    return read


def _define_helpers(namespace: dict[str, Any], helpers: list[Any]) -> None:
    """The task prompt's own definitions (``encode_cyclic``, ``poly``), run here after the
    solution's names: the tests call these, never a solution's redefinition of them.

    ``helpers`` is ``[[names, source, in_tests], ...]`` in the prompt's order; classes
    (not ``in_tests``) stay the host's, as the tests pass their instances to the solution.
    A definition that fails here (a module this Python lacks) leaves its names undefined
    rather than the solution's.
    """
    for names, source, in_tests in helpers:
        if not in_tests:
            continue
        try:
            exec(compile(source, "<prompt>", "exec"), namespace)
        except Exception:
            for name in names:
                namespace.pop(name, None)


class CaseTimeout(BaseException):
    """A case ran past its time (SIGALRM); not an Exception, so tests cannot catch it."""


def _on_alarm(signum: int, frame: object) -> None:
    raise CaseTimeout


def _read_count() -> int:
    """The number of cases, the first line of stdin, read a byte at a time: nothing after
    it (the tests) may be buffered in this process before the hosts are forked."""
    data = b""
    while not data.endswith(b"\n"):
        byte = os.read(0, 1)
        if not byte:
            break
        data += byte
    return int(data)


def _run_case(channel: Channel, spec: dict[str, Any], test: str) -> tuple[str, str]:
    """One case against its own fresh host, under the case's own time limit."""
    try:
        try:
            signal.setitimer(signal.ITIMER_REAL, spec["timeout"])
            helpers = spec.get("helpers", [])
            load = {"op": "load", "setup": spec["setup"], "helpers": helpers, "path": spec["path"]}
            names = channel.request(load, raw=True)
            namespace = _namespace(channel, names, _names_read([spec["setup"], test]))
            exec(compile(spec["setup"], "<setup>", "exec"), namespace)
            _define_helpers(namespace, helpers)
            exec(compile(test, "<test>", "exec"), namespace)
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)
    except CaseTimeout:
        return "timeout", f"over {spec['timeout']:g}s"
    except BaseException as exc:
        return _classify(exc)
    return "passed", ""


def _stop(channel: Channel) -> None:
    try:
        os.kill(channel.pid, signal.SIGKILL)
        os.waitpid(channel.pid, 0)
    except OSError:
        pass


def harness_main() -> None:
    """Run the cases given on stdin, each against its own host; print each verdict line.

    stdin: the number of cases on a line, then ``{"nonce", "setup", "helpers", "tests",
    "path", "timeout", "stop_at_first_failure"}``. The hosts are forked before the tests
    are read.
    """
    hosts = [_start_host() for _ in range(_read_count())]
    _undumpable()
    try:
        spec = json.loads(sys.stdin.read())
        signal.signal(signal.SIGALRM, _on_alarm)
        for index, test in enumerate(spec["tests"][: len(hosts)]):
            host = hosts[index]
            verdict, detail = _run_case(host, spec, test)
            _stop(host)
            sys.stderr.write(f"[harness] case {index}: {verdict} {detail}\n")
            sys.stdout.write(f"\n{_MARK}{spec['nonce']}:{index}:{verdict}\n")
            sys.stdout.flush()
            if verdict != "passed" and spec.get("stop_at_first_failure"):
                break
    finally:
        for host in hosts:
            _stop(host)


def _classify(exc: BaseException) -> tuple[str, str]:
    detail = f"{type(exc).__name__}: {exc}"[:300]
    if isinstance(exc, AssertionError):
        return "wrong_answer", detail
    return "runtime_error", detail


if __name__ == "__main__":
    harness_main()
