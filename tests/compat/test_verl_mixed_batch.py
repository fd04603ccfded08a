"""guards: verl 0.9.1's naive, batch and rewardkit managers on a batch mixing data sources.

gsm8k, MATH and mbpp (code run in the sandbox) rows and one unknown data source, through
each manager with ``on_failure="raise"`` (the unknown source is named in the error) and
``"fill"`` (it is filled, the others scored), as tests/_support/verl_managers.py builds them.
"""

from __future__ import annotations

from pathlib import Path


def test_verls_managers_score_a_mixed_batch_and_name_the_unknown_source(tmp_path: Path) -> None:
    from _support.verl_managers import report  # imports verl: only where it is installed

    config = tmp_path / "reward.yaml"
    config.write_text("reward:\n  num_workers: 1\n  timeout_s: 30\n")
    found = report(str(config))
    for manager in ("naive", "batch", "rewardkit"):
        assert "unknown data_source 'my_unknown_source'" in found[f"{manager}/raise"]
        filled = found[f"{manager}/fill"]
        assert filled["scores"] == [1.0, 1.0, 1.0, 0.0]  # gsm8k, MATH, mbpp; filled row
        assert filled["status"] == ["ok", "ok", "ok", "invalid"]
        assert "my_unknown_source" in filled["error"][3]
