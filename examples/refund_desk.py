"""The irreversible step of examples/approval-gate-person.yaml: issuing a refund.

`issue_refund` appends the approved proposal to a ledger file (`REFUND_LEDGER`, else
`refunds.log` in the current folder) and returns what it did. The pattern's invariants
(`executor` runs only after `approver` returns `approved` == true, and gets the same
`proposal` the approver got) are checked before it is called, by the linter, by the run
time and by `prose audit`.
"""

from __future__ import annotations

import os
from pathlib import Path


def issue_refund(proposal: str) -> str:
    """Record the refund as approved; its line in the ledger is the transaction."""
    ledger = Path(os.environ.get("REFUND_LEDGER", "refunds.log"))
    with ledger.open("a", encoding="utf-8") as handle:
        handle.write(proposal.replace("\n", " ") + "\n")
        number = handle.tell()
    return f"Issued as approved (ledger {ledger.name}, entry at byte {number}): {proposal}"
