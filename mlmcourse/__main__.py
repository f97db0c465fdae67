"""``python -m mlmcourse COMMAND``: the command line of :mod:`mlmcourse.cli`.

``pretrain`` (a YAML config), ``continue-pretraining`` (your text files), ``ner-train`` (your
CoNLL files), ``tag`` (raw text, with a tagger from ``ner-train``) and ``fill-mask`` (the words
behind each ``[MASK]``); ``--help`` after each documents every option.
"""

from __future__ import annotations

import sys

from mlmcourse.cli import main

if __name__ == "__main__":
    sys.exit(main())
