"""The label that marks "no target here", shared by masking, the heads' losses and the metrics.

``-100`` is the default ``ignore_index`` of :func:`torch.nn.functional.cross_entropy`, so a
position labelled with it adds nothing to the loss, as in Hugging Face's models. It lives here,
below every module that uses it, so that a head or a metric needs nothing else to know it.
"""

IGNORE_INDEX = -100  # cross_entropy's ignore_index: this position is not a target

__all__ = ["IGNORE_INDEX"]
