"""Pattern tests: `*.test.yaml` files that run an instance with a script and check the result.

    from prose.testing import find_test_files, run_test_files
    outcomes = run_test_files(find_test_files(["examples/"]))

The format is documented in docs/testing.md and in `prose.testing.model`.
"""

from __future__ import annotations

from prose.testing.model import (
    Expectation,
    PatternTest,
    PatternTestError,
    default_name,
    load_test_file,
)
from prose.testing.runner import (
    PatternTestOutcome,
    find_test_files,
    mismatches,
    run_test,
    run_test_files,
)

__all__ = [
    "Expectation",
    "PatternTest",
    "PatternTestError",
    "PatternTestOutcome",
    "default_name",
    "find_test_files",
    "load_test_file",
    "mismatches",
    "run_test",
    "run_test_files",
]
