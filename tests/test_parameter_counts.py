"""No public function of the package takes more than 8 parameters.

A longer list is settings that belong together: they go into one object (a recipe such as
``FineTuneRecipe``, ``CheckpointPlan``, ``TrainingState``, ``MaskingSettings``) that is checked
once and passed whole. Classes and config dataclasses are aside: their fields are the settings.
"""

from __future__ import annotations

import importlib
import inspect
import pkgutil

import mlmcourse

MAX_PARAMETERS = 8


def _public_functions() -> dict[str, int]:
    """Every module-level function named in an ``__all__`` of the package, with its number of
    parameters (``*args`` and ``**kwargs`` count one each), by where it is defined."""
    found = {}
    modules = [mlmcourse.__name__]
    modules += [m.name for m in pkgutil.walk_packages(mlmcourse.__path__, "mlmcourse.")]
    for name in modules:
        module = importlib.import_module(name)
        for public in getattr(module, "__all__", ()):
            obj = getattr(module, public)
            if inspect.isfunction(obj):
                where = f"{obj.__module__}.{obj.__qualname__}"
                found[where] = len(inspect.signature(obj).parameters)
    return found


def test_the_walk_finds_the_public_functions():
    found = _public_functions()
    assert len(found) > 200  # every module's __all__, not one package's
    for name in ("training.loop.train", "tasks.ner.fine_tuning.fine_tune_tagger"):
        assert f"mlmcourse.{name}" in found


def test_no_public_function_takes_more_than_8_parameters():
    long = {name: n for name, n in _public_functions().items() if n > MAX_PARAMETERS}
    assert not long, (
        f"these take more than {MAX_PARAMETERS} parameters: {long}; group the settings that "
        f"belong together into one object (see FineTuneRecipe)"
    )
