"""Small utilities every layer of the package uses; they import nothing else from it.

- :mod:`~mlmcourse.utils.checks`: argument checks with errors that say what was wrong, where,
  and what to do, and reading text and JSON files with the file named in every error;
- :mod:`~mlmcourse.utils.options`: dataclass fields with help texts, groups and checks (the
  YAML configs' keys);
- :mod:`~mlmcourse.utils.runtime`: device, seeds, RNG states and optional imports.
- :mod:`~mlmcourse.utils.batching`: inputs batched by length, results back in their order.
"""
