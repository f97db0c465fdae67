def test_a_card_example_is_labelled_as_the_cards_with_its_link():
    from mlmcourse.interop.hub import CHECKPOINTS, card_example

    line = card_example("answerdotai/ModernBERT-base")
    assert line == (
        "The model card (https://huggingface.co/answerdotai/ModernBERT-base) shows, for its "
        "example 'The capital of France is [MASK].': Paris (the card's published output, not a "
        "run here)"
    )
    assert card_example("dslim/bert-base-NER") is None  # its card publishes no output
    assert card_example("someone/not-a-chapter-model") is None
    assert {n for n, c in CHECKPOINTS.items() if c.card_example} == {
        "google-bert/bert-base-uncased", "answerdotai/ModernBERT-base",
    }  # fmt: skip
