"""Settings shared by the unit tests: the Hypothesis profile of the property tests.

The property tests (``test_properties_*.py``) run a fixed, derandomized set of examples, so a
CI failure reproduces on a laptop, with no deadline (a 2-core machine shared with other jobs
has slow moments that are not bugs). ``HYPOTHESIS_PROFILE=thorough`` tries ten times more.
"""

from __future__ import annotations

import os

try:
    from hypothesis import HealthCheck, settings
except ImportError:  # the property tests skip themselves without hypothesis
    pass
else:
    _COMMON = {
        "deadline": None,
        "derandomize": True,
        "database": None,
        "suppress_health_check": [HealthCheck.too_slow, HealthCheck.data_too_large],
    }
    settings.register_profile("mlmcourse", max_examples=200, **_COMMON)
    settings.register_profile("thorough", max_examples=2000, **_COMMON)
    settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "mlmcourse"))
