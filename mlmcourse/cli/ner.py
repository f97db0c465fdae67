"""``ner-train`` and ``tag``: fine-tune a NER tagger on your CoNLL files, then tag raw text.

``ner-train`` runs the NER chapter's recipe (:func:`~mlmcourse.tasks.ner.new_tagger`, then
:func:`~mlmcourse.tasks.ner.fine_tune_tagger` with the settings of
:data:`~mlmcourse.tasks.ner.REAL_TEXT_RECIPE`) and writes a checkpoint that
:func:`~mlmcourse.heads.load_checkpoint` and ``transformers``'
``BertForTokenClassification.from_pretrained`` both open. ``tag`` reads that checkpoint and
prints the entities of each text as one JSON line (:func:`~mlmcourse.tasks.ner.predict_entities`).
"""

from __future__ import annotations

import argparse
import json
import shlex
import sys
from dataclasses import replace
from pathlib import Path
from typing import Any

from torch import nn

from mlmcourse.checkpoint import check_checkpoint_target, save_checkpoint
from mlmcourse.cli.common import (
    UsageError,
    add_numbers,
    guarded,
    is_course_checkpoint,
    non_negative_int,
    positive_float,
    positive_int,
)
from mlmcourse.data.real import ConllFormatError, read_conll
from mlmcourse.heads import BertForTokenClassification, load_checkpoint
from mlmcourse.tasks.ner import (
    REAL_TEXT_RECIPE,
    LabelVocab,
    evaluate_ner,
    fine_tune_tagger,
    new_tagger,
    predict_entities,
)
from mlmcourse.utils.checks import read_text

# What --sep accepts besides a literal separator.
SEPARATORS = {"whitespace": None, "tab": "\t", "\\t": "\t", "space": " "}

TRAIN_EXAMPLE = """
example (WNUT-17's files are tab-separated):
  python -m mlmcourse ner-train --train wnut17train.conll --dev emerging.dev.conll \\
      --sep tab --output-dir runs/wnut17

A CoNLL file has one token per line with its BIO tag (O, B-TYPE, I-TYPE) in the last column,
and a blank line between sentences. Ctrl-C stops the run; nothing is saved."""

TAG_EXAMPLE = """
example:
  python -m mlmcourse tag --model runs/wnut17 "Taylor Swift played in Paris last night"

prints one JSON line per text:
  {"text": "...", "entities": [{"entity_group": "person", "score": 0.93, "word": "Taylor \
Swift", "start": 0, "end": 12}, ...]}"""


def add_parser(commands: Any) -> None:
    """Add ``ner-train`` and ``tag`` to the subcommands."""
    _add_train_parser(commands)
    _add_tag_parser(commands)


def _add_train_parser(commands: Any) -> None:
    parser = commands.add_parser(
        "ner-train",
        help="fine-tune a named-entity tagger on your CoNLL files",
        description=(
            "Fine-tune a pretrained encoder with a fresh token-classification head on a CoNLL "
            "file, score it on --dev (entity precision, recall, F1) and write the tagger to "
            "--output-dir, where load_checkpoint and transformers' "
            "BertForTokenClassification.from_pretrained both open it."
        ),
        epilog=TRAIN_EXAMPLE,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--train", required=True, metavar="FILE", help="CoNLL training file")
    parser.add_argument(
        "--dev",
        metavar="FILE",
        help="CoNLL file scored at the end; its tags must occur in --train (default: none)",
    )
    parser.add_argument(
        "--model",
        default="minilm",
        help="minilm (the bundled all-MiniLM-L6-v2 encoder), a Hugging Face BERT folder, or a "
        "checkpoint folder of this course (from pretrain or continue-pretraining) "
        "(default: %(default)s)",
    )
    parser.add_argument(
        "--output-dir",
        required=True,
        metavar="DIR",
        help="where the tagger is written: a new, empty or checkpoint folder (it is replaced)",
    )
    recipe = REAL_TEXT_RECIPE
    warmup = f"{recipe.warmup_ratio:.0%}%"  # argparse reads % as a format: %% prints one
    add_numbers(
        parser,
        {
            "epochs": (positive_int, recipe.epochs, "passes over the training file"),
            "batch-size": (positive_int, recipe.batch_size, "sentences per step"),
            "learning-rate": (
                positive_float,
                recipe.learning_rate,
                f"peak learning rate of AdamW, {recipe.lr_scheduler_type} decay after a "
                f"{warmup} warm-up",
            ),
            "seed": (non_negative_int, 0, "seed of the classifier's weights, batches, dropout"),
        },
    )
    parser.add_argument(
        "--sep",
        type=_separator,
        default="whitespace",
        help="column separator of the CoNLL files: whitespace, tab (as in WNUT-17, whose "
        "tokens may hold spaces), space, or the separator itself (default: %(default)s)",
    )
    parser.add_argument("--no-progress", action="store_true", help="hide the progress bar")
    parser.set_defaults(run=run_ner_train)


def _add_tag_parser(commands: Any) -> None:
    parser = commands.add_parser(
        "tag",
        help="find the entities in texts with a tagger from ner-train",
        description=(
            "Tag each text with a tagger written by ner-train and print one JSON line per "
            'text: {"text": ..., "entities": [{entity_group, score, word, start, end}]}, '
            "start and end being character offsets in the text. Texts come from the "
            "arguments, from --file, or else one per line on standard input."
        ),
        epilog=TAG_EXAMPLE,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("texts", nargs="*", metavar="TEXT", help="texts to tag")
    parser.add_argument(
        "--model", required=True, metavar="DIR", help="a folder written by ner-train"
    )
    parser.add_argument(
        "--file",
        metavar="FILE",
        help="a UTF-8 file with one text per line, instead of TEXT arguments (default: none)",
    )
    parser.set_defaults(run=run_tag)


def _separator(text: str) -> str | None:
    return SEPARATORS.get(text, text)


# --- ner-train ---------------------------------------------------------------------------------


def run_ner_train(args: argparse.Namespace) -> int:
    """Read the files, fine-tune, save, then score on --dev."""

    def interrupted(stop: KeyboardInterrupt) -> None:
        step = getattr(stop, "step", None)
        after = f" after step {step}" if step is not None else ""
        print(
            f"mlmcourse ner-train: interrupted{after}; nothing was saved (fine-tuning starts "
            f"over when run again)",
            file=sys.stderr,
        )

    return guarded(
        "ner-train", lambda: _ner_train(args), clear=(ConllFormatError,), interrupted=interrupted
    )


def _ner_train(args: argparse.Namespace) -> int:
    train = read_conll(args.train, sep=args.sep)
    if not train:
        raise ConllFormatError(f"{args.train} holds no sentences")
    labels = LabelVocab.from_sentences(train)
    dev = _read_dev(args, labels) if args.dev else None
    check_checkpoint_target(args.output_dir)  # before training, not after it
    encoder, tokenizer, what = load_encoder(args.model)
    recipe = replace(
        REAL_TEXT_RECIPE,
        epochs=args.epochs,
        batch_size=args.batch_size,
        learning_rate=args.learning_rate,
    )
    print(
        f"fine-tuning {what} on {len(train)} sentences of {args.train}, {len(labels)} labels "
        f"({', '.join(labels)}): {args.epochs} epoch(s), batch {args.batch_size}, learning "
        f"rate {args.learning_rate:g}"
    )
    model = new_tagger(encoder, labels, pretrained=True, seed=args.seed)
    progress = not args.no_progress
    loss = fine_tune_tagger(
        model, train, tokenizer, labels, recipe=recipe, seed=args.seed, progress=progress
    ).final_loss
    save_checkpoint(args.output_dir, model, tokenizer=tokenizer)
    print(f"last training loss {loss:.4f}; tagger written to {args.output_dir}")
    if dev is not None:
        scores = evaluate_ner(model, tokenizer, dev)
        print(f"dev ({len(dev)} sentences of {args.dev}):\n{scores_table(scores)}")
    example = shlex.join(["python", "-m", "mlmcourse", "tag", "--model", args.output_dir])
    print(f'tag text with:\n  {example} "some text"')
    return 0


def _read_dev(args: argparse.Namespace, labels: LabelVocab) -> list[Any]:
    """The dev sentences; a tag the training file lacks is an error naming its line."""
    read_conll(args.dev, sep=args.sep)  # a malformed line is reported as such first
    try:
        return read_conll(args.dev, labels=labels.labels, sep=args.sep)
    except ConllFormatError as exc:
        raise ConllFormatError(
            f"{exc}: --dev may only use the tags of --train {args.train}, the only ones the "
            f"tagger can predict"
        ) from None


def load_encoder(source: str) -> tuple[nn.Module, Any, str]:
    """The encoder and tokenizer ``--model`` names, and what it is (for the first line).

    ``minilm``; else a folder: a course checkpoint (its ``config.json`` has our ``is_causal``
    key) or a Hugging Face BERT folder.
    """
    from mlmcourse.interop.bert import load_bert, minilm_directory

    if source == "minilm":
        encoder, tokenizer = load_bert(minilm_directory())
        return encoder, tokenizer, "MiniLM (all-MiniLM-L6-v2)"
    directory = Path(source)
    if not (directory / "config.json").is_file():
        problem = "has no config.json" if directory.is_dir() else "does not exist"
        raise FileNotFoundError(
            f"--model {source} {problem}; give minilm, a Hugging Face BERT folder or a "
            f"checkpoint folder of this course"
        )
    if is_course_checkpoint(directory):
        loaded = load_checkpoint(directory)
        encoder, tokenizer = getattr(loaded.model, "bert", loaded.model), loaded.tokenizer
        what = f"the encoder of {directory}"
    else:
        encoder, tokenizer = load_bert(directory)
        what = f"the BERT of {directory}"
    if tokenizer is None:
        raise FileNotFoundError(
            f"--model {source} has no tokenizer (tokenizer.json or vocab.txt); a tagger must "
            f"read text with its encoder's tokenizer"
        )
    return encoder, tokenizer, what


def scores_table(scores: dict[str, Any]) -> str:
    """Precision, recall, F1 and support per entity type and overall (micro), as seqeval prints."""
    report = scores["report"]
    rows = [name for name in report if not name.endswith(" avg")] + ["micro avg"]
    width = max(len(name) for name in rows)
    lines = [f"{'':{width}}  precision  recall     F1  support"]
    for name in rows:
        r = report[name]
        lines.append(
            f"{name:>{width}}  {r['precision']:9.3f}  {r['recall']:6.3f}  {r['f1-score']:5.3f}"
            f"  {r['support']:7d}"
        )
    return "\n".join(lines)


# --- tag ---------------------------------------------------------------------------------------


def run_tag(args: argparse.Namespace) -> int:
    """Tag every text; print one JSON line each."""
    return guarded("tag", lambda: _tag(args))


def _tag(args: argparse.Namespace) -> int:
    texts = _texts(args)
    model, tokenizer = load_tagger(args.model)
    for where, text in texts:
        try:
            entities = predict_entities(model, tokenizer, text)
        except ValueError as exc:  # e.g. longer than the model's positions
            raise UsageError(f"{where}: {exc}") from None
        print(json.dumps({"text": text, "entities": entities}, ensure_ascii=False), flush=True)
    return 0


def _texts(args: argparse.Namespace) -> list[tuple[str, str]]:
    """``(where, text)`` for each text; an empty one is an error that says where it is."""
    if args.texts and args.file:
        raise UsageError("give texts as arguments or with --file, not both")
    if args.texts:
        texts = [(f"text {i}", text) for i, text in enumerate(args.texts, start=1)]
    else:
        source, lines = _lines(args.file)
        texts = [(f"{source}, line {i}", line) for i, line in enumerate(lines, start=1)]
        if not texts:
            raise UsageError(f"{source} holds no text to tag")
    for where, text in texts:
        if not text.strip():
            raise UsageError(f"{where} is empty: there is nothing to tag")
    return texts


def _lines(path: str | None) -> tuple[str, list[str]]:
    """The lines of ``--file``, or of standard input, and where they came from."""
    if path:
        return path, read_text(path, "text file").splitlines()
    if sys.stdin.isatty():
        print("reading texts from standard input, one per line (Ctrl-D ends)", file=sys.stderr)
    return "standard input", sys.stdin.read().splitlines()


def load_tagger(directory: str) -> tuple[BertForTokenClassification, Any]:
    """The tagger and tokenizer of a ``ner-train`` folder, or an error saying what it is."""
    loaded = load_checkpoint(directory)
    model = loaded.model
    if not isinstance(model, BertForTokenClassification) or not model.id2label:
        raise UsageError(
            f"--model {directory} holds a {type(model).__name__}, not a NER tagger; train one "
            f"with: python -m mlmcourse ner-train --train FILE --output-dir DIR"
        )
    if loaded.tokenizer is None:
        raise FileNotFoundError(f"--model {directory} has no tokenizer.json")
    return model, loaded.tokenizer
