"""``from_pretrained``: tiny random checkpoints of every kind, in the Hub's cache layout, loaded
offline into our classes, give ``transformers``' outputs on the same folders.

No test here reaches a network: the cache is a temporary folder, ``HF_HUB_OFFLINE`` is set, and
every socket connection is refused and recorded (``no_network``).
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import sys

import pytest
import torch
from tokenizers import Tokenizer

from mlmcourse.checkpoint import WeightsMismatchError
from mlmcourse.heads import (
    BertForMaskedLM,
    BertForQuestionAnswering,
    BertForSequenceClassification,
    BertForTokenClassification,
)
from mlmcourse.interop import CHECKPOINTS, HubUnavailableError, from_pretrained, pretrained_or_skip
from mlmcourse.interop.pretrained import TASKS
from mlmcourse.model import BertModel
from mlmcourse.tasks.fill_mask import fill_mask
from mlmcourse.tokenization import HFTokenizer
from mlmcourse.utils.checks import ConfigError
from tests.hub_cache import REVISION, VOCAB, put_in_cache, random_model
from tests.tiny import tokenizer_fixture
from tests.tokenization.bpe_files import (
    MODERNBERT_CONFIG,
    ROBERTA_CONFIG,
    TEXTS,
    modernbert_like,
    roberta_like,
    save_tokenizer,
)

transformers = pytest.importorskip("transformers")
pytest.importorskip("huggingface_hub")

NER_LABELS = {0: "O", 1: "B-PER", 2: "I-PER", 3: "B-LOC"}
SENTIMENTS = {0: "negative", 1: "neutral", 2: "positive"}

# (Hub name, transformers class, config overrides, our class)
KINDS = {
    "fill-mask": ("course-tests/bert-mlm", "BertForMaskedLM", {}, BertForMaskedLM),
    "pretraining": ("course-tests/bert-pretraining", "BertForPreTraining", {}, BertForMaskedLM),
    "tokens": (
        "course-tests/bert-ner", "BertForTokenClassification", {"id2label": NER_LABELS},
        BertForTokenClassification,
    ),
    "sentence": (
        "course-tests/bert-sst", "BertForSequenceClassification", {"id2label": SENTIMENTS},
        BertForSequenceClassification,
    ),
    "answers": ("course-tests/bert-squad", "BertForQuestionAnswering", {}, BertForQuestionAnswering),
    "encoder": ("course-tests/bert", "BertModel", {}, BertModel),
    "modernbert": ("course-tests/modernbert-mlm", "ModernBertForMaskedLM", {}, BertForMaskedLM),
    "modernbert-biases": (
        "course-tests/modernbert-biases", "ModernBertForMaskedLM",
        {"attention_bias": True, "mlp_bias": True, "norm_bias": True, "classifier_bias": True,
         "decoder_bias": False, "classifier_activation": "silu"},
        BertForMaskedLM,
    ),
}  # fmt: skip

tokenizer = tokenizer_fixture(
    ["Alice lives in Paris .", "Bob works in Rome .", "a cat sat on the mat"],
    kind="wordpiece",
    vocab_size=VOCAB,
)


# ----------------------------------------------------------------------------------- helpers
def batch(modern: bool = False) -> dict[str, torch.Tensor]:
    generator = torch.Generator().manual_seed(1)
    ids = torch.randint(5, VOCAB, (3, 12), generator=generator)
    mask = torch.ones_like(ids)
    mask[1, 8:] = 0
    mask[2, 3:] = 0
    inputs = {"input_ids": ids * mask, "attention_mask": mask}
    if not modern:
        inputs["token_type_ids"] = (torch.arange(12) >= 6).long().expand(3, -1) * mask
    return inputs


def close(ours: torch.Tensor, theirs: torch.Tensor, mask: torch.Tensor | None = None) -> None:
    """Equal to 1e-5 (at the real tokens, when ``mask`` is given: padding is anyone's guess)."""
    if mask is not None:
        ours, theirs = ours[mask.bool()], theirs[mask.bool()]
    assert ours.shape == theirs.shape
    assert (ours - theirs).abs().max() < 1e-5


# ---------------------------------------------------------------------------------- fixtures
@pytest.fixture(autouse=True)
def no_network(monkeypatch):
    """Refuse and record every connection: a test passes only if it made none."""
    attempts = []

    def refuse(self, address, *args, **kwargs):
        attempts.append(address)
        raise OSError(f"test tried to connect to {address}")

    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setattr(socket.socket, "connect_ex", refuse)
    yield
    assert not attempts, f"tried to reach the network: {attempts}"


@pytest.fixture(scope="module")
def saved(tmp_path_factory, tokenizer):
    """Every kind, saved once by ``transformers`` (safetensors) with a tokenizer.json, in one
    Hub cache: ``{kind: snapshot folder}``, and the cache folder."""
    root = tmp_path_factory.mktemp("pretrained")
    cache = root / "hub"
    snapshots = {}
    for kind, (repo_id, class_name, overrides, _) in KINDS.items():
        files = root / kind
        random_model(class_name, **overrides).save_pretrained(files, safe_serialization=True)
        tokenizer.save(files / "tokenizer.json")
        snapshots[kind] = put_in_cache(cache, repo_id, files)
    return snapshots, cache


@pytest.fixture
def hub(saved, monkeypatch):
    """The test cache, offline, as a learner's notebook sets it: environment variables."""
    snapshots, cache = saved
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_HUB_CACHE", str(cache))
    return snapshots


# ------------------------------------------------------------------- every kind, both ways
@pytest.mark.parametrize("how", ["hub name", "folder"])
@pytest.mark.parametrize("kind", list(KINDS))
def test_every_kind_loads_offline_and_equals_transformers(hub, tokenizer, kind, how):
    repo_id, class_name, _, our_class = KINDS[kind]
    loaded = from_pretrained(repo_id if how == "hub name" else hub[kind])
    assert type(loaded.model) is our_class and not loaded.model.training
    assert loaded.folder.resolve() == hub[kind].resolve()
    assert loaded.tokenizer.get_vocab() == tokenizer.get_vocab()
    theirs = getattr(transformers, class_name).from_pretrained(hub[kind]).eval()
    modern = kind.startswith("modernbert")
    inputs = batch(modern)
    mask = inputs["attention_mask"]
    with torch.no_grad():
        ours, want = loaded.model(**inputs), theirs(**inputs)
    if kind in ("fill-mask", "tokens") or modern:
        close(ours.logits, want.logits, mask)
    elif kind == "pretraining":  # its masked-LM head; the next-sentence head is left out
        close(ours.logits, want.prediction_logits, mask)
    elif kind == "sentence":
        close(ours.logits, want.logits)
    elif kind == "answers":
        close(ours.start_logits, want.start_logits, mask)
        close(ours.end_logits, want.end_logits, mask)
    else:
        close(ours.last_hidden_state, want.last_hidden_state, mask)
        close(ours.pooler_output, want.pooler_output)
    if kind in ("tokens", "sentence"):
        assert loaded.model.id2label == {int(i): n for i, n in theirs.config.id2label.items()}
        names = [loaded.model.id2label[int(i)] for i in ours.logits.argmax(-1).flatten()]
        assert names == [theirs.config.id2label[int(i)] for i in want.logits.argmax(-1).flatten()]


def test_the_encoder_of_any_head_and_a_pinned_revision(hub):
    encoder = from_pretrained("course-tests/bert-ner", task="feature-extraction", revision=REVISION)
    assert type(encoder.model) is BertModel and encoder.model.pooler is None
    theirs = transformers.BertModel.from_pretrained(hub["tokens"], add_pooling_layer=False)
    inputs = batch()
    with torch.no_grad():
        got = encoder.model(**inputs).last_hidden_state
        want = theirs.eval()(**inputs).last_hidden_state
    close(got, want, inputs["attention_mask"])


def test_a_cached_model_loads_without_the_network_even_when_not_offline(saved, monkeypatch):
    """The cache is read first: no request at all (``no_network`` records any)."""
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    monkeypatch.delenv("TRANSFORMERS_OFFLINE", raising=False)
    loaded = from_pretrained("course-tests/bert-squad", cache_dir=saved[1])
    assert type(loaded.model) is BertForQuestionAnswering


# ------------------------------------------------------------------------------- refusals
def one_line(error: pytest.ExceptionInfo) -> str:
    message = str(error.value)
    assert "\n" not in message, message
    return message


def test_a_pickle_only_checkpoint_is_refused_in_one_line(hub, saved, tmp_path):
    files = tmp_path / "bin"
    random_model("BertForMaskedLM").save_pretrained(files)
    (files / "model.safetensors").rename(files / "pytorch_model.bin")  # never unpickled
    put_in_cache(saved[1], "course-tests/bert-bin-only", files)
    with pytest.raises(FileNotFoundError, match="has only pytorch_model.bin") as error:
        from_pretrained("course-tests/bert-bin-only")
    assert "safetensors only" in one_line(error)


def test_a_model_not_in_the_cache_offline_says_what_to_do(hub, capsys):
    with pytest.raises(HubUnavailableError, match="HF_HUB_OFFLINE is set") as error:
        from_pretrained("course-tests/not-downloaded")
    assert "pass a local folder" in one_line(error)
    with pytest.raises(HubUnavailableError, match="not in the Hugging Face cache"):
        from_pretrained("course-tests/bert-mlm", revision="f" * 40)  # a commit never downloaded
    assert pretrained_or_skip("course-tests/not-downloaded", "the real tagger") is None
    printed = capsys.readouterr().out
    assert printed.startswith("Skipped the real tagger: 'course-tests/not-downloaded'")
    assert printed.count("\n") == 1


@pytest.mark.parametrize(
    "raised, expected, match",
    [
        ("GatedRepoError", HubUnavailableError, "is gated: accept its terms"),
        ("RepositoryNotFoundError", FileNotFoundError, "no model 'course-tests/x' on the Hugging"),
        ("RevisionNotFoundError", FileNotFoundError, "has no such revision"),
        ("LocalEntryNotFoundError", HubUnavailableError, "could not download .* connection"),
    ],
)
def test_the_hub_s_failures_online_are_one_line_each(saved, monkeypatch, raised, expected, match):
    """Online, not cached: each failure of the download (faked here) says what to do."""
    import huggingface_hub
    from huggingface_hub import utils

    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    monkeypatch.delenv("TRANSFORMERS_OFFLINE", raising=False)
    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_OFFLINE", False)
    error_class = getattr(utils, raised)

    def snapshot_download(repo_id, *, local_files_only, **options):
        assert set(options["allow_patterns"]) >= {"config.json", "*.safetensors", "tokenizer.json"}
        assert not any(p.endswith((".bin", ".py")) for p in options["allow_patterns"])
        if local_files_only:
            raise utils.LocalEntryNotFoundError("not in the cache")
        raise error_class.__new__(error_class)  # as the Hub answered

    monkeypatch.setattr(huggingface_hub, "snapshot_download", snapshot_download)
    with pytest.raises(expected, match=match) as error:
        from_pretrained("course-tests/x", cache_dir=saved[1])
    one_line(error)


def test_without_huggingface_hub_a_hub_name_says_what_to_install(hub, monkeypatch):
    monkeypatch.setitem(sys.modules, "huggingface_hub", None)  # import fails, as uninstalled
    with pytest.raises(HubUnavailableError, match="pip install huggingface_hub") as error:
        from_pretrained("course-tests/bert-mlm")
    one_line(error)
    assert type(from_pretrained(hub["fill-mask"]).model) is BertForMaskedLM  # a folder needs none


def test_a_weight_of_the_wrong_shape_is_reported_by_name(hub, tmp_path):
    folder = tmp_path / "edited"
    shutil.copytree(hub["tokens"], folder)
    config = json.loads((folder / "config.json").read_text())
    config["id2label"] = {"0": "O", "1": "B-PER"}  # 2 labels; the weights have 4
    config["label2id"] = {"O": 0, "B-PER": 1}
    (folder / "config.json").write_text(json.dumps(config))
    with pytest.raises(
        WeightsMismatchError, match=r"classifier\.weight: \(4, 32\) in .* vs \(2, 32\)"
    ):
        from_pretrained(folder)


def test_a_decoder_that_differs_from_the_tied_embeddings_is_refused(tmp_path):
    from safetensors.torch import load_file, save_file

    random_model("BertForMaskedLM").save_pretrained(tmp_path)
    state = load_file(tmp_path / "model.safetensors")
    state["cls.predictions.decoder.weight"] = torch.zeros(VOCAB, 32)  # an untied decoder
    save_file(state, tmp_path / "model.safetensors", metadata={"format": "pt"})
    with pytest.raises(WeightsMismatchError, match="decoder.weight differs from .*word_embeddings"):
        from_pretrained(tmp_path)


def test_the_task_is_the_architecture_s_unless_it_takes_the_encoder(hub, tmp_path):
    with pytest.raises(ConfigError, match="no token-classification head.*feature-extraction"):
        from_pretrained("course-tests/bert-mlm", task="token-classification")
    with pytest.raises(ConfigError, match="task must be one of .*'fill-mask'.*got 'translation'"):
        from_pretrained("course-tests/bert-mlm", task="translation")
    folder = tmp_path / "no-architecture"
    shutil.copytree(hub["answers"], folder)
    config = json.loads((folder / "config.json").read_text())
    (folder / "config.json").write_text(json.dumps({**config, "architectures": None}))
    with pytest.raises(ConfigError, match="names no architecture: pass task="):
        from_pretrained(folder)
    assert (
        type(from_pretrained(folder, task="question-answering").model) is BertForQuestionAnswering
    )
    with pytest.raises(FileNotFoundError, match="no checkpoint folder at"):
        from_pretrained(tmp_path / "nowhere")


# ---------------------------------------------------- ModernBERT's own kind of tokenizer
BPE_TOKENIZERS = {
    "modernbert": (modernbert_like, MODERNBERT_CONFIG),
    "roberta": (roberta_like, ROBERTA_CONFIG),
}
FILL_TEXTS = [
    "The capital of France is [MASK].",
    "Paris is a [MASK] in France, and Rome is in Italy.",
]


@pytest.fixture(scope="module")
def bpe_saved(saved):
    """A tiny random ModernBERT saved with a byte-level BPE tokenizer (ModernBERT's, or one
    like RoBERTa's) and the tokenizer_config.json transformers reads, in the test Hub cache."""
    root = saved[1].parent
    snapshots = {}
    for kind, (build, config) in BPE_TOKENIZERS.items():
        tokenizer, files = build(), root / f"bpe-{kind}"
        ids = {
            role: tokenizer.token_to_id(config[f"{role}_token"]) for role in ("pad", "cls", "sep")
        }
        model = random_model(
            "ModernBertForMaskedLM", vocab_size=tokenizer.get_vocab_size(),
            max_position_embeddings=64, pad_token_id=ids["pad"], cls_token_id=ids["cls"],
            sep_token_id=ids["sep"], bos_token_id=ids["cls"], eos_token_id=ids["sep"],
        )  # fmt: skip
        model.save_pretrained(files, safe_serialization=True)
        save_tokenizer(tokenizer, files, config)
        snapshots[kind] = put_in_cache(saved[1], f"course-tests/modernbert-{kind}-bpe", files)
    return snapshots


@pytest.mark.parametrize("kind", list(BPE_TOKENIZERS))
def test_a_byte_level_bpe_tokenizer_loads_and_fills_masks_as_the_pipeline(hub, bpe_saved, kind):
    loaded = from_pretrained(f"course-tests/modernbert-{kind}-bpe")
    assert type(loaded.tokenizer) is HFTokenizer and type(loaded.model) is BertForMaskedLM
    library = Tokenizer.from_file(str(bpe_saved[kind] / "tokenizer.json"))
    reference = transformers.AutoTokenizer.from_pretrained(bpe_saved[kind])
    for text in TEXTS:
        assert loaded.tokenizer.encode(text).ids == library.encode(text).ids
        assert loaded.tokenizer.encode(text).ids == reference(text)["input_ids"]
    pipeline = transformers.pipeline("fill-mask", model=str(bpe_saved[kind]), device="cpu")
    mask = loaded.tokenizer.mask_token
    never = {reference.pad_token_id, reference.cls_token_id, reference.sep_token_id,
             reference.mask_token_id}  # fmt: skip
    for text in [*FILL_TEXTS, f"{mask} is the capital of {mask}."]:
        text = text.replace("[MASK]", mask)
        ours = per_mask(fill_mask(loaded.model, loaded.tokenizer, text, top_k=5))
        theirs = per_mask(pipeline(text, top_k=5 + len(never)))  # it may propose specials
        for got, want in zip(ours, theirs, strict=True):
            want = [w for w in want if w["token"] not in never][:5]
            assert [g["token"] for g in got] == [w["token"] for w in want]
            assert [g["token_str"] for g in got] == [w["token_str"] for w in want]
            assert all(abs(g["score"] - w["score"]) < 1e-5 for g, w in zip(got, want, strict=True))
            if len(ours) == 1:  # with several masks the pipeline keeps [CLS] in its sequences
                assert [g["sequence"] for g in got] == [w["sequence"] for w in want]


def per_mask(predictions: list) -> list[list[dict]]:
    """One list of candidates per mask (both give a flat list when there is one mask)."""
    return predictions if isinstance(predictions[0], list) else [predictions]


def test_the_chapters_checkpoints_name_a_task_and_a_revision_or_main():
    for name, checkpoint in CHECKPOINTS.items():
        assert name == checkpoint.repo_id and checkpoint.repo_id.count("/") == 1
        assert checkpoint.task in TASKS
        assert checkpoint.revision is None or checkpoint.revision.startswith("refs/pr/")


def test_a_fresh_interpreter_skips_in_one_line_offline(tmp_path):
    """As in a learner's kernel: nothing imported before (huggingface_hub's submodules load
    lazily), the Hub offline and the model not cached: one line, no traceback."""
    import subprocess
    import sys

    code = (
        "from mlmcourse.interop import pretrained_or_skip\n"
        "print(pretrained_or_skip('google-bert/bert-base-uncased', 'a test') is None)\n"
    )
    env = {k: v for k, v in os.environ.items() if k not in ("HF_HOME", "HF_HUB_CACHE")}
    env |= {"HF_HUB_OFFLINE": "1", "HOME": str(tmp_path), "XDG_CACHE_HOME": str(tmp_path)}
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    lines = out.stdout.strip().splitlines()
    assert lines[-1] == "True" and lines[0].startswith("Skipped a test: ") and len(lines) == 3
    assert lines[1].startswith(
        "The model card (https://huggingface.co/google-bert/bert-base-uncased)"
    )
    assert "fashion 0.107" in lines[1] and lines[1].endswith(
        "(the card's published output, not a run here)"
    )
