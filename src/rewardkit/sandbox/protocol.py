"""The wire types of SandboxFusion's ``/run_code``: requests, responses and statuses."""

from __future__ import annotations

import enum
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

Language = Literal[
    "python", "python2", "cpp", "nodejs", "go", "go_test", "java", "php", "csharp", "bash",
    "typescript", "sql", "rust", "cuda", "lua", "R", "perl", "D_ut", "ruby", "scala", "julia",
    "pytest", "junit", "kotlin_script", "jest", "verilog", "python_gpu", "lean", "swift",
    "racket", "gtest", "react",
]  # fmt: skip
"""SandboxFusion's language names (an unknown name is a 422, as there)."""


class RunStatus(enum.StrEnum):
    """The outcome of a whole request, as SandboxFusion names it."""

    SUCCESS = "Success"  # every step finished with return code 0
    FAILED = "Failed"  # a step timed out or returned non-zero: the *program's* failure
    SANDBOX_ERROR = "SandboxError"  # the sandbox could not run it: an infrastructure failure


class CommandRunStatus(enum.StrEnum):
    """The outcome of one step (compile or run)."""

    FINISHED = "Finished"
    ERROR = "Error"
    TIME_LIMIT_EXCEEDED = "TimeLimitExceeded"


class RunCodeRequest(BaseModel):
    """SandboxFusion's ``POST /run_code`` body. Unknown fields are ignored, as there."""

    model_config = ConfigDict(extra="ignore")

    code: str
    language: Language
    compile_timeout: float = 10.0
    run_timeout: float = 10.0
    memory_limit_MB: int = -1
    """-1 (SandboxFusion's default): the sandbox's own default limit, not unlimited."""
    stdin: str | None = None
    files: dict[str, str | None] = Field(default_factory=dict)
    """Extra files for the working directory: relative path -> base64 content."""
    fetch_files: list[str] = Field(default_factory=list)
    """Files to send back (base64) after the run; missing ones are left out."""


class CommandRunResult(BaseModel):
    """One step's result. ``return_code`` is None when the step was killed at its timeout."""

    status: CommandRunStatus
    execution_time: float | None = None
    return_code: int | None = None
    stdout: str | None = None
    stderr: str | None = None


class RunCodeResponse(BaseModel):
    """SandboxFusion's ``/run_code`` answer."""

    status: RunStatus
    message: str = ""
    compile_result: CommandRunResult | None = None
    run_result: CommandRunResult | None = None
    executor_pod_name: str | None = None
    files: dict[str, str] = Field(default_factory=dict)
