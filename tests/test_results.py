"""Shipped results: chapters read measured tables from the package, not from the repository."""

import pytest

from mlmcourse.results import available_results, load_results


def test_the_ddp_table_is_shipped_and_complete():
    assert "ddp_cpu" in available_results()
    reports = load_results("ddp_cpu")
    assert {r["world_size"] for r in reports} == {1, 2}
    assert all(
        {"threads", "tokens_per_second", "train_loss", "eval_loss"} <= set(r) for r in reports
    )


def test_an_unknown_name_lists_what_is_shipped():
    with pytest.raises(FileNotFoundError, match="ddp_cpu"):
        load_results("no_such_results")
