"""Rebuild rows.jsonl.gz from the two public dumps, read out of bare git copies.

    python benchmarks/data/math500_dumps/build.py MIRRORS_DIR

MIRRORS_DIR holds ``QwenLM+Qwen2.5-Math`` and ``henro25+Qwen2.5-Math``, each a bare git
repository (a ``repo`` folder inside, or the folder itself). Every response of every dump
line becomes a row in the layout of ``tests/data/real_outputs`` (README there); a line
whose gold the harness stripped to nothing is left out. The output is byte for byte the
committed file.
"""

from __future__ import annotations

import gzip
import json
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
# (row label, repository, commit, path, model)
SOURCES = [
    (
        "qwen_math_cot_100",
        "QwenLM/Qwen2.5-Math",
        "a45202bd16f1ec06f433442dc1152d0074773465",
        "evaluation/data/eval_rm_maj_example/math_cot_100.jsonl",
        "Qwen2.5-Math-Instruct (the rm@k/maj@k example, 8 samples a problem)",
    ),
    (
        "llama31_math500",
        "henro25/Qwen2.5-Math",
        "c36900fe2121616b468b1b98248fd20210ba3ab3",
        "evaluation/outputs/llama-3-1-8b-instruct/math_eval/math500/"
        "test_qwen25-math-cot_-1_seed0_t0.0_s0_e-1.jsonl",
        "Llama-3.1-8B-Instruct, qwen25-math-cot prompt, greedy",
    ),
]


def _git_dir(mirrors: Path, repo: str) -> Path:
    folder = mirrors / repo.replace("/", "+")
    return folder / "repo" if (folder / "repo").exists() else folder


def rows(mirrors: Path) -> list[dict]:
    out = []
    for label, repo, commit, path, model in SOURCES:
        text = subprocess.check_output(
            ["git", f"--git-dir={_git_dir(mirrors, repo)}", "show", f"{commit}:{path}"], text=True
        )
        for line in (json.loads(item) for item in text.splitlines() if item.strip()):
            if not str(line["gt"]).strip():
                continue
            scores = line.get("score") or []
            for k, response in enumerate(line["code"]):
                said = scores[k] if k < len(scores) else None
                out.append(
                    {
                        "id": f"{label}-{line['idx']}-{k}",
                        "data_source": "lighteval/MATH",
                        "prompt": line["question"],
                        "response": response,
                        "ground_truth": str(line["gt"]),
                        "extra_info": {
                            "source": f"{repo}@{commit}:{path}",
                            "model": model,
                            "source_label": None if said is None else bool(said),
                        },
                    }
                )
    return out


def main(argv: list[str]) -> None:
    if len(argv) != 1:
        raise SystemExit(__doc__)
    built = rows(Path(argv[0]))
    data = "".join(json.dumps(row, ensure_ascii=False) + "\n" for row in built).encode()
    with gzip.GzipFile(HERE / "rows.jsonl.gz", "wb", mtime=0) as fh:
        fh.write(data)
    print(f"{len(built)} rows")


if __name__ == "__main__":
    main(sys.argv[1:])
