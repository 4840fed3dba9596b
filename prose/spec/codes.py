"""The one table of spec and instance diagnostic codes (PS100-PS239).

Each row is `(code, name, severity, summary, doc)`; `doc` is the long
documentation with the sections What it does / Why is this bad? / Example /
Use instead, so the linter's rule registry can list these codes and print
their documentation like its own rules.
"""

from __future__ import annotations

from typing import NamedTuple

from prose.diagnostics.model import Diagnostic, Label, Severity
from prose.source import Span

CATEGORY = "spec"

ERR, WARN, INFO = Severity.ERROR, Severity.WARNING, Severity.INFO


class SpecCode(NamedTuple):
    """One row of the code table."""

    code: str
    name: str
    severity: Severity
    summary: str
    doc: str


def _doc(what: str, why: str, example: str, instead: str) -> str:
    return (
        f"## What it does\n{what}\n\n## Why is this bad?\n{why}\n\n"
        f"## Example\n```markdown\n{example}\n```\n\n## Use instead\n```markdown\n{instead}\n```"
    )


_FM = "---\nname: review\nkind: pattern\nversion: 0.1.0\n---"

# fmt: off
_TABLE: tuple[SpecCode, ...] = (
    # --- the file and its frontmatter ------------------------------------------
    SpecCode("PS100", "empty-file", ERR, "the pattern file is empty", _doc(
        "Reports a pattern file with no text.",
        "An empty file declares no pattern.",
        "",
        "---\nname: review\nkind: pattern\nversion: 0.1.0\n---\n# Review")),
    SpecCode("PS101", "missing-frontmatter", ERR, "the file has no YAML frontmatter", _doc(
        "Reports a pattern file that does not start with a `---` frontmatter block.",
        "The frontmatter carries the pattern's `name` and `kind`; without it the file is not a pattern.",
        "# Review",
        "---\nname: review\nkind: pattern\nversion: 0.1.0\n---\n# Review")),
    SpecCode("PS102", "unterminated-frontmatter", ERR, "the frontmatter has no closing `---`", _doc(
        "Reports a frontmatter block opened by `---` and never closed.",
        "The whole file would be read as YAML; nothing after it can be trusted.",
        "---\nname: review\n# Review",
        "---\nname: review\nkind: pattern\nversion: 0.1.0\n---\n# Review")),
    SpecCode("PS103", "invalid-frontmatter", ERR, "the frontmatter is not a YAML mapping", _doc(
        "Reports frontmatter that is not valid YAML or not a mapping of keys to values.",
        "The keys `name`, `kind` and `version` cannot be read.",
        "---\nname: [review\n---",
        "---\nname: review\nkind: pattern\nversion: 0.1.0\n---")),
    SpecCode("PS104", "missing-name", ERR, "the frontmatter has no `name`", _doc(
        "Reports frontmatter without a `name` key.",
        "The name identifies the pattern in traces and libraries.",
        "---\nkind: pattern\n---",
        "---\nname: review\nkind: pattern\nversion: 0.1.0\n---")),
    SpecCode("PS105", "missing-kind", ERR, "the frontmatter has no `kind`", _doc(
        "Reports frontmatter without a `kind` key.",
        "Only files of `kind: pattern` are pattern specs.",
        "---\nname: review\n---",
        "---\nname: review\nkind: pattern\nversion: 0.1.0\n---")),
    SpecCode("PS106", "unknown-kind", WARN, "the frontmatter `kind` is not a kind this toolchain knows", _doc(
        "Reports a `kind` that is none of `pattern`, `function`, `responsibility`, `gateway`, "
        "`test` (nor a retired kind). The file is read, but no kind's rules apply to it.",
        "A misspelt kind (`kind: patern`) silently turns every check of the file off.",
        "---\nname: review\nkind: skill\n---",
        "---\nname: review\nkind: pattern\nversion: 0.1.0\n---")),
    SpecCode("PS107", "missing-version", WARN, "the pattern declares no version", _doc(
        "Reports a pattern with no `version` in its frontmatter nor in `### Metadata`.",
        "Traces and instance files cannot say which revision of the pattern they used.",
        "---\nname: review\nkind: pattern\n---",
        "---\nname: review\nkind: pattern\nversion: 0.1.0\n---")),
    SpecCode("PS108", "missing-title", WARN, "the pattern has no `# Title` line", _doc(
        "Reports a pattern file with no level-1 heading before its sections.",
        "The title and the summary line under it describe the pattern to readers and tools.",
        "---\nname: review\nkind: pattern\nversion: 0.1.0\n---\n### Slots",
        "---\nname: review\nkind: pattern\nversion: 0.1.0\n---\n# Review\nOne line on what it does.\n### Slots")),
    SpecCode("PS109", "not-utf8", ERR, "the pattern file is not UTF-8 text", _doc(
        "Reports a file whose bytes are not valid UTF-8.",
        "Pattern files are text; anything else cannot be parsed.",
        "(binary data)",
        "---\nname: review\nkind: pattern\nversion: 0.1.0\n---\n# Review")),
    # --- sections --------------------------------------------------------------
    SpecCode("PS110", "missing-slots-section", ERR, "the pattern has no `### Slots` section", _doc(
        "Reports a pattern without a `### Slots` section.",
        "Slots are the services the pattern delegates to; without them nothing can be bound.",
        "---\nname: review\nkind: pattern\nversion: 0.1.0\n---\n### Delegation",
        "---\nname: review\nkind: pattern\nversion: 0.1.0\n---\n### Slots\n- `critic`\n### Delegation")),
    SpecCode("PS111", "missing-delegation-section", ERR, "the pattern has no `### Delegation` section", _doc(
        "Reports a pattern without a `### Delegation` section.",
        "The delegation block is the program; without it nothing runs.",
        "### Slots\n- `critic`",
        "### Delegation\n```prose\nreturn { result: null }\n```")),
    SpecCode("PS112", "multiple-delegation-blocks", ERR, "more than one ```prose block in `### Delegation`", _doc(
        "Reports a second fenced `prose` block in the delegation section.",
        "A pattern has exactly one program; which block runs would be a guess.",
        "### Delegation\n```prose\nlet a = 1\n```\n```prose\nlet b = 2\n```",
        "### Delegation\n```prose\nlet a = 1\nlet b = 2\n```")),
    SpecCode("PS113", "empty-delegation-section", ERR, "`### Delegation` holds no ```prose block", _doc(
        "Reports a delegation section without a fenced `prose` block.",
        "The program is missing.",
        "### Delegation\nCall the critic.",
        "### Delegation\n```prose\nlet r = call critic\n  draft: draft\n```")),
    SpecCode("PS114", "unclosed-delegation-block", ERR, "the ```prose block is not closed", _doc(
        "Reports a delegation block whose fence is never closed.",
        "The rest of the file would be read as program text.",
        "```prose\nlet a = 1",
        "```prose\nlet a = 1\n```")),
    SpecCode("PS115", "unknown-section", INFO, "a section this toolchain does not know", _doc(
        "Reports a `###` section whose name is not one of the known sections. It is kept, not dropped.",
        "A misspelt section (`### Slot`) is silently ignored by every tool.",
        "### Slot\n- `critic`",
        "### Slots\n- `critic`")),
    SpecCode("PS116", "duplicate-section", WARN, "a section appears twice", _doc(
        "Reports a known section heading used a second time; both are read.",
        "Readers expect one place for each part of the contract.",
        "### Config\n- `a` (integer, default: 1): A\n### Config\n- `b` (integer, default: 2): B",
        "### Config\n- `a` (integer, default: 1): A\n- `b` (integer, default: 2): B")),
    SpecCode("PS117", "stray-prose-block", WARN, "a ```prose block outside `### Delegation` is not run", _doc(
        "Reports a fenced `prose` block in another section.",
        "It looks like program text but is never parsed or run.",
        "### Notes\n```prose\nlet a = 1\n```",
        "### Notes\n```text\nlet a = 1\n```")),
    # --- slots -----------------------------------------------------------------
    SpecCode("PS118", "retired-kind", WARN, "a retired kind (`service`, `system`)", _doc(
        "Reports `kind: service` (now `function`) and `kind: system` (now a `responsibility` that "
        "composes with `call` or subscriptions). The file is read as its replacement.",
        "Retired kinds are no longer part of Contract Markdown; tools may stop reading them.",
        "---\nname: summarize\nkind: service\n---",
        "---\nname: summarize\nkind: function\n---")),
    SpecCode("PS120", "malformed-slot", ERR, "a slot bullet does not name a slot in backticks", _doc(
        "Reports a `### Slots` bullet that does not start with a backticked identifier.",
        "The slot cannot be bound or called by name.",
        "- critic (primary)",
        "- `critic` (primary)")),
    SpecCode("PS121", "duplicate-slot", ERR, "a slot is declared twice", _doc(
        "Reports the second declaration of a slot name.",
        "Bindings and calls would be ambiguous.",
        "- `critic`\n- `critic`",
        "- `critic`\n- `second_critic`")),
    SpecCode("PS122", "unknown-slot-marker", WARN, "an unknown slot marker", _doc(
        "Reports a parenthesised slot marker other than `primary` and `list`.",
        "The marker has no meaning and is ignored.",
        "- `critics` (many)",
        "- `critics` (list)")),
    SpecCode("PS123", "slot-without-contract", INFO, "a slot declares neither `requires:` nor `ensures:`", _doc(
        "Reports a slot with no contract.",
        "Without `requires:` the linter cannot tell which inputs leak; without `ensures:` the service is not told what to produce.",
        "- `critic`",
        "- `critic`\n  - requires: draft\n  - ensures: critique of the draft")),
    SpecCode("PS124", "dict-like-ensures", WARN, "`ensures:` looks like a Python dict", _doc(
        "Reports an `ensures:` line holding a Python/JSON dict literal.",
        "It is usually a conversion artifact; it does not declare an output schema.",
        "- ensures: {'decision': 'continue'}, adjust, or abort",
        "- ensures: decision object with `decision` (string), `reason` (string)")),
    SpecCode("PS125", "unknown-slot-field", WARN, "an unknown sub-bullet under a slot", _doc(
        "Reports a slot sub-bullet other than `requires:`, `ensures:` or `maintains:`.",
        "It is ignored.",
        "- `critic`\n  - needs: draft",
        "- `critic`\n  - requires: draft")),
    SpecCode("PS126", "malformed-output-schema", WARN, "`ensures:` says `object with` but its fields do not parse", _doc(
        "Reports an ensures line of the `object with` form whose fields are not all `` `name` (type) ``.",
        "No output schema is declared, so the result is plain text.",
        "- ensures: verdict object with accept, notes",
        "- ensures: verdict object with `accept` (boolean) and `notes` (string)")),
    SpecCode("PS127", "unknown-output-schema-type", ERR, "a field of an output schema has an unknown type", _doc(
        "Reports a field of an ``object with `name` (type)`` output schema whose type is not a "
        "type word (string, integer, number, boolean, object, array, null, their short forms "
        "str, int, float, bool, dict, list, text, or `T[]`).",
        "No JSON schema can be built for the slot's output, so every call to it would fail.",
        "- ensures: verdict object with `accept` (bool), `notes` (strng)",
        "- ensures: verdict object with `accept` (bool), `notes` (string)")),
    # --- config ----------------------------------------------------------------
    SpecCode("PS130", "malformed-config", ERR, "a config bullet does not parse", _doc(
        "Reports a `### Config` bullet not of the form `` `name` (type, default: value): description ``.",
        "The key, its type or its default cannot be read.",
        "- rounds: 2",
        "- `rounds` (integer, default: 2): Number of rounds")),
    SpecCode("PS131", "duplicate-config", ERR, "a config key is declared twice", _doc(
        "Reports the second declaration of a config key.",
        "Which default applies would be ambiguous.",
        "- `rounds` (integer, default: 2): A\n- `rounds` (integer, default: 3): B",
        "- `rounds` (integer, default: 2): A")),
    SpecCode("PS132", "unknown-config-type", ERR, "a config type is not a known type", _doc(
        "Reports a type other than string, integer, number, boolean, list, object, any or `T[]`.",
        "Values cannot be checked against it.",
        "- `rounds` (int, default: 2): Rounds",
        "- `rounds` (integer, default: 2): Rounds")),
    SpecCode("PS133", "default-type-mismatch", ERR, "a config default does not match its type", _doc(
        "Reports a default value of another type than declared.",
        "Every run without an override starts with a wrong value.",
        "- `rounds` (integer, default: two): Rounds",
        "- `rounds` (integer, default: 2): Rounds")),
    SpecCode("PS134", "invalid-default", ERR, "a config default is not a JSON or Python literal", _doc(
        "Reports a default that cannot be read as a literal.",
        "The default value is unknown.",
        "- `tiers` (object, default: {model: opus}): Tiers",
        '- `tiers` (object, default: {"model": "opus"}): Tiers')),
    SpecCode("PS135", "bracketless-list-default", WARN, "a list default is written without brackets", _doc(
        "Reports a list default written as comma-separated items without `[...]`; it is read as a list.",
        "Commas inside the parenthesis are ambiguous with other attributes.",
        "- `tiers` (object[], default: {'n': 1}, {'n': 2}): Tiers",
        '- `tiers` (object[], default: [{"n": 1}, {"n": 2}]): Tiers')),
    SpecCode("PS136", "unquoted-string-default", INFO, "a string default is written without quotes", _doc(
        "Reports a string default that is bare text; it is read as that text.",
        "Bare text is not a JSON or Python literal, and trailing spaces or commas are ambiguous.",
        "- `label` (string, default: Corpus A): Label",
        '- `label` (string, default: "Corpus A"): Label')),
    # --- parameters, returns, names --------------------------------------------
    SpecCode("PS140", "malformed-parameter", WARN, "a parameter line does not parse", _doc(
        "Reports a `### Parameters` line not of the form `name: type -- description`.",
        "The input is not declared.",
        "- Pattern instance receives:\n    the task brief",
        "- Pattern instance receives:\n    task_brief: string -- the task")),
    SpecCode("PS141", "duplicate-parameter", ERR, "a parameter is declared twice", _doc(
        "Reports the second declaration of a parameter name.",
        "Which declaration applies would be ambiguous.",
        "    task_brief: string -- a\n    task_brief: string -- b",
        "    task_brief: string -- the task")),
    SpecCode("PS142", "parameter-config-mismatch", WARN, "a parameter and the config key it names disagree", _doc(
        "Reports a parameter named like a config key whose type or default differs from the config's.",
        "They are one value (an input overrides the default); two descriptions of it conflict.",
        '- `label` (string, default: "A"): L\n...\n    label: object -- (optional)',
        '- `label` (string, default: "A"): L\n...\n    label: string -- (optional, default "A")')),
    SpecCode("PS143", "name-clash", ERR, "a config key has the name of a slot", _doc(
        "Reports a config key named like a slot. Slots, config, parameters and variables share one namespace.",
        "A reference to the name would be ambiguous.",
        '### Slots\n- `critic`\n### Config\n- `critic` (string, default: "x"): C',
        '### Slots\n- `critic`\n### Config\n- `critic_style` (string, default: "x"): C')),
    SpecCode("PS144", "duplicate-return-key", WARN, "a result key is listed twice in `### Returns`", _doc(
        "Reports the second bullet for the same result key.",
        "The result contract is ambiguous.",
        "- `result`: a\n- `result`: b",
        "- `result`: a\n- `notes`: b")),
    # --- invariants ------------------------------------------------------------
    SpecCode("PS150", "invariant-unknown-slot", ERR, "a checkable invariant names something that is not a slot", _doc(
        "Reports a checkable invariant (LANGUAGE.md section 5) whose slot names are not declared slots.",
        "The invariant cannot be checked and silently protects nothing.",
        "- `reviewer` never sees `author`  (no slot `author`)",
        "- `reviewer` never sees `proposer`")),
    SpecCode("PS151", "invariant-unknown-config", ERR, "`every loop is bounded by` names no config key", _doc(
        "Reports a loop-bound invariant whose key is not declared in `### Config`.",
        "The bound cannot be checked.",
        "- every loop is bounded by `rounds`  (no config `rounds`)",
        "### Config\n- `rounds` (integer, default: 3): Rounds")),
    # --- rules of one kind -----------------------------------------------------
    SpecCode("PS160", "test-without-subject", ERR, "a `kind: test` names no `subject:`", _doc(
        "Reports a test contract whose frontmatter has no `subject:`.",
        "`prose test` cannot know which function to run with the fixtures.",
        "---\nname: test-summary\nkind: test\n---",
        "---\nname: test-summary\nkind: test\nsubject: summarize\n---")),
    SpecCode("PS161", "test-without-expectations", WARN, "a test has no `### Expects` nor `### Expects Not`", _doc(
        "Reports a test contract that asserts nothing.",
        "It passes whatever its subject returns.",
        "### Fixtures\n- `text`: a paragraph",
        "### Fixtures\n- `text`: a paragraph\n\n### Expects\n- `summary`: is one sentence")),
    SpecCode("PS162", "responsibility-without-maintains", WARN, "a responsibility declares no `### Maintains`", _doc(
        "Reports a responsibility (or gateway) without the truth it keeps current.",
        "A standing job is defined by what it maintains; nothing can subscribe to it.",
        "---\nname: front-page\nkind: responsibility\n---\n### Goal\nA current front page.",
        "### Maintains\n- `page`: the current front page")),
    SpecCode("PS163", "gateway-with-requires", WARN, "a gateway declares `### Requires`", _doc(
        "Reports a gateway with subscriptions: its input arrives from outside the graph.",
        "A node that subscribes to other nodes is a responsibility, not an entry point.",
        "---\nname: wire\nkind: gateway\n---\n### Requires\n- `stories`: upstream stories",
        "---\nname: wire\nkind: responsibility\n---\n### Requires\n- `stories`: upstream stories")),
    SpecCode("PS164", "function-with-world-model", WARN, "a function declares `### Maintains` or `### Continuity`", _doc(
        "Reports a function with a section of a standing job: it is called and returns, and keeps nothing.",
        "A function has no world-model and is never woken; the section is never used.",
        "---\nname: condense\nkind: function\n---\n### Continuity\n- self-driven",
        "---\nname: condense\nkind: responsibility\n---\n### Continuity\n- self-driven")),
    # --- instance files --------------------------------------------------------
    SpecCode("PS170", "invalid-instance", ERR, "the instance file is not a YAML mapping", _doc(
        "Reports an instance file that is not valid YAML or not a mapping.",
        "Nothing can be bound.",
        "pattern: [x",
        "pattern: review.prose.md")),
    SpecCode("PS171", "missing-pattern-reference", ERR, "the instance names no `pattern`", _doc(
        "Reports an instance without a `pattern:` key.",
        "It is unknown what to run.",
        "with: {critic: {model: fast}}",
        "pattern: review.prose.md\nwith: {critic: {model: fast}}")),
    SpecCode("PS172", "pattern-not-found", ERR, "the instance's pattern cannot be found or loaded", _doc(
        "Reports a `pattern:` path (relative to the instance file) or library name that does not exist, or a pattern with errors.",
        "Nothing can be run.",
        "pattern: reveiw.prose.md",
        "pattern: review.prose.md")),
    SpecCode("PS173", "unknown-instance-key", ERR, "an unknown key in the instance file", _doc(
        "Reports a key other than `pattern`, `with`, `config`, `inputs`, `description` (top level) or a service's own keys, at the key, with the known key it most resembles.",
        "Nothing reads it: a misspelt `confg:` or `input:` would silently drop the values under it.",
        "pattern: review.prose.md\nconfg: {}",
        "pattern: review.prose.md\nconfig: {}")),
    SpecCode("PS174", "invalid-service", ERR, "a slot binding is not a valid service", _doc(
        "Reports a binding that does not say what answers the slot (none of `model:`, `pattern:` or `python:`), that says more than one, or a malformed field.",
        "The slot cannot be called.",
        'critic: {model: fast, python: "a:b"}',
        "critic: {model: fast}")),
    SpecCode("PS175", "role-file-not-found", ERR, "a model service's `role:` file does not exist", _doc(
        "Reports a `role:` path (relative to the instance file) that does not exist.",
        "The role prompt is missing.",
        "critic: {model: fast, role: roles/critc.md}",
        "critic: {model: fast, role: roles/critic.md}")),
    SpecCode("PS176", "unknown-slot-binding", ERR, "`with` binds a name that is not a slot", _doc(
        "Reports a `with` key that is not a slot of the pattern.",
        "The binding is never used; the slot it meant is unbound.",
        "with:\n  critc: {model: fast}",
        "with:\n  critic: {model: fast}")),
    SpecCode("PS177", "missing-slot-binding", ERR, "a slot has no binding", _doc(
        "Reports a slot of the pattern that `with` does not bind.",
        "The first call to it would fail at run time.",
        "with: {}",
        "with:\n  critic: {model: fast}")),
    SpecCode("PS178", "list-slot-single-service", ERR, "a list-valued slot is bound to a single service", _doc(
        "Reports a list-valued slot (marker `list`, iterated by `for`, or a `T[]` parameter) bound to one service.",
        "The pattern iterates over the binding; it needs a YAML list of services.",
        "stages: {model: fast}",
        "stages:\n  - {model: fast}\n  - {model: strong}")),
    SpecCode("PS179", "single-slot-service-list", ERR, "a single-service slot is bound to a list", _doc(
        "Reports a list of services bound to a slot that takes one service.",
        "The pattern calls the slot once.",
        "critic:\n  - {model: fast}",
        "critic: {model: fast}")),
    SpecCode("PS180", "unknown-config-key", ERR, "`config` sets a key the pattern does not declare", _doc(
        "Reports a `config` key that is not in the pattern's `### Config`.",
        "The value is never used.",
        "config: {round: 3}",
        "config: {rounds: 3}")),
    SpecCode("PS181", "config-type-mismatch", ERR, "a config value does not match the key's type", _doc(
        "Reports a `config` value of another type than the pattern declares.",
        "The program would get a wrong value.",
        "config: {rounds: three}",
        "config: {rounds: 3}")),
    SpecCode("PS182", "missing-required-input", WARN, "a required input is not supplied", _doc(
        "Reports a pattern parameter that is not optional, not a slot and not a config key, and that `inputs` does not supply. A warning: the command line (`--input`) or a batch row may supply it; a run that still lacks it stops before any call (exit 1).",
        "The program would read a missing value.",
        "inputs: {}",
        'inputs:\n  task_brief: "Design a rate limiter."')),
    SpecCode("PS183", "unknown-input", WARN, "`inputs` supplies a name the pattern does not declare", _doc(
        "Reports an input that is neither a parameter nor a config key of the pattern.",
        "The value is never used.",
        "inputs: {task: x}",
        "inputs: {task_brief: x}")),
    SpecCode("PS184", "input-type-mismatch", WARN, "an input value does not match the parameter's type", _doc(
        "Reports an input of another type than its parameter declares.",
        "The program may misread it.",
        "inputs: {materials: one.md}",
        "inputs: {materials: [one.md]}")),
    SpecCode("PS185", "input-binds-slot", ERR, "`inputs` supplies a slot", _doc(
        "Reports an input named like a slot; slots are bound under `with`.",
        "The slot stays unbound.",
        "inputs: {critic: fast}",
        "with: {critic: {model: fast}}")),
    SpecCode("PS186", "invalid-python-target", ERR, "a `python:` service is not `package.module:function`", _doc(
        "Reports a Python callable reference of the wrong form.",
        "It cannot be imported.",
        "critic: {python: reviewers.critic}",
        'critic: {python: "reviewers.critic:review"}')),
    # --- nested patterns and their call sites (`prose lint INSTANCE.yaml`) ------------
    SpecCode("PS220", "rename-to-unknown-input", ERR,
             "a nested pattern's `rename` sends an input to a name the pattern does not take", _doc(
        "Reports a `rename: {CALL_INPUT: NESTED_INPUT}` entry of a nested pattern binding whose "
        "value is not an input of the nested pattern (or is not a name, or is the target of two "
        "entries).",
        "The renamed input would reach the nested pattern under a name it does not declare, "
        "and the run would stop at the call (R012).",
        "critic: {pattern: lib/review.prose.md, rename: {draft: txt}}",
        "critic: {pattern: lib/review.prose.md, rename: {draft: text}}")),
    SpecCode("PS221", "nested-input-mismatch", ERR,
             "a call of a nested pattern passes an input it does not take, or not one it needs",
             _doc(
        "Checks, for every slot an instance binds to a nested pattern, each call of that slot in "
        "the outer pattern: its inputs (after the binding's `rename`) must be inputs of the "
        "nested pattern, and every required input of the nested pattern must be passed. "
        "`prose lint INSTANCE.yaml` reports it at the call, with the binding as a note.",
        "The run would stop at the call (R012), after the calls before it were paid for.",
        "critic: {pattern: lib/review.prose.md}   # the call passes `draft`, the pattern takes `text`",
        "critic: {pattern: lib/review.prose.md, rename: {draft: text}}")),
    # --- blocks exported across files (`use "..." as vote`, `do vote.majority(...)`) --
    SpecCode("PS222", "unknown-imported-block", ERR,
             "`do ALIAS.NAME` names a block the used file does not export", _doc(
        "Reports `do vote.majority(...)` when the file `use \"...\" as vote` names cannot be "
        "read or has no top-level `block majority(...):`.",
        "There is no block to run; the run would stop at the `do`.",
        'use "lib/vote.prose.md" as vote\nlet best = do vote.majorty(answers)',
        'use "lib/vote.prose.md" as vote\nlet best = do vote.majority(answers)')),
    SpecCode("PS223", "imported-block-reads-its-file", ERR,
             "an imported block reads a name of its own file", _doc(
        "Reports a block imported with `do ALIAS.NAME(...)` whose body reads a name it neither "
        "takes as a parameter nor binds itself: a slot, config key, input or variable of the "
        "file that defines it.",
        "Those names do not exist in the file that imports the block.",
        "block majority(answers):\n  return mode_of(answers, rounds)   # `rounds`: a config key",
        "block majority(answers, rounds):\n  return mode_of(answers, rounds)")),
    # --- tools (docs/agents.md) ------------------------------------------------
    SpecCode("PS190", "unknown-tool", ERR, "a slot declares a tool the language does not know", _doc(
        "Reports an entry of a slot's `tools:` line that is not a built-in workspace tool (`list`, `read`, `grep`), `cli:NAME` or `mcp:NAME`.",
        "Nothing could implement it: the run would refuse the pattern.",
        "- `reviewer`\n  - requires: candidate\n  - tools: read, shell",
        "- `reviewer`\n  - requires: candidate\n  - tools: read, cli:pytest")),
    SpecCode("PS191", "unknown-tool-marker", ERR, "a tool's marker is not `writes`, `read-only` or `optional`", _doc(
        "Reports a marker in parentheses after a tool that is not `writes`, `read-only` or `optional` (several are separated by commas: `(writes, optional)`), `writes` on a built-in tool (they only read) and `optional` on a built-in tool (it needs no implementation).",
        "Whether a slot may write through a tool decides who can read what it wrote (`prose.lang.tools`); a marker the linter cannot read hides that.",
        "- `reviewer`\n  - tools: mcp:memory (sometimes)",
        "- `reviewer`\n  - tools: mcp:memory (writes)")),
    SpecCode("PS192", "invalid-max-turns", ERR, "`max_turns:` is not a whole number of at least 1", _doc(
        "Reports a slot's `max_turns:` that is not a positive whole number.",
        "An agent's loop of model turns needs a bound.",
        "- `reviewer`\n  - tools: read\n  - max_turns: many",
        "- `reviewer`\n  - tools: read\n  - max_turns: 8")),
    SpecCode("PS193", "tool-not-provided", ERR, "the pattern declares a tool the instance does not provide", _doc(
        "Reports a `cli:` or `mcp:` tool a slot of the pattern declares, for which the instance file's `tools:` names no implementation.",
        "The instance file is the trust boundary: only it says which commands may run and which servers or callables answer. A slot using the tool would fail at run time.",
        "pattern: review.prose.md\nwith: {reviewer: fast}",
        "pattern: review.prose.md\nwith: {reviewer: fast}\ntools:\n  cli:pytest: {command: [python, -m, pytest, -q]}")),
    SpecCode("PS194", "tool-not-declared", ERR, "the instance provides a tool no slot declares", _doc(
        "Reports an entry of the instance's `tools:` that no slot of the pattern declares (or a built-in tool, which needs no provider).",
        "A command or server nobody may use is a mistake, often a misspelt name; the hiding proof covers declared tools only.",
        "tools:\n  cli:pytets: {command: [python, -m, pytest]}",
        "tools:\n  cli:pytest: {command: [python, -m, pytest]}")),
    SpecCode("PS195", "invalid-tool-provider", ERR, "a tool's implementation in the instance is malformed", _doc(
        "Reports a `tools:` entry that is not `{command: [ARG, ...]}` (with optional `params`, `timeout`, `max_output`, `max_disk`) for a `cli:` tool, nor `{server: [PROGRAM, ...]}`, `{url: http://...}` or `{python: pkg.mod:func}` for an `mcp:` tool; and a command template whose placeholder is not a whole argument.",
        "A command is an argument list, never shell text; a placeholder the model fills is one whole argument, checked against its pattern, so the model cannot add options or commands.",
        'tools:\n  cli:pytest: {command: "pytest -q $ARGS"}',
        'tools:\n  cli:pytest:\n    command: [python, -m, pytest, -q, "{path}"]\n    params: {path: "^tests/[A-Za-z0-9_./-]+$"}')),
    SpecCode("PS196", "written-files-without-writing-tool", ERR, "a slot returns the files it writes and no tool of it writes", _doc(
        "Reports a slot whose `ensures:` begins with `written files` (its value is what it wrote under `out/` of its workspace) and whose `tools:` has no tool that writes: `write`, or a `cli:`/`mcp:` tool marked `(writes)`.",
        "Such an agent could never write a file, so its value would always be empty: a mistake, often a missing `write`.",
        "- `worker`\n  - ensures: written files: the revised repository\n  - tools: list, read",
        "- `worker`\n  - ensures: written files: the revised repository\n  - tools: list, read, write")),
    SpecCode("PS202", "map-slot-binding", ERR,
             "a `map` slot is not bound to a mapping of services, or a mapping to another slot", _doc(
        "Reports a slot marked `map` bound to one service or a list, and a mapping of "
        "entries bound to a slot that is not marked `map`.",
        "`call handlers[key]` looks an entry up by name; a list or a single service has no "
        "names, and a slot without the marker is called as one service.",
        "handlers:\n  - {model: fast}\n  - {model: strong}",
        "handlers:\n  billing: {model: fast}\n  default: {model: strong}")),
)
# fmt: on

# Examples of instance codes (PS170 on) are YAML, not markdown; those about the pattern
# file itself (its `tools:` lines, its exported blocks) are markdown.
_PATTERN_FILE_CODES = frozenset({"PS190", "PS191", "PS192", "PS196", "PS222", "PS223"})
SPEC_CODES: tuple[SpecCode, ...] = tuple(
    row._replace(doc=row.doc.replace("```markdown", "```yaml"))
    if row.code >= "PS170" and row.code not in _PATTERN_FILE_CODES else row
    for row in sorted(_TABLE, key=lambda row: row.code)  # the table is grouped by topic
)

BY_CODE: dict[str, SpecCode] = {row.code: row for row in SPEC_CODES}


def make(
    code: str,
    message: str,
    span: Span,
    *,
    help: str | None = None,
    secondary: tuple[Label, ...] = (),
) -> Diagnostic:
    """A diagnostic with the code's severity and the `spec` category."""
    row = BY_CODE[code]
    return Diagnostic(code, row.severity, CATEGORY, message, span, secondary, help)
