"""guards: the README shows the integration example files verbatim (other tests run those files)."""

from __future__ import annotations

import importlib
import re
from pathlib import Path

import httpx

ROOT = Path(__file__).parents[2]
DOC = ROOT / "README.md"
EMBED = re.compile(r"<!-- file: (?P<path>[^ ]+) -->\n```\w+\n(?P<body>.*?)```\n", re.DOTALL)


def test_doc_has_the_three_sections():
    headings = [
        h
        for h in re.findall(r"^## (.+)$", DOC.read_text(), re.MULTILINE)
        if h.startswith("Use with")
    ]
    assert headings == ["Use with verl", "Use with TRL", "Use with OpenRLHF"]


def test_embedded_snippets_are_the_tested_example_files():
    embedded = {m["path"]: m["body"] for m in EMBED.finditer(DOC.read_text())}
    assert sorted(embedded) == [
        "examples/integrations/openrlhf_reward.py",
        "examples/integrations/reward.yaml",
        "examples/integrations/trl_grpo.py",
        "examples/integrations/verl_reward.py",
    ]
    for path, body in embedded.items():
        assert body == (ROOT / path).read_text(), f"{path} and its copy in {DOC.name} differ"


def test_names_the_doc_gives_to_verl_exist():
    pattern = r"pkg://([\w.]+) \\\n\s+reward\.custom_reward_function\.name=(\w+)"
    found = re.findall(pattern, DOC.read_text())
    assert found == [("rewardkit.integrations.verl", "compute_score_async")]
    for module, name in found:
        assert callable(getattr(importlib.import_module(module), name))


def test_openrlhf_remote_url_route_answers_what_openrlhf_reads(rk_config):
    """The documented `rewardkit serve` + `--remote_rm_url .../get_reward` path, on loopback."""
    from _support.serving import running_server
    from rewardkit.config import load_config

    config = load_config(ROOT / "examples" / "integrations" / "reward.yaml")
    prompt = "<|im_start|>user\nWhat is 36 + 36?<|im_end|>\n<|im_start|>assistant\n"
    with running_server(config) as base:
        # OpenRLHF posts one rollout per request: {"query", "prompts", "labels"}
        answer = httpx.post(
            f"{base}/get_reward",
            json={"query": [prompt + "#### 72<|im_end|>"], "prompts": [prompt], "labels": ["72"]},
            timeout=30,
        ).json()
    assert answer["rewards"] == [1.0] and answer["scores"] == [1.0]
