"""`prose batch`: one pattern over many rows, resumable, in one process or on a Ray cluster.

- `rows`: rows read one at a time from JSONL or CSV and mapped to the pattern's inputs
- `plan`: the batch's settings and how one row runs (its trace is its journal)
- `output`: the results file, in input order, appended and fsynced; `--resume`'s scan
- `driver`: feeds rows to an executor in a bounded window, writes records, shows progress
- `local`: the rows as tasks of one event loop, sharing one router, cap, cache and budget
- `ray_executor`: the rows on Ray actors, one router per worker (imports Ray)
- `progress`: the bar, plain or JSON progress lines

docs/batch.md describes the command.
"""
