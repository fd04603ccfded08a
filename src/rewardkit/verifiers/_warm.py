"""Run every registered verifier's warm-up. Imported by the local pool's zygote (see
:data:`rewardkit.wiring.WORKER_WARM_UPS`), a Ray actor's pool's included, so each
worker forks, or starts, with the work done."""

from __future__ import annotations

from rewardkit.verifiers.registry import entries


def warm_up_all() -> None:
    """Call each distinct ``Entry.warm_up`` once."""
    seen: set[object] = set()
    for entry in entries():
        if entry.warm_up is not None and entry.warm_up not in seen:
            seen.add(entry.warm_up)
            entry.warm_up()


warm_up_all()
