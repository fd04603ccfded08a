"""Configuration: the ``reward.*``, ``server.*`` and ``algorithm.*`` trees (verl's names).

Load from a dict, a YAML path or a :class:`RewardConfig`, with dotted overrides::

    cfg = load_config("reward.yaml", ["reward.num_workers=4", "reward.timeout_s=5"])

Every model is frozen and forbids unknown keys. All problems are reported at once,
each naming its dotted key (``reward.timeout_s: Input should be a valid number``).
"""

from __future__ import annotations

import difflib
import os
import re
import typing
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Annotated, Any, Literal, cast
from urllib.parse import urlsplit

import yaml
from omegaconf import OmegaConf
from omegaconf.errors import OmegaConfBaseException
from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    ValidationInfo,
    field_validator,
    model_validator,
)
from pydantic_core import PydanticCustomError

from rewardkit._system import usable_cores
from rewardkit.engines import ENGINES, NEUTRAL, VERL_INERT, refusals
from rewardkit.errors import ConfigError

__all__ = [
    "AlgorithmConfig",
    "ConfigSource",
    "GroupJudgeConfig",
    "HealthCheckConfig",
    "HttpOptions",
    "JudgeConfig",
    "RayOptions",
    "RewardConfig",
    "RewardModelConfig",
    "RewardSection",
    "ServerConfig",
    "api_judges",
    "check_runnable",
    "load_config",
]


# Checks at load of mistakes that pass type validation and would then fail every row
# with the same remote error.

_HUB_ID = re.compile(r"^[A-Za-z0-9][\w.-]*/[\w.-]+$")


VERL_ROUTER_URL = "verl://router"
"""``reward_model.url`` placeholder: the address verl passes as ``reward_router_address``."""


def _check_url(url: str | None, *, server_root: bool) -> str | None:
    """A URL with a scheme and a host; for a model server, its root (no trailing /v1)."""
    if url is None or url == VERL_ROUTER_URL:
        return url
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise ValueError(f"needs a scheme and a host, e.g. 'http://{url.split('://')[-1]}'")
    if server_root and parts.path.rstrip("/").endswith("/v1"):
        root = url.rstrip("/")[: -len("/v1")]
        raise ValueError(
            f"ends in '/v1'; give the server's root ({root!r}): rewardkit adds the route "
            "itself ('/v1/chat/completions', '/v1/embeddings', ...), so this URL would "
            "request '/v1/v1/...' and fail on every row"
        )
    return url


def _check_local_dir(value: str | None, enabled: bool) -> str | None:
    """Refuse a model hub id where a local directory is needed (nothing is downloaded)."""
    if value and enabled and _HUB_ID.match(value) and not Path(value).exists():
        raise ValueError(
            "is not a directory here; it looks like a model hub id, and rewardkit loads "
            "models and tokenizers only from local directories (download it first, e.g. "
            f"`huggingface-cli download {value} --local-dir DIR`, and give DIR)"
        )
    return value


MODEL_NAME_PATTERN = r"[A-Za-z][A-Za-z0-9_-]{0,63}"
"""What a key of ``reward.reward_models`` may be: it becomes the component ``rm/<name>``."""

THINK_TAG_PATTERN = r"[A-Za-z][A-Za-z0-9_:-]{0,31}"
"""What ``format_reward.think_tag`` may be: checked here at load, and by the format
verifier per call (a caller may pass its own)."""


MAX_WORKERS = 4096
"""reward.num_workers at most: more scoring processes than any machine has cores, or
actors than a Ray cluster schedules for one loop (99999 only kept a machine starting)."""


class _Section(BaseModel):
    # inf and NaN are no setting: reward.timeout_s=inf would switch the hard limit off
    model_config = ConfigDict(
        extra="forbid", frozen=True, validate_default=True, allow_inf_nan=False
    )

    @field_validator("*", mode="before")
    @classmethod
    def _no_boolean_number(cls, value: Any, info: ValidationInfo) -> Any:
        """``reward.num_workers=true`` is no number (pydantic reads True as 1)."""
        if isinstance(value, bool) and info.field_name is not None:
            annotation = cls.model_fields[info.field_name].annotation
            if bool not in _leaf_types(annotation) and _leaf_types(annotation) & {int, float}:
                raise PydanticCustomError(
                    "boolean_number", "Input should be a number, not a boolean"
                )
        return value


def _leaf_types(annotation: Any) -> set[Any]:
    """The plain types an annotation allows (``int | None`` gives int and NoneType)."""
    args = typing.get_args(annotation)
    if typing.get_origin(annotation) is Annotated:
        return _leaf_types(args[0])
    if args and typing.get_origin(annotation) is not Literal:
        return set().union(*(_leaf_types(arg) for arg in args))
    return {annotation}


_ROW_ARGUMENTS = ("data_source", "solution_str", "ground_truth", "extra_info")
"""What the custom function gets from each row; a reward_kwargs key may not shadow them."""


def _no_row_arguments(kwargs: dict[str, Any]) -> dict[str, Any]:
    """Refuse at load what would otherwise fail every row ("got multiple values")."""
    shadowed = [key for key in _ROW_ARGUMENTS if key in kwargs]
    if shadowed:
        raise ValueError(
            f"{shadowed[0]!r} is what the function gets from each row; "
            f"a reward_kwargs key may not be one of {', '.join(_ROW_ARGUMENTS)}"
        )
    return kwargs


class CustomRewardFunctionConfig(_Section):
    path: str | None = None
    """A .py file or an importable module holding the function; null: built-in verifiers."""
    name: str = "compute_score"
    """The function: compute_score(data_source, solution_str, ground_truth, extra_info, **kw)."""
    reward_kwargs: dict[str, Any] = Field(default_factory=dict)
    """Keyword arguments for the function (verl's place for them); merged over
    reward.reward_kwargs, these win on a shared key."""
    _kwargs_not_row = field_validator("reward_kwargs")(_no_row_arguments)
    cache: bool = False
    """Reuse a result for an identical (data_source, response, ground_truth, extra_info) row,
    within a batch and across batches. Off by default: a custom function may be
    stochastic, stateful or remote. Turn on only for a pure function."""


_MANAGERS_REFUSED = {
    "remote": (
        "it spreads compute_score over Ray workers, which rewardkit's own pool does: set "
        "reward.num_workers (processes here) or reward.backend=ray (actors on a cluster), "
        "and leave reward_manager.name at naive"
    ),
    "gdpo": (
        "GDPO normalizes each reward component separately within its group, which is "
        "verl's advantage step (algorithm.adv_estimator=gdpo): rewardkit reports every "
        "component's score per row (component/<name> in verl's reward_extra_info: name "
        "them in algorithm.gdpo_reward_keys, their weights in gdpo_reward_weights), or "
        "does it itself with reward.aggregation: normalize_then_sum on whole batches; "
        "leave reward_manager.name at naive"
    ),
}
"""verl reward managers rewardkit refuses, each with the rewardkit setting that does its job."""


class RewardManagerConfig(_Section):
    name: Literal["naive", "batch", "prime", "dapo", "rate_limited"] = "naive"
    """verl's manager names; rewardkit scores per sample with every one of them.
    ``rate_limited`` puts verl's limits (``reward.max_concurrent``, ``max_rpm``, ``max_tpm``,
    ``estimated_tokens_per_request``, ``timeout``) on the one API judge
    (:func:`_rate_limited_keys`). verl's ``gdpo`` and ``remote`` are refused, naming the
    rewardkit setting that does their job (:data:`_MANAGERS_REFUSED`)."""
    source: Literal["register"] = "register"
    """verl's 'importlib' (a reward-manager class of your own) cannot run inside rewardkit's
    engine: load rewardkit's manager into verl instead (README, 'Use with verl')."""

    @field_validator("name", mode="before")
    @classmethod
    def _closest_setting(cls, value: Any) -> Any:
        if isinstance(value, str) and value in _MANAGERS_REFUSED:
            raise ValueError(
                f"verl's {value!r} manager is not run by rewardkit; {_MANAGERS_REFUSED[value]}"
            )
        return value

    @field_validator("source", mode="before")
    @classmethod
    def _no_importlib(cls, value: Any) -> Any:
        if value == "importlib":
            raise ValueError(
                "'importlib' loads a verl reward-manager class, which rewardkit does not run; "
                "put rewardkit's manager in verl (reward.reward_manager.module.path="
                "pkg://rewardkit.integrations.verl), or use reward.custom_reward_function here"
            )
        return value


class OverlongBufferConfig(_Section):
    """DAPO's soft overlong penalty: min(-(L - (max_resp_len - len)) / len * factor, 0)."""

    enable: bool = False
    len: int = Field(default=0, ge=0)
    penalty_factor: float = Field(default=1.0, ge=0, allow_inf_nan=False)
    max_resp_len: int | None = Field(default=None, gt=0)
    log: bool = False
    """Also report the penalty itself as the ``overlong_reward`` extra (verl's
    ``overlong_buffer_cfg.log``); the ``overlong`` flag is always reported."""
    tokenizer: str | None = None
    """A tokenizer path to count response tokens when a row has no extra_info.response_length."""

    @field_validator("tokenizer")
    @classmethod
    def _local_tokenizer_dir(cls, value: str | None, info: ValidationInfo) -> str | None:
        return _check_local_dir(value, bool(info.data.get("enable")))


class FormatRewardConfig(_Section):
    """An extra component for answering in the ``<think>...</think> answer`` shape."""

    enable: bool = False
    weight: float = Field(default=0.1, allow_inf_nan=False)
    think_tag: str = Field(default="think", pattern=f"^{THINK_TAG_PATTERN}$")
    """A plain tag name (think, reasoning); checked here, not on every row."""


class MathVerifierOptions(_Section):
    extraction: Literal["default", "strict"] = "default"
    """default: the last box, else <answer> tags, else an answer line ("The answer is X"),
    else the last expression of the final part (as math-verify finds it); strict: boxes
    and <answer> tags only, for users who reward the answer format separately."""
    decimals: Literal["exact", "rounded"] = "exact"
    """exact: a decimal answer is right only when it is exactly the ground truth's value
    (0.666667 is not \\frac{2}{3}; 0.5 is \\frac{1}{2}); rounded: the tolerance of
    math-verify's 6-place rounding (verl's math_verify scorer)."""


class SearchQAVerifierOptions(_Section):
    answers: Literal["hedged", "last"] = "hedged"
    """hedged: two different <answer> tags in the conclusion score 0 (extra.hedged); last:
    verl's reading, the last <answer> tag counts whatever came before."""


class ToolCallVerifierOptions(_Section):
    order: Literal["strict", "any"] = "strict"
    """strict: the calls in the expected order; any: in any order (parallel calls). A
    row's ground truth ``{"calls": [...], "order": ...}`` sets its own; BFCL's layout is
    matched in any order, as BFCL matches it."""
    turns: Literal["final", "all"] = "final"
    """For a trajectory response: final, the calls of its final assistant message (one
    turn, as single-turn tool datasets score); all, the calls of every assistant message
    in order."""


class JsonSchemaVerifierOptions(_Section):
    answer: Literal["whole", "fenced"] = "whole"
    """Where the JSON is read in the conclusion (after the last </think>): whole, the
    conclusion is one JSON value, or holds a ```json fence (the last one counts, prose
    around it allowed); fenced, only a fence counts."""


class IFEvalVerifierOptions(_Section):
    mode: Literal["strict", "loose"] = "strict"
    """strict: an instruction is followed when the response passes its check as it is;
    loose: IFEval's loose reading, when any of 8 variants passes (the response, without
    its first line, its last line, both; each also with every '*' removed)."""
    partial: bool = False
    """false: 1.0 when every instruction is followed, else 0.0 (IFEval's prompt-level
    accuracy); true: the fraction of the row's instructions followed."""


class VerifierOptions(_Section):
    gsm8k_method: Literal["auto", "strict", "flexible"] = "auto"
    """auto: the last of '#### n', a boxed number, 'The answer is n', 'A: n'; strict:
    verl's rule, the last '#### n'; flexible: verl's rule, the last number in the response."""
    math: MathVerifierOptions = MathVerifierOptions()
    """Options of the MATH-family verifier."""
    search_qa: SearchQAVerifierOptions = SearchQAVerifierOptions()
    """Options of the Search-R1 exact-match verifier."""
    tool_call: ToolCallVerifierOptions = ToolCallVerifierOptions()
    """Options of the tool-call verifier (data_source tool_call)."""
    json_schema: JsonSchemaVerifierOptions = JsonSchemaVerifierOptions()
    """Options of the JSON Schema verifier (data_source json_schema)."""
    ifeval: IFEvalVerifierOptions = IFEvalVerifierOptions()
    """Options of the IFEval instruction-following verifier."""
    fast_paths: bool = True
    """true: answers that plain comparison or the bounded numeric evaluator can settle are
    graded inline; false: every extracted answer goes to the full checker (math-verify) in
    a worker, but for what a verifier's guards decide before any comparison (no answer, a
    hedge), as the full checker would. For checking the fast paths against the reference,
    and for benchmarks. Decided in one place: rewardkit.scoring.rows.quick_decides."""


class RolloutConfig(_Section):
    """verl's reward_model.rollout: the inference engine rewardkit launches for the model.

    With ``name`` set (vllm, sglang, transformers) rewardkit starts ``data_parallel_size``
    replicas of that engine serving ``reward_model.model_path`` on this machine (with
    ``reward.backend: ray``, as Ray actors placed as Ray places them), each on a free
    port with its own log, puts a router in front of them, restarts a
    replica that dies and stops them all on exit (rewardkit.models.managed, docs/models.md
    "Managed servers"). verl's keys map to each engine's flags in one table
    (:data:`rewardkit.engines.FLAGS`); a key the engine cannot honour is refused here,
    naming the key and the engine. Without ``name``, rewardkit starts nothing: it loads the
    model itself (backend hf) or calls the server at ``reward_model.url``.
    """

    name: Literal["vllm", "sglang", "transformers"] | None = None
    """The engine to launch; null: none (backend hf, or a server you started at url)."""
    data_parallel_size: int = Field(default=1, ge=1, le=64)
    """Replicas launched, each a whole copy of the model behind the router. (verl counts
    its replicas from its GPUs: n_gpus_per_node * nnodes / (tp * dp * pp).)"""
    tensor_model_parallel_size: int = Field(default=1, ge=1)
    """GPUs each replica shards the model over (vllm --tensor-parallel-size, sglang --tp-size)."""
    gpu_memory_utilization: float | None = Field(default=None, gt=0, le=1)
    """vllm --gpu-memory-utilization, sglang --mem-fraction-static; null: the engine's default."""
    max_num_seqs: int | None = Field(default=None, ge=1)
    """vllm --max-num-seqs, sglang --max-running-requests; null: the engine's default."""
    max_num_batched_tokens: int | None = Field(default=None, ge=1)
    """vllm --max-num-batched-tokens, sglang --max-prefill-tokens; null: the engine's default."""
    max_model_len: int | None = Field(default=None, ge=1)
    """vllm --max-model-len, sglang --context-length; null: prompt_length + response_length."""
    seed: int | None = None
    """Replica r gets seed + r (as verl seeds its replicas); null: the engine's default."""
    dtype: str | None = None
    """The engine's --dtype; null: its default (verl's bfloat16 is accepted too)."""
    full_determinism: bool = False
    """Route each request by crc32 of its body (the same request, the same replica) and
    ask the engine for batch-invariant kernels (vllm VLLM_BATCH_INVARIANT=1, sglang
    --enable-deterministic-inference)."""
    engine_kwargs: dict[str, dict[str, Any]] = Field(default_factory=dict)
    """verl's per-engine pass-through, e.g. {vllm: {enforce_eager: true}}: each entry of
    the launched engine's mapping becomes --key value on its command line."""
    start_timeout_s: float = Field(default=600.0, gt=0)
    """How long a replica may take to answer its health route; past it, the start fails
    with the replica's last log lines."""
    restart_backoff_s: float = Field(default=1.0, gt=0)
    """A replica that dies is restarted after this, doubling for each death in a row."""
    restart_backoff_max_s: float = Field(default=60.0, gt=0)
    """Cap on the wait before a restart."""
    drain_timeout_s: float = Field(default=30.0, ge=0)
    """On close: how long requests in flight may finish before the replicas are stopped."""
    log_dir: str | None = None
    """Where each replica writes its log (replica-<rank>.log); null: a new temporary directory."""
    prompt_length: int | None = Field(default=None, gt=0)
    """verl's place for reward_model.prompt_length (honoured: moved there)."""
    response_length: int | None = Field(default=None, gt=0)
    """verl's place for reward_model.response_length (honoured: moved there)."""

    @model_validator(mode="before")
    @classmethod
    def _verl_inert_keys(cls, data: Any) -> Any:
        """verl's other rollout keys: accepted at verl's defaults, refused otherwise."""
        if not isinstance(data, Mapping):
            return data
        data = {k: v for k, v in data.items() if k != "_target_"}
        for key, default in VERL_INERT.items():
            if key not in data:
                continue
            value = data.pop(key)
            if value is not None and value != default:
                raise ValueError(
                    f"rollout.{key}={value!r}: rewardkit passes no such setting to the engine "
                    f"(verl's default {default!r} is accepted); give the engine's own flag in "
                    "rollout.engine_kwargs.<engine>"
                )
        split = data.pop("disaggregation", None)
        if isinstance(split, Mapping) and split.get("enabled"):
            raise ValueError(
                "rollout.disaggregation.enabled: rewardkit launches whole replicas, not "
                "prefill/decode pairs; set it false"
            )
        return data

    @model_validator(mode="after")
    def _engine_can_honour(self) -> RolloutConfig:
        if self.name is None:
            return self
        problems = refusals(self.name, self.model_dump())
        if problems:
            raise ValueError("; ".join(problems))
        return self

    @field_validator("engine_kwargs")
    @classmethod
    def _engine_names(cls, value: dict[str, dict[str, Any]]) -> dict[str, dict[str, Any]]:
        unknown = sorted(set(value) - set(ENGINES))
        if unknown:
            raise ValueError(
                f"{unknown[0]!r} is not an engine; engine_kwargs maps an engine "
                f"({', '.join(ENGINES)}) to its flags, e.g. {{vllm: {{enforce_eager: true}}}}"
            )
        return value


class HttpOptions(_Section):
    """How rewardkit talks to a remote endpoint (model server, judge, sandbox): see rewardkit.http."""

    connect_timeout_s: float = Field(default=5.0, gt=0)
    """Limit on opening a connection; a refused or unreachable endpoint fails fast and is retried."""
    timeout_s: float = Field(default=120.0, gt=0)
    """Hard limit on one attempt (connect, send, wait, read). A timed-out attempt is not retried:
    the server may still be working on it, and repeating it would pile load on a slow server."""
    max_retries: int = Field(default=3, ge=0)
    """Extra attempts after a transient failure (connection error, HTTP 429, 502, 503, 504)."""
    backoff_base_s: float = Field(default=0.25, ge=0)
    """First retry waits about this long, doubling each time (with jitter)."""
    backoff_max_s: float = Field(default=8.0, ge=0)
    """Cap on one backoff wait, including a server's Retry-After."""
    max_concurrent: int = Field(default=64, ge=1)
    """Requests in flight at once to this endpoint (also the connection pool size)."""
    requests_per_minute: float | None = Field(default=None, gt=0)
    """Rate limit on requests; null: none."""
    tokens_per_minute: float | None = Field(default=None, gt=0)
    """Rate limit on (estimated) tokens sent plus asked for; null: none."""
    estimated_tokens_per_request: int | None = Field(default=None, gt=0)
    """What each request takes from ``tokens_per_minute`` (verl's rate_limited key of this
    name); null: estimated from the request itself (a judge: 4 characters a token of its
    prompt, plus max_tokens x n). Also a judge's token count when its server reports no
    ``usage``."""
    api_key: str | None = None
    """Sent as 'Authorization: Bearer <key>'. Use ${oc.env:NAME} in YAML to read it from the environment."""
    headers: dict[str, str] = Field(default_factory=dict)
    """Extra headers sent with every request."""


class HealthCheckConfig(_Section):
    """How a list of model-server URLs is watched (see rewardkit.balancer)."""

    path: str = "/health"
    """GET this on every replica; a 2xx answer means up (vLLM, SGLang and TEI serve /health)."""
    interval_s: float = Field(default=5.0, gt=0)
    """Seconds between checks. A replica that refuses a connection is taken out at once;
    it comes back at the first check it passes."""
    timeout_s: float = Field(default=2.0, gt=0)
    """A check that takes longer counts as down."""


class GroupJudgeConfig(_Section):
    """A judge that sees a whole GRPO group (docs/models.md, 'Group judge')."""

    mode: Literal["listwise", "pairwise"]
    """listwise: one request shows the prompt and every response of the group, and the judge
    answers one score per response; pairwise: one request per response, against a reference."""
    reference: Literal["ground_truth", "first"] = "ground_truth"
    """pairwise only. ground_truth: each response against its row's ground_truth (no
    gathering: each row is judged at once); first: against the group's first row (first in
    the call's input order; on a per-row call, the first to arrive), which itself scores
    the middle of the range, as a response as good as the reference does."""
    template: str | None = None
    """A built-in template ('listwise', 'pairwise') or the path of a text file; null: the
    built-in one of the mode. listwise uses {{prompt}}, {{responses}}, {{count}} and
    {{ground_truth}}; pairwise uses {{prompt}}, {{reference}} and {{response}}."""
    size: int | None = Field(default=None, ge=1)
    """Rows per group, for calls that do not hold a whole group (RewardLoop.ascore, verl's
    per-sample path, one-row requests to the reward server): their rows are gathered across
    calls up to this size. A row's extra_info.group_size wins. null: a batch call's group
    is the rows of it it holds, and a per-row call is refused."""
    gather_timeout_s: float = Field(default=60.0, gt=0)
    """How long a group's first row waits for the rest; past it the rows that came fail
    with status error (never a hang, never a judgement of part of a group)."""
    max_size: int = Field(default=64, ge=1)
    """A larger group fails with status error rather than send the judge one huge request."""

    @model_validator(mode="after")
    def _reference_is_pairwise(self) -> GroupJudgeConfig:
        if self.mode == "listwise" and self.reference != "ground_truth":
            raise ValueError(
                f"judge.group.reference={self.reference!r} applies to mode 'pairwise' only: "
                "a listwise judge sees the whole group at once"
            )
        return self


class JudgeConfig(_Section):
    """A generative reward model: an LLM asked to grade the response with a prompt template."""

    template: str = "score_0_10"
    """A built-in template ('score_0_10', 'reference') or the path of a text file using
    {{prompt}}, {{response}} and {{ground_truth}}."""
    parser: Literal["auto", "score", "verdict"] = "auto"
    """score: the last '[[N]]' or 'Score: N'; verdict: the last '[[CORRECT]]'/'[[INCORRECT]]'
    (or 'Verdict: ...'); auto: what the built-in template asks for (score for a file)."""
    score_min: float = 0.0
    score_max: float = 10.0
    """The range a parsed score must fall in (outside it the answer counts as unparsable)."""
    normalize: bool = True
    """Map the score from [score_min, score_max] to [0, 1] (verdicts already are 0 or 1)."""
    system_prompt: str | None = None
    n: int = Field(default=1, ge=1, le=64)
    """Judge samples per row, combined by 'aggregate'."""
    aggregate: Literal["mean", "majority"] = "mean"
    """mean of the parsed scores, or the most frequent one (a tie: the mean of the tied values)."""
    temperature: float = Field(default=0.0, ge=0)
    top_p: float = Field(default=1.0, gt=0, le=1)
    max_tokens: int = Field(default=512, gt=0)
    """Tokens the judge may write per sample."""
    group: GroupJudgeConfig | None = None
    """Judge each GRPO group together (listwise or pairwise); null: each row alone."""

    @model_validator(mode="after")
    def _score_range_is_not_empty(self) -> JudgeConfig:
        if self.score_max <= self.score_min:
            raise ValueError(
                f"judge.score_max ({self.score_max:g}) must be greater than judge.score_min "
                f"({self.score_min:g}): a parsed score must fall between them"
            )
        return self

    @model_validator(mode="after")
    def _group_has_its_own_template(self) -> JudgeConfig:
        if self.group is None:
            return self
        if self.template != "score_0_10":
            raise ValueError(
                f"judge.template={self.template!r} is the per-row judge's: a group judge takes "
                "its template from judge.group.template"
            )
        if self.parser != "auto":
            raise ValueError(
                f"judge.parser={self.parser!r}: a group judge reads scores only "
                "('Scores: [[...]]' listwise, 'Score: [[N]]' pairwise); leave judge.parser out"
            )
        return self


_VERL_PLACEMENT: dict[str, Any] = {"enable_resource_pool": False, "n_gpus_per_node": 8, "nnodes": 0}
"""verl 0.9.1's reward_model placement keys (reward/reward.yaml) and their defaults."""

_MODEL_DTYPES = ("float32", "bfloat16", "float16")
"""The dtypes a model rewardkit loads itself takes (``reward_model.dtype``, but ``auto``)."""

_FLEET_KEYS = (
    "data_parallel_size",
    "start_timeout_s",
    "restart_backoff_s",
    "restart_backoff_max_s",
    "drain_timeout_s",
    "log_dir",
)
"""rollout keys of the fleet rewardkit launches (besides the engine's flags, NEUTRAL, and
``engine_kwargs``): read only when ``rollout.name`` is set."""


class RewardModelConfig(_Section):
    enable: bool = False
    model_path: str | None = None
    """A local directory: the model for backend 'hf'; for remote backends, the RM's tokenizer
    (then rows are rendered and truncated here and sent as token ids)."""
    model_name: str | None = None
    """The served model name sent in remote requests; null: model_path, or none."""
    input_tokenizer: str | None = None
    """The policy's tokenizer, when rows arrive as its token ids and it differs from the RM's."""
    backend: Literal["hf", "vllm", "sglang", "tei", "openai"] = "hf"
    kind: Literal["discriminative", "generative"] = "discriminative"
    url: str | None = None
    urls: list[str] = Field(default_factory=list)
    """Several replicas of the same model server: requests go to the least loaded healthy one
    (rewardkit.balancer); ``url``, when also set, is one more replica."""
    health_check: HealthCheckConfig = HealthCheckConfig()
    """How the replicas in ``urls`` are health-checked."""
    prompt_length: int = Field(default=2048, gt=0)
    """Prompt tokens kept (its end) when a row is too long."""
    response_length: int = Field(default=2048, gt=0)
    """Response tokens kept (its start) when a row is too long."""
    max_batch_tokens: int = Field(default=16384, gt=0)
    """Padded tokens (rows x longest row) per forward pass."""
    max_batch_size: int = Field(default=256, ge=1)
    """Rows per forward pass or per remote request."""
    max_padding_tokens: Annotated[float, Field(ge=0)] | Literal["auto"] = "auto"
    """Padding a local model's batch may carry (the sum of longest - length over its rows)
    before another forward pass is cheaper. auto: measured, as the fixed cost of a forward
    pass divided by its cost per token, from the model's own recent forwards (large on a
    GPU, so batches fill the budget; near 0 on a CPU, so rows of one length go together)."""
    use_remove_padding: bool | Literal["auto"] = False
    """Score a local causal decoder's rows packed end to end, several to a sequence, each
    with its own positions and attention (verl's name for it), instead of padded to the
    longest row (rewardkit.models.packing). true: packed on any device, and an error at
    start when the model fails the packing check; auto: packed on CUDA where it passes,
    else padded; false (default until a GPU measures it faster: on a CPU it is slower,
    docs/models.md): padded."""
    num_threads: int | None = Field(default=None, ge=1)
    """CPU threads for a local model's forwards (torch.set_num_threads on the model thread);
    null: torch's default. On a busy CPU the default (one per core) can collapse throughput
    (benchmarks/bench_server.py measured 9.5 against 60 requests/s); 1 is often fastest there."""
    weight: float = Field(default=1.0, allow_inf_nan=False)
    device: str | None = None
    """null: cuda when present (bf16), else cpu (fp32)."""
    dtype: Literal["auto", "float32", "bfloat16", "float16"] = "auto"
    """auto: bfloat16 on cuda, float32 on cpu."""
    normalize_mean: float = 0.0
    normalize_std: float = Field(default=1.0, gt=0)
    """The score is (logit - normalize_mean) / normalize_std, then clipped to [-clip, clip]."""
    clip: float | None = Field(default=None, gt=0)
    replicas: int = Field(default=1, ge=1)
    """Copies of a local (backend hf) model, each a Ray actor, fed least-loaded first;
    more than 1 needs Ray (reward.ray sets their resources). See docs/ray.md."""
    rollout: RolloutConfig = RolloutConfig()
    """verl's engine settings; see RolloutConfig for which are honoured."""
    judge: JudgeConfig = JudgeConfig()
    """Generative-RM options (kind: generative)."""
    http: HttpOptions = HttpOptions()
    """HTTP-layer options for remote backends (timeouts, retries, rate limits)."""

    @model_validator(mode="before")
    @classmethod
    def _verl_placement(cls, data: Any) -> Any:
        """verl's own keys of this section: its class marker is dropped; its GPU placement
        (standalone pool of n_gpus_per_node x nnodes) is accepted at verl's defaults only,
        since rewardkit launches rollout.data_parallel_size replicas on this machine."""
        if not isinstance(data, Mapping):
            return data
        data = {k: v for k, v in data.items() if k != "_target_"}
        for key, default in _VERL_PLACEMENT.items():
            value = data.pop(key, default)
            if value != default:
                raise ValueError(
                    f"{key}={value!r}: verl's placement of its reward-model servers; rewardkit "
                    "launches rollout.data_parallel_size replicas on this machine (each over "
                    f"rollout.tensor_model_parallel_size GPUs): leave it at {default!r}"
                )
        return data

    @model_validator(mode="before")
    @classmethod
    def _lengths_from_rollout(cls, data: Any) -> Any:
        """verl keeps prompt/response lengths under rollout: move them up (a clash is an error)."""
        if not isinstance(data, Mapping) or not isinstance(data.get("rollout"), Mapping):
            return data
        data, rollout = dict(data), dict(data["rollout"])
        for key in ("prompt_length", "response_length"):
            value = rollout.pop(key, None)
            if value is None:
                continue
            if data.get(key) is not None and data[key] != value:
                raise ValueError(
                    f"rollout.{key}={value} and {key}={data[key]} disagree: give one of them"
                )
            data[key] = value
        data["rollout"] = rollout
        return data

    @property
    def managed(self) -> bool:
        """rewardkit launches this model's servers (``rollout.name`` is set)."""
        return self.rollout.name is not None

    @model_validator(mode="after")
    def _packing_is_local(self) -> RewardModelConfig:
        if self.use_remove_padding is True and (
            self.backend != "hf" or self.kind != "discriminative" or self.managed
        ):
            raise ValueError(
                "use_remove_padding=True packs the rows of a discriminative model run "
                "in-process (backend hf, kind discriminative, no rollout.name); the server "
                "that backend calls pads as it does: leave the key out"
            )
        return self

    @model_validator(mode="after")
    def _local_keys_reach_a_local_model(self) -> RewardModelConfig:
        """The keys of a model rewardkit runs itself (device, dtype, threads, batch and
        padding budgets) are refused where no such model reads them: a server at ``url``,
        or a launched vLLM or SGLang (their own settings are ``rollout.*``)."""
        in_process = self.backend == "hf" and not self.managed
        # a discriminative model launched with rollout.name transformers is served by
        # `rewardkit serve` replicas, which run it in-process with these keys
        served_here = self.managed and self.rollout.name == "transformers"
        local_classifier = self.kind == "discriminative" and (in_process or served_here)
        honoured = {
            "device": in_process or served_here,
            "dtype": in_process or (served_here and self.kind == "discriminative"),
            "num_threads": local_classifier,
            "max_padding_tokens": local_classifier,
            "max_batch_tokens": local_classifier or self.kind == "generative",
        }
        for key, read in honoured.items():
            value = getattr(self, key)
            if read or value == RewardModelConfig.model_fields[key].default:
                continue
            where = (
                f"the {self.rollout.name} servers rewardkit launches"
                if self.managed
                else f"the {self.backend} server at reward_model.url"
            )
            instead = (
                " (the engine's own is rollout.dtype)" if key == "dtype" and self.managed else ""
            )
            raise ValueError(
                f"{key}={value!r} is a setting of a model rewardkit runs itself (backend hf), "
                f"which {where} is not; nothing reads it there{instead}: leave it out"
            )
        if self.replicas > 1 and not self.managed and self.backend != "hf":
            raise ValueError(
                f"replicas={self.replicas} copies a model rewardkit runs itself (backend hf) "
                f"as Ray actors; the copies of a {self.backend} server you started go in "
                "reward_model.urls"
            )
        if self.input_tokenizer is not None and self.kind == "generative":
            raise ValueError(
                "input_tokenizer decodes rows given as the policy's token ids for a "
                "discriminative model; a judge (kind generative) reads the rows' text: "
                "leave it out"
            )
        return self

    @model_validator(mode="after")
    def _served_classifier_keys(self) -> RewardModelConfig:
        """A discriminative model launched with rollout.name transformers runs in
        `rewardkit serve` replicas (`transformers serve` serves no classifier): the
        engine's seed and flags have nowhere to go, and its dtype is the model's."""
        if not (self.managed and self.rollout.name == "transformers"):
            return self
        if self.kind != "discriminative":
            return self
        rollout = self.rollout
        if rollout.seed is not None:
            raise ValueError(
                f"rollout.seed={rollout.seed}: a discriminative model launched with "
                "rollout.name transformers runs in rewardkit serve replicas and samples "
                "nothing; leave it out"
            )
        if rollout.engine_kwargs.get("transformers"):
            raise ValueError(
                "rollout.engine_kwargs.transformers: a discriminative model launched with "
                "rollout.name transformers runs in rewardkit serve replicas, not "
                "`transformers serve`, so these flags have no command line to go on"
            )
        if rollout.dtype is None:
            return self
        if rollout.dtype not in _MODEL_DTYPES:
            raise ValueError(
                f"rollout.dtype={rollout.dtype!r}: the rewardkit serve replicas load the "
                f"model in one of {', '.join(_MODEL_DTYPES)}"
            )
        if self.dtype not in ("auto", rollout.dtype):
            raise ValueError(
                f"rollout.dtype={rollout.dtype!r} and dtype={self.dtype!r} disagree: give "
                "one of them"
            )
        return self

    @model_validator(mode="after")
    def _group_judge_is_generative(self) -> RewardModelConfig:
        if self.judge.group is not None and self.kind != "generative":
            raise ValueError(
                "judge.group is a generative judge: set reward_model.kind: generative "
                f"(it is {self.kind!r})"
            )
        return self

    @model_validator(mode="after")
    def _managed_fleet_is_whole(self) -> RewardModelConfig:
        """``rollout.name`` launches the servers: the backend is implied and no url is given."""
        name = self.rollout.name
        if name is None:
            engine_keys = [k for k, v in NEUTRAL.items() if getattr(self.rollout, k) != v]
            engine_keys += [
                k
                for k in _FLEET_KEYS
                if getattr(self.rollout, k) != RolloutConfig.model_fields[k].default
            ]
            if any(self.rollout.engine_kwargs.values()):
                engine_keys.append("engine_kwargs")
            if self.enable and engine_keys:
                raise ValueError(
                    f"rollout.{engine_keys[0]} is a setting of the engine rewardkit launches, "
                    "and rollout.name is not set, so none is launched: set rollout.name "
                    f"({', '.join(ENGINES)}), or pass the flag to the server you started "
                    "at reward_model.url, and leave this key out"
                )
            return self
        allowed = {"hf", name} | ({"openai"} if self.kind == "generative" else set())
        if self.backend not in allowed:
            raise ValueError(
                f"rollout.name={name!r} launches {name} servers, which backend "
                f"{self.backend!r} cannot call; leave reward_model.backend out (the launched "
                "engine implies it)"
            )
        if self.url or self.urls:
            raise ValueError(
                f"rollout.name={name!r} launches the servers and reward_model.url/urls name "
                "servers you started: give one of them"
            )
        if self.replicas > 1:
            raise ValueError(
                f"replicas={self.replicas} copies an in-process model; the replicas of a "
                "launched engine are rollout.data_parallel_size"
            )
        if name == "transformers" and self.judge.n > 1:
            raise ValueError(
                f"judge.n={self.judge.n}: `transformers serve` ignores a request's n and "
                "answers once; use judge.n=1 or rollout.name vllm or sglang"
            )
        return self

    @field_validator("url")
    @classmethod
    def _server_root_url(cls, url: str | None) -> str | None:
        return _check_url(url, server_root=True)

    @field_validator("urls")
    @classmethod
    def _server_root_urls(cls, urls: list[str]) -> list[str]:
        for url in urls:
            _check_url(url, server_root=True)
        return urls

    @field_validator("model_path", "input_tokenizer")
    @classmethod
    def _local_model_dir(cls, value: str | None, info: ValidationInfo) -> str | None:
        return _check_local_dir(value, bool(info.data.get("enable")))


class SandboxFusionConfig(_Section):
    url: str | None = None
    """null: the embedded sandbox."""
    max_concurrent: int = Field(default=64, ge=1)
    """Runs in flight (the embedded sandbox also caps this at the number of cores), shared
    fairly between requests: a request's row waits for the first free slot, not behind
    another request's rows."""
    queue_timeout_s: float = Field(default=600.0, gt=0)
    """Longest a code row may wait, in all, for those slots; past it the row is an error
    that says it waited. Not counted in ``reward.async_timeout_s``, which bounds the row's
    own runs (a remote sandbox's own queue, which rewardkit cannot see, counts as run)."""
    memory_limit_mb: int = Field(default=1024, ge=16)
    run_timeout_s: float = Field(default=10.0, gt=0)
    compile_timeout_s: float = Field(default=10.0, gt=0)
    mode: Literal["continuous", "all_or_nothing"] = "continuous"
    """continuous: the fraction of test cases passed; all_or_nothing: 1 only if all pass."""
    max_cases: int | None = Field(default=10, ge=1)
    """Test cases run per row (verl: the first 10); null: all of them."""
    python_executable: str | None = None
    """The embedded sandbox's python (it must be runnable by an unprivileged user)."""
    api_key: str | None = None
    """Sent to a remote sandbox (``url``) as 'Authorization: Bearer <key>'; not empty."""
    allow_unisolated: bool = False
    """Let the embedded sandbox run code where it cannot isolate it: not root (the code then
    runs as this process's user), or no namespaces (``basic`` mode: the code sees the host's
    files and network). Off: code rows are errors saying why."""

    @field_validator("api_key")
    @classmethod
    def _key_not_empty(cls, value: str | None) -> str | None:
        if value is not None and not value.strip():
            raise ValueError("is empty (an unset environment variable?): set a key or null")
        return value

    @field_validator("url")
    @classmethod
    def _sandbox_url(cls, url: str | None) -> str | None:
        return _check_url(url, server_root=False)

    @model_validator(mode="after")
    def _keys_of_the_sandbox_in_use(self) -> SandboxFusionConfig:
        """The embedded sandbox's own keys with a remote one, and the reverse: nothing
        would read them."""
        if self.url is None and self.api_key is not None:
            raise ValueError(
                "api_key is sent to a remote sandbox (url), and url is not set: the "
                "embedded sandbox takes no key; set url or leave api_key out"
            )
        embedded = [k for k in ("python_executable", "allow_unisolated") if getattr(self, k)]
        if self.url is not None and embedded:
            raise ValueError(
                f"{embedded[0]} is a setting of the embedded sandbox, and url names a remote "
                "one, which runs code as it is set up to: leave it out"
            )
        return self


class RayOptions(_Section):
    """Where reward.backend=ray runs its scoring actors and model replicas (docs/ray.md)."""

    address: str | None = None
    """The cluster to join ('auto', 'host:6379', 'ray://host:10001'); null: RAY_ADDRESS,
    else a cluster started with `ray start` on this machine, else a new local Ray."""
    num_cpus_per_worker: float = Field(default=1.0, gt=0)
    """CPUs Ray reserves for each scoring actor (fractions allowed, e.g. 0.5)."""
    max_outstanding_per_worker: int = Field(default=16, ge=1)
    """Tasks sent ahead to one actor: one running, the rest queued there so it never idles
    waiting for the driver. More hides more latency but queues work behind slow tasks."""
    max_tasks_per_call: int = Field(default=8, ge=1)
    """Tasks the driver sends to one actor in one remote call, at most: the tasks waiting
    when an actor has room go together (each keeps its own timeout and its own answer),
    so the driver pays Ray's cost per call, not per task. 1: a call per task."""
    start_timeout_s: float = Field(default=120.0, gt=0)
    """How long actors (and model replicas loading weights) may take to become ready."""
    unavailable_timeout_s: float = Field(default=60.0, gt=0)
    """With no live actor (every node that could hold one gone), how long rows wait for one
    to be placed again before they fail at once and RewardLoop.score raises PoolUnavailable.
    Counted from when the last actor was lost, not per row; refilling goes on meanwhile."""
    replica_num_cpus: float = Field(default=1.0, ge=0)
    """CPUs Ray reserves for each reward-model replica (a local copy, or a launched
    server's actor: ``reward_model.rollout.name``)."""
    replica_num_gpus: float | None = Field(default=None, ge=0)
    """GPUs per reward-model replica; null: a launched vllm or sglang server takes
    ``rollout.tensor_model_parallel_size``, a ``transformers`` one none on ``device: cpu``;
    otherwise 1 when the cluster has GPUs, else 0."""
    object_store_memory_mb: int | None = Field(default=None, ge=80)
    """Object store size of a local Ray that rewardkit starts itself; null: Ray's default."""
    runtime_env: dict[str, Any] = Field(default_factory=dict)
    """Ray's runtime_env for every actor (e.g. py_modules, env_vars): how a custom reward
    function module reaches nodes that do not share this machine's files (docs/ray.md)."""


class RewardSection(_Section):
    num_workers: int | None = Field(default=None, ge=1, le=MAX_WORKERS)
    """Scoring processes (local) or actors (ray); null: the number of cores."""
    default_data_source: str | None = None
    backend: Literal["local", "ray"] = "local"
    timeout_s: float = Field(default=10.0, gt=0)
    """Hard wall-clock limit per row for CPU scorers: past it the worker is killed."""
    async_timeout_s: float = Field(default=300.0, gt=0)
    """Guard for scorers that wait on servers (sandbox, reward models, async user functions).
    A code row's clock counts its runs only: its wait for a sandbox slot is bounded by
    ``sandbox_fusion.queue_timeout_s`` instead."""
    max_response_chars: int = Field(default=4_000_000, gt=0)
    """Rows with a longer response are 'invalid' before any parsing."""
    cache_size: int = Field(default=100_000, ge=0)
    """LRU entries of (verifier, ground truth, answer) -> verdict kept across batches."""
    worker_memory_mb: int | None = Field(default=None, ge=64)
    """Address-space limit of each scoring process; null: none."""
    spare_workers: int | None = Field(default=None, ge=0, le=MAX_WORKERS)
    """Extra scoring processes the local pool may fork while workers are stuck in a task
    past a second and other rows wait (each goes once nothing waits); null: as many as
    ``num_workers``; 0: never more processes than ``num_workers``. The Ray backend has
    none (its actors' CPUs are reserved)."""
    rule_weight: float = Field(default=1.0, allow_inf_nan=False)
    """Weights (this, format_reward.weight, reward_model.weight) may be 0 or negative,
    never NaN or infinite: those would make every row's score NaN."""
    rollout_reward_weight: float = Field(default=1.0, allow_inf_nan=False)
    """Weight of the rewards tools gave during an agent's rollout (``extra_info``'s
    ``rollout_reward_scores`` and ``tool_rewards``, as verl's agent loop fills them): each
    is a component ``tool/<name>`` (``tool/steps`` for the unnamed step rewards) summed
    into the score with this weight; 0 keeps them as components only."""
    score_scale: Literal["verl", "unit"] = "verl"
    """verl: each data source on verl's scale (math_dapo, math_dapo_reasoning, math, aime*:
    +1 right, -1 wrong); unit: every rule verifier scores from 0 (wrong) to 1 (right)."""
    aggregation: Literal["weighted_sum", "normalize_then_sum"] = "weighted_sum"
    """How a row's components become its score. weighted_sum: Σ weight·component;
    normalize_then_sum (GDPO; TRL's ``multi_objective_aggregation``): each component
    standardised within its prompt group first (``reward.group_norm``). Needs whole
    groups: batch entry points only (README, "Several rewards")."""
    scale_rewards: Literal["group", "batch", "none"] | None = None
    """null: the score is the reward (the trainer computes advantages). group | batch |
    none: the score is the advantage TRL's GRPOTrainer computes with this
    ``scale_rewards`` (whole groups needed, as for normalize_then_sum)."""
    group_norm: Literal["trl", "verl"] = "trl"
    """The per-group standardisation of normalize_then_sum. trl: (x - mean) / (std + 1e-4),
    a group with one scored row gives 0; verl (``compute_grpo_outcome_advantage``):
    (x - mean) / (std + 1e-6), a group of one gives x / (1 + 1e-6). Both: sample std
    (Bessel's correction); failed rows are left out."""
    on_failure: Literal["raise", "fill", "drop"] | None = None
    """What a trainer adapter does with a row that failed to score: raise (stop with the
    reason), fill (``fill_score``, status kept in the logs), drop (no reward: TRL's None;
    refused by the verl and OpenRLHF adapters, which have no per-row way to drop). null:
    each adapter's default (verl, OpenRLHF: raise; TRL: drop). An adapter's own
    ``on_failure`` argument wins."""
    fill_score: float = Field(default=0.0, allow_inf_nan=False)
    """The reward of a failed row under ``on_failure: fill``."""
    custom_reward_function: CustomRewardFunctionConfig = CustomRewardFunctionConfig()
    reward_kwargs: dict[str, Any] = Field(default_factory=dict)
    """Keyword arguments for the custom function (verl's legacy place; see
    custom_reward_function.reward_kwargs)."""
    _kwargs_not_row = field_validator("reward_kwargs")(_no_row_arguments)
    reward_manager: RewardManagerConfig = RewardManagerConfig()
    overlong_buffer: OverlongBufferConfig = OverlongBufferConfig()
    format_reward: FormatRewardConfig = FormatRewardConfig()
    verifiers: VerifierOptions = VerifierOptions()
    reward_model: RewardModelConfig = RewardModelConfig()
    """The one reward model of verl's layout: component ``rm`` (``judge`` when generative)."""
    reward_models: dict[str, RewardModelConfig] = Field(default_factory=dict)
    """Several reward models at once, by name (``{helpful: {...}, safety: {...}}``): each a
    ``reward_model`` section, enabled unless it says ``enable: false``, scored as component
    ``rm/<name>`` with its own ``weight``. It may sit beside ``reward_model``."""
    sandbox_fusion: SandboxFusionConfig = SandboxFusionConfig()
    ray: RayOptions = RayOptions()
    """Actors and replicas on a Ray cluster (reward.backend=ray, reward_model.replicas)."""

    @field_validator("reward_models", mode="before")
    @classmethod
    def _named_models_are_on(cls, value: Any) -> Any:
        """A named section is enabled unless it says otherwise; its name must be plain."""
        if not isinstance(value, Mapping):
            return value  # validation names the wrong type
        named = {}
        for name, section in value.items():
            if not isinstance(name, str) or not re.fullmatch(MODEL_NAME_PATTERN, name):
                raise ValueError(
                    f"{name!r} is not a model name: a letter, then up to 63 letters, digits, "
                    "'_' or '-' (it names the component rm/<name> and the dotted keys "
                    "reward.reward_models.<name>.*)"
                )
            named[name] = {"enable": True, **section} if isinstance(section, Mapping) else section
        return named

    @field_validator("reward_models")
    @classmethod
    def _no_named_group_judge(
        cls, value: dict[str, RewardModelConfig]
    ) -> dict[str, RewardModelConfig]:
        """A group judge gathers a call's rows by group: the single reward_model only."""
        for name, section in value.items():
            if section.judge.group is not None:
                raise ValueError(
                    f"{name}.judge.group: a group judge is the single reward_model's "
                    "(reward.reward_model.judge.group), not a named model's"
                )
        return value

    @model_validator(mode="after")
    def _function_keys_need_a_function(self) -> RewardSection:
        """The custom function's keys are refused when there is no function to read them
        (the built-in verifiers take no keyword arguments and are cached by the engine)."""
        fn = self.custom_reward_function
        if fn.path is not None:
            return self
        given = [f"reward_kwargs.{k}" for k in self.reward_kwargs]
        given += [f"custom_reward_function.reward_kwargs.{k}" for k in fn.reward_kwargs]
        given += ["custom_reward_function.cache"] if fn.cache else []
        if fn.name != CustomRewardFunctionConfig.model_fields["name"].default:
            given.append(f"custom_reward_function.name={fn.name!r}")
        if given:
            raise ValueError(
                f"{given[0]} is for the custom function, and custom_reward_function.path is "
                "not set (the built-in verifiers score, and they read none of it): set the "
                "path, or leave the key out"
            )
        return self

    def model_sections(self) -> list[tuple[str, RewardModelConfig]]:
        """The enabled reward-model sections with their keys: ``reward_model`` first, then
        ``reward_models.<name>`` in the order given."""
        sections = [("reward_model", self.reward_model)]
        sections += [(f"reward_models.{name}", rm) for name, rm in self.reward_models.items()]
        return [(key, rm) for key, rm in sections if rm.enable]

    @property
    def workers(self) -> int:
        """num_workers resolved against the machine."""
        return self.num_workers or usable_cores()

    @property
    def spares(self) -> int:
        """spare_workers resolved: as many as the workers unless set."""
        return self.workers if self.spare_workers is None else self.spare_workers

    @property
    def function_kwargs(self) -> dict[str, Any]:
        """What the custom function is called with: reward_kwargs, then the function's own."""
        return {**self.reward_kwargs, **self.custom_reward_function.reward_kwargs}


class ServerConfig(_Section):
    host: str = "127.0.0.1"
    port: int = Field(default=8000, ge=0, le=65535)
    api_key: str | None = None
    """Clients must send 'Authorization: Bearer <key>'; null: no auth. An empty or blank key
    (an unset environment variable) is refused, never read as "no auth"."""
    max_queue: int = Field(default=10_000, ge=1)
    max_batch_wait_ms: float = Field(default=5.0, ge=0)
    max_request_bytes: int = Field(default=64 * 1024 * 1024, gt=0)
    """A request body's size; a larger one gets 413 before it is read (chunked: when it
    passes the limit)."""
    max_body_bytes_in_flight: int = Field(default=256 * 1024 * 1024, gt=0)
    """Request bodies being received or handled, across all connections, hold at most this;
    a request that would pass it gets 503 with Retry-After before its body is read. At least
    ``max_request_bytes``."""
    body_timeout_s: float = Field(default=120.0, gt=0)
    """A request's body must arrive within this; slower clients are closed (408)."""
    body_min_bytes_per_s: int = Field(default=64 * 1024, ge=0)
    """After its first 5 s, a body arriving slower than this on average is cut (408)."""
    max_connections: int = Field(default=1000, ge=1)
    """Open client connections. Past it a new connection closes the one that has waited
    longest without a request in progress (slow headers, idle keep-alive), else gets 503."""
    header_timeout_s: float = Field(default=10.0, gt=0)
    """A request's line and headers must arrive within this; slower clients are closed (408)."""
    max_header_bytes: int = Field(default=64 * 1024, ge=1024)
    """A request's line and headers must fit in this; larger ones are refused (431)."""
    drain_timeout_s: float = Field(default=30.0, ge=0)
    """On SIGTERM: how long in-flight requests may finish before the server exits; requests
    still running then are answered 503 with the reason."""
    failed_reward: float = Field(default=0.0, allow_inf_nan=False)
    """The reward /get_reward (OpenRLHF) gives a failed row, always a number: OpenRLHF
    tensorizes every reward and crashes on null ("Could not infer dtype of NoneType"), and
    it retries an HTTP error and then swallows it at INFO, so no answer of ours can stop its
    run. The row's status is in ``extra_logs`` (``rewardkit_ok`` = 0, and
    ``rewardkit_<status>`` = 1), which OpenRLHF logs as metrics, and the server logs the
    reason at WARNING."""

    @field_validator("failed_reward", mode="before")
    @classmethod
    def _a_number(cls, value: Any) -> Any:
        if value is None:
            raise ValueError(
                "must be a number (default 0.0): OpenRLHF crashes on a null reward with "
                "torch's 'Could not infer dtype of NoneType'; a failed row's status is in "
                "extra_logs.rewardkit_ok"
            )
        return value

    @field_validator("api_key")
    @classmethod
    def _no_empty_key(cls, key: str | None) -> str | None:
        if key is not None and not key.strip():
            raise ValueError(
                "is empty (an unset environment variable?): set a key, or null for no auth"
            )
        return key

    @model_validator(mode="after")
    def _one_body_fits_the_budget(self) -> ServerConfig:
        if self.max_body_bytes_in_flight < self.max_request_bytes:
            raise ValueError(
                f"server.max_body_bytes_in_flight ({self.max_body_bytes_in_flight}) is below "
                f"server.max_request_bytes ({self.max_request_bytes}): a request of the "
                "largest size allowed could never be read; raise the first or lower the second"
            )
        return self


class KLControllerConfig(_Section):
    type: Literal["fixed", "adaptive"] = "fixed"
    kl_coef: float = Field(default=0.001, ge=0, allow_inf_nan=False)
    target_kl: float = Field(default=0.1, gt=0, allow_inf_nan=False)
    horizon: int = Field(default=10_000, gt=0)

    @model_validator(mode="after")
    def _adaptive_needs_a_start(self) -> KLControllerConfig:
        if self.type == "adaptive" and self.kl_coef == 0:
            raise ValueError(
                "kl_ctrl.type adaptive needs kl_coef > 0: beta is only ever multiplied, so "
                "from 0 it never moves and target_kl and horizon would be ignored"
            )
        return self


class AlgorithmConfig(_Section):
    use_kl_in_reward: bool = False
    """Read by the trainer, which then calls :func:`rewardkit.kl.apply_kl_penalty` (verl
    reads its own flag). ``rewardkit score`` and ``serve`` refuse true: they return scores
    before any KL penalty, since rows carry no log-probs (:func:`refuse_kl_in_reward`)."""
    kl_penalty: Literal["kl", "k1", "abs", "mse", "k2", "low_var_kl", "k3"] = "kl"
    kl_ctrl: KLControllerConfig = KLControllerConfig()


class RewardConfig(_Section):
    """The whole configuration tree."""

    reward: RewardSection = RewardSection()
    server: ServerConfig = ServerConfig()
    algorithm: AlgorithmConfig = AlgorithmConfig()

    # Cross-field rules of the reward section, one check each (run in this order; the
    # first that fails is reported). The model scorers rely on them and do not check again.

    @field_validator("reward")
    @classmethod
    def _local_model_needs_a_path(cls, reward: RewardSection) -> RewardSection:
        for key, rm in reward.model_sections():
            if rm.managed and not rm.model_path:
                raise ValueError(
                    f"{key}.rollout.name={rm.rollout.name!r} launches servers of "
                    f"{key}.model_path: set it (a local model directory)"
                )
            if rm.backend == "hf" and not rm.model_path:
                raise ValueError(f"{key}.enable with backend 'hf' needs {key}.model_path")
        return reward

    @field_validator("reward")
    @classmethod
    def _managed_fleet_on_ray_can_run(cls, reward: RewardSection) -> RewardSection:
        if reward.backend != "ray":
            return reward
        gpus, address = reward.ray.replica_num_gpus, reward.ray.address or ""
        for key, rm in reward.model_sections():
            if not rm.managed:
                continue
            tp = rm.rollout.tensor_model_parallel_size
            # A fraction of one GPU shares it (tp 1); a sharded replica needs tp whole GPUs.
            if rm.rollout.name in ("vllm", "sglang") and gpus is not None and 0 < gpus < tp > 1:
                raise ValueError(
                    f"reward.ray.replica_num_gpus={gpus:g} is fewer GPUs than "
                    f"{key}.rollout.tensor_model_parallel_size={tp} shards each replica over: "
                    f"give each replica at least {tp} (or leave it null: {tp})"
                )
            if address.startswith("ray://"):
                raise ValueError(
                    f"{key}.rollout.name={rm.rollout.name!r} with reward.ray.address={address!r}: "
                    "a Ray Client driver runs outside the cluster and cannot reach the "
                    "replicas' ports; run rewardkit on a node of the cluster (address 'auto' "
                    "or host:6379)"
                )
        return reward

    @field_validator("reward")
    @classmethod
    def _served_model_needs_a_url(cls, reward: RewardSection) -> RewardSection:
        for key, rm in reward.model_sections():
            if rm.backend != "hf" and not (rm.url or rm.urls) and not rm.managed:
                raise ValueError(f"{key}.backend '{rm.backend}' needs {key}.url (or urls)")
        return reward

    @field_validator("reward")
    @classmethod
    def _rate_limited_has_a_judge(cls, reward: RewardSection) -> RewardSection:
        if reward.reward_manager.name == "rate_limited" and not api_judges(reward):
            raise ValueError(_NO_API_JUDGE)
        return reward

    @field_validator("reward")
    @classmethod
    def _overlong_buffer_needs_its_lengths(cls, reward: RewardSection) -> RewardSection:
        ob = reward.overlong_buffer
        if ob.enable and (ob.len <= 0 or ob.max_resp_len is None):
            raise ValueError(
                "overlong_buffer.enable needs overlong_buffer.len > 0 and max_resp_len"
            )
        return reward

    @field_validator("reward")
    @classmethod
    def _scaling_that_the_aggregation_has(cls, reward: RewardSection) -> RewardSection:
        scale = reward.scale_rewards
        if reward.aggregation == "normalize_then_sum" and scale in ("group", "none"):
            raise ValueError(
                f"scale_rewards={scale!r} with aggregation normalize_then_sum: TRL's "
                "normalize_then_sum always scales the summed rewards by the batch std; use "
                "scale_rewards: batch for that advantage, or null for the summed rewards"
            )
        if reward.group_norm == "verl" and scale is not None:
            raise ValueError(
                f"scale_rewards={scale!r} with group_norm verl: verl's last step "
                "(masked_whiten over response tokens) is the trainer's own; leave "
                "scale_rewards null, or use group_norm trl for TRL's advantage"
            )
        return reward

    @field_validator("reward")
    @classmethod
    def _overlong_buffer_fits_the_length(cls, reward: RewardSection) -> RewardSection:
        ob = reward.overlong_buffer
        if ob.enable and ob.max_resp_len is not None and ob.len > ob.max_resp_len:
            raise ValueError(
                f"overlong_buffer.len ({ob.len}) must not exceed overlong_buffer.max_resp_len "
                f"({ob.max_resp_len}): the buffer is the last len tokens before the limit"
            )
        return reward


# verl's rate_limited manager (verl/experimental/reward_loop/reward_manager/limited.py)
# reads these keys from its reward section, and throttles every call of compute_score with
# them: one global limiter set per process. Here the API judge is that call.
RATE_LIMITED_KEYS = {
    "max_concurrent": "max_concurrent",
    "max_rpm": "requests_per_minute",
    "max_tpm": "tokens_per_minute",
    "estimated_tokens_per_request": "estimated_tokens_per_request",
    "timeout": "timeout_s",
}
"""verl's ``reward.<key>`` (rate_limited manager) -> the API judge's ``http.<key>``."""

_RATE_LIMITED_DEFAULTS = {"max_concurrent": 1, "timeout": 300.0}
"""verl's defaults, used where neither verl's key nor the judge's own http key is given
(estimated_tokens_per_request's 2000 only counts under max_tpm: see _rate_limited_keys)."""

_API_BACKENDS = ("openai", "vllm", "sglang")

_NO_API_JUDGE = (
    "reward_manager.name: verl's 'rate_limited' manager throttles calls to an API, and here "
    "those are a judge's: it needs a reward model with kind: generative behind a url "
    "(backend openai, vllm or sglang) under reward.reward_model or reward.reward_models, and "
    "none is enabled. Otherwise set the limits on the endpoint itself "
    "(reward.reward_model.http.max_concurrent, requests_per_minute, tokens_per_minute) and "
    "leave reward_manager.name at naive"
)


def api_judges(reward: RewardSection) -> list[str]:
    """The keys of the enabled generative reward models behind an API (rate_limited's targets)."""
    return [
        key
        for key, rm in reward.model_sections()
        if rm.kind == "generative" and rm.backend in _API_BACKENDS
    ]


def _rate_limited_keys(reward: dict[str, Any]) -> None:
    """verl's ``reward.max_concurrent``, ``max_rpm``, ``max_tpm``,
    ``estimated_tokens_per_request`` and ``timeout`` as the API judge's ``http`` options.

    verl reads them only with ``reward_manager.name: rate_limited``, and shares one set of
    limiters among all calls: so they go to the one API judge (several are refused: give
    each its own ``http`` limits), with verl's defaults (one request in flight, 300 s)
    where neither they nor the judge's own keys are given. A key given both ways with
    different values is an error.
    """
    given = {key: reward.pop(key) for key in RATE_LIMITED_KEYS if key in reward}
    manager = reward.get("reward_manager")
    name = manager.get("name") if isinstance(manager, Mapping) else None
    misplaced = [
        key for key in RATE_LIMITED_KEYS if isinstance(manager, Mapping) and key in manager
    ]
    if misplaced:
        raise ConfigError(
            f"invalid configuration:\n  reward.reward_manager.{misplaced[0]}: verl's rate_limited "
            f"manager reads it from reward.{misplaced[0]} (its reward section, beside "
            "reward_manager): write it there"
        )
    if name != "rate_limited":
        if given:
            key = next(iter(given))
            raise ConfigError(
                f"invalid configuration:\n  reward.{key}: read by verl's rate_limited manager "
                "only; set reward.reward_manager.name=rate_limited, or the judge's own "
                f"reward.reward_model.http.{RATE_LIMITED_KEYS[key]}"
            )
        return
    judges = [
        (key, section) for key, section in _raw_model_sections(reward) if _raw_api_judge(section)
    ]
    if len(judges) != 1:
        return _several_judges(judges) if judges else None  # none: refused by validation
    key, section = judges[0]
    http = dict(section.get("http") or {})
    values = {**_RATE_LIMITED_DEFAULTS, **given}
    if "max_tpm" in given:
        values.setdefault("estimated_tokens_per_request", 2000)
    for verl_key, value in values.items():
        ours = RATE_LIMITED_KEYS[verl_key]
        if ours not in http:
            http[ours] = value
        elif verl_key in given and http[ours] != value:
            raise ConfigError(
                f"invalid configuration:\n  reward.{verl_key}={value} (verl's rate_limited key) "
                f"and reward.{key}.http.{ours}={http[ours]} disagree: keep one"
            )
    section["http"] = http


def _raw_model_sections(reward: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    """The reward-model sections of a raw tree, enabled ones only, each a fresh dict put
    back in place (so a caller may edit it)."""
    found = []
    single = reward.get("reward_model")
    if isinstance(single, Mapping) and single.get("enable"):
        reward["reward_model"] = single = dict(single)
        found.append(("reward_model", single))
    named = reward.get("reward_models")
    if isinstance(named, Mapping):
        reward["reward_models"] = named = dict(named)
        for name, section in named.items():
            if isinstance(section, Mapping) and section.get("enable", True):
                named[name] = section = dict(section)
                found.append((f"reward_models.{name}", section))
    return found


def _raw_api_judge(section: Mapping[str, Any]) -> bool:
    return section.get("kind") == "generative" and section.get("backend") in _API_BACKENDS


def _several_judges(judges: list[tuple[str, dict[str, Any]]]) -> None:
    keys = ", ".join(f"reward.{key}" for key, _ in judges)
    raise ConfigError(
        "invalid configuration:\n  reward.reward_manager.name: verl's rate_limited limits "
        f"are one set shared by every call, and {len(judges)} API judges are enabled ({keys}); "
        "give each judge its own limits (reward.<judge>.http.max_concurrent, "
        "requests_per_minute, tokens_per_minute, estimated_tokens_per_request, timeout_s) "
        "and leave reward_manager.name at naive"
    )


ConfigSource = RewardConfig | Mapping[str, Any] | str | os.PathLike[str] | None


def check_runnable(config: RewardConfig) -> None:
    """What a config needs on this machine before anything starts (ConfigError otherwise).

    Called where rewardkit is about to score with it (``RewardLoop``, ``serve``), so a
    mistake is one line at load instead of a failure after the workers started:

    * a local model directory (``reward_model.model_path`` for backend hf, or as a remote
      model's tokenizer, ``input_tokenizer``, ``overlong_buffer.tokenizer``) that does not
      exist or is empty (an unfinished download: transformers would blame sentencepiece);
    * ``reward_model.url`` = ``verl://router`` outside verl: only verl's reward manager
      and ``compute_score`` know the router's address, and replace it before this check.
    """
    reward = config.reward
    paths = []
    for section, rm in reward.model_sections():
        paths += [(f"reward.{section}.model_path", rm.model_path)]
        paths += [(f"reward.{section}.input_tokenizer", rm.input_tokenizer)]
    if reward.overlong_buffer.enable:
        paths += [("reward.overlong_buffer.tokenizer", reward.overlong_buffer.tokenizer)]
    for key, value in paths:
        if not value:
            continue
        path = Path(value).expanduser()
        if not path.exists():
            raise ConfigError(
                f"invalid configuration:\n  {key}: {value} is not a directory here (no such path)"
            )
        try:
            empty = path.is_dir() and not any(path.iterdir())
        except OSError as exc:
            raise ConfigError(
                f"invalid configuration:\n  {key}: cannot read {value}: {exc.strerror}"
            ) from exc
        if empty:
            raise ConfigError(
                f"invalid configuration:\n  {key}: {value} is an empty directory (an unfinished "
                "download?); it needs the model's config, tokenizer and weights"
            )
    routed = [key for key, rm in reward.model_sections() if VERL_ROUTER_URL in (rm.url, *rm.urls)]
    if routed:
        raise ConfigError(
            f"invalid configuration:\n  reward.{routed[0]}.url: {VERL_ROUTER_URL} is the address "
            "verl passes as reward_router_address, so it works only inside verl (rewardkit's "
            "compute_score or RewardkitRewardManager, with verl's reward model enabled); "
            "elsewhere give the judge server's own URL, e.g. http://HOST:PORT"
        )


def refuse_kl_in_reward(config: RewardConfig, command: str) -> None:
    """``score`` and ``serve`` cannot honour ``algorithm.use_kl_in_reward``: the KL penalty
    needs the policy's and the reference model's per-token log-probs, which rows do not
    carry. Refused by name rather than accepted and ignored."""
    if config.algorithm.use_kl_in_reward:
        raise ConfigError(
            f"algorithm.use_kl_in_reward: `rewardkit {command}` returns scores before any KL "
            "penalty (rows carry no log-probs); apply rewardkit.kl.apply_kl_penalty in the "
            "trainer and leave this false here"
        )


def load_config(source: ConfigSource = None, overrides: Iterable[str] = ()) -> RewardConfig:
    """Build a validated RewardConfig from a dict, YAML path or RewardConfig plus dotted overrides."""
    # Hydra's "+key=" (add) and "++key=" (add or override) mean "set" here: verl users
    # paste them from their command lines.
    overrides = [item.lstrip("+") for item in overrides]
    if isinstance(source, RewardConfig) and not overrides:
        return source
    _refuse_blank_secrets(overrides)
    base = _as_mapping(source)
    try:
        merged = OmegaConf.merge(OmegaConf.create(base), OmegaConf.from_dotlist(overrides))
        tree = OmegaConf.to_container(merged, resolve=True)
    except (OmegaConfBaseException, yaml.YAMLError) as exc:
        unset = _unset_env_message(exc) if isinstance(exc, OmegaConfBaseException) else None
        if unset:
            raise ConfigError(unset) from exc
        shown = [_redacted(item) for item in overrides]
        raise ConfigError(f"cannot apply overrides {shown}: {exc}") from exc
    assert isinstance(tree, dict)
    tree = _migrate_legacy(cast(dict[str, Any], tree))  # YAML and dotlist keys are strings
    try:
        return RewardConfig.model_validate(tree)
    except ValidationError as exc:
        raise ConfigError(_describe(exc)) from exc


# verl's older layout (custom_reward_function, reward_model, sandbox_fusion at the top):
# where each legacy reward_model key lives now, as verl's migrate_legacy_reward_impl moves it.
_LEGACY_REWARD_MODEL: dict[str, tuple[str, ...]] = {
    "enable": ("reward_model", "enable"),
    "num_workers": ("num_workers",),
    "reward_manager": ("reward_manager", "name"),
    "reward_kwargs": ("reward_kwargs",),
    "rollout": ("reward_model", "rollout"),
}


def _migrate_legacy(tree: dict[str, Any]) -> dict[str, Any]:
    """Move verl's top-level legacy keys under reward.*; a key set in both places is an error."""
    legacy = {k: tree.pop(k) for k in ("custom_reward_function", "sandbox_fusion") if k in tree}
    moves: list[tuple[str, tuple[str, ...], Any]] = [
        (key, (key,), value) for key, value in legacy.items() if value is not None
    ]
    old_rm = tree.pop("reward_model", None)
    if isinstance(old_rm, Mapping):
        moves.extend(_legacy_reward_model_moves(old_rm))
    elif old_rm is not None:
        raise ConfigError("reward_model: the legacy top-level section must be a mapping")
    reward = tree.setdefault("reward", {})
    if not isinstance(reward, dict):
        return tree  # validation names the wrong type
    for old, new, value in moves:
        _place(reward, old, new, value)
    _dapo_reward_kwargs(reward)
    _rate_limited_keys(reward)
    return tree


_DAPO_BUFFER_KEYS = ("enable", "len", "penalty_factor", "log")
"""What verl's DAPO manager reads from ``reward_kwargs.overlong_buffer_cfg``."""


def _dapo_reward_kwargs(reward: dict[str, Any]) -> None:
    """verl's DAPO settings in ``reward_kwargs`` (``overlong_buffer_cfg.*``, ``max_resp_len``)
    as ``reward.overlong_buffer``.

    verl 0.9.1's DAPO manager reads them from ``reward.reward_kwargs`` (older verl from
    ``reward_model.reward_kwargs``, moved there above) and never passes them to the score
    function; left in reward_kwargs they would reach the custom function, or be ignored
    by the built-in verifiers, and the penalty would silently be off. A key set both here
    and under ``reward.overlong_buffer`` with different values is an error.
    """
    kwargs = reward.get("reward_kwargs")
    if not isinstance(kwargs, dict) or not (
        "overlong_buffer_cfg" in kwargs or "max_resp_len" in kwargs
    ):
        return
    kwargs = dict(kwargs)
    cfg = kwargs.pop("overlong_buffer_cfg", None)
    max_resp_len = kwargs.pop("max_resp_len", None)
    reward["reward_kwargs"] = kwargs
    moves: list[tuple[str, str, Any]] = []
    if cfg is not None:
        if not isinstance(cfg, Mapping):
            raise ConfigError(
                "reward.reward_kwargs.overlong_buffer_cfg: must be a mapping of "
                f"{', '.join(_DAPO_BUFFER_KEYS)} (verl's DAPO settings), got {cfg!r}"
            )
        unknown = sorted(set(cfg) - set(_DAPO_BUFFER_KEYS))
        if unknown:
            raise ConfigError(
                f"reward.reward_kwargs.overlong_buffer_cfg.{unknown[0]}: not one of verl's DAPO "
                f"settings ({', '.join(_DAPO_BUFFER_KEYS)})"
            )
        moves += [(f"overlong_buffer_cfg.{k}", k, cfg[k]) for k in _DAPO_BUFFER_KEYS if k in cfg]
    if max_resp_len is not None:
        moves.append(("max_resp_len", "max_resp_len", max_resp_len))
    for old, key, value in moves:
        _place(reward, f"reward.reward_kwargs.{old}", ("overlong_buffer", key), value)


def _legacy_reward_model_moves(old: Mapping[str, Any]) -> list[tuple[str, tuple[str, ...], Any]]:
    moves: list[tuple[str, tuple[str, ...], Any]] = []
    for key, value in old.items():
        if value is None:
            continue
        if key == "model" and isinstance(value, Mapping):
            unknown = sorted(set(value) - {"path"})
            if unknown:
                raise ConfigError(
                    f"reward_model.model.{unknown[0]}: not used by rewardkit; the reward model is "
                    "reward.reward_model.model_path plus the keys in docs/models.md"
                )
            if value.get("path") is not None:
                moves.append(
                    ("reward_model.model.path", ("reward_model", "model_path"), value["path"])
                )
        elif key in _LEGACY_REWARD_MODEL:
            moves.append((f"reward_model.{key}", _LEGACY_REWARD_MODEL[key], value))
        else:
            raise ConfigError(
                f"reward_model.{key}: a legacy verl key rewardkit does not use; put reward-model "
                "settings under reward.reward_model (docs/models.md)"
            )
    return moves


def _place(reward: dict[str, Any], old: str, path: tuple[str, ...], value: Any) -> None:
    node = reward
    for part in path[:-1]:
        node = node.setdefault(part, {})
        if not isinstance(node, dict):
            return  # validation names the wrong type
    last = path[-1]
    if last in node and node[last] != value:
        raise ConfigError(
            f"{old} (verl's legacy layout) and reward.{'.'.join(path)} are both set: keep one"
        )
    node[last] = value


def _as_mapping(source: ConfigSource) -> dict[str, Any]:
    if source is None:
        return {}
    if isinstance(source, RewardConfig):
        return source.model_dump()
    if isinstance(source, Mapping):
        return dict(source)
    path = Path(source)
    try:
        loaded = yaml.safe_load(path.read_text())
    except OSError as exc:
        raise ConfigError(f"cannot read config file {path}: {exc.strerror}") from exc
    except yaml.YAMLError as exc:
        raise ConfigError(f"config file {path} is not valid YAML: {exc}") from exc
    if loaded is None:
        return {}
    if not isinstance(loaded, dict):
        raise ConfigError(f"config file {path} must hold a mapping at the top level")
    return loaded


def _describe(exc: ValidationError) -> str:
    lines = []
    for err in exc.errors():
        key = ".".join(str(part) for part in err["loc"]) or "(root)"
        if err["type"] == "extra_forbidden" and len(err["loc"]) == 1:
            lines.append(f"{key}: unknown key{_did_you_mean_section(str(err['loc'][0]))}")
        elif err["type"] == "extra_forbidden":
            lines.append(f"{key}: unknown key{_did_you_mean(err['loc'])}")
        elif _is_secret(key):  # a key, even a mistyped one, is never printed
            lines.append(f"{key}: {err['msg']} (value hidden)")
        else:
            got = err.get("input")
            shown = "" if isinstance(got, Mapping) else f" (got {got!r})"  # a section: too long
            lines.append(f"{key}: {err['msg']}{shown}")
    return "invalid configuration:\n  " + "\n  ".join(lines)


def _did_you_mean(loc: tuple[Any, ...]) -> str:
    """`` (did you mean 'x'?)`` for an unknown key close to a field of its section."""
    section: Any = RewardConfig
    parts = iter(loc[:-1])
    for part in parts:
        is_model = isinstance(section, type) and issubclass(section, BaseModel)
        fields = section.model_fields if is_model else {}
        field = fields.get(str(part))
        annotation = typing.get_origin(field.annotation) or field.annotation if field else None
        if annotation is dict and field is not None:  # reward_models.<name>: its value type
            annotation = typing.get_args(field.annotation)[1]
            next(parts, None)
        if not (isinstance(annotation, type) and issubclass(annotation, BaseModel)):
            return ""
        section = annotation
    close = difflib.get_close_matches(str(loc[-1]), list(section.model_fields), n=1, cutoff=0.6)
    return f" (did you mean {close[0]!r}?)" if close else ""


def _did_you_mean_section(key: str) -> str:
    """`` (did you mean 'reward.num_workers'?)`` for a top-level key that belongs to a section
    (``num_workers=2`` given as an override, without its ``reward.`` prefix)."""
    dotted = [
        f"{name}.{field}"
        for name, info in RewardConfig.model_fields.items()
        for field in cast(type[BaseModel], info.annotation).model_fields
    ]
    exact = [d for d in dotted if d.split(".", 1)[1] == key]
    close = exact or difflib.get_close_matches(
        key, [d.split(".", 1)[1] for d in dotted], n=1, cutoff=0.8
    )
    if close and not exact:
        exact = [d for d in dotted if d.split(".", 1)[1] == close[0]]
    if exact:
        return f" (did you mean {exact[0]!r}? keys live under reward., server. or algorithm.)"
    close = difflib.get_close_matches(key, list(RewardConfig.model_fields), n=1, cutoff=0.6)
    return f" (did you mean {close[0]!r}?)" if close else ""


_SECRET_NAMES = ("api_key",)


def _is_secret(dotted: str) -> bool:
    return dotted.rsplit(".", 1)[-1].lower() in _SECRET_NAMES


def _refuse_blank_secrets(overrides: list[str]) -> None:
    """``server.api_key=$KEY`` with KEY unset reads as null (no auth): refuse it instead."""
    for item in overrides:
        name, sep, value = item.partition("=")
        if sep and _is_secret(name.strip()) and not value.strip():
            raise ConfigError(
                f"{name.strip()}: is empty (an unset environment variable?): "
                "set a key, or leave the override out for no auth"
            )


def _redacted(override: str) -> str:
    """``server.api_key=abc`` as ``server.api_key=***``: overrides are echoed in errors."""
    name, sep, _ = override.partition("=")
    return f"{name}=***" if sep and _is_secret(name.strip()) else override


# ---------------------------------------------------------------------- load-time checks
# Each of these mistakes passes type validation and then fails every row with the
# same remote error; caught here, it is one message naming the key before any work.


def _unset_env_message(exc: OmegaConfBaseException) -> str | None:
    """'reward.x.api_key: environment variable NAME is not set' for an unset ${oc.env:NAME}."""
    found = re.search(r"Environment variable '([^']+)' not found", str(exc))
    if found is None:
        return None
    key = getattr(exc, "full_key", None) or "(a key)"
    name = found.group(1)
    return (
        f"invalid configuration:\n  {key}: environment variable {name} is not set "
        f"(the value is ${{oc.env:{name}}}); export it, or give a default: ${{oc.env:{name},default}}"
    )
