"""No real-text MLM result is ranked or praised at the unigram floor.

Every committed result of a masked LM scored on real text records the unigram baseline on the
same masks. A run whose accuracy is under 1.5 times the baseline's, or whose perplexity is above
the baseline's divided by 1.5, has learnt little more than word frequencies: it must carry a
``floor`` key naming the chapter and the sentence there that says so, and that sentence must be
in the chapter.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from mlmcourse.course.results import load_results

ROOT = Path(__file__).resolve().parents[2]
MARGIN = 1.5


def measurements(name: str, results: dict) -> list[tuple[str, dict, dict, dict | None]]:
    """``(where, scores, baseline, label holder)`` of every real-text measurement in a file:
    ``scores`` and ``baseline`` as ``{"accuracy", "perplexity"}`` (either may be missing), the
    label holder the dict that carries (or should carry) ``floor``."""
    out = []

    def add(where, holder, acc, ppl, base_acc, base_ppl, label=None):
        scores = {k: v for k, v in (("accuracy", acc), ("perplexity", ppl)) if v is not None}
        baseline = {"accuracy": base_acc, "perplexity": base_ppl}
        out.append((where, scores, baseline, holder if label is None else label))

    if name == "english_mlm":
        for split in ("test", "dev"):
            for masks in ("", "all_masked_"):  # BERT's 80/10/10 masks, and every blank [MASK]
                s = results["long"][split]
                add(f"long.{split} {masks}", s, s[f"{masks}accuracy"], s[f"{masks}perplexity"],
                    s[f"{masks}unigram_accuracy"], s[f"{masks}unigram_perplexity"])  # fmt: skip
        for run in results["short"]["runs"]:
            for masks in ("", "all_masked_"):
                add(f"short seed {run['seed']} {masks}", run, run[f"test_{masks}accuracy"],
                    run[f"test_{masks}perplexity"], run[f"test_{masks}unigram_accuracy"],
                    run[f"test_{masks}unigram_perplexity"])  # fmt: skip
    elif name == "english_adaptation":
        rows = [("before " + d, results["before"][d]) for d in ("tweets", "reviews")]
        rows += [(f"{r['domain']}{'+replay' if r['replay'] else ''} seed {r['seed']}", r)
                 for r in results["runs"]]  # fmt: skip
        for where, row in rows:
            for part in ("target", "english"):
                add(f"{where} ({part})", row, row[f"{part}_accuracy"], row[f"{part}_perplexity"],
                    row[f"{part}_unigram_accuracy"], row[f"{part}_unigram_perplexity"],
                    label={"floor": row.get(f"floor_{part}")})  # fmt: skip
    elif name == "packing_equivalence":
        for run in results["runs"]:
            if run["corpus"] == "english":
                add(f"{run['mode']} seed {run['seed']}", run, run["heldout_accuracy"],
                    run["heldout_perplexity"], run["unigram_accuracy"], run["unigram_perplexity"])  # fmt: skip
    elif name == "minilm_mlm_head":
        unigram = results["unigram"]
        for run in results["runs"]:
            add(f"seed {run['seed']}", run, run["top1"], run["perplexity"], unigram["top1"],
                unigram["perplexity"])  # fmt: skip
    elif name == "wnut17_adaptation":
        unigram = results["perplexity_unigram"]
        add(
            "before",
            results,
            None,
            results["perplexity_before"],
            None,
            unigram,
            label={"floor": results.get("floor_before")} if "floor_before" in results else {},
        )
        for run in results["runs"]:
            add(f"seed {run['seed']}", run, None, run["perplexity_after"], None, unigram)
    return out


REAL_TEXT = ["english_mlm", "english_adaptation", "packing_equivalence", "minilm_mlm_head",
             "wnut17_adaptation"]  # fmt: skip


def at_floor(scores: dict, baseline: dict) -> bool:
    low_accuracy = "accuracy" in scores and scores["accuracy"] < MARGIN * baseline["accuracy"]
    high_ppl = "perplexity" in scores and scores["perplexity"] > baseline["perplexity"] / MARGIN
    return low_accuracy or high_ppl


def prose(chapter: str) -> str:
    text = (ROOT / "book" / f"{chapter}.md").read_text(encoding="utf-8")
    return re.sub(r"\s+", " ", text)


@pytest.mark.parametrize("name", REAL_TEXT)
def test_every_floor_level_run_says_where_the_chapter_calls_it_so(name):
    found = measurements(name, load_results(name))
    assert found, f"{name}: no real-text measurement read"
    for where, scores, baseline, holder in found:
        assert all(v is not None and v > 0 for v in baseline.values() if v is not None), where
        if not at_floor(scores, baseline):
            continue
        floor = (holder or {}).get("floor")
        assert floor, f"{name} {where}: {scores} against the unigram's {baseline}, no floor key"
        assert floor["sentence"] in prose(floor["chapter"]), (name, where, floor)


def test_the_rule_flags_the_floor_and_passes_a_model_that_learned():
    base = {"accuracy": 0.06, "perplexity": 1000.0}
    assert at_floor({"accuracy": 0.08, "perplexity": 600.0}, base)  # 1.3x the accuracy
    assert at_floor({"accuracy": 0.2, "perplexity": 700.0}, base)  # perplexity not low enough
    assert at_floor({"perplexity": 3000.0}, {"perplexity": 1800.0})  # worse than the baseline
    assert not at_floor({"accuracy": 0.3, "perplexity": 100.0}, base)
