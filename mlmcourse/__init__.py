"""mlmcourse: masked language modeling from scratch, checked against the reference.

The package behind the mlmcourse book. Each module matches one chapter's idea; importing the
package itself is cheap (torch is only loaded when a function needs it).
"""

from mlmcourse.utils.runtime import get_device, set_seed

__version__ = "0.3.0"

__all__ = ["__version__", "get_device", "set_seed"]
