"""A stand-in warm-up for pool tests: importing it takes half a second (as math-verify's
warm-up takes two), and a worker can tell whether it inherited it."""

from __future__ import annotations

import time

time.sleep(0.5)
WARMED = True
