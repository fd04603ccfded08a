"""``rewardkit audit``'s body: read the rows, score the variants, print and write the report."""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from rewardkit.audit.report import html_report, text_report
from rewardkit.audit.runner import all_families, audit_rows, default_rows, load_input, stride
from rewardkit.errors import RewardkitError
from rewardkit.io import dumps_json, write_text

__all__ = ["run_audit_command"]


def run_audit_command(args: argparse.Namespace, overrides: list[str]) -> int:
    from rewardkit.config import refuse_kl_in_reward
    from rewardkit.loop import RewardLoop
    from rewardkit.scoring_run import check_target, refuse_overwrites

    targets = [("--summary-json", args.summary_json), ("--report", args.report)]
    for flag, target in targets:
        if target:
            check_target(flag, Path(target))
    if args.input and not ("=" in args.input and not Path(args.input).exists()):
        refuse_overwrites(args.input, targets)  # never over the input, nor one over the other
    else:
        refuse_overwrites("", targets)  # the bundled rows: the outputs apart still
    families = _families(args.families)
    if args.input and "=" in args.input and not Path(args.input).exists():
        # `rewardkit audit reward.key=value`: no INPUT, the first override took its place
        overrides, args.input = [args.input, *overrides], None
    if args.input:
        rows, sources = stride(load_input(args.input), args.limit), [str(args.input)]
    else:
        rows, sources = default_rows(args.limit)
    loop = RewardLoop(args.config, overrides)  # validates the config before any work
    refuse_kl_in_reward(loop.config, "audit")
    started = time.perf_counter()
    with loop:
        report = audit_rows(rows, loop.score, families=families)
    report.sources = sources
    seconds = time.perf_counter() - started
    print(text_report(report))
    print(f"({len(rows)} rows from {', '.join(sources)}; {seconds:.1f} s)", file=sys.stderr)
    if args.summary_json:
        write_text(args.summary_json, dumps_json(report.to_json()), what="summary")
    if args.report:
        write_text(args.report, html_report(report), what="report")
    if report.credited > args.max_credited:
        print(
            f"rewardkit audit: {report.credited} hack(s) credited, more than --max-credited "
            f"{args.max_credited}",
            file=sys.stderr,
        )
        return 1
    return 0


def _families(text: str | None) -> set[str] | None:
    if not text:
        return None
    names = {name.strip() for name in text.split(",") if name.strip()}
    known = all_families()
    unknown = sorted(names - set(known))
    if unknown:
        raise RewardkitError(f"unknown family {unknown[0]!r}; known: {', '.join(known)}")
    return names
