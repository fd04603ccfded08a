"""``rewardkit audit``: attack your own reward before the policy does.

Correct rows are rewritten into reward hacks (a retraction after the answer, the answer
only inside ``<think>``, box spam, an early ``sys.exit(0)`` in a code solution, ...) and
benign rewrites (spacing, ``\\dfrac``, ``$...$``), all scored through the user's reward
configuration. A credited hack is a reward a policy will learn to collect wrongly; a
benign rewrite that lost credit is a false negative.

    from rewardkit import RewardLoop
    from rewardkit.audit import audit_rows, default_rows

    rows, _ = default_rows()
    with RewardLoop() as loop:
        report = audit_rows(rows, loop.score)
    print(report.credited, report.benign_lost)
"""

from __future__ import annotations

from rewardkit.audit.code_hacks import code_variants
from rewardkit.audit.report import html_report, text_report
from rewardkit.audit.runner import (
    AuditReport,
    FamilyTally,
    all_families,
    audit_rows,
    default_rows,
    load_input,
    real_corpus_rows,
    stride,
)
from rewardkit.audit.transforms import Variant, control, variants

__all__ = [
    "AuditReport",
    "FamilyTally",
    "Variant",
    "all_families",
    "audit_rows",
    "code_variants",
    "control",
    "default_rows",
    "html_report",
    "load_input",
    "real_corpus_rows",
    "stride",
    "text_report",
    "variants",
]
