"""guards: the verl adapter (rewardkit.integrations.verl) against verl's interfaces.

A DataProto-shaped batch here. verl is not installed in the main environment;
tests/compat runs the same adapter inside verl's own code paths and managers (.ci/run's
compatibility job).
"""

from __future__ import annotations

import ast
import asyncio
import functools
import importlib.util
import math
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import torch

from rewardkit.errors import ConfigError, ScorerError
from rewardkit.integrations.verl import RewardkitRewardManager, compute_score, compute_score_async

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples" / "integrations"
PROMPT_WIDTH, RESPONSE_WIDTH = 6, 5


@dataclass
class FakeDataProto:
    """The parts of verl's DataProto a reward manager reads."""

    batch: dict[str, torch.Tensor]
    non_tensor_batch: dict[str, np.ndarray]
    meta_info: dict[str, Any] = field(default_factory=dict)

    def __len__(self) -> int:
        return self.batch["responses"].shape[0]


def make_batch(tokenizer: Any, rows: list[tuple[str, str, str, Any]]) -> FakeDataProto:
    """verl's layout: prompts left-padded to PROMPT_WIDTH, responses right-padded to RESPONSE_WIDTH.

    ``rows`` are ``(data_source, prompt, response, ground_truth)``.
    """
    pad = tokenizer.pad_token_id
    prompts, responses, masks = [], [], []
    for _, prompt, response, _ in rows:
        p = tokenizer(prompt, add_special_tokens=False)["input_ids"]
        r = tokenizer(response, add_special_tokens=False)["input_ids"] + [tokenizer.eos_token_id]
        prompts.append([pad] * (PROMPT_WIDTH - len(p)) + p)
        responses.append(r + [pad] * (RESPONSE_WIDTH - len(r)))
        masks.append(
            [0] * (PROMPT_WIDTH - len(p))
            + [1] * (len(p) + len(r))
            + [0] * (RESPONSE_WIDTH - len(r))
        )
    objects = functools.partial(np.array, dtype=object)
    return FakeDataProto(
        batch={
            "prompts": torch.tensor(prompts),  # [B, P]
            "responses": torch.tensor(responses),  # [B, R]
            "attention_mask": torch.tensor(masks),  # [B, P + R]
        },
        non_tensor_batch={
            "data_source": objects([source for source, *_ in rows]),
            "reward_model": objects([{"ground_truth": gt, "style": "rule"} for *_, gt in rows]),
            "extra_info": objects(
                [{"index": np.int64(i), "split": "train"} for i in range(len(rows))]
            ),
        },
    )


GOOD_ROWS = [
    ("openai/gsm8k", "what is 36 + 36 ?", "so #### 72", "72"),  # 3 tokens + eos
    ("openai/gsm8k", "36 + 36 ?", "#### 7", "72"),  # 2 tokens + eos
    ("openai/gsm8k", "what is the answer ?", "the answer #### 72", np.str_("72")),  # 4 + eos
]


@pytest.fixture
def manager(tiny_tokenizer, rk_config) -> RewardkitRewardManager:
    return RewardkitRewardManager(
        tokenizer=tiny_tokenizer, num_examine=0, rewardkit_config=rk_config
    )


def test_manager_scores_the_batch_like_verls_legacy_interface(manager, tiny_tokenizer):
    data = make_batch(tiny_tokenizer, GOOD_ROWS)
    out = manager(data, return_dict=True)
    expected = torch.zeros(3, RESPONSE_WIDTH)
    expected[0, 3], expected[2, 4] = 1.0, 1.0  # on the eos, the last valid token
    assert torch.equal(out["reward_tensor"], expected)
    info = out["reward_extra_info"]
    assert info["score"] == [1.0, 0.0, 1.0]
    assert info["status"] == ["ok", "ok", "ok"]
    assert info["error"] == ["", "", ""]
    assert info["acc"] == [True, False, True]
    assert info["pred"] == ["72", "7", "72"]
    assert info["component/rule"] == [1.0, 0.0, 1.0]
    assert all(len(values) == 3 for values in info.values())
    assert torch.equal(manager(data), expected)  # return_dict=False: the tensor alone


def test_rows_decode_the_valid_tokens_and_carry_exact_lengths(manager, tiny_tokenizer):
    rows, mask = manager._rows(make_batch(tiny_tokenizer, GOOD_ROWS))
    assert [r["prompt"] for r in rows] == ["what is 36 + 36 ?", "36 + 36 ?", "what is the answer ?"]
    assert [r["response"] for r in rows] == ["so #### 72", "#### 7", "the answer #### 72"]
    assert [r["extra_info"] for r in rows] == [
        {"index": i, "split": "train", "response_length": n} for i, n in enumerate([4, 3, 5])
    ]
    assert mask.sum(dim=-1).tolist() == [4, 3, 5]


def test_failed_rows_raise_by_default_naming_them(manager, tiny_tokenizer):
    rows = [*GOOD_ROWS, ("no/such-source", "36 + 36 ?", "#### 72", "72")]
    with pytest.raises(
        ScorerError,
        match=r"1 of 4 rows failed to score \(invalid: 1\); first: row 3 \[no/such-source\]",
    ):
        manager(make_batch(tiny_tokenizer, rows), return_dict=True)


def test_fill_is_an_explicit_opt_in_and_keeps_the_status(tiny_tokenizer, rk_config):
    manager = RewardkitRewardManager(
        tokenizer=tiny_tokenizer, rewardkit_config=rk_config, on_failure="fill", fill_score=-1.0
    )
    rows = [GOOD_ROWS[0], ("no/such-source", "36 + 36 ?", "#### 72", "72")]
    out = manager(make_batch(tiny_tokenizer, rows), return_dict=True)
    assert out["reward_tensor"][1].tolist() == [0.0, 0.0, -1.0, 0.0, 0.0]
    info = out["reward_extra_info"]
    assert info["score"] == [1.0, -1.0]
    assert info["status"] == ["ok", "invalid"]
    assert "no/such-source" in info["error"][1]
    assert info["pred"] == ["72", ""]  # text keys fill with "", so verl's metrics skip them
    assert info["acc"][0] is True and math.isnan(info["acc"][1])  # numbers fill with NaN


def test_reward_loop_interface_run_single_and_assemble(manager, tiny_tokenizer):
    data = make_batch(tiny_tokenizer, GOOD_ROWS)
    single = [_slice(data, i) for i in range(3)]
    outputs = [asyncio.run(manager.run_single(item)) for item in single]
    assert [o["reward_score"] for o in outputs] == [1.0, 0.0, 1.0]
    assert outputs[1]["reward_extra_info"] == {
        "score": 0.0,
        "status": "ok",
        "error": "",
        "rewardkit_ok": 1.0,
        "acc": False,
        "pred": "7",
        "component/rule": 0.0,  # the config's components, unweighted: numbers verl keeps
    }
    tensor = RewardkitRewardManager.assemble_rm_scores(data, [o["reward_score"] for o in outputs])
    assert torch.equal(tensor, manager(data))


def _slice(data: FakeDataProto, i: int) -> FakeDataProto:
    return FakeDataProto(
        batch={k: v[i : i + 1] for k, v in data.batch.items()},
        non_tensor_batch={k: v[i : i + 1] for k, v in data.non_tensor_batch.items()},
    )


def test_manager_constructor_takes_both_verl_generations(tiny_tokenizer, rk_config):
    legacy = RewardkitRewardManager(
        tokenizer=tiny_tokenizer,
        num_examine=1,
        compute_score=print,
        reward_fn_key="source",
        rewardkit_config=rk_config,
    )
    assert legacy.reward_fn_key == "source"
    RewardkitRewardManager(
        config={"reward": {}},
        tokenizer=tiny_tokenizer,
        compute_score=None,
        reward_router_address=None,
        reward_model_tokenizer=None,
    )
    with pytest.raises(TypeError, match=r"unexpected keyword arguments \['on_faliure'\]"):
        RewardkitRewardManager(tokenizer=tiny_tokenizer, on_faliure="fill")
    with pytest.raises(ConfigError, match="on_failure must be 'raise', 'fill' or 'drop'"):
        RewardkitRewardManager(tokenizer=tiny_tokenizer, on_failure="zero")


def test_num_examine_prints_rows(tiny_tokenizer, rk_config, capsys):
    manager = RewardkitRewardManager(
        tokenizer=tiny_tokenizer, num_examine=1, rewardkit_config=rk_config
    )
    manager(make_batch(tiny_tokenizer, GOOD_ROWS))
    printed = capsys.readouterr().out
    assert printed.count("[response]") == 1 and "[status] ok" in printed


def test_compute_score_has_verls_signature(rk_config):
    out = compute_score(
        "openai/gsm8k", "#### 72", "72", {"split": "train"}, rewardkit_config=rk_config
    )
    assert out["score"] == 1.0 and out["status"] == "ok" and out["error"] == ""
    assert out["acc"] is True and out["pred"] == "72"
    assert sorted(out) == [
        "acc",
        "component/rule",
        "error",
        "pred",
        "rewardkit_ok",
        "score",
        "status",
    ]
    # the kwargs verl's reward loop adds are accepted
    out = compute_score(
        data_source="openai/gsm8k",
        solution_str="#### 7",
        ground_truth="72",
        extra_info=None,
        rewardkit_config=rk_config,
        reward_router_address=None,
        reward_model_tokenizer=None,
    )
    assert out["score"] == 0.0


def test_compute_score_failure_policy(rk_config):
    with pytest.raises(ScorerError, match="row 0 \\[no/such-source\\] invalid"):
        compute_score("no/such-source", "#### 72", "72", rewardkit_config=rk_config)
    out = compute_score(
        "no/such-source", "#### 72", "72", rewardkit_config=rk_config, on_failure="fill"
    )
    assert (out["score"], out["status"]) == (0.0, "invalid")
    with pytest.raises(TypeError, match=r"\['fill_value'\]"):
        compute_score("openai/gsm8k", "#### 72", "72", rewardkit_config=rk_config, fill_value=0)


def test_compute_score_async(rk_config):
    async def score_many() -> list[dict[str, Any]]:
        calls = [
            compute_score_async("openai/gsm8k", f"#### {answer}", "72", rewardkit_config=rk_config)
            for answer in ("72", "7", "72.00")
        ]
        return await asyncio.gather(*calls)

    assert [out["score"] for out in asyncio.run(score_many())] == [1.0, 0.0, 1.0]


def test_both_config_and_url_is_an_error():
    with pytest.raises(ConfigError, match="not both"):
        compute_score(
            "openai/gsm8k", "#### 72", "72", rewardkit_config={}, rewardkit_url="http://x"
        )


def _load_like_verl(path: Path) -> Any:
    """What verl's load_extern_object does with a file path."""
    spec = importlib.util.spec_from_file_location(f"custom_module_{hash(path)}", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_documented_example_file(tiny_tokenizer):
    example = _load_like_verl(EXAMPLES / "verl_reward.py")
    manager = example.RewardManager(tokenizer=tiny_tokenizer, num_examine=0, compute_score=None)
    out = manager(make_batch(tiny_tokenizer, GOOD_ROWS), return_dict=True)
    assert out["reward_extra_info"]["score"] == [1.0, 0.0, 1.0]
    assert example.compute_score("openai/gsm8k", "#### 72", "72", None)["score"] == 1.0


def test_scores_through_a_rewardkit_server(tiny_tokenizer, rk_config):
    from _support.serving import running_server

    with running_server(rk_config) as url:
        manager = RewardkitRewardManager(tokenizer=tiny_tokenizer, rewardkit_url=url)
        out = manager(make_batch(tiny_tokenizer, GOOD_ROWS), return_dict=True)
        assert out["reward_extra_info"]["score"] == [1.0, 0.0, 1.0]
        single = asyncio.run(manager.run_single(_slice(make_batch(tiny_tokenizer, GOOD_ROWS), 1)))
        assert single["reward_score"] == 0.0


def test_adapters_do_not_import_their_trainers_at_import_time():
    """No module-level import of verl, trl or openrlhf in any adapter (rewardkit installs without them)."""
    import rewardkit.integrations

    package = Path(rewardkit.integrations.__file__).parent
    for path in sorted(package.glob("*.py")):
        tree = ast.parse(path.read_text())
        for node in tree.body:  # module level only: imports inside functions run on use
            names = []
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module:
                names = [node.module]
            for name in names:
                assert name.split(".")[0] not in {"verl", "trl", "openrlhf"}, (
                    f"{path.name} imports {name}"
                )


# A batch mixing verifiers (gsm8k extras: method; math: source; search QA: answer_tags)
# and a failed row: every row must carry the same keys (verl's reward loop reads row 0's).
MIXED = [
    ("openai/gsm8k", "#### 72", "72"),
    ("math_dapo", "\\boxed{3}", "4"),
    ("searchR1_nq", "<answer>Paris</answer>", {"target": ["Paris"]}),
    ("no/such-source", "#### 72", "72"),
]


def test_every_row_reports_the_same_keys_failed_rows_included(rk_config):
    outs = [
        compute_score(src, resp, gt, None, rewardkit_config=rk_config, on_failure="fill")
        for src, resp, gt in MIXED
    ]
    assert {tuple(o) for o in outs} == {
        ("score", "status", "error", "rewardkit_ok", "acc", "pred", "component/rule")
    }
    assert [o["score"] for o in outs] == [1.0, -1.0, 1.0, 0.0]  # math_dapo: verl's -1
    assert [o["status"] for o in outs] == ["ok", "ok", "ok", "invalid"]
    assert outs[3]["pred"] == "" and math.isnan(outs[3]["acc"])
    assert math.isnan(outs[3]["component/rule"]) and outs[1]["component/rule"] == -1.0
    assert "did you mean" not in outs[3]["error"] and "no/such-source" in outs[3]["error"]


def test_batch_reward_manager_calling_convention(rk_config):
    """verl's BatchRewardManager.verify calls compute_score with plural keywords, plus reward_kwargs."""
    outs = compute_score(
        data_sources=np.array([s for s, *_ in MIXED], dtype=object),
        solution_strs=[r for _, r, _ in MIXED],
        ground_truths=[g for *_, g in MIXED],
        extra_infos=[{"rollout_reward_scores": {}} for _ in MIXED],
        rewardkit_config=rk_config,
        on_failure="fill",
    )
    assert isinstance(outs, list) and [o["score"] for o in outs] == [1.0, -1.0, 1.0, 0.0]
    keys = ("score", "status", "error", "rewardkit_ok", "acc", "pred", "component/rule")
    assert all(tuple(o) == keys for o in outs)
    with pytest.raises(ScorerError, match=r"1 of 4 rows failed"):
        compute_score(
            data_sources=[s for s, *_ in MIXED],
            solution_strs=[r for _, r, _ in MIXED],
            ground_truths=[g for *_, g in MIXED],
            extra_infos=None,
            rewardkit_config=rk_config,
        )
    with pytest.raises(ValueError, match="differ in length"):
        compute_score(data_sources=["a"], solution_strs=["x", "y"], rewardkit_config=rk_config)


def test_legacy_manager_uses_precomputed_rm_scores(manager, tiny_tokenizer):
    """As verl's naive manager: a batch holding rm_scores is returned, not scored again."""
    data = make_batch(tiny_tokenizer, [("no/such-source", "36 + 36 ?", "#### 72", "72")])
    data.batch["rm_scores"] = torch.tensor([[0.0, 0.0, 0.5, 0.0, 0.0]])
    data.non_tensor_batch["acc"] = np.array([0.5], dtype=object)
    data.meta_info["reward_extra_keys"] = ["acc"]
    out = manager(data, return_dict=True)  # the unknown source would raise if scored
    assert torch.equal(out["reward_tensor"], data.batch["rm_scores"])
    assert out["reward_extra_info"] == {"acc": [0.5]}
    assert torch.equal(manager(data), data.batch["rm_scores"])


JUDGE_CONFIG = {
    "reward": {
        "num_workers": 1,
        "reward_model": {
            "enable": True,
            "kind": "generative",
            "backend": "openai",
            "url": "verl://router",
            "model_name": "judge-7",
        },
    }
}


def test_reward_router_address_feeds_a_judge_that_asks_for_it():
    """verl passes reward_router_address when it runs reward-model servers; a rewardkit config
    whose judge url is verl://router sends its requests there (a real server on loopback)."""
    from _support.model_fakes import FakeModelServer, ServerThread

    fake = FakeModelServer()
    with ServerThread(fake.app) as base:
        address = base.removeprefix("http://")
        out = compute_score(
            "chat",
            "Paris.",
            None,
            None,
            rewardkit_config=JUDGE_CONFIG,
            reward_router_address=address,
        )
    assert out["status"] == "ok" and out["score"] == pytest.approx(0.7)
    assert [path for path, _ in fake.requests] == ["/v1/chat/completions"]


def test_a_managed_judge_inside_verl_uses_verls_router_and_launches_nothing(tiny_tokenizer_dir):
    """A rewardkit config that launches its judge (rollout.name) meets verl's router: verl
    already launched the servers, so the judge goes there and no replica is started."""
    from _support.model_fakes import FakeModelServer, ServerThread

    rm = {"enable": True, "kind": "generative", "model_path": str(tiny_tokenizer_dir), "model_name": "judge-7",
          "rollout": {"name": "vllm", "start_timeout_s": 1}}  # fmt: skip
    fake = FakeModelServer()
    with ServerThread(fake.app) as base:
        out = compute_score(
            "chat",
            "Paris.",
            None,
            None,
            rewardkit_config={"reward": {"num_workers": 1, "reward_model": rm}},
            reward_router_address=base.removeprefix("http://"),
        )
    assert out["status"] == "ok" and out["score"] == pytest.approx(0.7)
    assert [path for path, _ in fake.requests] == ["/v1/chat/completions"]


def test_reward_router_address_is_refused_when_the_config_does_not_use_it(
    rk_config, tiny_tokenizer
):
    with pytest.raises(ConfigError, match=r"reward_router_address='10.0.0.1:9'.*verl://router"):
        compute_score(
            "openai/gsm8k",
            "#### 72",
            "72",
            None,
            rewardkit_config=rk_config,
            reward_router_address="10.0.0.1:9",
        )
    manager = RewardkitRewardManager(
        tokenizer=tiny_tokenizer, rewardkit_config=rk_config, reward_router_address="10.0.0.1:9"
    )
    with pytest.raises(ConfigError, match=r"reward\.reward_model\.enable=False"):
        manager(make_batch(tiny_tokenizer, GOOD_ROWS))


# --- the adapters' exit ------------------------------------------------------------


def test_the_trainer_adapters_close_their_scorer_at_exit_without_a_warning() -> None:
    """A process that used an adapter stops its worker pool at exit, without "rewardkit:
    closing a scorer failed: cannot schedule new futures after shutdown" (atexit runs
    after concurrent.futures stops taking work)."""
    script = (
        "from rewardkit.integrations import verl\n"
        "print(verl.compute_score('openai/gsm8k', '#### 72', '72', {},\n"
        "      rewardkit_config={'reward': {'num_workers': 1}})['score'])\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=120
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "1.0"
    assert "closing a scorer failed" not in proc.stderr, proc.stderr
