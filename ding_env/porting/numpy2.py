"""numpy names that numpy 2 (and 1.24) removed, with what replaces each (ruff's NPY201 rule covers the same).

A replacement is a template over the name the module imports numpy as (``{np}``); None means the
change is not a plain rename and the fix text says what to write.
"""

from __future__ import annotations

# name -> (replacement, fix text)
REMOVED = {
    # removed in numpy 2.0
    "bool8": ("{np}.bool_", "np.bool_"),
    "int0": ("{np}.intp", "np.intp"),
    "uint0": ("{np}.uintp", "np.uintp"),
    "float_": ("{np}.float64", "np.float64"),
    "complex_": ("{np}.complex128", "np.complex128"),
    "cfloat": ("{np}.complex128", "np.complex128"),
    "singlecomplex": ("{np}.complex64", "np.complex64"),
    "longfloat": ("{np}.longdouble", "np.longdouble"),
    "longcomplex": ("{np}.clongdouble", "np.clongdouble"),
    "clongfloat": ("{np}.clongdouble", "np.clongdouble"),
    "string_": ("{np}.bytes_", "np.bytes_"),
    "unicode_": ("{np}.str_", "np.str_"),
    "Inf": ("{np}.inf", "np.inf"),
    "Infinity": ("{np}.inf", "np.inf"),
    "infty": ("{np}.inf", "np.inf"),
    "PINF": ("{np}.inf", "np.inf"),
    "NINF": ("(-{np}.inf)", "-np.inf"),
    "NaN": ("{np}.nan", "np.nan"),
    "NAN": ("{np}.nan", "np.nan"),
    "PZERO": ("0.0", "0.0"),
    "NZERO": ("(-0.0)", "-0.0"),
    "alltrue": ("{np}.all", "np.all"),
    "sometrue": ("{np}.any", "np.any"),
    "product": ("{np}.prod", "np.prod"),
    "cumproduct": ("{np}.cumprod", "np.cumprod"),
    "round_": ("{np}.round", "np.round"),
    "row_stack": ("{np}.vstack", "np.vstack"),
    "in1d": ("{np}.isin", "np.isin"),
    "trapz": ("{np}.trapezoid", "np.trapezoid"),
    "asfarray": (None, "np.asarray(x, dtype=np.float64)"),
    "msort": (None, "np.sort(a, axis=0)"),
    "cast": (None, "np.asarray(x, dtype=...)"),
    "find_common_type": (None, "np.result_type(...) or np.promote_types(...)"),
    # removed in numpy 1.24: the builtins they aliased
    "float": ("float", "float"),
    "int": ("int", "int"),
    "object": ("object", "object"),
    "str": ("str", "str"),
    "complex": ("complex", "complex"),
    "unicode": ("str", "str"),
}


def replacement(name: str, alias: str) -> str | None:
    """The code that replaces ``alias.name`` (``np.float_`` -> ``np.float64``), or None when it is not a rename."""
    template = REMOVED[name][0]
    return None if template is None else template.format(np=alias)


def fix_text(name: str, alias: str) -> str:
    """The fix as the report states it: ``use np.float64 (ding-env port --fix does it)``."""
    template, text = REMOVED[name]
    text = text.replace("np.", f"{alias}.")
    return f"use {text}" + (" (ding-env port --fix does it)" if template is not None else "")
