"""The language's rules, written once, for the linter, the run time and the audit.

Each module here is one kind of rule, imported by `prose.check`, `prose.runtime`
and `prose.ledger` alike (none of those imports another for a rule):

- `properties`: the reserved call properties and which of them reach the model;
- `types`: the type language (output schemas, `schema:`, config types): its parse, the
  JSON schema each type means, and what a field read or an enum comparison may be;
- `words`: how names and phrases split into words, `requires:` matching, whole-word search;
- `error_kinds`: the kinds an error object can have (`err.kind`) and which a retry cannot fix;
- `flows`: how provenance and literal text pass through every construct, normal and strict;
- `channels`: what a call sends into a model, channel by channel;
- `loops`: one shape per loop (its variables, bound, condition, bodies), read by every
  "what bounds this loop?" question;
- `invariants`: the checkable invariant forms, one frozen dataclass each;
- `policy`: the checkable invariants compiled into a `Policy`, whose `violations` is the
  one judge of a call (the PH rules ask it about static flows, the interpreter about
  carried provenance, the audit about recorded provenance).

This package imports nothing from `check`, `runtime`, `ledger` or `llm`.
"""
