"""The NER chapter's world tagger, trained once and shipped inside the package.

``book/ner_world.md`` fine-tunes a tagger on the world's NER data from the shipped world encoder
(``new_tagger(..., pretrained=True, seed=0)``, then :func:`mlmcourse.tasks.ner.fine_tune_tagger`
on the first 4,000 training sentences: 300 steps, batches of 16, 30% word dropout), and its NER
explorer runs that model. This script trains the same recipe on the CPU with one torch thread
and saves the model with :func:`mlmcourse.checkpoint.save_checkpoint` (``config.json`` with
the labels, ``model.safetensors``, ``tokenizer.json``; no optimiser state), so
``load_checkpoint(shipped_checkpoint("world_ner"))`` gives it back without training. It writes
a JSON file with the command, seed, versions, minutes, the recipe, entity precision, recall
and F1 on the test split, the unseen split and the unseen split's first 500 sentences (the
chapter's learning-curve set), and the entities found in the chapter's invented sentence::

    OMP_NUM_THREADS=1 python experiments/world_tagger.py \
        --checkpoint mlmcourse/assets/checkpoints/world_ner \
        --json mlmcourse/course/results/world_tagger.json
    python experiments/world_tagger.py --steps 2 --checkpoint /tmp/ner --json /tmp/smoke.json
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import torch

from mlmcourse.checkpoint import WEIGHTS_NAME, save_checkpoint, shipped_checkpoint
from mlmcourse.course.results import provenance, save_results
from mlmcourse.data import WORLD_LABELS, load_world
from mlmcourse.heads import load_checkpoint
from mlmcourse.tasks.ner import (
    LabelVocab,
    evaluate_ner,
    fine_tune_tagger,
    new_tagger,
    predict_entities,
)
from mlmcourse.training import FineTuneRecipe

# book/ner_world.md's recipe for its explorer's model (models["pretrained", 4000]).
RECIPE = {
    "encoder": "world",
    "pretrained": True,
    "sentences": 4000,
    "steps": 300,
    "batch_size": 16,
    "learning_rate": 2e-3,
    "lr_scheduler_type": "cosine",
    "unk_rate": 0.3,
    "classifier_dropout": 0.1,
    "seed": 0,
    "device": "cpu",
}
CURVE_EVAL_SIZE = 500  # the chapter scores its learning curve on the unseen split's first 500
INVENTED = "Zorbel Quintax moved to Vaskoria and joined Drafer Museum as a pilot ."


def train_tagger(recipe: dict, encoder, tokenizer, labels: LabelVocab, train: list):
    """The chapter's tagger: a fresh classifier on ``encoder``, fine-tuned by ``recipe``."""
    model = new_tagger(
        encoder,
        labels,
        pretrained=recipe["pretrained"],
        seed=recipe["seed"],
        classifier_dropout=recipe["classifier_dropout"],
    )
    settings = {k: recipe[k] for k in ("steps", "batch_size", "learning_rate", "unk_rate")}
    fine_tuning = FineTuneRecipe(lr_scheduler_type=recipe["lr_scheduler_type"], **settings)
    run = fine_tune_tagger(
        model, train[: recipe["sentences"]], tokenizer, labels, recipe=fine_tuning,
        seed=recipe["seed"], device=recipe["device"],
    )  # fmt: skip
    return model.eval(), run


def scores(model, tokenizer, evaluation: dict[str, list]) -> dict[str, dict[str, float]]:
    """Entity precision, recall and F1 (micro) and token accuracy on each evaluation set."""
    keys = ("precision", "recall", "f1", "token_accuracy")
    out = {}
    for name, sentences in evaluation.items():
        result = evaluate_ner(model, tokenizer, sentences)
        out[name] = {"sentences": len(sentences), **{k: result[k] for k in keys}}
    return out


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--steps", type=int, default=RECIPE["steps"])
    parser.add_argument("--checkpoint", type=Path, required=True, help="where to save the tagger")
    parser.add_argument("--json", type=Path, required=True, help="where to write the results")
    args = parser.parse_args(argv)
    torch.set_num_threads(1)
    start = time.perf_counter()
    recipe = {**RECIPE, "steps": args.steps}
    world = load_checkpoint(shipped_checkpoint(recipe["encoder"]))
    tokenizer, labels = world.tokenizer, LabelVocab(WORLD_LABELS)
    model, run = train_tagger(recipe, world.model, tokenizer, labels, load_world("train"))
    save_checkpoint(args.checkpoint, model, tokenizer=tokenizer)
    (args.checkpoint / WEIGHTS_NAME).chmod(0o644)  # safetensors writes 0600; the wheel keeps modes
    unseen = load_world("unseen")
    evaluation = {
        "test": load_world("test"),
        "unseen": unseen,
        f"unseen_first_{CURVE_EVAL_SIZE}": unseen[:CURVE_EVAL_SIZE],
    }
    keep = ("entity_group", "word", "start", "end", "score")
    invented = [{k: e[k] for k in keep} for e in predict_entities(model, tokenizer, INVENTED)]
    results = {
        **provenance(argv, [recipe["seed"]], start),
        "what": f"the NER chapter's world tagger: the shipped {recipe['encoder']} encoder "
        f"fine-tuned on the first {recipe['sentences']} training sentences, {recipe['steps']} "
        f"steps, word dropout {recipe['unk_rate']}, seed {recipe['seed']}, on the CPU; entity "
        f"scores on the test split, the unseen split and the first {CURVE_EVAL_SIZE} sentences "
        f"of the unseen split; saved as the shipped checkpoint world_ner",
        "recipe": recipe,
        "final_loss": run.final_loss,
        "scores": scores(model, tokenizer, evaluation),
        "invented": {"text": INVENTED, "entities": invented},
    }
    results["minutes"] = (time.perf_counter() - start) / 60  # the evaluations included
    save_results(args.json, results)
    print(json.dumps({k: results[k] for k in ("scores", "invented", "minutes")}, indent=2))


if __name__ == "__main__":
    main()
