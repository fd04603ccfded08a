"""guards: configuration (rewardkit.config): verl's names, overrides, validation naming the key."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from pydantic import ValidationError

from rewardkit import ConfigError, RewardConfig, load_config
from rewardkit.config import JudgeConfig


def test_defaults_match_verl_names() -> None:
    cfg = load_config()
    assert cfg.reward.reward_manager.name == "naive"
    assert cfg.reward.custom_reward_function.name == "compute_score"
    assert cfg.server.host == "127.0.0.1"
    assert cfg.algorithm.kl_ctrl.type == "fixed"
    assert cfg.reward.workers >= 1


def test_yaml_plus_dotted_overrides(tmp_path: Path) -> None:
    path = tmp_path / "reward.yaml"
    path.write_text("reward:\n  num_workers: 3\n  timeout_s: 4\n")
    cfg = load_config(path, ["reward.timeout_s=2.5", "reward.sandbox_fusion.max_concurrent=8"])
    assert (cfg.reward.num_workers, cfg.reward.timeout_s) == (3, 2.5)
    assert cfg.reward.sandbox_fusion.max_concurrent == 8


def test_every_error_is_reported_at_once_naming_its_key() -> None:
    with pytest.raises(ConfigError) as info:
        load_config(
            {"reward": {"num_wrkers": 2, "timeout_s": "soon", "reward_manager": {"name": "magic"}}}
        )
    message = str(info.value)
    assert "reward.num_wrkers: unknown key" in message
    assert "reward.timeout_s" in message
    assert "reward.reward_manager.name" in message and "naive" in message


@pytest.mark.parametrize(
    ("override", "message"),
    [
        ("reward.timeout_s=inf", "reward.timeout_s: Input should be a finite number"),
        ("reward.timeout_s=nan", "reward.timeout_s: Input should be a finite number"),
        ("reward.num_workers=true", "reward.num_workers: Input should be a number, not a boolean"),
        (
            "reward.num_workers=99999",
            "reward.num_workers: Input should be less than or equal to 4096",
        ),
        (
            "reward.spare_workers=-1",
            "reward.spare_workers: Input should be greater than or equal to 0",
        ),
        (
            "reward.spare_workers=true",
            "reward.spare_workers: Input should be a number, not a boolean",
        ),
    ],
)
def test_settings_that_switch_a_guarantee_off_are_refused(override: str, message: str) -> None:
    """A hard time limit of inf never kills a hanging row; 99999 workers keep a machine
    starting for minutes; a boolean is no count (pydantic read True as 1)."""
    with pytest.raises(ConfigError, match=re.escape(message)):
        load_config({}, [override])


def test_verifier_options_are_validated_naming_the_key() -> None:
    cfg = load_config(None, ["reward.verifiers.math.extraction=strict"])
    assert cfg.reward.verifiers.math.extraction == "strict"
    assert load_config().reward.verifiers.math.extraction == "default"
    assert load_config().reward.verifiers.gsm8k_method == "auto"
    with pytest.raises(ConfigError, match=r"reward\.verifiers\.math\.extraction.*'default'"):
        load_config({"reward": {"verifiers": {"math": {"extraction": "loose"}}}})
    with pytest.raises(ConfigError, match=r"reward\.verifiers\.gsm8k_method.*'auto'"):
        load_config({"reward": {"verifiers": {"gsm8k_method": "lenient"}}})
    with pytest.raises(ConfigError, match=r"reward\.verifiers\.math\.boxed: unknown key"):
        load_config({"reward": {"verifiers": {"math": {"boxed": True}}}})


def test_cross_field_rules_name_the_keys() -> None:
    with pytest.raises(ConfigError, match=r"reward_model\.model_path"):
        load_config({"reward": {"reward_model": {"enable": True}}})
    with pytest.raises(ConfigError, match=r"backend 'vllm' needs reward_model\.url \(or urls\)"):
        load_config({"reward": {"reward_model": {"enable": True, "backend": "vllm"}}})
    with pytest.raises(ConfigError, match="overlong_buffer"):
        load_config({"reward": {"overlong_buffer": {"enable": True}}})


@pytest.mark.parametrize(("low", "high"), [(5, 5), (10, 0)])
def test_an_empty_judge_score_range_is_refused_naming_the_keys(low: float, high: float) -> None:
    judge = {"score_min": low, "score_max": high}
    with pytest.raises(ConfigError) as caught:
        load_config({"reward": {"reward_model": {"judge": judge}}})
    (line,) = str(caught.value).splitlines()[1:]
    assert line.strip().startswith("reward.reward_model.judge:")
    assert f"judge.score_max ({high}) must be greater than judge.score_min ({low})" in line
    with pytest.raises(ValidationError, match=r"judge\.score_max"):  # built in code, too
        JudgeConfig(score_min=low, score_max=high)
    assert load_config({"reward": {"reward_model": {"judge": {"score_max": 1}}}})


def test_bad_files_get_clear_errors(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="cannot read"):
        load_config(tmp_path / "missing.yaml")
    bad = tmp_path / "bad.yaml"
    bad.write_text("reward: [unclosed\n")
    with pytest.raises(ConfigError, match="not valid YAML"):
        load_config(bad)
    scalar = tmp_path / "scalar.yaml"
    scalar.write_text("42\n")
    with pytest.raises(ConfigError, match="mapping"):
        load_config(scalar)


def test_config_is_frozen_and_reusable() -> None:
    cfg = load_config({"reward": {"num_workers": 2}})
    assert load_config(cfg) is cfg
    with pytest.raises(ValidationError):
        cfg.reward.num_workers = 3  # type: ignore[misc]
    assert isinstance(cfg, RewardConfig)


def test_the_readme_configuration_block_is_valid() -> None:
    import re

    import yaml

    readme = (Path(__file__).resolve().parents[1] / "README.md").read_text()
    block = re.search(r"```yaml\n(reward:\n  num_workers: null.*?)```", readme, re.DOTALL)
    assert block, "README lost its configuration block"
    tree = yaml.safe_load(re.sub(r", \.\.\.\}", "}", block.group(1)))  # "..." marks keys left out
    assert load_config(tree).reward.timeout_s == 10


@pytest.mark.parametrize("doc", ["docs/models.md", "docs/ray.md"])
def test_the_docs_configuration_blocks_are_valid(doc: str, monkeypatch: pytest.MonkeyPatch) -> None:
    import re

    import yaml

    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")  # the judge example reads it from the env
    text = (Path(__file__).resolve().parents[1] / doc).read_text()
    blocks = re.findall(r"```yaml\n(reward:\n.*?)```", text, re.DOTALL)
    assert blocks, f"{doc} lost its configuration blocks"
    for block in blocks:
        assert load_config(yaml.safe_load(block)).reward.model_sections()  # some model is on


# verl's reward tree, key by key: honoured (where it lands) or refused (what the message says).
def test_verl_custom_function_reward_kwargs_are_honoured() -> None:
    cfg = load_config(
        {"reward": {"reward_kwargs": {"a": 1, "b": 1}}},
        [
            "+reward.custom_reward_function.reward_kwargs.b=2",
            "++reward.timeout_s=3",
            "reward.custom_reward_function.path=pkg://rewardkit.integrations.verl",
        ],
    )
    assert cfg.reward.custom_reward_function.reward_kwargs == {"b": 2}
    assert cfg.reward.function_kwargs == {"a": 1, "b": 2}  # the function's own win
    assert cfg.reward.timeout_s == 3


@pytest.mark.parametrize(
    ("where", "key"),
    [
        ("reward.reward_kwargs", "solution_str"),
        ("reward.custom_reward_function.reward_kwargs", "extra_info"),
    ],
)
def test_reward_kwargs_may_not_shadow_a_row_argument(where: str, key: str) -> None:
    # Passed on, the key would fail every row with "got multiple values for argument".
    with pytest.raises(ConfigError, match=rf"{where}: .*'{key}' is what the function gets"):
        load_config(None, [f"+{where}.{key}=1"])


def test_verl_rollout_lengths_move_to_the_reward_model() -> None:
    rm = {
        "rollout": {"prompt_length": 512, "response_length": 256, "tensor_model_parallel_size": 1}
    }
    cfg = load_config({"reward": {"reward_model": rm}})
    assert (cfg.reward.reward_model.prompt_length, cfg.reward.reward_model.response_length) == (
        512,
        256,
    )
    with pytest.raises(ConfigError, match=r"rollout.prompt_length=512 and prompt_length=100"):
        load_config({"reward": {"reward_model": {"prompt_length": 100, **rm}}})


@pytest.mark.parametrize(
    ("rollout", "message"),
    [
        ({"gpu_memory_utilization": 0.5}, "rollout.gpu_memory_utilization is a setting of the"),
        ({"tensor_model_parallel_size": 2}, "set rollout.name"),
        # the fleet's own keys: read only by the fleet rollout.name launches
        ({"data_parallel_size": 4}, "rollout.data_parallel_size is a setting of the"),
        ({"engine_kwargs": {"vllm": {"enforce_eager": True}}}, "rollout.engine_kwargs is a"),
        ({"start_timeout_s": 5}, "rollout.start_timeout_s is a setting of the"),
        ({"log_dir": "/tmp/logs"}, "rollout.log_dir is a setting of the"),
    ],
)
def test_verl_rollout_engine_keys_without_an_engine_are_refused_saying_what_to_use(
    rollout, message
) -> None:
    rm = {"enable": True, "model_path": ".", "rollout": rollout}
    with pytest.raises(ConfigError, match=message):
        load_config({"reward": {"reward_model": rm}})
    assert load_config({"reward": {"reward_model": {"rollout": rollout}}})  # disabled: unused


def test_verls_empty_engine_kwargs_ask_nothing_without_an_engine() -> None:
    """verl's own section writes engine_kwargs as {vllm: {}, sglang: {}}: nothing to pass."""
    rollout = {"engine_kwargs": {"vllm": {}, "sglang": {}}, "data_parallel_size": 1}
    rm = {"enable": True, "model_path": ".", "rollout": rollout}
    assert load_config({"reward": {"reward_model": rm}}).reward.reward_model.enable


@pytest.mark.parametrize(
    ("reward", "named"),
    [
        ({"reward_kwargs": {"alpha": 1}}, "reward_kwargs.alpha is for the custom function"),
        (
            {"custom_reward_function": {"reward_kwargs": {"alpha": 1}}},
            "custom_reward_function.reward_kwargs.alpha is for",
        ),
        (
            {"custom_reward_function": {"name": "my_score"}},
            "custom_reward_function.name='my_score'",
        ),
        ({"custom_reward_function": {"cache": True}}, "custom_reward_function.cache is for"),
    ],
)
def test_a_custom_functions_keys_without_its_path_are_refused(reward, named) -> None:
    """The built-in verifiers read none of them: accepted, they would change nothing."""
    with pytest.raises(
        ConfigError, match=rf"{re.escape(named)}.*custom_reward_function.path is not set"
    ):
        load_config({"reward": reward})
    with_path = {"custom_reward_function": {"path": "pkg://rewardkit.integrations.verl"}}
    merged = {**reward, "custom_reward_function": {**reward.get("custom_reward_function", {}),
                                                   **with_path["custom_reward_function"]}}  # fmt: skip
    assert load_config({"reward": merged}).reward.custom_reward_function.path


@pytest.mark.parametrize(
    ("sandbox", "named"),
    [
        ({"api_key": "k"}, "api_key is sent to a remote sandbox (url), and url is not set"),
        ({"url": "http://127.0.0.1:1/run_code", "allow_unisolated": True}, "allow_unisolated is"),
        ({"url": "http://127.0.0.1:1/run_code", "python_executable": "/usr/bin/python3"},
         "python_executable is a setting of the embedded sandbox"),
    ],
)  # fmt: skip
def test_one_sandboxs_keys_with_the_other_sandbox_are_refused(sandbox, named) -> None:
    with pytest.raises(ConfigError, match=re.escape(named)):
        load_config({"reward": {"sandbox_fusion": sandbox}})


def test_verls_default_custom_function_section_loads_without_a_path() -> None:
    """verl's reward.yaml: custom_reward_function {path: null, name: compute_score}."""
    fn = {"path": None, "name": "compute_score"}
    assert load_config({"reward": {"custom_reward_function": fn}}).reward


def test_rollout_name_with_a_url_is_refused_as_two_answers() -> None:
    # rollout.name launches servers; a url names one already running: which is meant?
    rm = {
        "enable": True,
        "backend": "vllm",
        "url": "http://127.0.0.1:1",
        "rollout": {"name": "vllm"},
    }
    with pytest.raises(ConfigError, match="give one of them"):
        load_config({"reward": {"reward_model": rm}})


def test_verl_importlib_manager_source_is_refused() -> None:
    with pytest.raises(ConfigError, match=r"pkg://rewardkit.integrations.verl"):
        load_config({"reward": {"reward_manager": {"source": "importlib"}}})


def test_verl_legacy_top_level_layout_moves_under_reward() -> None:
    legacy = {
        "custom_reward_function": {"path": None, "name": "compute_score"},
        "reward_model": {
            "enable": False,
            "model": {"path": "/models/rm"},
            "reward_manager": "dapo",
            "reward_kwargs": {"max_resp_len": 8},
            "rollout": {"prompt_length": 64},
        },
        "sandbox_fusion": {"url": None, "max_concurrent": 8},
    }
    cfg = load_config(legacy)
    assert cfg.reward.reward_model.model_path == "/models/rm"
    assert cfg.reward.reward_manager.name == "dapo"
    assert cfg.reward.reward_kwargs == {}  # verl's DAPO setting, read by rewardkit itself
    assert cfg.reward.overlong_buffer.max_resp_len == 8
    assert cfg.reward.reward_model.prompt_length == 64
    assert cfg.reward.sandbox_fusion.max_concurrent == 8
    with pytest.raises(ConfigError, match=r"reward_model.strategy: a legacy verl key"):
        load_config({"reward_model": {"strategy": "fsdp"}})
    with pytest.raises(ConfigError, match="both set: keep one"):
        load_config(
            {"reward_model": {"enable": True}, "reward": {"reward_model": {"enable": False}}}
        )


@pytest.mark.parametrize(
    ("tree", "hint"),
    [
        (
            {"reward": {"num_wrkers": 2}},
            "reward.num_wrkers: unknown key (did you mean 'num_workers'?)",
        ),
        (
            {"reward": {"reward_model": {"promt_length": 2}}},
            "reward.reward_model.promt_length: unknown key (did you mean 'prompt_length'?)",
        ),
        ({"reward": {"custom_reward_function": {"cach": True}}}, "(did you mean 'cache'?)"),
    ],
)
def test_unknown_keys_suggest_the_closest_name(tree, hint) -> None:
    with pytest.raises(ConfigError) as info:
        load_config(tree)
    assert hint in str(info.value)


def test_score_scale_is_validated() -> None:
    assert load_config().reward.score_scale == "verl"
    assert load_config({"reward": {"score_scale": "unit"}}).reward.score_scale == "unit"
    with pytest.raises(ConfigError, match=r"reward.score_scale"):
        load_config({"reward": {"score_scale": "binary"}})


# Each is refused at load, naming the key. Accepted, a NaN or infinite weight makes the
# combined score NaN, which Result refuses (the whole batch would crash); an infinite
# penalty_factor or a buffer longer than max_resp_len fails every row as an "internal
# error"; an infinite kl_coef or target_kl gives NaN token rewards or a beta that only falls.
REFUSED = [
    (["reward.rule_weight=nan"], "reward.rule_weight"),
    (["reward.rule_weight=inf"], "reward.rule_weight"),
    (["reward.rule_weight=-inf"], "reward.rule_weight"),
    (["reward.format_reward.weight=nan"], "reward.format_reward.weight"),
    (["reward.reward_model.weight=inf"], "reward.reward_model.weight"),
    (["reward.overlong_buffer.penalty_factor=inf"], "reward.overlong_buffer.penalty_factor"),
    (["algorithm.kl_ctrl.kl_coef=inf"], "algorithm.kl_ctrl.kl_coef"),
    (["algorithm.kl_ctrl.kl_coef=nan"], "algorithm.kl_ctrl.kl_coef"),  # by ge=0
    (["algorithm.kl_ctrl.target_kl=inf"], "algorithm.kl_ctrl.target_kl"),
    # a think_tag that is no tag name would fail every row as an "internal error"
    (["reward.format_reward.think_tag=a b"], "reward.format_reward.think_tag"),
    (["reward.format_reward.think_tag=<think>"], "reward.format_reward.think_tag"),
    (
        [
            "reward.overlong_buffer.enable=true",
            "reward.overlong_buffer.len=200",
            "reward.overlong_buffer.max_resp_len=100",
        ],
        "overlong_buffer.len (200) must not exceed overlong_buffer.max_resp_len (100)",
    ),
]


@pytest.mark.parametrize(("overrides", "named"), REFUSED)
def test_non_finite_weights_and_impossible_buffers_are_refused_at_load(
    overrides: list[str], named: str
) -> None:
    with pytest.raises(ConfigError) as caught:
        load_config(None, overrides)
    assert named in str(caught.value)


def test_spare_workers_default_to_the_workers_and_reach_the_pool() -> None:
    from rewardkit import wiring

    assert load_config({}, ["reward.num_workers=3"]).reward.spares == 3
    section = load_config({}, ["reward.num_workers=3", "reward.spare_workers=0"]).reward
    assert section.spares == 0
    assert wiring.make_pool(section).spares == 0  # type: ignore[union-attr]
