"""A running task's progress reports, in memory its worker and its pool share.

A task's reports (:func:`rewardkit.execution._worker.report`) used to cross the pipe one
message each: every report woke the pool's event loop (and, on Ray, the actor's, whose
driver then polled the actor for them). A spread task reports before each row and each
check, so a batch sent thousands of messages nobody read until a row ran long. Now the worker pins
each report on its board, a few microseconds and no system call, and the pool reads the
board only when someone looks: its caller, on its own timer (``TaskLink.collect``), and
the pool itself before it hands on the task's reply, so that every report still reaches
the caller before the answer.

Layout: records one after another from the start of the board, each a header (the
task's serial, the payload's length, a CRC of payload and time, when it was written on
the worker's monotonic clock) and the pickled part. A task starts writing at offset 0;
its records carry its serial, so the reader stops at the first one from an earlier task,
and at one whose CRC does not match (being written as it is read: it is read on the next
look). No lock, no memory fence: a record is taken only once it reads whole.
"""

from __future__ import annotations

import mmap
import os
import struct
import time
import zlib

__all__ = ["BOARD_BYTES", "Board"]

BOARD_BYTES = 1 << 20
"""Per worker: pages are only allocated as a task writes them. A task whose reports
overflow it sends the rest through the pipe (``_worker.report``), in order."""

_HEADER = struct.Struct("<IIId")  # serial, payload length, CRC, written at
_TIME = struct.Struct("<d")


class Board:
    """One worker's board, mapped in the worker and in its pool (one memfd)."""

    def __init__(self, fd: int) -> None:
        self._map = mmap.mmap(fd, BOARD_BYTES)
        self._serial = 0
        self._end = 0  # the writer's next offset
        self._full = False  # a report did not fit: this task's later ones go elsewhere too

    @classmethod
    def create(cls) -> tuple[Board, int]:
        """A new board and its descriptor (for the worker; the caller closes it)."""
        fd = os.memfd_create("rewardkit-board", os.MFD_CLOEXEC)
        try:
            os.ftruncate(fd, BOARD_BYTES)
            return cls(fd), fd
        except BaseException:
            os.close(fd)
            raise

    def close(self) -> None:
        self._map.close()

    # ---------------------------------------------------------------- the worker's side

    def begin(self, serial: int) -> None:
        """A new task: its records start over at offset 0."""
        self._serial, self._end, self._full = serial & 0xFFFFFFFF, 0, False

    def pin(self, payload: bytes) -> bool:
        """Write one report; False when the board has no room left for it, and for every
        later report of the task (the board holds a prefix of them: the rest, sent
        another way, follow it in order)."""
        start = self._end + _HEADER.size
        end = start + len(payload)
        if self._full or end > BOARD_BYTES:
            self._full = True
            return False
        now = time.monotonic()
        crc = zlib.crc32(_TIME.pack(now), zlib.crc32(payload))
        self._map[start:end] = payload
        _HEADER.pack_into(self._map, self._end, self._serial, len(payload), crc, now)
        self._end = end
        return True

    # ------------------------------------------------------------------ the pool's side

    def read(self, serial: int, at: int) -> tuple[list[tuple[bytes, float]], int]:
        """The records of task ``serial`` from offset ``at`` on, each ``(payload, written
        at)``, and the offset to read from next time."""
        serial &= 0xFFFFFFFF
        records: list[tuple[bytes, float]] = []
        while at + _HEADER.size <= BOARD_BYTES:
            owner, size, crc, written = _HEADER.unpack_from(self._map, at)
            start = at + _HEADER.size
            if owner != serial or start + size > BOARD_BYTES:
                break
            payload = self._map[start : start + size]
            if zlib.crc32(_TIME.pack(written), zlib.crc32(payload)) != crc:
                break
            records.append((payload, written))
            at = start + size
        return records, at
