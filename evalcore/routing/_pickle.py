"""Reading a pickled pandas data frame without running what a pickle may name.

RouterBench is published as pickles (``routerbench_0shot.pkl``). Unpickling can call any
function a pickle names; :func:`read_frame_pickle` uses an unpickler that builds only the
pandas, numpy and pyarrow objects a data frame of strings and numbers is made of (an
allow-list, pandas 1 to 3 and numpy 1 and 2 module paths) and refuses every other global.
"""

from __future__ import annotations

import os
import pickle
from pathlib import Path
from typing import Any

import pandas as pd

from evalcore.errors import EvalcoreError

_PICKLE_GLOBALS = {
    # builtins (``__builtin__`` in protocol 2) and the helpers pickle itself names
    ("builtins", "slice"),
    ("builtins", "object"),
    ("builtins", "bytearray"),
    ("builtins", "complex"),
    ("copyreg", "_reconstructor"),
    ("_codecs", "encode"),
    ("functools", "partial"),
    # numpy arrays and scalars (numpy 1 and 2 module paths)
    ("numpy", "ndarray"),
    ("numpy", "dtype"),
    ("numpy.core.multiarray", "_reconstruct"),
    ("numpy.core.multiarray", "scalar"),
    ("numpy.core.numeric", "_frombuffer"),
    ("numpy._core.multiarray", "_reconstruct"),
    ("numpy._core.multiarray", "scalar"),
    ("numpy._core.numeric", "_frombuffer"),
    # a pandas data frame: its blocks, indexes and string columns (pandas 1 to 3)
    ("pandas", "DataFrame"),
    ("pandas", "Index"),
    ("pandas", "RangeIndex"),
    ("pandas", "StringDtype"),
    ("pandas.arrays", "ArrowStringArray"),
    ("pandas.arrays", "StringArray"),
    ("pandas.core.arrays.string_", "StringDtype"),
    ("pandas.core.arrays.string_", "StringArray"),
    ("pandas.core.arrays.string_arrow", "ArrowStringArray"),
    ("pandas.core.frame", "DataFrame"),
    ("pandas.core.internals.managers", "BlockManager"),
    ("pandas.core.internals.blocks", "new_block"),
    ("pandas.core.internals.blocks", "Block"),
    ("pandas.core.internals.blocks", "ObjectBlock"),
    ("pandas.core.internals.blocks", "FloatBlock"),
    ("pandas.core.internals.blocks", "IntBlock"),
    ("pandas.core.internals.blocks", "BoolBlock"),
    ("pandas.core.internals.blocks", "NumpyBlock"),
    ("pandas._libs.internals", "_unpickle_block"),
    ("pandas.core.indexes.base", "_new_Index"),
    ("pandas.core.indexes.base", "Index"),
    ("pandas.core.indexes.range", "RangeIndex"),
    ("pandas.core.indexes.numeric", "Int64Index"),
    # pyarrow-backed string columns (the default in pandas 3): buffers and a type by name
    ("pyarrow.lib", "_restore_array"),
    ("pyarrow.lib", "py_buffer"),
    ("pyarrow.lib", "type_for_alias"),
}


class _Refused(pickle.UnpicklingError):
    """A global outside the allow-list."""


class _FrameUnpickler(pickle.Unpickler):
    """Builds only the objects of a plain pandas data frame; refuses any other global."""

    def find_class(self, module: str, name: str) -> Any:
        key = ("builtins" if module == "__builtin__" else module, name)
        if key in _PICKLE_GLOBALS or (module == "numpy.dtypes" and name.endswith("DType")):
            return super().find_class(module, name)
        raise _Refused(f"{module}.{name}")


def read_frame_pickle(path: str | os.PathLike[str]) -> pd.DataFrame:
    """Read a pickled pandas data frame (RouterBench's ``routerbench_0shot.pkl``) safely.

    Unpickling can run any code a pickle names; this unpickler builds only the pandas and
    numpy classes a data frame of numbers and strings is made of (an allow-list) and refuses
    anything else, so a hostile pickle fails instead of running. A pickled ``dict`` of
    columns is accepted too.

    Args:
        path: The ``.pkl`` file.

    Returns:
        The data frame.

    Raises:
        EvalcoreError: not a pickle, not a data frame, or an object outside the allow-list
            (the message names it; convert such a file you trust to Parquet with pandas).
    """
    p = Path(path)
    try:
        with p.open("rb") as fh:
            obj = _FrameUnpickler(fh).load()
    except _Refused as exc:
        raise EvalcoreError(
            f"the pickle refers to {exc}, which is not part of a plain data frame; evalcore does "
            "not load it (if you trust the file, convert it with pandas: "
            "pd.read_pickle(path).to_parquet(...))",
            path=p,
        ) from exc
    except (
        pickle.UnpicklingError,
        EOFError,
        ValueError,
        TypeError,
        AttributeError,
        ImportError,
        IndexError,
        KeyError,
    ) as exc:
        raise EvalcoreError(f"cannot read the pickle: {type(exc).__name__}: {exc}", path=p) from exc
    if isinstance(obj, dict):
        obj = pd.DataFrame(obj)
    if not isinstance(obj, pd.DataFrame):
        raise EvalcoreError(f"the pickle holds a {type(obj).__name__}, not a data frame", path=p)
    return obj
