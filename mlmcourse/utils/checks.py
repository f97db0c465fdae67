"""Small checks for user input, each naming what it checks, what it got and what to do.

Errors a learner meets should say *what* was wrong, *where* (the key, file, line) and *what to
do*, and never surface as a traceback from deep inside torch, PyYAML or safetensors. Every
check here raises one of the package's own exceptions, all subclasses of the built-in ones a
caller already expects (``ValueError``, ``TypeError``, ``FileNotFoundError``), so
``except ValueError`` keeps working:

- :class:`ConfigError` (``ValueError``): a setting (a config key, a numeric argument such as
  ``top_k``) or a config file is wrong;
- :class:`WrongTypeError` (``TypeError`` and ``ValueError``): a value of the wrong type;
- :class:`FileFormatError` (``ValueError``): a file exists but cannot be read as what it
  should be (truncated, corrupt, wrong encoding); the message names the path;
- :class:`TextEncodingError` (:class:`FileFormatError`): a text file is not UTF-8.

New validation code uses these helpers rather than writing its own ``if ...: raise``. Where a
caller needs its own message, :func:`is_int` and :func:`is_number` are the one place that says
a bool is not a number (Python says ``True == 1``).

Numbers, one rule: every numeric setting takes a Python number, a NumPy scalar and a 0-d torch
tensor alike, since learners pass what their notebooks compute (``np.float32(0.1)``,
``loss.item()`` forgotten, a value read from a file). :func:`as_scalar` is the one place that
turns those into a Python number; every check below goes through it, and returns the Python
number, so a config still writes to JSON and YAML.
"""

from __future__ import annotations

import contextlib
import json
import math
import numbers
import os
import re
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

__all__ = [
    "ConfigError",
    "FileFormatError",
    "TextEncodingError",
    "WrongTypeError",
    "as_scalar",
    "is_int",
    "is_number",
    "check_int",
    "check_positive_int",
    "check_non_negative_int",
    "check_probability",
    "check_number",
    "check_choice",
    "check_bool",
    "check_path_exists",
    "check_integer_values",
    "check_seed",
    "decode_text",
    "shown",
    "read_text",
    "read_json",
    "reading",
    "repeated_key",
]


class ConfigError(ValueError):
    """A configuration key or file is wrong; the message names the key (and file, line)."""


class FileFormatError(ValueError):
    """A file exists but cannot be read as what it should be; the message names its path."""


class TextEncodingError(FileFormatError):
    """A text file is not valid UTF-8; the message names the path, the line and the fix."""


class WrongTypeError(TypeError, ValueError):
    """A value of the wrong type (``"32"`` where an int belongs).

    A ``TypeError``, and a ``ValueError`` too: it is a wrong value the user gave, and code
    written before these checks (``except ValueError``) must go on catching it.
    """


def as_scalar(value: Any) -> Any:
    """``value`` as a Python number if it is one number from NumPy or torch, else unchanged.

    A NumPy scalar, a 0-d array and a 0-d tensor of any dtype (bfloat16 too) become the int,
    float or bool they hold, so ``torch.tensor(0.15)`` is the probability 0.15. Anything else
    (a tensor of several numbers, a string) comes back as it is, for the check to refuse by
    name. A float tensor stays a float (``torch.tensor(3.0)`` is no count), and a bool tensor
    a bool.
    """
    # A NumPy number or a tensor exists only once its library is imported, and the package
    # imports without either (a wheel installed with no dependencies still imports).
    np, torch = sys.modules.get("numpy"), sys.modules.get("torch")
    if np is not None and isinstance(value, np.generic | np.ndarray):
        return value.item() if value.ndim == 0 else value
    if torch is not None and isinstance(value, torch.Tensor) and value.dim() == 0:
        return value if value.is_meta else value.item()  # a meta tensor holds no number
    return value


def is_int(value: Any) -> bool:
    """True for an int (NumPy's and 0-d int tensors too), False for a bool: ``True`` is an int
    to Python, never a count or a size to us."""
    value = as_scalar(value)
    return isinstance(value, numbers.Integral) and not isinstance(value, bool)


def is_number(value: Any) -> bool:
    """True for a real number (int, float, NumPy's, a 0-d tensor), False for a bool (see
    :func:`is_int`)."""
    value = as_scalar(value)
    return isinstance(value, numbers.Real) and not isinstance(value, bool)


def shown(value: Any) -> str:
    """What a message says it was given: the type and value (with the shape of an array), and
    what to do about an array of several numbers."""
    shape = getattr(value, "shape", ())
    if len(shape):
        return (
            f"a {type(value).__name__} of shape {tuple(shape)}: {value!r:.60}; pass one "
            f"number (a Python number, a NumPy scalar or a 0-d tensor, e.g. x.item())"
        )
    return f"{type(value).__name__}: {value!r:.80}"


def check_int(value: Any, name: str, *, minimum: int | None = None) -> int:
    """``value`` as an int (NumPy ints and 0-d int tensors too, never a bool), at least
    ``minimum`` if given. A float is refused even when whole: a count is an int."""
    if not is_int(value):
        raise WrongTypeError(f"{name} must be an int, got {shown(value)}")
    number = int(as_scalar(value))
    if minimum is not None and number < minimum:
        raise ConfigError(f"{name} must be an int >= {minimum}, got {number!r}")
    return number


def check_positive_int(value: Any, name: str) -> int:
    """``value`` as an int >= 1 (a count, a size, a number of steps)."""
    return check_int(value, name, minimum=1)


def check_non_negative_int(value: Any, name: str) -> int:
    """``value`` as an int >= 0 (an interval where 0 means never; a seed: :func:`check_seed`)."""
    return check_int(value, name, minimum=0)


# The largest seed: NumPy's generators take up to 2**32 - 1, and the seeds derived from it
# (seed * 1_000_003 + step, times 1009 for a batch's masks) must stay below torch's 2**64.
MAX_SEED = 2**32 - 1


def check_seed(value: Any, name: str = "seed") -> int:
    """``value`` as a seed: an int in [0, 2**32 - 1] (the one place that says so)."""
    seed = check_int(value, name, minimum=0)
    if seed > MAX_SEED:
        raise ConfigError(
            f"{name} must be an int in [0, 2**32 - 1], got {seed}; use a smaller seed"
        )
    return seed


def check_probability(value: Any, name: str) -> float:
    """``value`` as a float in [0, 1] (NaN and bools are refused)."""
    return check_number(value, name, low=0.0, high=1.0)


def _as_float(number: numbers.Real) -> float:
    """``float(number)``; an int too large for a float is past every bound, so infinite."""
    try:
        return float(number)
    except OverflowError:
        return math.inf if number > 0 else -math.inf


def check_number(
    value: Any,
    name: str,
    *,
    low: float = -math.inf,
    high: float = math.inf,
    low_open: bool = False,
    high_open: bool = False,
) -> float:
    """``value`` as a finite float within ``[low, high]`` (``low_open``/``high_open``: excluded).

    Infinity and NaN are refused: an infinite learning rate or epsilon is a typo, and torch
    would only fail later (or never, and train on NaNs).
    """
    left = "(" if low_open or low == -math.inf else "["
    right = ")" if high_open or high == math.inf else "]"
    interval = f"{left}{low:g}, {high:g}{right}"
    if not is_number(value):
        raise WrongTypeError(f"{name} must be a number in {interval}, got {shown(value)}")
    number = _as_float(as_scalar(value))
    if not math.isfinite(number):
        raise ConfigError(f"{name} must be in {interval} (a finite number), got {number!r}")
    too_low = number <= low if low_open else number < low
    too_high = number >= high if high_open else number > high
    if too_low or too_high:
        raise ConfigError(f"{name} must be in {interval}, got {number!r}")
    return number


def check_choice(value: Any, name: str, choices: tuple[Any, ...]) -> Any:
    """``value`` if it is one of ``choices`` (a schedule, a precision, a strategy...), of the
    same type (``True`` is not the choice ``1``)."""
    value = as_scalar(value)
    if not any(type(value) is type(choice) and value == choice for choice in choices):
        raise ConfigError(f"{name} must be one of {choices}, got {value!r:.80}")
    return value


def check_bool(value: Any, name: str) -> bool:
    """``value`` if it is ``True`` or ``False`` (NumPy's and a 0-d bool tensor too; not 0/1,
    not the string ``"yes"``)."""
    flag = as_scalar(value)
    if flag is not True and flag is not False:
        raise WrongTypeError(f"{name} must be True or False, got {value!r:.80}")
    return flag


def check_path_exists(path: str | os.PathLike, what: str, *, kind: str = "any") -> Path:
    """``path`` as a ``Path`` if it exists (``kind``: ``"file"``, ``"dir"`` or ``"any"``).

    ``what`` says what the path should be (``"checkpoint to resume from"``); the error says
    that it is missing, or that it is a file where a directory was expected (or back).
    """
    path = Path(path)
    if not path.exists():
        raise FileNotFoundError(f"no {what} at {path}: nothing exists at that path")
    if kind == "dir" and not path.is_dir():
        raise NotADirectoryError(f"the {what} must be a directory, but {path} is a file")
    if kind == "file" and not path.is_file():
        raise IsADirectoryError(f"the {what} must be a file, but {path} is a directory")
    return path


def check_integer_values(values: Any, name: str) -> None:
    """Refuse ids that are not integers: a float id ``7.9`` must not quietly become token 7.

    ``values`` is a NumPy array, a torch tensor or a (nested) list. Floats are refused even
    when whole (``7.0``): ids come from a tokenizer as ints, so a float means the data went
    through a float array (pandas, ``np.mean``...) by mistake, and the error says where to look.
    """
    import numpy as np
    import torch

    if isinstance(values, torch.Tensor):
        values = values.numpy(force=True) if values.dtype != torch.bfloat16 else values.float()
    array = np.asarray(values, dtype=object if not isinstance(values, np.ndarray) else None)
    if array.dtype.kind in "iu":
        return
    if array.dtype.kind == "f":  # show a value with a fraction if there is one: that is the bug
        fractional = array[array != np.floor(array)]
        array = (fractional if fractional.size else array).astype(object)
    for value in array.flat:
        if not is_int(value):  # np.bool_ is no numbers.Integral
            shown = value.item() if isinstance(value, np.generic) else value
            raise TypeError(
                f"{name} must hold integer ids, found {shown!r} ({type(value).__name__}); a "
                f"token id is an index into the vocabulary: make the ids ints where they are "
                f"created (a float usually means they went through a float array)"
            )


def decode_text(data: bytes, source: str) -> str:
    """``data`` decoded as UTF-8, a leading byte-order mark dropped; else a clear error.

    The error names ``source``, the line (1-based) and the offending bytes, and says how to
    re-encode the file (Windows editors and Excel often save Latin-1 or UTF-16).
    """
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        raise TextEncodingError(
            f"{source}, line {line}: not UTF-8 (byte {data[exc.start : exc.start + 1]!r} at "
            f"offset {exc.start}); re-save the file as UTF-8, e.g. "
            f"`iconv -f latin1 -t utf-8 in.txt > out.txt`"
        ) from None


def read_text(path: str | os.PathLike, what: str = "text file") -> str:
    """The text of a UTF-8 file (a byte-order mark dropped); errors name the path and line."""
    path = check_path_exists(path, what, kind="file")
    return decode_text(path.read_bytes(), str(path))


def read_json(path: str | os.PathLike, what: str = "a JSON file") -> dict[str, Any]:
    """The JSON object in ``path``; an empty file, invalid JSON, or JSON that is not an object
    is a :class:`FileFormatError` naming the file, the line and what the file should be."""
    text = read_text(path, what)
    if not text.strip():
        raise FileFormatError(
            f"{path} is empty; it should be {what}. Was it cut short (a full disk, an "
            f"interrupted copy)? Replace it with a good copy"
        )
    try:
        data = json.loads(text, object_pairs_hook=_unique_pairs)
    except _RepeatedKey as exc:
        lines = _json_key_lines(text, exc.key)
        raise FileFormatError(repeated_key(str(path), exc.key, lines)) from None
    except json.JSONDecodeError as exc:
        raise FileFormatError(
            f"{path} is not valid JSON (line {exc.lineno}, column {exc.colno}: {exc.msg}); "
            f"it should be {what}. Was it cut short or edited by hand?"
        ) from None
    if not isinstance(data, dict):
        raise FileFormatError(
            f"{path} holds a JSON {type(data).__name__}, expected an object ({what}); replace "
            f"it with a good copy"
        )
    return data


def repeated_key(source: str, key: Any, lines: list[int] | None = None) -> str:
    """The one message for a key given twice in ``source`` (a file, or ``--set``).

    JSON and YAML readers keep the last value without a word, so ``learning_rate: 1e-3`` and,
    further down, ``learning_rate: 5e-4`` would train at 5e-4 while the reader of the file
    sees 1e-3; every reader of a file a user writes or edits refuses it instead.
    """
    where = f" (lines {', '.join(map(str, lines[:-1]))} and {lines[-1]})" if lines else ""
    return (
        f"{source}: the key {key!r} is given twice{where}; only one value can count: keep "
        f"the one you mean and delete the other"
    )


class _RepeatedKey(Exception):
    def __init__(self, key: str) -> None:
        super().__init__(key)
        self.key = key


def _unique_pairs(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """``json``'s ``object_pairs_hook``: the object, unless a key appears in it twice."""
    obj: dict[str, Any] = {}
    for key, value in pairs:
        if key in obj:
            raise _RepeatedKey(key)
        obj[key] = value
    return obj


def _json_key_lines(text: str, key: str) -> list[int]:
    """The lines where ``key`` is written as a key; empty unless that is exactly twice (the
    same key in two different objects is allowed, and then the lines would mislead)."""
    pattern = re.escape(json.dumps(key, ensure_ascii=False)) + r"\s*:"
    lines = [text.count("\n", 0, m.start()) + 1 for m in re.finditer(pattern, text)]
    return lines if len(lines) == 2 else []


@contextlib.contextmanager
def reading(path: str | os.PathLike, what: str, *, key: str | None = None) -> Iterator[None]:
    """Turn any failure to parse ``path`` (or its ``key``) into a :class:`FileFormatError`.

    Readers of JSON, safetensors, tokenizers or pickles each raise their own exception type
    with a message that often omits the file; a learner then cannot tell which of the files
    in a checkpoint is damaged. A missing file stays a ``FileNotFoundError``; our own
    errors (``ValueError`` subclasses that already name the path) pass through unchanged.
    """
    try:
        yield
    except (FileNotFoundError, ConfigError, FileFormatError):
        raise
    except Exception as exc:  # noqa: BLE001 - each library raises its own type
        if isinstance(exc, ValueError | TypeError) and str(path) in str(exc):
            raise  # already a clear message that names the file
        part = f"key {key} of {path}" if key else str(path)
        raise FileFormatError(
            f"cannot read {part} as {what}: {type(exc).__name__}: {str(exc)[:300]}. The file "
            f"is damaged or truncated (an interrupted copy or download?); replace it with a "
            f"good copy"
        ) from exc
