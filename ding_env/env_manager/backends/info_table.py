"""Per-step infos of fixed numeric keys, carried in shared memory instead of pickled through a pipe.

Many envs return an info on every step with the same few numeric keys
(MuJoCo's ``x_position``/``reward_ctrl``..., ALE's ``lives``/``frame_number``...).
Pickling it through a pipe costs a message per worker per step. Instead, the
first time an env shows an info of a new *schema* (its keys, in order, and the
type of each value), the info travels by pipe together with the schema; from
then on, infos of a known schema are written as float64 values into the env's
row of a shared table, with the schema's number in a per-env byte, and the
parent rebuilds the dict. Only ``float``, ``int`` (within +-2**53, where float64
is exact) and ``bool`` values qualify, so every info comes back equal, with the
same types; anything else keeps using the pipe.
"""

from __future__ import annotations

import struct
from collections.abc import Callable
from typing import NamedTuple

import numpy as np

# Values per env row, and schemas remembered per env (e.g. one for mid-episode steps, one for done steps).
INFO_SLOTS = 16
MAX_SCHEMAS = 4
_EXACT_INT = 2**53
_EXACT_FLOAT = float(_EXACT_INT)
_TABLE_TYPES = (float, int, bool)
_ROW_BYTES = INFO_SLOTS * 8
_COLUMN_TYPES = {"b": bool, "i": int, "u": int, "f": float}  # a column's dtype kind -> its rows' value type


class InfoSchema(NamedTuple):
    """The keys of an info, in order, and the Python type of each value."""

    keys: tuple
    types: tuple

    def fits(self, info: dict) -> bool:
        """Whether ``info`` has exactly these keys and value types, with every int exact in float64."""
        values = tuple(info.values())
        return tuple(info) == self.keys and tuple(map(type, values)) == self.types and self.exact(values)

    def exact(self, values: tuple) -> bool:
        """Whether every int of ``values`` (of this schema's types) is exact in float64."""
        if int not in self.types:
            return True
        return all(-_EXACT_INT <= value <= _EXACT_INT for value in values if type(value) is int)

    def packer(self) -> struct.Struct:
        """Packs the values of a fitting info into (and out of) the first slots of a table row."""
        return struct.Struct(f"={len(self.keys)}d")

    def decoder(self) -> Callable[[tuple], dict]:
        """A function turning a row's float values back into the info dict."""
        keys, types = self.keys, self.types
        if all(kind is float for kind in types):
            return lambda values: dict(zip(keys, values, strict=True))
        return lambda values: {key: kind(value) for key, kind, value in zip(keys, types, values, strict=True)}


# The schema of ``timestep.final_info``'s dict for a row with no info of its own: its keys in order, their types.
FINAL_SCHEMA = InfoSchema(("truncated", "eval_episode_return"), (bool, float))
# Stores the infos of many env ids at once, ``{key: 1-d array}`` (row ``k`` for id ``k``), given their schema
# when known: ``InfoWriter.put_rows``, which says which rows it stored (None: all).
PutRows = Callable[[np.ndarray, dict, InfoSchema | None], np.ndarray | None]


def columns_schema(columns: dict) -> InfoSchema | None:
    """The schema of the infos whose values are the rows of ``columns`` (``{key: 1-d array}``), or None.

    Each row's info is what ``batch_step.info_row`` makes of it (numpy scalars as Python ones), so a
    bool column gives ``bool`` values, an integer one ``int`` and a float one (of at most 64 bits) ``float``.
    None when some column is not a plain 1-d array of those kinds (a masked array's rows may lack keys).
    """
    if len(columns) > INFO_SLOTS:
        return None
    types = []
    for key, column in columns.items():
        if type(key) is not str or type(column) is not np.ndarray or column.ndim != 1:
            return None
        kind = _COLUMN_TYPES.get(column.dtype.kind)
        if kind is None or column.dtype.itemsize > 8:
            return None
        types.append(kind)
    return InfoSchema(tuple(columns), tuple(types))


def schema_of(info: dict) -> InfoSchema | None:
    """The schema of ``info`` if it can travel through the table, else None."""
    if len(info) > INFO_SLOTS or not all(type(key) is str for key in info):
        return None
    schema = InfoSchema(tuple(info), tuple(type(value) for value in info.values()))
    if not all(kind in _TABLE_TYPES for kind in schema.types) or not schema.fits(info):
        return None
    return schema


class InfoWriter:
    """The worker's side: stores infos of known schemas and learns new ones.

    Args:
        values: The shared ``(env_num, INFO_SLOTS)`` float64 table.
        schema_numbers: The shared ``(env_num,)`` int8 array; 0 means "no info in the table".
    """

    def __init__(self, values: np.ndarray, schema_numbers: np.ndarray) -> None:
        self.table = _bytes_of(values)
        self.slots = list(values.T)  # each value slot's column, for put_rows (a 1-d assignment beats a 2-d one)
        self.schema_numbers = schema_numbers
        self.number_words = memoryview(schema_numbers)  # one item set per stored info: cheaper than numpy's
        self.schemas: dict[int, list[tuple[InfoSchema, struct.Struct]]] = {}
        # {schema: each env's number for it (0: not learned)}, kept with ``schemas``: put_rows looks rows up at once.
        self.numbers: dict[InfoSchema, np.ndarray] = {}
        # Schemas learned since the last take_announced: ``{env_id: (number, schema)}``, for the parent.
        self.announced: dict[int, tuple[int, InfoSchema]] = {}
        self.wrote = True  # so the first step clears rows a replaced worker may have left behind

    def start_step(self, first: int, stop: int) -> None:
        """Clear the rows ``[first, stop)`` if the last step wrote any (cheap when infos never fit)."""
        if self.wrote:
            self.schema_numbers[first:stop] = 0
            self.wrote = False

    def put(self, env_id: int, info: dict) -> bool:
        """Store ``info`` in the table if its schema is known; True if stored.

        Otherwise the caller sends ``info`` by pipe; a new schema is learned and kept in
        ``announced``, to travel with it.
        """
        schemas = self.schemas.setdefault(env_id, [])
        if schemas:  # InfoSchema.fits, with the keys, values and types made once for every schema tried
            keys, values = tuple(info), tuple(info.values())
            types = tuple(map(type, values))
            for number, (schema, packer) in enumerate(schemas, 1):
                if keys == schema.keys and types == schema.types and schema.exact(values):
                    packer.pack_into(self.table, env_id * _ROW_BYTES, *values)
                    self.number_words[env_id] = number
                    self.wrote = True
                    return True
        if len(schemas) < MAX_SCHEMAS:
            schema = schema_of(info)
            if schema is not None:
                schemas.append((schema, schema.packer()))
                self.announced[env_id] = (len(schemas), schema)
                if schema not in self.numbers:
                    self.numbers[schema] = np.zeros(len(self.schema_numbers), dtype=np.int8)
                self.numbers[schema][env_id] = len(schemas)
        return False

    def put_rows(self, env_ids: np.ndarray, columns: dict, schema: InfoSchema | None = None) -> np.ndarray | None:
        """Store the infos of many envs at once: env ``env_ids[k]``'s is row ``k`` of every column.

        A batch env's infos come as ``{key: 1-d array}`` (one row per sub-env); the rows of envs that
        learned their schema (by ``put``) are written with one assignment per key, with no dict per row.

        Args:
            env_ids: The envs, distinct.
            columns: ``{key: 1-d array}``, a row per env.
            schema: ``columns_schema(columns)``, when the caller knows it.

        Returns:
            None when every row was stored, else which rows were (bool per row): the caller passes the
            others to ``put`` as dicts, so their envs learn the schema and announce it.
        """
        if schema is None:
            schema = columns_schema(columns)
        known = None if schema is None else self.numbers.get(schema)
        if known is None:
            return np.zeros(len(env_ids), dtype=bool)
        numbers = known[env_ids]
        # As the table holds them (cast first: numpy's casting assignment into a strided slot costs several times more).
        values = [column if column.dtype == np.float64 else column.astype(np.float64) for column in columns.values()]
        stored = None if np.count_nonzero(numbers) == len(env_ids) else numbers != 0
        for value, kind in zip(values, schema.types, strict=True):
            if kind is int:  # an int of magnitude 2**53 or more may not be exact in float64: that row takes the pipe
                exact = np.abs(value) < _EXACT_FLOAT
                stored = exact if stored is None else stored & exact
        ids = env_ids
        if stored is not None:
            count = np.count_nonzero(stored)
            if not count:
                return stored
            if count == len(env_ids):
                stored = None
            else:
                ids, numbers, values = env_ids[stored], numbers[stored], [value[stored] for value in values]
        for slot, value in zip(self.slots, values, strict=False):  # the slots the columns fill
            slot[ids] = value
        self.schema_numbers[ids] = numbers
        self.wrote = True
        return stored

    def forget(self, env_id: int, number: int) -> None:
        """Forget env ``env_id``'s schemas from number ``number`` on (their announcement was not delivered)."""
        for schema, _ in self.schemas[env_id][number - 1 :]:
            self.numbers[schema][env_id] = 0
        del self.schemas[env_id][number - 1 :]

    def take_announced(self) -> dict[int, tuple[int, InfoSchema]]:
        """The schemas learned since the last call, for the parent's ``InfoReader.learn``."""
        announced, self.announced = self.announced, {}
        return announced

    def release(self) -> None:
        """Drop the views of the table (before its shared memory is released)."""
        self.table = self.schema_numbers = self.number_words = None
        self.slots = []


class InfoReader:
    """The parent's side: the schemas workers announced, and the infos stored under them.

    Args:
        values: The shared ``(env_num, INFO_SLOTS)`` float64 table.
        schema_numbers: The shared ``(env_num,)`` int8 array.
    """

    def __init__(self, values: np.ndarray, schema_numbers: np.ndarray) -> None:
        self.table = _bytes_of(values)
        self.schema_numbers = schema_numbers
        self.decoders: dict[tuple[int, int], tuple[struct.Struct, Callable[[tuple], dict]]] = {}

    def learn(self, announced: dict[int, tuple[int, InfoSchema]]) -> None:
        """Remember the schemas a worker announced (a restarted worker re-announces from 1)."""
        for env_id, (number, schema) in announced.items():
            self.decoders[env_id, number] = (schema.packer(), schema.decoder())

    def read(self, first: int, stop: int) -> dict[int, dict]:
        """``{env_id: info}`` for the envs in ``[first, stop)`` whose info this step is in the table."""
        numbers = self.schema_numbers[first:stop].tolist()
        infos = {}
        for env_id, number in enumerate(numbers, first):
            if number:
                unpacker, decode = self.decoders[env_id, number]
                infos[env_id] = decode(unpacker.unpack_from(self.table, env_id * _ROW_BYTES))
        return infos

    def release(self) -> None:
        """Drop the views of the table (before its shared memory is released)."""
        self.table = self.schema_numbers = None


def _bytes_of(values: np.ndarray) -> memoryview:
    """The table's bytes, for ``struct`` to pack rows into and unpack them from."""
    return memoryview(values).cast("B")
