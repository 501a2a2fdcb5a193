"""State files that cannot run code when read: JSON for the structure, npz for arrays (L0).

``dpol run`` checkpoints hold learners mid-stream (counters, noise generators, releases).
A pickle would do, but loading a pickle runs whatever code its author put in it, and a
checkpoint folder is a file someone else may have written. Here the file is an ``.npz``
archive read with ``allow_pickle=False``: numeric arrays, plus one JSON document for
everything else. Reading it builds only plain values (numbers, strings, lists, dicts,
tuples, sets, paths), numpy arrays, scalars, seed sequences and generators, and
instances of classes defined in dpol or dp-accounting, made by ``cls.__new__`` with
their attributes set directly: no ``__init__``, ``__setstate__`` or ``__reduce__`` of
anything runs, and a class is looked up only in those packages' modules, only if it was
defined there; a method only where dpol or dp-accounting defines it, on one of their
objects. Objects shared in the saved state stay shared when read (learners that hold one
counter twice, a bound method of their own constraint set).

Reading runs no code, but what is read is then used: a file that sets a dpol object's
attributes at will can steer dpol's code (a noise scale of 0, a method swapped for
another). Read only files you wrote; ``dpol run`` signs its checkpoints with a key of
the user's (:mod:`dpol.experiments.runs.checkpoint`) and reads none it did not sign.

Examples
--------
>>> import io
>>> from dpol.accounting import PrivacyGuarantee
>>> state = {"t": 3, "w": np.arange(3.0), "g": PrivacyGuarantee(1.0, 1e-5),
...          "rng": np.random.default_rng(0), "key": (1, "a")}
>>> buf = io.BytesIO(); write_state(buf, state); _ = buf.seek(0)
>>> back = read_state(buf)
>>> back["g"] == state["g"], back["w"].tolist(), back["key"]
(True, [0.0, 1.0, 2.0], (1, 'a'))
>>> float(back["rng"].normal()) == float(state["rng"].normal())  # the same stream
True
"""

from __future__ import annotations

import enum
import importlib
import json
import types
import zipfile
from pathlib import Path, PurePath

import numpy as np

from dpol.errors import DpolError

__all__ = ["StateFileError", "read_state", "write_state"]

#: packages whose classes a state file may instantiate (checked before any import)
_PACKAGES = ("dpol", "dp_accounting")
#: numpy bit generators a state file may rebuild
_BIT_GENERATORS = {k: getattr(np.random, k) for k in ("PCG64", "PCG64DXSM", "SFC64",
                                                       "MT19937", "Philox")}
_DOCUMENT = "state.json"
#: what a document may hold besides plain JSON values (each a _Decoder method)
_KINDS = frozenset({"list", "dict", "tuple", "set", "frozenset", "array", "objects", "path",
                    "seedseq", "generator", "type", "function", "method", "enum", "object"})
_FORMAT = "dpol-state-1"
_STRATEGIES = "dpol.counters.strategies"
#: modules renamed since state files were first written, old path -> new: a file names
#: the module a class was defined in when it was written (CHANGELOG, "Names")
MOVED_MODULES = {
    **{f"{_STRATEGIES}.{m}": f"{_STRATEGIES}.{m}_strategy" for m in (
        "banded_matrix", "banded_toeplitz", "blt", "dense_mean", "honaker", "padded_tree",
        "toeplitz", "tree", "unbounded_tree", "window_tree")},
    f"{_STRATEGIES}.banded_optimizer": f"{_STRATEGIES}.banded_toeplitz_optimizer",
    "dpol.counters._bits": f"{_STRATEGIES}._bits",
    "dpol.accounting.calibration": "dpol.accounting.closed_forms",
    "dpol.learners.noisy_projected_gradient": "dpol.learners.private_projected_sgd",
}


class StateFileError(DpolError, ValueError):
    """A state file that is not one dpol wrote, or not whole (truncated, altered)."""


def write_state(file, obj: object) -> None:
    """Write ``obj`` to ``file`` (a path or a binary file object) as a state file.

    Raises ``TypeError`` for an object the format cannot hold (a lambda, an open file,
    an instance of a class outside dpol and dp-accounting).
    """
    arrays: dict[str, np.ndarray] = {}
    document = {"format": _FORMAT, "root": _Encoder(arrays).encode(obj)}
    text = json.dumps(document, allow_nan=True, separators=(",", ":"))
    arrays[_DOCUMENT] = np.frombuffer(text.encode(), dtype=np.uint8)
    np.savez(file, **arrays)


def read_state(file) -> object:
    """Read what :func:`write_state` wrote; a foreign, altered or truncated file is a
    :class:`StateFileError` (nothing in it runs: see the module docstring)."""
    try:
        if not _is_zip(file):  # else numpy would call it pickled data, "to load unsafely"
            raise StateFileError("not an npz archive")
        with np.load(file, allow_pickle=False) as archive:
            # the document first, then only the arrays it names, read as they are met
            document = json.loads(archive[_DOCUMENT].tobytes().decode())
            if not isinstance(document, dict) or document.get("format") != _FORMAT:
                raise StateFileError(f"not a {_FORMAT} file")
            return _Decoder(archive).decode(document["root"])
    except StateFileError:
        raise
    except (OSError, ValueError, KeyError, TypeError, AttributeError, IndexError,
            zipfile.BadZipFile, EOFError, UnicodeDecodeError, RecursionError,
            MemoryError) as exc:
        raise StateFileError(f"{type(exc).__name__}: {exc}"[:300]) from None


def _is_zip(file) -> bool:
    """Whether ``file`` (a path or a seekable binary file) starts as a zip archive does."""
    if hasattr(file, "read"):
        start = file.tell()
        head = file.read(4)
        file.seek(start)
    else:
        with open(file, "rb") as fh:
            head = fh.read(4)
    return head == b"PK\x03\x04"


def _path_of(cls: type) -> str:
    return f"{cls.__module__}:{cls.__qualname__}"


def _allowed(module: str) -> bool:
    return module.split(".")[0] in _PACKAGES


class _Encoder:
    """Objects to JSON values; containers and instances carry an id so sharing survives."""

    def __init__(self, arrays: dict) -> None:
        self.arrays, self.ids = arrays, {}
        self._keep = []  # keeps encoded objects alive, so their ids stay unique

    def encode(self, o: object):
        if o is None or isinstance(o, (bool, str)):
            return o
        if isinstance(o, np.generic):
            return {"$scalar": o.dtype.str, "v": o.item()}
        if isinstance(o, (int, float)):
            return o
        if id(o) in self.ids:
            return {"$ref": self.ids[id(o)]}
        self.ids[id(o)] = n = len(self.ids)
        self._keep.append(o)
        return {"$id": n, **self._content(o)}

    def _content(self, o: object) -> dict:
        if isinstance(o, list):
            return {"$list": [self.encode(v) for v in o]}
        if isinstance(o, dict):
            return {"$dict": [[self.encode(k), self.encode(v)] for k, v in o.items()]}
        if isinstance(o, (tuple, set, frozenset)) and type(o) in (tuple, set, frozenset):
            return {"$" + type(o).__name__: [self.encode(v) for v in o]}
        if isinstance(o, np.ndarray):
            if o.dtype.hasobject:
                return {"$objects": list(o.shape), "v": [self.encode(v) for v in o.ravel()]}
            key = f"a{len(self.arrays)}"
            self.arrays[key] = o
            return {"$array": key}
        if isinstance(o, PurePath):
            return {"$path": str(o)}
        if isinstance(o, np.random.SeedSequence):
            return {"$seedseq": [self.encode(o.entropy), self.encode(o.spawn_key),
                                 o.pool_size, o.n_children_spawned]}
        if isinstance(o, np.random.Generator):
            bits = o.bit_generator
            if type(bits).__name__ not in _BIT_GENERATORS:
                raise TypeError(f"cannot save a generator on {type(bits).__name__}")
            return {"$generator": type(bits).__name__, "seed": self.encode(bits.seed_seq),
                    "state": self.encode(bits.state)}
        if isinstance(o, type):
            return {"$type": self._name(o)}
        if isinstance(o, types.FunctionType):
            return {"$function": self._name(o)}
        if isinstance(o, types.MethodType):
            return {"$method": o.__func__.__name__, "self": self.encode(o.__self__)}
        if isinstance(o, enum.Enum):
            return {"$enum": self._name(type(o)), "name": o.name}
        return {"$object": self._name(type(o)), "attrs": self.encode(_attributes(o))}

    @staticmethod
    def _name(cls: type | types.FunctionType) -> str:
        if not _allowed(cls.__module__) or "<" in cls.__qualname__:  # <locals>, <lambda>
            raise TypeError(f"cannot save {_path_of(cls)} (only classes and functions "
                            f"defined in {' and '.join(_PACKAGES)})")
        return _path_of(cls)


def _attributes(o: object) -> dict:
    """Everything an instance holds: its ``__dict__`` and its slots."""
    attrs = dict(getattr(o, "__dict__", {}))
    for cls in type(o).__mro__:
        for name in getattr(cls, "__slots__", ()):
            if name not in ("__dict__", "__weakref__") and hasattr(o, name):
                attrs[name] = getattr(o, name)
    return attrs


class _Decoder:
    """JSON values back to objects, building nothing but the kinds :class:`_Encoder` writes."""

    def __init__(self, arrays) -> None:
        self.arrays, self.objects = arrays, {}  # the open npz archive

    def decode(self, v):
        if v is None or isinstance(v, (bool, int, float, str)):
            return v
        if not isinstance(v, dict):
            raise StateFileError(f"unexpected value {v!r:.60}")
        if "$ref" in v:
            return self.objects[v["$ref"]]
        if "$scalar" in v:
            return np.dtype(v["$scalar"]).type(v["v"])
        n = v["$id"]
        kind = next(k[1:] for k in v if k.startswith("$") and k != "$id")
        if kind not in _KINDS:
            raise StateFileError(f"unknown kind {kind!r:.40}")
        out = getattr(self, "_" + kind)(v, n)
        self.objects[n] = out
        return out

    def _list(self, v, n):
        self.objects[n] = out = []  # before the items: a list may hold itself
        out.extend(self.decode(x) for x in v["$list"])
        return out

    def _dict(self, v, n):
        self.objects[n] = out = {}
        for k, x in v["$dict"]:
            out[self.decode(k)] = self.decode(x)
        return out

    def _tuple(self, v, n):
        return tuple(self.decode(x) for x in v["$tuple"])

    def _set(self, v, n):
        return {self.decode(x) for x in v["$set"]}

    def _frozenset(self, v, n):
        return frozenset(self.decode(x) for x in v["$frozenset"])

    def _array(self, v, n):
        key = v["$array"]
        if key == _DOCUMENT or key not in self.arrays.files:
            raise StateFileError(f"no array {key!r:.40}")
        return np.array(self.arrays[key])  # a writable copy

    def _objects(self, v, n):
        out = np.empty(len(v["v"]), dtype=object)
        out[:] = [self.decode(x) for x in v["v"]]
        return out.reshape(v["$objects"])

    def _path(self, v, n):
        return Path(v["$path"])

    def _seedseq(self, v, n):
        entropy, key, pool, spawned = (self.decode(x) for x in v["$seedseq"])
        return np.random.SeedSequence(entropy, spawn_key=key, pool_size=pool,
                                      n_children_spawned=spawned)

    def _generator(self, v, n):
        kind = _BIT_GENERATORS.get(v["$generator"])
        if kind is None:
            raise StateFileError(f"unknown bit generator {v['$generator']!r:.40}")
        bits = kind(self.decode(v["seed"]))
        bits.state = self.decode(v["state"])
        return np.random.Generator(bits)

    def _type(self, v, n):
        return _class(v["$type"])

    def _function(self, v, n):
        return _class(v["$function"], types.FunctionType)

    def _method(self, v, n):
        owner = self.decode(v["self"])
        method = getattr(type(owner), v["$method"], None)
        # only a method that dpol or dp-accounting defines, of one of their objects (a
        # pathlib.Path's write_bytes would let a crafted file write any file)
        if (not _allowed(type(owner).__module__) or not isinstance(method, types.FunctionType)
                or not _allowed(method.__module__)):
            raise StateFileError(f"refused method {v['$method']!r:.40} of "
                                 f"{type(owner).__name__}")
        return types.MethodType(method, owner)

    def _enum(self, v, n):
        cls = _class(v["$enum"])
        if not issubclass(cls, enum.Enum):
            raise StateFileError(f"{v['$enum']!r:.80} is no enumeration")
        return cls[v["name"]]

    def _object(self, v, n):
        cls = _class(v["$object"])
        if issubclass(cls, (BaseException, type)):
            raise StateFileError(f"{v['$object']!r:.80} cannot be read from a state file")
        obj = object.__new__(cls)  # no __init__, __new__ or __setstate__ of the class runs
        self.objects[n] = obj
        for name, value in self.decode(v["attrs"]).items():
            object.__setattr__(obj, name, value)  # frozen dataclasses and slots too
        return obj


def _class(path: object, kind: type = type) -> type:
    """The class (or function, ``kind``) named ``module:qualname``, only from dpol or
    dp-accounting and only where it is defined (a name a module imports is refused); a
    module of :data:`MOVED_MODULES` is read at its new path.

    >>> _class("dpol.counters.strategies.blt:BltStrategy").__module__
    'dpol.counters.strategies.blt_strategy'
    """
    if not isinstance(path, str) or path.count(":") != 1:
        raise StateFileError(f"bad class name {path!r:.80}")
    module, qualname = path.split(":")
    module = MOVED_MODULES.get(module, module)
    if not _allowed(module) or not all(p.isidentifier() for p in (*module.split("."),
                                                                    *qualname.split("."))):
        raise StateFileError(f"refused class {path!r:.80} (only classes of "
                             f"{' and '.join(_PACKAGES)} are read)")
    try:  # dpol's and dp-accounting's own modules (dpol loads dp-accounting on first use)
        obj = importlib.import_module(module)
    except ImportError:
        raise StateFileError(f"no module {module!r:.80}") from None
    for part in qualname.split("."):
        obj = getattr(obj, part, None)
    if (not isinstance(obj, kind) or obj.__module__ != module
            or obj.__qualname__ != qualname):
        raise StateFileError(f"no {kind.__name__} {path!r:.80}")
    return obj

