"""The hooks of :class:`BaseTokenizer` for a tokenizer the 🤗 ``tokenizers`` library runs.

WordPiece (:mod:`~mlmcourse.tokenization.wordpiece`) and any other ``tokenizer.json``
(:mod:`~mlmcourse.tokenization.hf_tokenizer`) both hand the work to a ``tokenizers.Tokenizer``
(``backend_tokenizer``): splitting texts into pieces, truncating, adding the special tokens,
looking ids up. :class:`LibraryTokenizer` says so once; a subclass says only how to read the
sequence ids back (:meth:`LibraryTokenizer._sequence_ids`), which the two do differently.
"""

from __future__ import annotations

from typing import Any

from tokenizers import Tokenizer

from mlmcourse.tokenization.base import BaseTokenizer
from mlmcourse.tokenization.encoding import Encoding

__all__ = ["LibraryTokenizer"]


class LibraryTokenizer(BaseTokenizer):
    """A :class:`BaseTokenizer` whose pieces come from ``backend_tokenizer`` (set by the subclass).

    Texts are split by ``_splitter`` (the backend itself unless a subclass needs a copy without
    the post-processor) and post-processed once, in :meth:`_post_process`.
    """

    backend_tokenizer: Tokenizer

    @property
    def _splitter(self) -> Tokenizer:
        return self.backend_tokenizer

    def _sequence_ids(self, encoding: Any) -> list[int | None]:
        """Which text each token of a post-processed encoding belongs to (``None``: a special)."""
        raise NotImplementedError

    def _encode_texts(self, texts: list[str]) -> list[Any]:
        return self._splitter.encode_batch(texts, add_special_tokens=False)

    def _truncate(self, sequence: Any, length: int) -> Any:
        sequence.truncate(length)
        return sequence

    def _post_process(self, first: Any, second: Any | None) -> Encoding:
        e = self.backend_tokenizer.post_process(first, second, add_special_tokens=True)
        return Encoding(
            ids=list(e.ids),
            tokens=list(e.tokens),
            type_ids=list(e.type_ids),
            special_tokens_mask=list(e.special_tokens_mask),
            word_ids=list(e.word_ids),
            offsets=[tuple(o) for o in e.offsets],
            sequence_ids=self._sequence_ids(e),
        )

    def _num_special_tokens_to_add(self, pair: bool) -> int:
        return self.backend_tokenizer.num_special_tokens_to_add(pair)

    def _token_to_id(self, token: str) -> int | None:
        return self.backend_tokenizer.token_to_id(token)

    def _id_to_token(self, index: int) -> str | None:
        return self.backend_tokenizer.id_to_token(index)

    def get_vocab(self) -> dict[str, int]:
        return self.backend_tokenizer.get_vocab(with_added_tokens=True)

    def to_json(self) -> str:
        """🤗 tokenizers' own ``tokenizer.json``, so ``transformers`` can load it too."""
        return self.backend_tokenizer.to_str(pretty=True)
