"""Data for the loop: every batch a pure function of its index, and a fixed validation set.

A batch that depends only on ``(seed, index)`` makes resuming exact (a restarted run sees the
batches it would have seen) and gives every process of a ``torchrun`` job its own share of the
same global batch.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import torch
from torch.utils.data import DistributedSampler

from mlmcourse.utils.checks import (
    ConfigError,
    check_non_negative_int,
    check_positive_int,
    check_seed,
)

__all__ = ["EpochPlan", "MLMBatches", "fixed_eval_batches", "length_grouped_batches"]


def check_batch_plan(
    texts: Sequence[str], batch_size: int, seed: int, rank: int, world_size: int, name: str
) -> tuple[int, int, int, int]:
    """The checks every training-batch source makes: texts, a batch size, a seed, a valid
    rank; returns ``(batch_size, seed, rank, world_size)`` as Python ints."""
    if not texts:
        raise ValueError(f"{name} needs at least one text, got an empty list")
    batch_size = check_positive_int(batch_size, "batch_size")
    seed = check_seed(seed)
    world_size = check_positive_int(world_size, "world_size")
    rank = check_non_negative_int(rank, "rank")
    if rank >= world_size:
        raise ConfigError(f"rank must be in [0, world_size={world_size}), got {rank}")
    return batch_size, seed, rank, world_size


class MLMBatches:
    """Masked training batches where batch ``i`` depends only on ``(seed, i)``.

    Texts are visited in a fresh seeded permutation each epoch, and each batch is masked with a
    generator seeded from ``(seed, i)``. That is *dynamic masking* (a sentence gets new masks
    every epoch, unlike the static masks made once at data-building time), and it makes
    resuming exact: the batch after a restart is the batch the uninterrupted run would see.

    ``rank``/``world_size`` shard the data for DDP with ``torch.utils.data.DistributedSampler``,
    as a ``DataLoader`` would: each epoch, every rank builds the sampler of every rank (one
    permutation shared by all, seeded from ``(seed, epoch)``; rank ``r`` takes every
    ``world_size``-th index from ``r``), so the shards are disjoint and each rank knows the whole
    global batch of step ``i``. That global batch is masked with one generator seeded from
    ``(seed, i)`` and each rank keeps its rows (``r::world_size``). The ranks thus see different
    masks, yet a masked example does not depend on how many processes share the work: when
    ``world_size`` divides the number of texts, 2 processes with ``batch_size=32`` see exactly
    the rows 1 process with ``batch_size=64`` sees. (Otherwise the sampler pads each epoch by
    repeating its first indices, as it does in a ``DataLoader``.)
    ``collator`` is an :class:`mlmcourse.masking.MLMCollator` (it owns the masking settings);
    ``call(i)`` returns ``{input_ids, attention_mask, token_type_ids, labels}``.
    """

    def __init__(
        self,
        texts: Sequence[str],
        collator: Any,
        *,
        batch_size: int,
        seed: int = 0,
        rank: int = 0,
        world_size: int = 1,
    ):
        self.batch_size, self.seed, self.rank, self.world_size = check_batch_plan(
            texts, batch_size, seed, rank, world_size, "MLMBatches"
        )
        self.texts = list(texts)
        self.collator = collator
        self._epoch_cache: tuple[int, list[list[int]]] | None = None

    def shards(self, epoch: int) -> list[list[int]]:
        """Every rank's text indices for ``epoch``, in order, from ``DistributedSampler``."""
        if self._epoch_cache is None or self._epoch_cache[0] != epoch:
            shards = []
            for rank in range(self.world_size):
                sampler = DistributedSampler(
                    range(len(self.texts)),
                    num_replicas=self.world_size,
                    rank=rank,
                    shuffle=True,
                    seed=self.seed * 1_000_003,  # the sampler draws with seed + epoch
                )
                sampler.set_epoch(epoch)
                shards.append(list(sampler))
            self._epoch_cache = (epoch, shards)
        return self._epoch_cache[1]

    def global_indices(self, index: int) -> list[int]:
        """The text indices of global batch ``index``: ``world_size * batch_size`` rows, where
        row ``j * world_size + r`` is rank ``r``'s ``j``-th example."""
        per_rank = len(self.shards(0)[0])
        out = []
        for pos in range(index * self.batch_size, (index + 1) * self.batch_size):
            epoch, offset = divmod(pos, per_rank)
            out.extend(shard[offset] for shard in self.shards(epoch))
        return out

    def indices(self, index: int) -> list[int]:
        """The text indices of batch ``index`` on this rank."""
        return self.global_indices(index)[self.rank :: self.world_size]

    def __call__(self, index: int) -> dict[str, torch.Tensor]:
        texts = [self.texts[i] for i in self.global_indices(index)]
        mask_seed = (self.seed * 1_000_003 + index) * 1009
        batch = self.collator(texts, generator=torch.Generator().manual_seed(mask_seed))
        if self.world_size == 1:
            return batch
        # Each rank masks the whole global batch (cheap next to the model) and keeps its rows:
        # padded to the global batch's length, exactly the rows a single process would see.
        return {k: v[self.rank :: self.world_size] for k, v in batch.items()}


def fixed_eval_batches(
    texts: Sequence[str], collator: Any, *, batch_size: int = 64, seed: int = 1234
) -> list[dict[str, torch.Tensor]]:
    """Mask the validation texts once, with a fixed seed, so every evaluation sees the same task.

    Re-masking validation text at each evaluation would add noise to the curve: a dip could be
    an easier draw of masks rather than a better model.
    """
    if not texts:
        raise ValueError("fixed_eval_batches needs at least one text, got an empty list")
    g = torch.Generator().manual_seed(seed)
    return [
        collator(list(texts[i : i + batch_size]), generator=g)
        for i in range(0, len(texts), batch_size)
    ]


def length_grouped_batches(
    lengths: Sequence[int], batch_size: int, *, seed: int, epoch: int, group_size: int = 50
) -> list[list[int]]:
    """One epoch: every example once, in batches of similar length, in a seeded random order.

    With dynamic padding a batch costs its longest row times its size, so a short tweet batched
    with a long one is mostly padding. As ``transformers``' ``group_by_length`` does, the
    examples are shuffled (seeded by ``(seed, epoch)``), cut into groups of
    ``group_size * batch_size``, sorted by length inside each group and cut into batches; unlike
    it (which keeps each group's batches longest first), the batches are then shuffled, so
    lengths vary from step to step.
    """
    check_positive_int(batch_size, "batch_size")
    check_positive_int(group_size, "group_size")
    if not lengths:
        raise ValueError("length_grouped_batches needs at least one example, got none")
    g = torch.Generator().manual_seed(seed * 1_000_003 + epoch)
    order = torch.randperm(len(lengths), generator=g).tolist()
    span = group_size * batch_size
    batches = []
    for start in range(0, len(order), span):
        group = sorted(order[start : start + span], key=lambda i: lengths[i], reverse=True)
        batches += [group[i : i + batch_size] for i in range(0, len(group), batch_size)]
    return [batches[i] for i in torch.randperm(len(batches), generator=g).tolist()]


class EpochPlan:
    """Batch ``i``'s example indices when every epoch visits each example once, in batches of
    similar length (:func:`length_grouped_batches`); ``per_epoch`` batches make an epoch."""

    def __init__(self, lengths: list[int], batch_size: int, seed: int) -> None:
        self.lengths, self.batch_size, self.seed = lengths, batch_size, seed
        self.per_epoch = len(length_grouped_batches(lengths, batch_size, seed=seed, epoch=0))
        self._cache: tuple[int, list[list[int]]] = (-1, [])

    def rows(self, i: int) -> list[int]:
        epoch, index = divmod(i, self.per_epoch)
        if self._cache[0] != epoch:
            batches = length_grouped_batches(
                self.lengths, self.batch_size, seed=self.seed, epoch=epoch
            )
            self._cache = (epoch, batches)
        return self._cache[1][index]
