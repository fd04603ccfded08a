"""guards: mistakes that would fail every row, or fail after the workers start, are refused at load."""

from __future__ import annotations

import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from rewardkit.config import load_config
from rewardkit.custom import load_function
from rewardkit.errors import ConfigError
from rewardkit.integrations._backend import ENV_URL, get_backend
from rewardkit.integrations.openrlhf import make_reward_func
from rewardkit.integrations.trl import reward_func as trl_reward_func
from rewardkit.integrations.verl import RewardkitRewardManager, compute_score
from rewardkit.loop import RewardLoop

ROW = '{"data_source": "openai/gsm8k", "response": "#### 72", "ground_truth": "72"}\n'


def rewardkit(
    *argv: str, cwd: Path, timeout: float = 60, python: tuple[str, ...] = ()
) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, *python, "-m", "rewardkit.cli", *argv]
    return subprocess.run(command, capture_output=True, text=True, cwd=cwd, timeout=timeout)


# What loading a model imports: a refusal "at once" imports neither
_LOADS_A_MODEL = ("torch", "transformers")


def _imported(stderr: str) -> set[str]:
    """The modules ``python -X importtime`` reports imported."""
    return {
        line.rpartition("|")[2].strip()
        for line in stderr.splitlines()
        if line.startswith("import time:")
    }


@pytest.mark.parametrize("command", ["score", "serve"])
@pytest.mark.parametrize("folder", ["missing", "empty"])
def test_a_missing_or_empty_model_folder_exits_2_at_once(
    tmp_path: Path, command: str, folder: str
) -> None:
    (tmp_path / "in.jsonl").write_text(ROW)
    (tmp_path / "empty").mkdir()
    argv = ["in.jsonl", "-o", "out.jsonl"] if command == "score" else ["--port", "0"]
    started = time.monotonic()
    done = rewardkit(
        command,
        *argv,
        "reward.reward_model.enable=true",
        f"reward.reward_model.model_path={tmp_path / folder}",
        cwd=tmp_path,
        python=("-X", "importtime"),
    )
    elapsed = time.monotonic() - started
    assert done.returncode == 2, done.stderr[-2000:]
    assert "reward.reward_model.model_path" in done.stderr
    why = "no such path" if folder == "missing" else "is an empty directory"
    assert why in done.stderr and "Traceback" not in done.stderr
    # refused before any model is loaded: nothing a model needs was imported (a wall-time
    # bound failed on a loaded machine, where the interpreter's start alone took 3 s; that
    # no worker starts first is test_the_model_folder_check_runs_before_any_worker's)
    imported = _imported(done.stderr)
    assert "rewardkit.config" in imported  # the report is there to read
    assert not imported & set(_LOADS_A_MODEL), imported & set(_LOADS_A_MODEL)
    assert elapsed < 30  # and it did not hang
    assert not (tmp_path / "out.jsonl").exists()


def test_the_model_folder_check_runs_before_any_worker(tmp_path: Path) -> None:
    config = {"reward": {"reward_model": {"enable": True, "model_path": str(tmp_path / "x")}}}
    started = time.monotonic()
    with pytest.raises(ConfigError, match=r"model_path: .*no such path"):
        RewardLoop(config)  # refused in the constructor: start() is never reached
    assert time.monotonic() - started < 3
    (tmp_path / "x").mkdir()
    with pytest.raises(ConfigError, match="empty directory"):
        make_reward_func(config)
    with pytest.raises(ConfigError, match="empty directory"):
        trl_reward_func(config)


JUDGE = {"enable": True, "kind": "generative", "backend": "openai", "url": "verl://router"}


def test_verl_router_outside_verl_is_refused_at_load(tmp_path: Path) -> None:
    config = {"reward": {"reward_model": JUDGE}}
    for build in (RewardLoop, make_reward_func, trl_reward_func):
        with pytest.raises(ConfigError, match=r"verl://router .*only inside verl"):
            build(config)
    with pytest.raises(ConfigError, match=r"verl://router"):
        RewardkitRewardManager(tokenizer=None, rewardkit_config=config)
    done = rewardkit("serve", "--port", "0", *[f"reward.reward_model.{k}={v}" for k, v in JUDGE.items()], cwd=tmp_path)  # fmt: skip
    assert done.returncode == 2 and "verl://router" in done.stderr


def test_a_rewardkit_url_without_a_scheme_is_refused_at_load(monkeypatch) -> None:
    with pytest.raises(
        ConfigError, match=r"rewardkit_url='localhost:8000'.*'http://localhost:8000'"
    ):
        RewardkitRewardManager(tokenizer=None, rewardkit_url="localhost:8000")
    with pytest.raises(ConfigError, match=r"needs a scheme and a host"):
        compute_score("openai/gsm8k", "#### 72", "72", rewardkit_url="localhost:8000")
    with pytest.raises(ConfigError, match=r"url='host:8000'"):
        make_reward_func(url="host:8000")
    with pytest.raises(ConfigError, match=r"url='host:8000'"):
        trl_reward_func(url="host:8000")
    monkeypatch.setenv(ENV_URL, "127.0.0.1:8000")
    with pytest.raises(ConfigError, match=r"\$REWARDKIT_URL='127.0.0.1:8000'"):
        get_backend()


@pytest.mark.parametrize(
    ("override", "meant"),
    [
        ("num_workers=2", "reward.num_workers"),
        ("timeout_s=5", "reward.timeout_s"),
        ("port=9000", "server.port"),
        ("default_datasource=x", "reward.default_data_source"),
    ],
)
def test_an_unprefixed_key_gets_its_section(override: str, meant: str) -> None:
    with pytest.raises(ConfigError, match=rf"did you mean '{meant}'\?"):
        load_config(None, [override])


def test_an_unprefixed_key_on_the_command_line(tmp_path: Path) -> None:
    (tmp_path / "in.jsonl").write_text(ROW)
    done = rewardkit("score", "in.jsonl", "-o", "out.jsonl", "num_workers=2", cwd=tmp_path)
    assert done.returncode == 2 and "did you mean 'reward.num_workers'?" in done.stderr


def test_a_misspelt_custom_function_gets_the_closest_name(tmp_path: Path) -> None:
    module = tmp_path / "my_reward.py"
    module.write_text("def compute_score(*a, **k):\n    return 1.0\n\nHELPER = 3\n")
    with pytest.raises(
        ConfigError, match=r"no callable named 'compute_scroe' \(did you mean 'compute_score'\?\)"
    ):
        load_function(str(module), "compute_scroe")
    with pytest.raises(ConfigError, match=r"named 'unrelated'$"):
        load_function(str(module), "unrelated")


def test_serve_on_a_port_in_use_exits_2_with_one_line(tmp_path: Path) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        done = rewardkit("serve", "--port", str(port), cwd=tmp_path)
    assert done.returncode == 2
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "server.port" in lines[0] and "already in use" in lines[0]
    assert "rewardkit serve on" not in done.stderr  # nothing announced before the bind
