"""Property tests of the readers and the config loader: CoNLL files round-trip (BOM, CRLF,
-DOCSTART-, tabs), WikiText cleaning keeps its promises, any config of valid values loads and
any bad file or value is a clear error (see ``clear_errors.py``)."""

from __future__ import annotations

import tempfile
from pathlib import Path

import pytest

pytest.importorskip("hypothesis")

from hypothesis import given  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from mlmcourse.data.real import ConllFormatError, clean_wikitext, parse_wikitext, read_conll  # noqa: E402
from mlmcourse.data.sentence import Sentence  # noqa: E402
from mlmcourse.pretraining import PretrainConfig, config_keys, load_config  # noqa: E402
from mlmcourse.utils.checks import ConfigError  # noqa: E402
from tests.clear_errors import clear_error, valid_or_clear  # noqa: E402

token = st.text(
    st.characters(categories=("L", "N", "P", "S"), exclude_characters="\ufeff"),
    min_size=1,
    max_size=8,
).filter(lambda t: t != "-DOCSTART-")
tag = st.sampled_from(["O", "B-PER", "I-PER", "B-LOC", "I-LOC", "B-creative-work"])


@st.composite
def conll_sentences(draw):
    n = draw(st.integers(1, 6))
    return Sentence(
        tuple(draw(st.lists(token, min_size=n, max_size=n))),
        tuple(draw(st.lists(tag, min_size=n, max_size=n))),
    )


def _write(data: bytes) -> Path:
    handle = tempfile.NamedTemporaryFile(suffix=".conll", delete=False)
    handle.write(data)
    handle.close()
    return Path(handle.name)


@given(
    sentences=st.lists(conll_sentences(), min_size=1, max_size=5),
    sep=st.sampled_from(["\t", " "]),
    bom=st.booleans(),
    docstart=st.booleans(),
    newline=st.sampled_from(["\n", "\r\n"]),
    blank=st.sampled_from(["", "\t", "  "]),
)
def test_conll_files_round_trip(sentences, sep, bom, docstart, newline, blank):
    lines = (["-DOCSTART- O", blank] if docstart else []) + [
        line
        for s in sentences
        for line in [*(f"{t}{sep}{g}" for t, g in zip(s.tokens, s.tags, strict=True)), blank]
    ]
    data = ("\ufeff" if bom else "") + newline.join(lines) + newline
    path = _write(data.encode("utf-8"))
    try:
        assert read_conll(path, sep=sep) == sentences
    finally:
        path.unlink()


@given(data=st.binary(max_size=60))
def test_any_bytes_are_read_or_refused_clearly(data):
    path = _write(data)
    try:
        result = valid_or_clear(read_conll, path)
    finally:
        path.unlink()
    for sentence in result or []:
        assert sentence.tokens and "\ufeff" not in sentence.tokens[0]


@given(
    good=st.lists(conll_sentences(), min_size=1, max_size=3),
    broken=st.sampled_from(["word", "word NOT-A-TAG", "word B_PER", "word S-PER"]),
)
def test_a_malformed_line_names_its_line_number(good, broken):
    lines = [f"{t} {g}" for s in good for t, g in zip(s.tokens, s.tags, strict=True)]
    lines.append(broken)
    path = _write("\n".join(lines).encode())
    try:
        error = clear_error(read_conll, path)
    finally:
        path.unlink()
    assert isinstance(error, ConllFormatError)
    assert f"{path}, line {len(lines)}:" in str(error)


@given(
    text=st.text(st.characters(categories=("L", "N")), min_size=1, max_size=10),
    mark=st.sampled_from("-,."),
)
def test_wikitext_placeholders_are_joined(text, mark):
    assert clean_wikitext(f"{text} @{mark}@ {text}") == f"{text}{mark}{text}"


line_text = st.text(st.characters(exclude_categories=("Cc", "Zl", "Zp")), max_size=30)


@given(
    lines=st.lists(
        st.one_of(line_text, st.builds(lambda t: f" = {t} = ", line_text.filter(bool))),
        max_size=10,
    )
)
def test_wikitext_paragraphs_are_never_blank_nor_headings(lines):
    paragraphs = parse_wikitext(lines)
    assert all(p.strip() for p in paragraphs)
    assert len(parse_wikitext(lines, keep_headings=True)) >= len(paragraphs)
    assert not any(p.startswith("= ") and p.endswith(" =") for p in paragraphs)


# --- configs ------------------------------------------------------------------------------------

VALID = {
    "max_steps": st.integers(1, 10**6),
    "learning_rate": st.one_of(st.floats(1e-8, 1.0), st.sampled_from(["1e-3", "5e-4", "2E-5"])),
    "warmup_steps": st.integers(0, 1000),
    "batch_size": st.integers(1, 512),
    "mlm_probability": st.floats(0.0, 1.0),
    "masking_strategy": st.sampled_from(["token", "whole_word", "span"]),
    "lr_scheduler_type": st.sampled_from(["cosine", "linear", "constant"]),
    "hidden_dropout_prob": st.floats(0.0, 0.9),
    "num_attention_heads": st.sampled_from([1, 2, 4]),  # all divide the default hidden_size 128
    "pre_layer_norm": st.booleans(),
    "output_dir": st.text(st.characters(categories=("L", "N")), max_size=10),
}


@given(values=st.fixed_dictionaries({}, optional=VALID))
def test_any_valid_values_load_and_round_trip(values):
    config = load_config(values)
    assert isinstance(config, PretrainConfig)
    assert isinstance(config.learning_rate, float)
    assert load_config(config.to_dict()) == config


wrong_value = st.one_of(
    st.none(), st.text(max_size=5), st.floats(), st.integers(-(10**6), -1), st.booleans(),
    st.lists(st.integers(), max_size=2), st.dictionaries(st.text(max_size=2), st.integers(), max_size=1),
)  # fmt: skip


@given(key=st.sampled_from(config_keys()), value=wrong_value)
def test_a_wrong_value_is_valid_or_a_clear_error_naming_the_key(key, value):
    config = valid_or_clear(load_config, {key: value})
    if config is None:
        try:
            load_config({key: value})
        except (ValueError, TypeError) as exc:
            message = str(exc)
        names = [key, *(["hidden_size"] if key == "num_attention_heads" else [])]
        names += ["mask_replace_prob + random_replace_prob"] if "replace" in key else []
        assert any(name in message for name in names), message


@given(key=st.text(min_size=1, max_size=12).filter(lambda k: k not in config_keys()))
def test_an_unknown_key_is_a_config_error_listing_the_valid_ones(key):
    error = clear_error(load_config, {key: 1})
    assert isinstance(error, ConfigError) and "valid keys are: max_steps" in str(error)


@given(text=st.text(max_size=80))
def test_any_yaml_file_loads_or_is_refused_clearly(text):
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "config.yaml"
        path.write_text(text, encoding="utf-8")
        config = valid_or_clear(load_config, path)
    assert config is None or isinstance(config, PretrainConfig)
