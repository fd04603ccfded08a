"""guards: every ```python block of README.md and docs/*.md runs as pasted.

Each block runs in a fresh interpreter, in document order, in one temporary directory per
document (so a block can use what an earlier one wrote, as a reader following the page
would). What the blocks need around them is made here, and only that:

- ``<!-- file: PATH -->`` on the line before a fence: the block *is* that file (the
  integration examples). Every such block of the document is written to PATH first, and
  a Python one is then loaded as a trainer loads it (``runpy.run_path``, not as
  ``__main__``: the TRL example's main trains a 0.5B model).
- a block that calls ``http://127.0.0.1:8000`` gets the server the README starts
  there (``rewardkit serve --port 8000``), running while it runs.
- ``<!-- test: NAME -->`` on the line before a fence: a test of its own runs the block
  as written and checks what it prints (``snippet("NAME")`` in that test: the README's
  MiniLM reward model, built and scored by tests/models/test_docs_minilm.py); here it is
  only checked that such a test exists, so the 20 s model run happens once.
- ``<!-- fragment -->`` on the line before a fence: a piece of code that is not meant to
  run alone. It must still parse; ``FRAGMENTS`` pins how many there are.
"""

from __future__ import annotations

import ast
import re
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest

ROOT = Path(__file__).resolve().parents[1]
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
FENCE = re.compile(
    r"^(?:(?P<tag><!-- [^\n]*-->)\n)?```(?P<lang>\w*)\n(?P<body>.*?)^```$", re.M | re.S
)
SERVER = "http://127.0.0.1:8000"
FRAGMENTS = 1  # README's compute_score: a function for a config to name, not a script
TESTS = ROOT / "tests"
PER_BLOCK_S = 120


@dataclass(frozen=True)
class Block:
    doc: Path
    line: int
    lang: str
    tag: str
    body: str

    @property
    def name(self) -> str:
        return f"{self.doc.relative_to(ROOT)}:{self.line}"


def blocks(doc: Path) -> list[Block]:
    text = doc.read_text()
    found = []
    for m in FENCE.finditer(text):
        line = text.count("\n", 0, m.start("lang")) + 1
        found.append(Block(doc, line, m["lang"], m["tag"] or "", m["body"]))
    return found


def _python(doc: Path) -> list[Block]:
    return [b for b in blocks(doc) if b.lang == "python"]


def test_the_documents_hold_python_blocks_and_few_fragments() -> None:
    for doc in DOCS:  # an indented fence (in a list item) would escape the run below
        assert not re.search(r"^[ \t]+```py", doc.read_text(), re.M), doc.name
    every = [b for doc in DOCS for b in _python(doc)]
    assert len(every) >= 9
    fragments = [b for b in every if b.tag == "<!-- fragment -->"]
    assert len(fragments) == FRAGMENTS, [b.name for b in fragments]
    for block in fragments:
        ast.parse(block.body, filename=block.name)


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """``rewardkit serve --port 8000``, as the README starts it; the blocks call that port."""
    with socket.socket() as probe:
        if probe.connect_ex(("127.0.0.1", 8000)) == 0:
            pytest.skip("something else listens on 127.0.0.1:8000, where the docs' server goes")
    where = tmp_path_factory.mktemp("server")
    (where / "reward.yaml").write_text("reward:\n  num_workers: 1\n")
    log = where / "server.log"  # a file, not a pipe: nobody reads a pipe while it runs
    with log.open("w") as sink:
        proc = subprocess.Popen(
            [sys.executable, "-m", "rewardkit.cli", "serve", "-c", "reward.yaml", "--port", "8000"],
            cwd=where,
            stdout=sink,
            stderr=subprocess.STDOUT,
        )
    try:
        deadline = time.monotonic() + 60
        while True:
            assert proc.poll() is None, log.read_text()[-3000:]
            try:
                if httpx.get(f"{SERVER}/ready", timeout=2).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            assert time.monotonic() < deadline, "the server did not get ready in 60 s"
            time.sleep(0.2)
        yield SERVER
    finally:
        proc.terminate()
        proc.wait(timeout=30)


def _run(block: Block, cwd: Path) -> subprocess.CompletedProcess[str]:
    if block.tag.startswith("<!-- file: "):
        path = block.tag.removeprefix("<!-- file: ").removesuffix(" -->")
        argv = ["-c", f"import runpy; runpy.run_path({path!r})"]
    else:
        script = cwd / f"snippet_{block.line}.py"
        script.write_text(block.body)
        argv = [str(script)]
    return subprocess.run(
        [sys.executable, *argv],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=PER_BLOCK_S,
    )


@pytest.mark.parametrize("doc", [d for d in DOCS if _python(d)], ids=lambda d: d.name)
def test_every_python_block_runs_as_pasted(
    doc: Path, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    every = blocks(doc)
    for block in every:  # the files the page shows, where it says they live
        if block.tag.startswith("<!-- file: "):
            path = tmp_path / block.tag.removeprefix("<!-- file: ").removesuffix(" -->")
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(block.body)
    failed = []
    ran = 0
    for block in _python(doc):
        if block.tag == "<!-- fragment -->":
            continue
        if block.tag.startswith("<!-- test: "):
            name = block.tag.removeprefix("<!-- test: ").removesuffix(" -->")
            call = f'snippet("{name}")'
            assert any(call in f.read_text() for f in TESTS.rglob("test_*.py")), (
                f"{block.name} is tagged for a test of its own, and no test calls {call}"
            )
            continue
        if SERVER in block.body:
            request.getfixturevalue("server")
        proc = _run(block, tmp_path)
        ran += 1
        if proc.returncode != 0:
            failed.append(f"{block.name}:\n{proc.stdout[-1500:]}{proc.stderr[-2500:]}")
    assert ran and not failed, "\n\n".join(failed)
