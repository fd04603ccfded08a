"""Build a held-out set of published model outputs: rows.jsonl.gz here (not committed).

    python benchmarks/data/heldout/build.py MIRRORS_DIR

MIRRORS_DIR holds ``henro25+Qwen2.5-Math`` and ``XinghanLi66+rl-sft``, each a bare git
repository (a ``repo`` folder inside, or the folder itself). Twelve dumps of the
Qwen2.5-Math evaluation harness (Minerva, OlympiadBench, AIME 2025, AMC 2023, MATH-500 and
MATH train; Qwen2.5-Math-1.5B/7B and Llama-3.1-8B runs; greedy and sampled), none of
which this project's rules were written against: every ``stride``-th line of each, and
every response longer than 6,000 characters (where loops live). Rows are in the layout
of ``tests/data/real_outputs``; ``extra_info.source_label`` is the harness's own score.
Neither repository states a licence for its outputs, so the rows are built here, not
kept; the build is deterministic.
"""

from __future__ import annotations

import gzip
import json
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
LONG_CHARS = 6_000
HENRO = ("henro25/Qwen2.5-Math", "5e00529902c7f0f0037f095ab6982639fe0dbd0f", "evaluation/outputs/")
RL_SFT = ("XinghanLi66/rl-sft", "c981ccd10c5db8fd32c7c6b21680ff0f272bb49c", "one-shot-em/results/")
_COT = "test_qwen25-math-cot_-1_seed0"
# (row label, source, path under its folder, model, stride)
SOURCES = [
    ("q7b-to-minerva", RL_SFT, f"7B-eval-to/minerva_math/{_COT}_t0.0_s0_e-1.jsonl",
     "Qwen2.5-Math-7B, one-shot-EM run '7B-eval-to', greedy", 1),
    ("q7b-pi1to-olymp", RL_SFT, f"7B-eval-pi1+to/olympiadbench/{_COT}_t0.0_s0_e-1.jsonl",
     "Qwen2.5-Math-7B, one-shot-EM run '7B-eval-pi1+to', greedy", 3),
    ("q7b-offrlvr-aime25", RL_SFT, f"7B-eval-offRLVR-20/aime25x8/{_COT}_t0.6_s0_e-1.jsonl",
     "Qwen2.5-Math-7B, run '7B-eval-offRLVR-20', t=0.6, 8 samples", 2),
    ("q7b-offrlvr-math500", RL_SFT, f"7B-eval-offRLVR-20/math500/{_COT}_t0.0_s0_e-1.jsonl",
     "Qwen2.5-Math-7B, run '7B-eval-offRLVR-20', greedy", 4),
    ("q7b-pi1mod-amc23", RL_SFT, f"7B-eval-pi1-modify/amc23x8-t0.6/{_COT}_t0.6_s0_e-1.jsonl",
     "Qwen2.5-Math-7B, one-shot-EM run '7B-eval-pi1-modify', t=0.6, 8 samples", 3),
    ("q15-to-amc23", RL_SFT, f"1.5B-eval-to/amc23x8/{_COT}_t0.6_s0_e-1.jsonl",
     "Qwen2.5-Math-1.5B, one-shot-EM run '1.5B-eval-to', t=0.6, 8 samples", 2),
    ("q15-nobox-minerva", RL_SFT,
     "1.5B-eval-promptnobox/minerva_math/test_qwen25-math-cot-simple_-1_seed0_t0.0_s0_e-1.jsonl",
     "Qwen2.5-Math-1.5B, a prompt without the box instruction, greedy", 2),
    ("q15-nb-olymp", RL_SFT, "1.5B-eval-nb/olympiadbench/test_nb_-1_seed0_t0.0_s0_e-1.jsonl",
     "Qwen2.5-Math-1.5B, prompt 'nb', greedy", 5),
    ("llama-t1-twoshot", HENRO,
     "llama-3-1-8b-instruct/math_eval/math/train_qwen25-math-cot_-1_seed0_t1.0_thoughts-1"
     "_two_shot_data_collection_s1500_e2000.jsonl",
     "Llama-3.1-8B-Instruct, MATH train, two-shot prompt, t=1.0", 2),
    ("llama-t1-th128", HENRO,
     "llama-3-1-8b-instruct/math_eval/math/no_planner_data_collection/train_qwen25-math-cot"
     "_-1_seed0_t1.0_thoughts128_data_collection_s0_e500.jsonl",
     "Llama-3.1-8B-Instruct, MATH train, 128-thought data collection, t=1.0", 5),
    ("llama-longcot-m500", HENRO,
     f"llama-3-1-8b-longcot-sft/math_eval/math500/{_COT}_t0.0_s0_e-1.jsonl",
     "Llama-3.1-8B long-CoT SFT, MATH-500, greedy", 4),
    ("llama-v16-th8", HENRO,
     f"llama-3-1-8b-v16/math_eval/math500/{_COT}_t0.0_thoughts8_data_collection_s0_e500.jsonl",
     "Llama-3.1-8B v16, MATH-500, 8-thought data collection, greedy", 5),
]  # fmt: skip


def _git_dir(mirrors: Path, repo: str) -> Path:
    folder = mirrors / repo.replace("/", "+")
    return folder / "repo" if (folder / "repo").exists() else folder


def rows(mirrors: Path) -> list[dict]:
    out = []
    for label, (repo, commit, folder), path, model, stride in SOURCES:
        text = subprocess.check_output(
            ["git", f"--git-dir={_git_dir(mirrors, repo)}", "show", f"{commit}:{folder}{path}"],
            text=True,
        )
        lines = [json.loads(line) for line in text.splitlines() if line.strip()]
        for number, line in enumerate(lines):
            if not str(line["gt"]).strip():
                continue  # a gold the harness stripped to nothing
            scores = line.get("score") or []
            for k, response in enumerate(line["code"]):
                if number % stride and len(response) <= LONG_CHARS:
                    continue
                said = scores[k] if k < len(scores) else None
                out.append({
                    "id": f"{label}-{number}-{k}",
                    "data_source": "lighteval/MATH",
                    "prompt": line.get("question") or line.get("problem"),
                    "response": response,
                    "ground_truth": str(line["gt"]),
                    "extra_info": {
                        "source": f"{repo}@{commit}:{folder}{path}",
                        "model": model,
                        "source_label": None if said is None else bool(said),
                    },
                })  # fmt: skip
    return out


def main() -> None:
    built = rows(Path(sys.argv[1]))
    data = "".join(json.dumps(row, ensure_ascii=False) + "\n" for row in built).encode()
    with gzip.GzipFile(HERE / "rows.jsonl.gz", "wb", mtime=0) as out:
        out.write(data)
    print(f"{len(built)} rows -> {HERE / 'rows.jsonl.gz'}")


if __name__ == "__main__":
    main()
