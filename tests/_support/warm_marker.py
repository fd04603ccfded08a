"""A stand-in warm-up for pool tests: importing it waits until the test opens its gate
(``GATE`` exists; a minute at most), as math-verify's warm-up takes seconds, and a worker
can tell whether it inherited it."""

from __future__ import annotations

import time
from pathlib import Path

GATE = Path(__file__).with_name("warm_marker.gate")

_deadline = time.monotonic() + 60
while not GATE.exists() and time.monotonic() < _deadline:
    time.sleep(0.01)
WARMED = True
