"""The rows of a batch: read one at a time from JSON Lines or CSV, mapped to the pattern's inputs.

    source = RowSource("rows.csv", spec, mapping={"question": "task"})
    count = source.check()          # every row, before anything runs; RowError names the first bad one
    for row in source.rows(start=0):
        row.index, row.inputs

A JSONL row is an object; a CSV row is a line under the header. A key or
column supplies the parameter (or config key) of the same name, or the one
`--map COLUMN=PARAM` names; `--map COLUMN=` ignores a column. A column that
supplies nothing the pattern declares, and a required parameter no column (nor
a fixed `--input`) supplies, are errors naming the file, line, row and column.
CSV cells are text: a cell for a parameter that is not a string is read as JSON
when it parses (as `prose run --input` does). Rows are streamed, never held all
at once, except from a stream (`--inputs -`, standard input, or a FIFO), which is read
once, whole, and at most `prose.bounded.MAX_STREAM_BYTES`. A JSONL row is at most
`MAX_ROW_CHARS` characters and is read by `loads_bounded` (no 5,000-digit number, no
nesting past `MAX_DEPTH`): past a bound is an error naming the file, line and row.
"""

from __future__ import annotations

import csv
import hashlib
import io
import json
import stat
import sys
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

from prose.bounded import MAX_ROW_CHARS, MAX_STREAM_BYTES, JSONBoundError, loads_bounded
from prose.errors import ProseError

if TYPE_CHECKING:
    from prose.spec.model import PatternSpec

_STRING_TYPES = ("string", "str", "text")


class RowError(ProseError):
    """A row that cannot supply the pattern's inputs: `file:line: row N: message`."""

    def __init__(self, file: str, line: int, row: int | None, message: str) -> None:
        self.file, self.line, self.row, self.message = file, line, row, message
        where = f"{file}:{line}: " + (f"row {row}: " if row is not None else "")
        super().__init__(where + message)


@dataclass(frozen=True, slots=True)
class Row:
    """One row: its 0-based index among the rows, the line it starts on, the pattern's inputs."""

    index: int
    line: int
    inputs: dict[str, Any]

    def digest(self) -> str:
        """The sha256 of the row's inputs (`inputs_digest`), recorded with its result."""
        return inputs_digest(self.inputs)


def inputs_digest(inputs: Mapping[str, Any]) -> str:
    """The sha256 of `inputs` as canonical JSON (keys sorted): what a results line records
    as `inputs_sha256`, so `--resume` never gives a row the result of other inputs."""
    text = json.dumps(inputs, sort_keys=True, ensure_ascii=False, separators=(",", ":"),
                      default=str)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def parse_map(items: tuple[str, ...] | list[str]) -> dict[str, str]:
    """`--map COLUMN=PARAM` options as a dict (an empty PARAM ignores the column)."""
    mapping: dict[str, str] = {}
    for item in items:
        column, sep, param = item.partition("=")
        if not sep or not column.strip():
            raise ValueError(f"`--map {item}`: expected COLUMN=PARAM")
        mapping[column.strip()] = param.strip()
    return mapping


class RowSource:
    """The rows of `path` (`.jsonl`/`.ndjson`, or `.csv`) for a pattern with spec `spec`.

    `fixed` are inputs every row gets unless it supplies them itself (`--input`, an instance's).
    """

    def __init__(
        self,
        path: str | Path,
        spec: PatternSpec,
        mapping: Mapping[str, str] | None = None,
        fixed: Mapping[str, Any] | None = None,
    ) -> None:
        self.path = Path(path)
        self.name = str(path)
        self.spec = spec
        self.mapping = dict(mapping or {})
        self.fixed = dict(fixed or {})
        slots = set(spec.slot_names)
        self.known = [p.name for p in spec.parameters if p.name not in slots]
        self.known += [c for c in spec.config_names if c not in self.known]
        self.required = [p.name for p in spec.required_inputs()]
        self.is_csv = self.path.suffix.lower() == ".csv"
        # A stream (`-`: standard input; a FIFO, a device) can be read once only, and the
        # rows are read twice (checked, then run): it is read whole, once, here.
        self._text: str | None = _read_stream(self.path, self.name) if self.name == "-" or (
            _is_stream(self.path)) else None
        for column, param in self.mapping.items():
            if param and param not in self.known:
                raise RowError(self.name, 0, None, f"`--map {column}={param}`: `{param}` is "
                               f"not a parameter of the pattern ({self._known_text()})")

    def _known_text(self) -> str:
        return "parameters: " + (", ".join(f"`{name}`" for name in self.known) or "none")

    def check(self) -> int:
        """Read every row once and raise RowError for the first bad one; the number of rows."""
        count = 0
        for _ in self.rows():
            count += 1
        return count

    def rows(self, start: int = 0) -> Iterator[Row]:
        """The rows from index `start` on, each checked (unknown and missing columns)."""
        for index, line, record in self._records():
            if index < start:
                continue
            yield Row(index, line, self._inputs(index, line, record))

    def _records(self) -> Iterator[tuple[int, int, dict[str, Any]]]:
        handle: IO[str]
        if self._text is not None:
            handle = io.StringIO(self._text.removeprefix("\ufeff"),
                                 newline="" if self.is_csv else None)
        else:
            try:
                handle = self.path.open(encoding="utf-8-sig",
                                        newline="" if self.is_csv else None)
            except OSError as error:
                raise RowError(self.name, 0, None,
                               f"cannot read: {error.strerror or error}") from None
        with handle:
            try:
                yield from self._csv(handle) if self.is_csv else self._jsonl(handle)
            except UnicodeDecodeError:
                raise RowError(self.name, 0, None, "not UTF-8 text") from None

    def _jsonl(self, handle: Any) -> Iterator[tuple[int, int, dict[str, Any]]]:
        index = 0
        for number, text in enumerate(handle, start=1):
            if not text.strip():
                continue
            if len(text) > MAX_ROW_CHARS:
                raise RowError(self.name, number, index, f"the row is longer than "
                               f"{MAX_ROW_CHARS:,} characters")
            try:
                record = loads_bounded(text)
            except json.JSONDecodeError as error:
                raise RowError(self.name, number, index, f"not JSON: {error.msg} "
                               f"(column {error.colno})") from None
            except JSONBoundError as error:  # a 5,000-digit number, nested too deep
                raise RowError(self.name, number, index, f"the JSON is past a bound: "
                               f"{error}") from None
            if not isinstance(record, dict):
                raise RowError(self.name, number, index, "a row must be a JSON object "
                               f"(of column: value), not {type(record).__name__}")
            yield index, number, record
            index += 1

    def _csv(self, handle: Any) -> Iterator[tuple[int, int, dict[str, Any]]]:
        reader = csv.reader(handle)
        try:
            header = next(reader)
        except StopIteration:
            return
        except csv.Error as error:
            raise RowError(self.name, 1, None, f"bad CSV header: {error}") from None
        if len(set(header)) != len(header):
            twice = next(name for name in header if header.count(name) > 1)
            raise RowError(self.name, 1, None, f"column `{twice}` appears twice in the header")
        for index, name in enumerate(header):
            self._column_target(name, 1, None, index=index)  # an unknown column fails now
        row_index = 0
        line = reader.line_num + 1
        while True:
            try:
                cells = next(reader)
            except StopIteration:
                return
            except csv.Error as error:
                raise RowError(self.name, line, row_index, f"bad CSV: {error}") from None
            if cells:
                if len(cells) != len(header):
                    raise RowError(self.name, line, row_index, f"{len(cells)} cells, but the "
                                   f"header has {len(header)} columns")
                yield row_index, line, dict(zip(header, cells, strict=True))
                row_index += 1
            line = reader.line_num + 1

    def _column_target(self, column: str, line: int, row: int | None, index: int = 0) -> str:
        """The input a column supplies ('' when it is ignored), or RowError."""
        target = self.mapping.get(column, column)
        if target and target not in self.known:
            raise RowError(self.name, line, row, f"column `{column}` is not a parameter of the "
                           f"pattern ({self._known_text()}); map it with `--map {column}=PARAM` "
                           f"or ignore it with `--map {column}=`")
        return target

    def _inputs(self, index: int, line: int, record: Mapping[str, Any]) -> dict[str, Any]:
        inputs = dict(self.fixed)
        for column, value in record.items():
            target = self._column_target(str(column), line, index)
            if target:
                inputs[target] = self._typed(target, value) if self.is_csv else value
        for name in self.required:
            if name not in inputs:
                columns = [c for c, p in self.mapping.items() if p == name] or [name]
                raise RowError(self.name, line, index, f"missing column `{columns[0]}`: it "
                               f"supplies the required parameter `{name}` (or map another "
                               f"with `--map COLUMN={name}`)")
        return inputs

    def _typed(self, name: str, cell: str) -> Any:
        item = self.spec.config_param(name) or self.spec.parameter(name)
        declared = getattr(item, "type", None)
        if declared in _STRING_TYPES:
            return cell
        try:
            return loads_bounded(cell)
        except ValueError:  # not JSON, or past a bound: the cell stays text
            return cell


def _is_stream(path: Path) -> bool:
    """Whether `path` is a FIFO or a device: something that can be read once only."""
    try:
        mode = path.stat().st_mode
    except OSError:
        return False  # the open that follows says why
    return stat.S_ISFIFO(mode) or stat.S_ISCHR(mode) or stat.S_ISSOCK(mode)


def _read_stream(path: Path, name: str) -> str:
    """The whole text of a stream (`-`: standard input), read once, at most `MAX_STREAM_BYTES`."""
    try:
        if name == "-":
            data = sys.stdin.buffer.read(MAX_STREAM_BYTES + 1)
        else:
            with path.open("rb") as handle:
                data = handle.read(MAX_STREAM_BYTES + 1)
    except OSError as error:
        raise RowError(name, 0, None, f"cannot read: {error.strerror or error}") from None
    if len(data) > MAX_STREAM_BYTES:
        raise RowError(name, 0, None, f"more than {MAX_STREAM_BYTES:,} bytes of rows from a "
                       "stream (it is read whole, once): write them to a file")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise RowError(name, 0, None, "not UTF-8 text") from None
