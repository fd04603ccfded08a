"""The definitions a code task's prompt gives its tests (HumanEval's helper functions).

Some HumanEval tests call functions that the *prompt* defines: HumanEval/38 checks
``decode_cyclic`` on ``encode_cyclic(s)``, HumanEval/32 checks ``find_zero`` with
``poly``. A solution that also defines those names (``encode_cyclic`` as the identity,
``poly`` returning 0) must not change what the tests call: the Python test harness runs
the prompt's own definitions in the tests' namespace after taking the solution's names,
and only the solution's entry point (and the names the prompt does not define) reach the
tests from the solution. It also runs them before the solution, in the solution's process
(HumanEval's program is prompt + completion: a solution may call ``encode_cyclic``
without copying it).

Classes are the exception: they run only in the solution's process. A test builds their
instances to pass them to the solution (a ``ListNode`` list), and only objects of the
solution's process can cross to it; the tests' own checks (``==`` on data, the prompt's
functions) stay in the harness.

The prompt is the row's data, trusted as its tests are. Its definitions are its
top-level imports, functions, classes and plain assignments, read with :mod:`ast`; the
entry point's own definition and stubs (a body of only a docstring, ``pass``, ``...`` or
``raise NotImplementedError``: what the solution is asked to write) are left out.
"""

from __future__ import annotations

import ast
import functools
from collections.abc import Iterator
from typing import NamedTuple

__all__ = ["Helper", "fenced_blocks", "prompt_helpers"]


class Helper(NamedTuple):
    """One definition of the prompt, run in order by the harness."""

    names: tuple[str, ...]
    """What it binds (left undefined if it fails where it runs)."""
    source: str
    in_tests: bool
    """Also run in the tests' namespace (all but classes), after the solution's names."""


_CODE_STARTS = ("def ", "async def ", "class ", "import ", "from ", "@")
_PYTHON_TAGS = (None, "python", "python3", "py", "py3")


@functools.lru_cache(maxsize=256)
def prompt_helpers(prompt: str, entry_point: str) -> tuple[Helper, ...]:
    """The prompt's definitions for the tests of ``entry_point``, in the prompt's order.

    The prompt's code is the whole prompt when it parses as Python (openai_humaneval's
    ``prompt``), else its fenced Python blocks, else its text from the first line that
    starts a definition or an import (an instruction, then the code); none if that does
    not parse either. Cached: a prompt's rollouts share it.
    """
    helpers: list[Helper] = []
    for module in _prompt_modules(prompt):
        for node in module.body:
            names = _defined_names(node, entry_point)
            if names is not None:
                in_tests = not isinstance(node, ast.ClassDef)
                helpers.append(Helper(names, ast.unparse(node), in_tests))
    return tuple(helpers)


def _prompt_modules(prompt: str) -> Iterator[ast.Module]:
    whole = _parsed(prompt)
    if whole is not None:
        yield whole
        return
    blocks = [code for code, tag in fenced_blocks(prompt) if tag in _PYTHON_TAGS]
    if blocks:
        for code in blocks:
            module = _parsed(code)
            if module is not None:
                yield module
        return
    lines = prompt.split("\n")
    for i, line in enumerate(lines):
        if line.startswith(_CODE_STARTS):
            module = _parsed("\n".join(lines[i:]))
            if module is not None:
                yield module
            return


def _parsed(code: str) -> ast.Module | None:
    try:
        return ast.parse(code)
    except (SyntaxError, ValueError):  # ValueError: a NUL byte in the text
        return None


def fenced_blocks(text: str) -> list[tuple[str, str | None]]:
    """Every complete fenced code block of ``text`` with its tag (lowercased), in order.
    Linear in the text."""
    blocks: list[tuple[str, str | None]] = []
    tag: str | None = None
    indent = ""
    body: list[str] = []
    in_block = False
    for line in text.split("\n"):
        stripped = line.strip()
        if not in_block:
            if stripped.startswith("```"):
                in_block, body = True, []
                words = stripped[3:].strip().split()
                tag = words[0].lower() if words else None
                indent = line[: len(line) - len(line.lstrip())]
        elif stripped.startswith("```") and not stripped.strip("`"):
            in_block = False
            code = "\n".join(body)
            if code.strip():
                blocks.append((code, tag))
        else:
            body.append(line[len(indent) :] if indent and line.startswith(indent) else line)
    return blocks


def _defined_names(node: ast.stmt, entry_point: str) -> tuple[str, ...] | None:
    """The names a prompt statement defines for the tests, or None if it is not one."""
    if isinstance(node, ast.Import):
        return tuple((a.asname or a.name).split(".")[0] for a in node.names)
    if isinstance(node, ast.ImportFrom):
        if node.module == "__future__":
            return None
        return tuple(a.asname or a.name for a in node.names if a.name != "*")
    if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
        if node.name == entry_point or _is_stub(node):
            return None
        return (node.name,)
    if isinstance(node, ast.Assign) and all(isinstance(t, ast.Name) for t in node.targets):
        return tuple(t.id for t in node.targets if isinstance(t, ast.Name))
    if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name) and node.value:
        return (node.target.id,)
    return None


def _is_stub(node: ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef) -> bool:
    """A definition left for the solution to write: nothing but a docstring, ``pass``,
    ``...``, ``raise NotImplementedError`` (and, in a class, such stub methods)."""
    for statement in node.body:
        if isinstance(statement, ast.Pass):
            continue
        if isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Constant):
            continue  # a docstring or ``...``
        if isinstance(statement, ast.Raise) and _names_not_implemented(statement.exc):
            continue
        if isinstance(node, ast.ClassDef) and isinstance(
            statement, ast.FunctionDef | ast.AsyncFunctionDef
        ):
            if _is_stub(statement):
                continue
        return False
    return True


def _names_not_implemented(exc: ast.expr | None) -> bool:
    if isinstance(exc, ast.Call):
        exc = exc.func
    return isinstance(exc, ast.Name) and exc.id == "NotImplementedError"
