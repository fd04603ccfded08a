"""A generative judge that sees a whole GRPO group (``reward_model.judge.group``).

As slime's ``--group-rm`` (a group's samples go to the reward model together, one
reward comes back per sample) and NeMo Gym's GenRM comparisons (each response judged
against another of its group, the results spread back per response):

* ``mode: listwise``: one request shows the prompt and the group's N responses; the
  judge ends with ``Scores: [[s1, ..., sN]]``, one score per response in the order
  shown. An answer that does not give exactly N scores fails every row of that group
  (status ``error``, the judge's text in ``extra["judge_text"]``), never a 0.
* ``mode: pairwise``: one request per response, against a reference: the row's
  ``ground_truth`` (``reference: ground_truth``: each row is judged at once, no
  gathering) or the group's first row (``reference: first``: that row scores the
  middle of the range, as a response as good as the reference would). The answer is
  parsed as the per-row judge's ``Score: [[N]]``; a row whose answer holds no score
  fails alone.

Scores lie in ``judge.score_min..score_max`` and are normalised to [0, 1] as the
per-row judge's are; ``judge.n`` samples are combined per response by
``judge.aggregate``. How a group's rows are gathered: :mod:`rewardkit.models.gathering`.
"""

from __future__ import annotations

import asyncio
import math
import re
from collections.abc import Hashable
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

from rewardkit.config import GroupJudgeConfig, JudgeConfig, RewardModelConfig
from rewardkit.errors import (
    JUDGE_TEXT_IN_EXTRA,
    ConfigError,
    InvalidSampleError,
    JudgeParseError,
    ScorerError,
)
from rewardkit.models.base import ModelScore
from rewardkit.models.gathering import Group, Outcome, current_batch, group_of
from rewardkit.models.judge import (
    aggregate,
    clip,
    conversation,
    judgement,
    make_generator,
    normalized,
)
from rewardkit.models.templates import as_text
from rewardkit.types import Sample

__all__ = [
    "GROUP_SIZE_KEY",
    "GroupJudge",
    "GroupTemplate",
    "listwise_scores",
    "load_group_template",
    "parse_score_list",
]

GROUP_SIZE_KEY = "group_size"
"""The ``extra_info`` key that tells a group's size on a per-row call."""

_CHARS_PER_TOKEN = 4  # as the per-row judge: texts are cut before the judge sees them
_SIZE_SETTING = "reward.reward_model.judge.group.size"
_TIMEOUT_SETTING = "reward.reward_model.judge.group.gather_timeout_s"

# ---------------------------------------------------------------------- templates

_FIELDS = {
    "listwise": ("prompt", "responses", "count", "ground_truth"),
    "pairwise": ("prompt", "reference", "response"),
}
_NEEDED = {"listwise": ("responses",), "pairwise": ("reference", "response")}
_FIELD = re.compile(r"\{\{\s*(\w{1,20})\s*\}\}")


@dataclass(frozen=True, slots=True)
class GroupTemplate:
    """A group judge's prompt template (listwise or pairwise)."""

    name: str
    text: str
    mode: str

    def uses(self, field: str) -> bool:
        return any(m.group(1) == field for m in _FIELD.finditer(self.text))

    def fill(self, values: dict[str, str]) -> str:
        """The judge's user message, filled in one pass: a response that contains
        ``{{reference}}`` cannot pull another text into the judge's view."""
        known = _FIELDS[self.mode]
        return _FIELD.sub(
            lambda m: values.get(m.group(1), "") if m.group(1) in known else m.group(0),
            self.text,
        )


def load_group_template(name_or_path: str | None, mode: str) -> GroupTemplate:
    """The built-in template of ``mode`` (null, or its name), or a template file."""
    if name_or_path is None or name_or_path in _FIELDS:
        name = name_or_path or mode
        text = resources.files("rewardkit.models").joinpath(f"templates/{name}.txt")
        return GroupTemplate(name, text.read_text("utf-8"), mode)
    path = Path(name_or_path).expanduser()
    try:
        text_read = path.read_text("utf-8")
    except OSError as exc:
        raise ConfigError(
            f"reward_model.judge.group.template: '{name_or_path}' is neither a built-in "
            f"template (listwise, pairwise) nor a readable file ({exc.strerror})"
        ) from exc
    template = GroupTemplate(str(path), text_read, mode)
    missing = [f"{{{{{f}}}}}" for f in _NEEDED[mode] if not template.uses(f)]
    if missing:
        raise ConfigError(
            f"reward_model.judge.group.template: {path} never uses {', '.join(missing)}, "
            f"which a {mode} judge needs"
        )
    return template


# ---------------------------------------------------------------------- parsing

# Bounded patterns, as the per-row judge's: linear in the judge's text.
_BRACKET_LIST = re.compile(r"\[\[([^\[\]]{0,2000})\]\]")
_LABELLED_LIST = re.compile(r"scores\s*[:=]\s*([-+\d.,\s]{1,2000})", re.IGNORECASE)
_NUMBER = re.compile(r"[-+]?\d{1,6}(?:\.\d{1,6})?")


def _numbers(text: str) -> list[float] | None:
    parts = [p.strip() for p in text.split(",")]
    if not parts or not all(_NUMBER.fullmatch(p) for p in parts):
        return None
    return [float(p) for p in parts]


def parse_score_list(text: str) -> list[float] | None:
    """The last list of scores in ``text``: ``[[7, 3, 9]]``, else ``Scores: 7, 3, 9``;
    None when it holds none."""
    lists = [n for m in _BRACKET_LIST.findall(text) if (n := _numbers(m)) is not None]
    if not lists:
        lists = [n for m in _LABELLED_LIST.findall(text) if (n := _numbers(m)) is not None]
    return lists[-1] if lists else None


def listwise_scores(texts: list[str], count: int, judge: JudgeConfig) -> list[ModelScore]:
    """One ModelScore per response from the judge's ``texts`` (its ``n`` samples).

    A sample counts when its last list has exactly ``count`` scores, each within
    [score_min, score_max]; the counted samples are combined per response by
    ``judge.aggregate``. None counts: JudgeParseError, saying what was wrong.
    """
    lists = [parse_score_list(t) for t in texts]
    valid = [
        s
        for s in lists
        if s is not None
        and len(s) == count
        and all(judge.score_min <= v <= judge.score_max for v in s)
    ]
    joined = "\n-----\n".join(texts)
    if not valid:
        raise JudgeParseError(_why_unparsed(lists, texts, count, judge), joined)
    extra_text = texts[0][:JUDGE_TEXT_IN_EXTRA]
    scores = []
    for i in range(count):
        votes = [s[i] if s in valid else None for s in lists]
        raw = aggregate([s[i] for s in valid], judge.aggregate)
        extra = {"judge_raw": raw, "judge_votes": votes, "judge_text": extra_text}
        scores.append(ModelScore(normalized(raw, judge), extra))
    return scores


def _why_unparsed(
    lists: list[list[float] | None], texts: list[str], count: int, judge: JudgeConfig
) -> str:
    found = [s for s in lists if s is not None]
    if not found:
        snippet = " ".join(texts[0].split())[:200] if texts else ""
        return f"group judge answer holds no list of scores: {snippet!r}"
    wrong = next((s for s in found if len(s) != count), None)
    if wrong is not None:
        plural = "" if len(wrong) == 1 else "s"
        return f"group judge gave {len(wrong)} score{plural} for a group of {count} responses"
    return (
        f"group judge gave a score outside [{judge.score_min:g}, {judge.score_max:g}]: {found[-1]}"
    )


# ---------------------------------------------------------------------- the scorer


class GroupJudge:
    """``reward_model.judge.group``: judges a GRPO group's responses together.

    ``score(sample)`` returns the row's own score once its group has been judged (see
    :mod:`rewardkit.models.gathering` for when a group is complete).
    """

    component = "group_judge"

    def __init__(self, cfg: RewardModelConfig, *, max_batch_wait_ms: float = 5.0) -> None:
        if cfg.judge.group is None:
            raise ConfigError("reward_model.judge.group is not set: this is the per-row judge's")
        self.cfg = cfg
        self.judge: JudgeConfig = cfg.judge
        self.group: GroupJudgeConfig = cfg.judge.group
        self.template = load_group_template(self.group.template, self.group.mode)
        self._generator = make_generator(cfg, max_batch_wait_ms)
        self._waiting: dict[Hashable, Group] = {}  # per-row calls' groups, by group
        self._tasks: set[asyncio.Task[None]] = set()

    @property
    def weight(self) -> float:
        return self.cfg.weight

    @property
    def gathers_groups(self) -> bool:
        """Whether a row waits for its group (pairwise against ground truth does not)."""
        return not (self.group.mode == "pairwise" and self.group.reference == "ground_truth")

    async def start(self) -> None:
        await self._generator.start()

    async def close(self) -> None:
        for group in list(self._waiting.values()):
            group.abandon()
        for task in list(self._tasks):
            task.cancel()
        if self._tasks:
            await asyncio.wait(self._tasks, timeout=5)
        await self._generator.close()

    async def score(self, sample: Sample) -> ModelScore:
        """The row's score, judged with its group."""
        if not self.gathers_groups:
            reference = sample.ground_truth
            if reference is None:
                raise InvalidSampleError(
                    "the pairwise group judge (reference: ground_truth) needs the row's "
                    "ground_truth; the row has none"
                )
            return await self._against(sample, as_text(reference))
        try:
            size = _declared_size(sample, self.group.size)
        except InvalidSampleError:
            self.withdraw(sample)  # its batch counted it
            raise
        return await self._group_of(sample, size).join(sample)

    def withdraw(self, sample: Sample) -> None:
        """``sample`` failed before it reached the judge: its group stops waiting for it."""
        if not self.gathers_groups:
            return
        try:
            size = _declared_size(sample, self.group.size)
        except InvalidSampleError:
            size = None
        try:
            self._group_of(sample, size).withdraw()
        except ScorerError:
            pass  # a per-row call that names no size joined no group

    # ------------------------------------------------------------------ gathering

    def _group_of(self, sample: Sample, size: int | None) -> Group:
        """The group ``sample`` joins. ``size``: the one the row names, if any.

        In a batch call that holds the whole group (or names no size), the group is the
        call's rows of it; one that holds fewer rows than the size (a one-row request per
        sample, as a remote per-row caller sends) and a per-row call gather the group
        across calls, up to that size.
        """
        key = group_of(sample)
        batch = current_batch()
        held = batch.counts.get(key, 1) if batch is not None else 0
        if batch is not None and (size is None or held >= size):
            registry, expected = batch.groups, held
            failure = self._refused(held, size)
        elif size is None:
            raise ScorerError(
                "the group judge scores a row with its group, which a per-row call "
                "(RewardLoop.ascore, verl's per-sample path) does not show: give "
                f"extra_info.{GROUP_SIZE_KEY} or set {_SIZE_SETTING}, or score the batch "
                "(RewardLoop.score or stream, /v1/score, `rewardkit score`)"
            )
        else:
            registry, expected = self._waiting, size
            failure = self._refused(size, None)
        group = registry.get(key)
        if group is None:

            def forget() -> None:
                if registry.get(key) is group:
                    del registry[key]

            group = Group(
                expected,
                self._judge_group,
                timeout_s=self.group.gather_timeout_s,
                timeout_setting=_TIMEOUT_SETTING,
                forget=forget,
                tasks=self._tasks,
                failure=failure,
            )
            if failure is None or batch is not None:  # a refused per-row group is not kept
                registry[key] = group
        return group

    def _refused(self, rows: int, size: int | None) -> ScorerError | None:
        """Why a group of ``rows`` cannot be judged (too big, more rows than its ``size``)."""
        if rows > self.group.max_size:
            return ScorerError(
                f"group of {rows} rows is larger than reward.reward_model.judge.group.max_size="
                f"{self.group.max_size}"
            )
        if size is not None and rows > size:
            return ScorerError(
                f"group has {rows} rows in this call, more than its size {size} "
                f"(extra_info.{GROUP_SIZE_KEY} or {_SIZE_SETTING}): do two groups share its "
                "extra_info.uid (or prompt)?"
            )
        return None

    # ------------------------------------------------------------------ judging

    async def _judge_group(self, samples: list[Sample]) -> list[Outcome]:
        if self.group.mode == "listwise":
            return list(await self._listwise(samples))
        anchor, *others = samples
        middle = (self.judge.score_min + self.judge.score_max) / 2
        reference = ModelScore(
            normalized(middle, self.judge), {"judge_raw": middle, "judge_reference": True}
        )
        text = _response_clip(anchor.response_text, self.cfg)[0]
        judged = await asyncio.gather(
            *(self._against(s, text) for s in others), return_exceptions=True
        )
        return [reference, *judged]

    async def _listwise(self, samples: list[Sample]) -> list[ModelScore]:
        first = samples[0]
        prompt, truncated = clip(
            conversation(first.prompt), self.cfg.prompt_length * _CHARS_PER_TOKEN, keep="end"
        )
        blocks = []
        for i, sample in enumerate(samples, start=1):
            response, cut = _response_clip(sample.response_text, self.cfg)
            truncated = truncated or cut
            blocks.append(f"[Response {i}]\n{response}")
        if self.template.uses("ground_truth") and first.ground_truth is None:
            raise InvalidSampleError(
                f"group judge template '{self.template.name}' needs a ground_truth; the row has none"
            )
        values = {
            "prompt": prompt,
            "responses": "\n\n".join(blocks),
            "count": str(len(samples)),
            "ground_truth": as_text(first.ground_truth),
        }
        texts = await self._generator.generate(self._messages(self.template.fill(values)))
        scores = listwise_scores(texts, len(samples), self.judge)
        return [
            ModelScore(s.score, {**s.extra, "group_size": len(samples), "truncated": truncated})
            for s in scores
        ]

    async def _against(self, sample: Sample, reference: str) -> ModelScore:
        """One response judged against ``reference`` (a pairwise request)."""
        prompt, cut_prompt = clip(
            conversation(sample.prompt), self.cfg.prompt_length * _CHARS_PER_TOKEN, keep="end"
        )
        response, cut_response = _response_clip(sample.response_text, self.cfg)
        reference, cut_reference = _response_clip(reference, self.cfg)
        values = {"prompt": prompt, "reference": reference, "response": response}
        texts = await self._generator.generate(self._messages(self.template.fill(values)))
        return judgement(texts, "score", self.judge, cut_prompt or cut_response or cut_reference)

    def _messages(self, user: str) -> list[dict[str, str]]:
        messages = [{"role": "user", "content": user}]
        if self.judge.system_prompt:
            messages.insert(0, {"role": "system", "content": self.judge.system_prompt})
        return messages


def _response_clip(text: str, cfg: RewardModelConfig) -> tuple[str, bool]:
    return clip(text, cfg.response_length * _CHARS_PER_TOKEN, keep="start")


def _declared_size(sample: Sample, configured: int | None) -> int | None:
    """The group size the row names (extra_info.group_size), else the configured one."""
    given = sample.extra_info.get(GROUP_SIZE_KEY)
    if given is None:
        return configured
    if (
        isinstance(given, bool)
        or not isinstance(given, int | float)
        or not math.isfinite(given)
        or given != int(given)
    ):
        raise InvalidSampleError(
            f"extra_info.{GROUP_SIZE_KEY} must be a whole number of rows >= 1, "
            f"got {type(given).__name__} {str(given)[:40]}"
        )
    if given < 1:
        raise InvalidSampleError(f"extra_info.{GROUP_SIZE_KEY} must be >= 1, got {given}")
    return int(given)
