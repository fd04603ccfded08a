"""The command line: ``rewardkit score | report | audit | config show | serve | sandbox | bench``.

    rewardkit score examples/grpo_math.jsonl -o scored.jsonl --report report.html reward.num_workers=2
    rewardkit report scored.jsonl -o report.html
    rewardkit audit -c reward.yaml --summary-json audit.json

Exit status: 0 when every row got a result (whatever its status); 1 when
``--fail-on-error`` finds too many failed rows (or the output pipe closed); 2 with a
one-line message for an unreadable input, an unwritable output, an output that would
destroy the input or another output, a ``--resume`` output from another input, or a
bad configuration; 130 after Ctrl-C and 143 after SIGTERM, with the rows done so far
written (``--resume`` continues).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from collections.abc import Sequence
from importlib import metadata
from pathlib import Path
from typing import Any

from rewardkit.errors import RewardkitError

__all__ = ["main"]


def main(argv: Sequence[str] | None = None) -> int:
    parser = _parser()
    # Overrides may come anywhere (`score in.jsonl -o out.jsonl reward.timeout_s=5`), which
    # argparse's positional lists cannot express next to options: collect the leftovers.
    args, leftovers = parser.parse_known_args(argv)
    if leftovers and not hasattr(args, "overrides"):
        parser.error(f"unrecognized arguments: {' '.join(leftovers)}")
    if hasattr(args, "overrides"):
        args.overrides = [*args.overrides, *leftovers]
    try:
        return int(args.run(args) or 0)
    except RewardkitError as exc:
        message = str(exc).strip()
        print(f"rewardkit: error: {message}", file=sys.stderr)
        return 2
    except BrokenPipeError:
        # `rewardkit score x.jsonl -o - | head`: the reader left. Point stdout at /dev/null
        # so the interpreter's final flush does not raise a second time.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        print("rewardkit: output pipe closed by the reader; stopped", file=sys.stderr)
        return 1
    except KeyboardInterrupt as exc:  # before scoring starts; after, the run handles it
        # The interrupt may have cut an object's construction short (an event loop being
        # built): its finalizer's "Exception ignored" traceback at exit tells the user
        # nothing, so the exit prints the one line below and no more.
        sys.unraisablehook = lambda _unraisable: None
        terminated = _terminated(exc)
        print(f"rewardkit: {'terminated' if terminated else 'interrupted'}", file=sys.stderr)
        return 143 if terminated else 130


def _terminated(exc: BaseException) -> bool:
    """Whether ``exc`` is scoring_run.Terminated (SIGTERM), without importing the scoring
    machinery for a Ctrl-C elsewhere: only a loaded scoring_run can have raised it."""
    module = sys.modules.get("rewardkit.scoring_run")
    return module is not None and isinstance(exc, module.Terminated)


def _version() -> str:
    try:
        return metadata.version("rewardkit")
    except metadata.PackageNotFoundError:
        return "unknown"


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="rewardkit",
        description="Rewards for RL of language models: score rollout files, report on them, "
        "serve them over HTTP, run the code sandbox, benchmark.",
    )
    parser.add_argument("--version", action="version", version=f"rewardkit {_version()}")
    commands = parser.add_subparsers(dest="command", required=True)
    _score_parser(commands)
    _report_parser(commands)
    _audit_parser(commands)
    _config_parser(commands)

    serve = commands.add_parser("serve", help="run the reward server (HTTP)")
    _config_args(serve)
    serve.add_argument("--host", help="bind address (default 127.0.0.1)")
    serve.add_argument("--port", type=int, help="port (default 8000)")
    serve.set_defaults(run=_serve)

    sandbox = commands.add_parser(
        "sandbox",
        help="run the SandboxFusion-compatible code sandbox (HTTP)",
        description="Serve POST /run_code, GET /v1/ping and GET /v1/isolation: untrusted code "
        "run isolated (namespaces as root; see README 'Code sandbox'). Prints its address and "
        "isolation mode on start; refuses to start where it cannot isolate runs.",
    )
    sandbox.add_argument("--host", default="127.0.0.1", help="bind address (default 127.0.0.1)")
    sandbox.add_argument("--port", type=int, default=8080, help="port (default 8080; 0: any)")
    sandbox.add_argument(
        "--max-concurrent", type=int, default=None, help="simultaneous runs (default: cores)"
    )
    sandbox.add_argument(
        "--max-memory-mb", type=int, default=4096,
        help="most memory a request may ask for, all its processes together (default 4096)",
    )  # fmt: skip
    sandbox.add_argument(
        "--workspace-mb", type=int, default=256, help="bytes a run may write (default 256 MiB)"
    )
    sandbox.add_argument(
        "--max-body-mb", type=int, default=32, help="largest request body (default 32 MiB)"
    )
    sandbox.add_argument(
        "--max-connections", type=int, default=256,
        help="open client connections; past it the slowest waiting one is closed (default 256)",
    )  # fmt: skip
    sandbox.add_argument(
        "--api-key-env", default="REWARDKIT_SANDBOX_API_KEY", metavar="NAME",
        help="environment variable holding the API key clients send as 'Authorization: "
        "Bearer <key>' (default REWARDKIT_SANDBOX_API_KEY; unset: no authentication)",
    )  # fmt: skip
    sandbox.add_argument(
        "--allow-unisolated", action="store_true",
        help="start even where runs cannot be isolated: not root (code then runs as the "
        "server's user and can read its files and signal it) or no namespaces (basic mode: "
        "code sees the host's files and network)",
    )  # fmt: skip
    sandbox.set_defaults(run=_sandbox)

    bench = commands.add_parser(
        "bench",
        help="run the benchmarks of a source checkout (benchmarks/bench_*.py)",
        description="Run a checkout's benchmark scripts (benchmarks/bench_NAME.py), from the "
        "checkout's root or with --dir.",
    )
    bench.add_argument(
        "names", nargs="*", help="benchmark names (default: all), e.g. scoring sandbox rm"
    )
    bench.add_argument(
        "--dir",
        default="benchmarks",
        type=Path,
        help="the folder of bench_*.py scripts (default: ./benchmarks)",
    )
    bench.add_argument("--quick", action="store_true", help="small sizes, for a smoke run")
    bench.set_defaults(run=_bench)
    return parser


def _score_parser(commands: Any) -> None:
    score = commands.add_parser(
        "score",
        help="score a file of rollouts",
        description="Score rows of the Sample shape; write one Result row per input row, in "
        "input order; print a summary per data_source.",
    )
    score.add_argument(
        "input", help="rows of the Sample shape (.jsonl, .jsonl.gz, .json, .parquet; '-': stdin)"
    )
    score.add_argument(
        "-o",
        "--output",
        help="where to write Result rows (.jsonl, .jsonl.gz, .json, .parquet; '-': stdout); "
        "without it, only the summary is printed",
    )
    _config_args(score)
    score.add_argument("--limit", type=_count, help="score only the first N rows")
    score.add_argument(
        "--field",
        action="append",
        default=[],
        metavar="TARGET=SOURCE",
        help="read a Sample field (TARGET: data_source, prompt, response, ground_truth, "
        "extra_info, id) from another column, e.g. --field response=output "
        "--field ground_truth=gts (SOURCE may be dotted: reward_model.ground_truth)",
    )
    score.add_argument(
        "--resume",
        action="store_true",
        help="keep the rows already in OUTPUT (from an interrupted run), each checked "
        "against its input row, and score the rest",
    )
    score.add_argument("--report", metavar="HTML", help="also write the HTML report there")
    score.add_argument("--summary-json", metavar="PATH", help="write the summary as JSON there")
    score.add_argument(
        "--fail-on-error",
        type=_rate,
        metavar="RATE",
        help="exit 1 when more than this share of rows did not end ok (e.g. 0.05)",
    )
    score.add_argument("--no-progress", action="store_true", help="no progress bar")
    score.set_defaults(run=_score)


def _report_parser(commands: Any) -> None:
    report = commands.add_parser(
        "report",
        help="an HTML report of a scored file",
        description="One self-contained HTML page (no network needed) about a file written by "
        "`rewardkit score`: score histograms, failures, GRPO groups, slow and flagged rows.",
    )
    report.add_argument("input", help="a scored file (.jsonl, .jsonl.gz, .json, .parquet; '-')")
    report.add_argument("-o", "--output", default="report.html", help="the HTML file to write")
    report.set_defaults(run=_report)


def _audit_parser(commands: Any) -> None:
    audit = commands.add_parser(
        "audit",
        help="is my reward hackable? score hacked and rewritten correct rows",
        description="Rewrite correct rows into reward hacks (a retraction after the answer, "
        "the answer only inside <think>, box spam, early exits in code, ...) and benign "
        "rewrites (spacing, \\dfrac, $...$), score them with this reward configuration and "
        "print per family the hacks credited and the rewrites that lost credit. Exit 1 when "
        "more hacks are credited than --max-credited.",
    )
    audit.add_argument(
        "input",
        nargs="?",
        help="correct rows of the Sample shape (.jsonl, .jsonl.gz, .json, .parquet; '-'), or "
        "a real-output corpus folder; default: the bundled sample, plus examples/ and "
        "tests/data/real_outputs in a source checkout",
    )
    _config_args(audit)
    audit.add_argument("--summary-json", metavar="PATH", help="write the per-family counts there")
    audit.add_argument("--report", metavar="HTML", help="also write an HTML page there")
    audit.add_argument(
        "--max-credited", type=_count, default=0, metavar="N",
        help="exit 1 when more than N hacks are credited (default 0)",
    )  # fmt: skip
    audit.add_argument(
        "--limit", type=_count, default=300, metavar="N",
        help="audit at most N rows of each input, a fixed stride over them (default 300; "
        "0: all)",
    )  # fmt: skip
    audit.add_argument(
        "--families", metavar="A,B", help="only these families (default: all; see README)"
    )
    audit.set_defaults(run=_audit)


def _config_parser(commands: Any) -> None:
    config = commands.add_parser("config", help="inspect the configuration")
    actions = config.add_subparsers(dest="action", required=True)
    show = actions.add_parser(
        "show",
        help="print the effective configuration, defaults included, as YAML",
        description="Print the configuration a command would run with: the file, the "
        "overrides and every default, validated. Secrets are masked.",
    )
    _config_args(show)
    show.set_defaults(run=_config_show)


def _count(text: str) -> int:
    value = int(text)
    if value < 0:
        raise argparse.ArgumentTypeError(f"must be 0 or more, got {value}")
    return value


def _rate(text: str) -> float:
    value = float(text)
    if not 0.0 <= value <= 1.0:
        raise argparse.ArgumentTypeError(f"a share between 0 and 1, got {text}")
    return value


def _config_args(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "-c", "--config", help="a YAML file of the reward.* / server.* / algorithm.* tree"
    )
    parser.add_argument(
        "overrides",
        nargs="*",
        metavar="key=value",
        help="dotted overrides, e.g. reward.timeout_s=5",
    )


def _split_overrides(args: argparse.Namespace) -> list[str]:
    bad = [item for item in args.overrides if "=" not in item]
    if bad:
        raise RewardkitError(f"overrides must look like key=value, got {bad[0]!r}")
    return list(args.overrides)


def _score(args: argparse.Namespace) -> int:
    from rewardkit.config import refuse_kl_in_reward
    from rewardkit.loop import RewardLoop
    from rewardkit.scoring_run import ScoringRun

    run = ScoringRun(args)  # every path and flag checked before any worker starts
    loop = RewardLoop(args.config, _split_overrides(args))  # validates the config first
    refuse_kl_in_reward(loop.config, "score")
    return run.execute(loop)


def _report(args: argparse.Namespace) -> int:
    from rewardkit.errors import InputError
    from rewardkit.io import read_rows
    from rewardkit.report import write_report
    from rewardkit.scoring_run import check_target, refuse_overwrites

    refuse_overwrites(args.input, [("-o", args.output)])  # the page would replace the rows
    check_target("-o", Path(args.output))  # before reading a large file
    rows = read_rows(args.input)
    try:
        count = write_report(rows, args.output, title=f"rewardkit report: {Path(args.input).name}")
    except InputError as exc:  # the file's fault: say which file
        raise InputError(f"{args.input}: {exc}") from None
    print(f"report on {count:,} rows written to {args.output}", file=sys.stderr)
    return 0


def _audit(args: argparse.Namespace) -> int:
    from rewardkit.audit.cli import run_audit_command

    return run_audit_command(args, _split_overrides(args))


def _config_show(args: argparse.Namespace) -> int:
    import yaml

    from rewardkit.config import load_config

    config = load_config(args.config, _split_overrides(args))
    tree = _mask_secrets(config.model_dump(mode="json"))
    print(yaml.safe_dump(tree, sort_keys=False), end="")
    return 0


def _mask_secrets(tree: Any) -> Any:
    """api_key values replaced by '***': the effective config may be pasted into a bug report."""
    if isinstance(tree, dict):
        return {
            key: "***" if key == "api_key" and value else _mask_secrets(value)
            for key, value in tree.items()
        }
    if isinstance(tree, list):
        return [_mask_secrets(item) for item in tree]
    return tree


def _serve(args: argparse.Namespace) -> int:
    from rewardkit.config import check_runnable, load_config, refuse_kl_in_reward

    overrides = _split_overrides(args)
    if args.host:
        overrides.append(f"server.host={args.host}")
    if args.port is not None:
        overrides.append(f"server.port={args.port}")
    config = load_config(args.config, overrides)
    refuse_kl_in_reward(config, "serve")
    check_runnable(config)  # a missing model folder: exit 2 now, not after the engine starts
    from rewardkit.server.app import serve  # a required part: an ImportError is a bug to see

    return serve(config) or 0


def _sandbox(args: argparse.Namespace) -> int:
    from rewardkit.sandbox import SandboxOptions
    from rewardkit.sandbox.server import serve_sandbox

    api_key = os.environ.get(args.api_key_env)
    if api_key is not None and not api_key.strip():
        raise RewardkitError(f"${args.api_key_env} is set but empty: set a key or unset it")
    for name in (
        "max_concurrent",
        "max_memory_mb",
        "workspace_mb",
        "max_body_mb",
        "max_connections",
    ):
        value = getattr(args, name)
        if value is not None and value < 1:
            raise RewardkitError(f"--{name.replace('_', '-')} must be at least 1, got {value}")
    options = SandboxOptions(
        max_concurrent=args.max_concurrent,
        max_memory_mb=args.max_memory_mb,
        workspace_mb=args.workspace_mb,
        allow_unisolated=args.allow_unisolated,
    )
    try:
        serve_sandbox(args.host, args.port, options=options, api_key=api_key,
                      max_body_bytes=args.max_body_mb << 20,
                      max_connections=args.max_connections)  # fmt: skip
    except (RuntimeError, OSError) as exc:
        raise RewardkitError(f"sandbox: {exc}") from exc
    return 0


def _bench(args: argparse.Namespace) -> int:
    folder: Path = args.dir
    available = {p.stem.removeprefix("bench_"): p for p in sorted(folder.glob("bench_*.py"))}
    if not available:  # also when the folder is missing: glob finds nothing
        raise RewardkitError(
            f"no bench_*.py in {folder}/: run `rewardkit bench` from the root of a rewardkit "
            "source checkout, or pass --dir PATH/TO/benchmarks"
        )
    names = args.names or list(available)
    unknown = [n for n in names if n not in available]
    if unknown:
        raise RewardkitError(f"unknown benchmark {unknown[0]!r}; available: {', '.join(available)}")
    status = 0
    for name in names:
        command = [sys.executable, str(available[name]), *(["--quick"] if args.quick else [])]
        print(f"$ {' '.join(command)}", file=sys.stderr)
        status |= subprocess.call(command)
    return status


if __name__ == "__main__":
    sys.exit(main())
