"""Rebuild ``official_gpt4.jsonl.gz``: the official IFEval verdicts on Google's GPT-4 responses.

    python tests/data/ifeval/build_official.py GOOGLE_RESEARCH_DIR

GOOGLE_RESEARCH_DIR holds google-research's ``instruction_following_eval/`` folder (its
code and ``data/``), e.g. a checkout of github.com/google-research/google-research. Their
code is imported from there and run as it is (``evaluation_lib``'s strict and loose
tests); nothing of it is copied here. It needs ``nltk``, ``langdetect``,
``immutabledict`` and ``absl-py``; NLTK's Punkt model is read from rewardkit's copy
(``src/rewardkit/verifiers/_nltk_data``), as NLTK >= 3.9 reads ``punkt_tab`` for their
``nltk.data.load("nltk:tokenizers/punkt/english.pickle")``.
"""

from __future__ import annotations

import gzip
import json
import os
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
OUT = HERE / "official_gpt4.jsonl.gz"
PUNKT = HERE.parents[2] / "src" / "rewardkit" / "verifiers" / "_nltk_data"
RESPONSES = "input_response_data_gpt4_20231107_145030.jsonl"


def main(root: Path) -> None:
    os.environ["NLTK_DATA"] = str(PUNKT)
    sys.path.insert(0, str(root))
    from instruction_following_eval import evaluation_lib  # type: ignore[import-not-found]

    data = root / "instruction_following_eval" / "data"
    inputs = evaluation_lib.read_prompt_list(str(data / "input_data.jsonl"))
    responses = evaluation_lib.read_prompt_to_response_dict(str(data / RESPONSES))
    lines = []
    for example in inputs:
        strict = evaluation_lib.test_instruction_following_strict(example, responses)
        loose = evaluation_lib.test_instruction_following_loose(example, responses)
        row = {
            "key": example.key,
            "prompt": example.prompt,
            "instruction_id_list": example.instruction_id_list,
            "kwargs": example.kwargs,
            "response": responses[example.prompt],
            "strict": strict.follow_instruction_list,
            "loose": loose.follow_instruction_list,
        }
        lines.append(json.dumps(row, ensure_ascii=False))
    with gzip.GzipFile(OUT, "wb", mtime=0) as out:
        out.write(("\n".join(lines) + "\n").encode())
    print(f"{len(lines)} rows -> {OUT}")


if __name__ == "__main__":
    main(Path(sys.argv[1]))
