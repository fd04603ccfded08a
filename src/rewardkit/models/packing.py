"""Packing rows into sequences without padding (``reward_model.use_remove_padding``).

A padded batch is ``rows x longest`` tokens, and every token past a row's end is work
thrown away. A packed batch lays several rows end to end in one sequence (a *bin*),
each row with its own positions from 0, so that a decoder's attention, which
transformers builds from those positions as a block-diagonal causal mask, keeps every
row to itself; each row's score is read at its own last token. Bins are as wide as
the batch's longest row, and filled first-fit, longest row first: only the end of a
bin that no row fits in is padding.

This module is the layout only (pure Python, no torch): which rows go to which bin of
which batch, and where each row ends. :mod:`rewardkit.models.discriminative` turns a
layout into tensors.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

__all__ = ["PackedBatch", "pack_rows"]


@dataclass(slots=True)
class PackedBatch:
    """One forward pass: ``len(bins)`` sequences of ``width`` tokens.

    ``bins[b]`` lists the row indices laid end to end in sequence ``b``, in order;
    ``used[b]`` is how many of its tokens they fill (the rest is padding).
    """

    width: int
    bins: list[list[int]] = field(default_factory=list)
    used: list[int] = field(default_factory=list)

    @property
    def rows(self) -> list[int]:
        return [i for members in self.bins for i in members]

    @property
    def padded_tokens(self) -> int:
        return self.width * len(self.bins)

    def place(self, row: int, length: int) -> bool:
        """Put the row in the first bin with room for it; False when none has."""
        for b, used in enumerate(self.used):
            if used + length <= self.width:
                self.bins[b].append(row)
                self.used[b] = used + length
                return True
        return False

    def open_bin(self, row: int, length: int) -> None:
        self.bins.append([row])
        self.used.append(length)


def pack_rows(lengths: Sequence[int], max_tokens: int, max_rows: int) -> list[PackedBatch]:
    """Lay rows out in packed batches of at most ``max_tokens`` tokens (bins x width,
    padding included) and ``max_rows`` rows each.

    Rows are taken longest first, so each batch's first row sets its width and every
    later row fits a bin. A row longer than the budget is a batch of its own.
    """
    order = sorted(range(len(lengths)), key=lambda i: lengths[i], reverse=True)
    batches: list[PackedBatch] = []
    current: PackedBatch | None = None
    count = 0  # rows in the current batch
    for i in order:
        length = lengths[i]
        if current is not None and count < max_rows and current.place(i, length):
            count += 1
            continue
        if current is not None and count < max_rows:
            if (len(current.bins) + 1) * current.width <= max_tokens:
                current.open_bin(i, length)
                count += 1
                continue
        current = PackedBatch(width=length)
        current.open_bin(i, length)
        batches.append(current)
        count = 1
    return batches
