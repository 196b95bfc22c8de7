"""Step infos on the wire as the local managers carry them: a table of numbers, schemas announced once.

An info whose keys and value types were seen before for its env (``backends.info_table``)
travels as one row of float64 values in the step reply's ``info_values`` array with its schema
number in ``info_numbers``; the first info of a new schema travels as an encoded value and
announces the schema, and infos that never fit a table (strings, arrays, nested dicts) always
travel encoded. Each side keeps its own table, rebuilt at every launch.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ding_env.env_manager.backends.info_table import INFO_SLOTS, MAX_SCHEMAS, InfoReader, InfoSchema, InfoWriter
from ding_env.remote.errors import WireError

TYPES = {"float": float, "int": int, "bool": bool}


class InfoSender:
    """The server's side: the step reply fields carrying the infos of a step's rows.

    Args:
        env_num: The server's env count.
    """

    def __init__(self, env_num: int) -> None:
        self.values = np.zeros((env_num, INFO_SLOTS), dtype=np.float64)
        self.numbers = np.zeros(env_num, dtype=np.int8)
        self.writer = InfoWriter(self.values, self.numbers)
        self.width = 0  # value slots the known schemas use
        self.last_announced: dict[int, int] = {}  # {env_id: schema number} the last reply announced

    def fields(self, env_ids: np.ndarray, infos: list[dict]) -> dict[str, Any]:
        """``info_numbers``, ``info_values``, ``info_schemas`` and ``info`` (``{row: info}`` outside the table).

        An empty info is in neither: the receiver gives a row with no info an empty dict.
        """
        self.writer.start_step(0, len(self.numbers))
        if not any(infos):  # the usual mid-episode step: no env has an info, and the reply no info table
            return {"info_numbers": None, "info_values": None, "info_schemas": [], "info": {}}
        others = {}
        for row, (env_id, info) in enumerate(zip(env_ids.tolist(), infos, strict=True)):
            if info and not self.writer.put(env_id, info):  # an empty info travels as nothing at all
                others[row] = info
        announced = self.writer.take_announced()
        self.last_announced = {env_id: number for env_id, (number, _) in announced.items()}
        schemas = [
            (env_id, number, list(schema.keys), [kind.__name__ for kind in schema.types])
            for env_id, (number, schema) in announced.items()
        ]
        self.width = max([self.width, *(len(keys) for _, _, keys, _ in schemas)])
        in_table = bool(np.count_nonzero(self.numbers))
        return {
            "info_numbers": self.numbers[env_ids] if in_table else None,
            "info_values": self.values[env_ids, : self.width] if in_table else None,
            "info_schemas": schemas,
            "info": others,
        }

    def retract(self) -> None:
        """Forget the schemas the last reply announced: it was not sent, so they are announced again."""
        for env_id, number in self.last_announced.items():
            self.writer.forget(env_id, number)  # an env learns at most one schema per step: the last
        self.last_announced = {}


class InfoReceiver:
    """The client's side: the infos of a step reply's rows, in row order.

    Args:
        env_num: The server's env count.
    """

    def __init__(self, env_num: int) -> None:
        self.env_num = env_num
        self.values = np.zeros((env_num, INFO_SLOTS), dtype=np.float64)
        self.numbers = np.zeros(env_num, dtype=np.int8)
        self.reader = InfoReader(self.values, self.numbers)

    def infos(self, env_ids: np.ndarray, reply: dict) -> list[dict]:
        """The info of each row of a step reply (``env_ids``: the server's ids of the rows).

        Raises:
            WireError: If the reply's info fields do not fit its rows or name unknown schemas.
        """
        self.learn(reply["info_schemas"])
        numbers, values, others = reply["info_numbers"], reply["info_values"], reply["info"]
        rows = len(env_ids)
        if type(others) is not dict or not all(type(info) is dict for info in others.values()):
            raise WireError("step reply: info must map rows to info dicts")
        if numbers is None and values is None:  # no row's info is in the table
            return [others.get(row, {}) for row in range(rows)]
        if numbers is None or values is None:
            raise WireError("step reply: info_numbers and info_values come together")
        if numbers.shape != (rows,) or values.ndim != 2 or len(values) != rows or values.shape[1] > INFO_SLOTS:
            raise WireError(f"step reply: info tables of shapes {numbers.shape} and {values.shape} for {rows} rows")
        if numbers.dtype != self.numbers.dtype or values.dtype != self.values.dtype:
            raise WireError(f"step reply: info tables of dtypes {numbers.dtype} and {values.dtype} (int8, float64)")
        self.numbers[:] = 0
        self.numbers[env_ids] = numbers
        self.values[env_ids, : values.shape[1]] = values
        try:
            table = self.reader.read(0, self.env_num)
        except KeyError as error:
            raise WireError(f"step reply: an info under schema {error} that was never announced") from None
        infos = []
        for row, env_id in enumerate(env_ids.tolist()):
            info = table.get(env_id)
            if info is None:
                info = others.get(row, {})  # neither in the table nor sent: the env's info was empty
            infos.append(info)
        return infos

    def learn(self, schemas: list) -> None:
        """Remember the schemas the server announced."""
        announced = {}
        for env_id, number, keys, types in schemas:
            if not 0 <= env_id < self.env_num or not 1 <= number <= MAX_SCHEMAS or len(keys) != len(types):
                raise WireError(f"step reply: schema {number} of env {env_id}: {len(keys)} keys, {len(types)} types")
            if len(keys) > INFO_SLOTS:
                raise WireError(f"step reply: a schema of {len(keys)} keys (at most {INFO_SLOTS})")
            announced[env_id] = (number, InfoSchema(tuple(keys), tuple(TYPES[name] for name in types)))
        self.reader.learn(announced)
