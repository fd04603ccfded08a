"""The languages a sandbox can run: file names, compile and run commands, tools."""

from __future__ import annotations

import re
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class _LanguageSpec:
    """How to build and run one language.

    ``{python}``, ``{mem}`` (MB), ``{source}`` (file name) and ``{stem}`` (it without the
    extension) are filled in per run; tool names become the absolute paths found at start.
    """

    source: str
    run: tuple[str, ...]
    compile: tuple[str, ...] | None = None
    tools: tuple[str, ...] = ()
    jit: bool = False  # reserves large address ranges: limit RLIMIT_DATA, not RLIMIT_AS
    min_processes: int = 0
    stack_mb: int | None = None  # None: the system's default stack limit
    env: tuple[tuple[str, str], ...] = ()


_LANGUAGES: dict[str, _LanguageSpec] = {
    "python": _LanguageSpec("main.py", ("{python}", "-E", "-s", "{source}"), tools=("{python}",)),
    "cpp": _LanguageSpec(
        "main.cpp",
        ("./main",),
        compile=("g++", "-std=c++17", "-O2", "-o", "main", "{source}", "-lpthread"),
        tools=("g++",),
        stack_mb=256,
    ),
    # V8 runs out of its own heap (a clean fatal error) before RLIMIT_DATA bites.
    "nodejs": _LanguageSpec(
        "main.js", ("node", "--max-old-space-size={mem}", "{source}"), tools=("node",), jit=True
    ),
    "java": _LanguageSpec(
        "Main.java",
        ("java", "-Xmx{mem}m", "-Xss64m", "-XX:+UseSerialGC", "-cp", ".", "{stem}"),
        compile=("javac", "-J-Xmx512m", "-encoding", "UTF-8", "{source}"),
        tools=("java", "javac"),
        jit=True,
        min_processes=512,
    ),
    "go": _LanguageSpec(
        "main.go",
        ("./main",),
        compile=("go", "build", "-o", "main", "{source}"),
        tools=("go",),
        jit=True,
        min_processes=256,
        env=(("GOCACHE", "/tmp/.gocache"), ("GOPATH", "/tmp/.go"), ("GO111MODULE", "off")),
    ),
    "rust": _LanguageSpec(
        "main.rs",
        ("./main",),
        compile=("rustc", "-O", "-o", "main", "{source}"),
        tools=("rustc",),
        stack_mb=256,
    ),
    "bash": _LanguageSpec("main.sh", ("bash", "{source}"), tools=("bash",)),
    "perl": _LanguageSpec("main.pl", ("perl", "{source}"), tools=("perl",)),
    "ruby": _LanguageSpec("main.rb", ("ruby", "{source}"), tools=("ruby",)),
    "php": _LanguageSpec("main.php", ("php", "{source}"), tools=("php",)),
    "lua": _LanguageSpec("main.lua", ("lua", "{source}"), tools=("lua",)),
}

_JAVA_CLASS = re.compile(r"public\s+(?:final\s+|abstract\s+)*class\s+([A-Za-z_$][\w$]*)")
_STANDARD_DIRS = ("/usr", "/etc", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32")
_SEARCH_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
