"""The states of a static view back from :func:`mlmcourse.viz.static.pack_states`, in Python:
what the page's script does, for the tests that read a page's packed states."""

from __future__ import annotations

import base64
import gzip
import json


def unpack_states(packed: str) -> list[str]:
    """The states back from :func:`~mlmcourse.viz.static.pack_states` (what the page's script does)."""
    payload = json.loads(gzip.decompress(base64.b64decode(packed)))
    pieces, states = payload["pieces"], payload["states"]
    return ["".join(pieces[i] for i in states[k]) for k in payload["order"]]
