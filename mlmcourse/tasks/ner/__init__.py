"""Named-entity recognition as token classification on the encoder.

The modules, in the order a batch meets them:

1. :mod:`~mlmcourse.tasks.ner.labels`: :class:`LabelVocab`, the BIO labels read from the data, with
   ``label2id`` / ``id2label``, and loss weights for rare labels (:func:`class_weights_from_tags`).
2. :mod:`~mlmcourse.tasks.ner.alignment`: NER data comes as *words* with one tag each, the model sees
   *pieces*. We find which word each piece came from (:func:`word_ids_from_offsets`,
   :func:`encode_words`) and give the label to the word's first piece only; later pieces,
   ``[CLS]``, ``[SEP]`` and padding get ``-100``, the index the loss ignores
   (:func:`align_labels_with_tokens`).
3. :mod:`~mlmcourse.tasks.ner.batches`: padded training batches (:func:`tokenize_and_align_labels`)
   and :func:`word_dropout`, which hides words so the model learns to tag unseen ones.
4. the model: :class:`~mlmcourse.heads.BertForTokenClassification`
   (:mod:`mlmcourse.heads.token_classification`), dropout and one linear layer on the encoder's
   output, started from a pretrained encoder.
5. :mod:`~mlmcourse.tasks.ner.decoding`: the argmax label per word, or the best label sequence that
   is valid BIO (:func:`viterbi_decode`), and entity spans from piece probabilities
   (:func:`entities_from_probabilities`).
6. :mod:`~mlmcourse.tasks.ner.fine_tuning`: one recipe for the comparisons, a fresh classifier on
   the pretrained encoder or the same architecture at random (:func:`new_tagger`), trained
   with word dropout (:func:`fine_tune_tagger`, through :func:`mlmcourse.training.fine_tune`).
7. :mod:`~mlmcourse.tasks.ner.pipeline`: a model and tokenizer at work: word tags for evaluation
   (:func:`predict_tags`, :func:`evaluate_ner`) and entity spans with character offsets for
   raw text (:func:`predict_entities`).
8. :mod:`~mlmcourse.tasks.ner.metrics`: entity precision, recall and F1, equal to ``seqeval``'s,
   and the baseline every tagger must beat (:mod:`~mlmcourse.tasks.ner.baseline`).
"""

from mlmcourse.tasks.ner.alignment import (
    EncodedWords,
    align_labels_with_tokens,
    encode_words,
    word_ids_from_offsets,
)
from mlmcourse.tasks.ner.baseline import most_frequent_tag_baseline
from mlmcourse.tasks.ner.batches import tokenize_and_align_labels, word_dropout
from mlmcourse.tasks.ner.decoding import (
    allowed_transitions,
    decode_pieces,
    entities_from_probabilities,
    group_entities,
    viterbi_decode,
)
from mlmcourse.tasks.ner.fine_tuning import (
    REAL_TEXT_RECIPE,
    TAGGER_RECIPE,
    fine_tune_tagger,
    new_tagger,
)
from mlmcourse.tasks.ner.labels import LabelVocab, class_weights_from_tags
from mlmcourse.tasks.ner.pipeline import evaluate_ner, predict_entities, predict_tags

__all__ = [
    "REAL_TEXT_RECIPE",
    "TAGGER_RECIPE",
    "EncodedWords",
    "LabelVocab",
    "align_labels_with_tokens",
    "allowed_transitions",
    "class_weights_from_tags",
    "decode_pieces",
    "encode_words",
    "entities_from_probabilities",
    "evaluate_ner",
    "fine_tune_tagger",
    "group_entities",
    "most_frequent_tag_baseline",
    "new_tagger",
    "predict_entities",
    "predict_tags",
    "tokenize_and_align_labels",
    "viterbi_decode",
    "word_dropout",
    "word_ids_from_offsets",
]
