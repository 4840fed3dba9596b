"""One module per lint rule (or family of rules).

Importing this package imports every module, and each `@rule` class enters
the registry (`prose.check.registry`): a new module is listed here.
"""

from prose.check.rules import assignment_to_read_only as assignment_to_read_only
from prose.check.rules import blindness as blindness
from prose.check.rules import block_arity as block_arity
from prose.check.rules import call_schema as call_schema
from prose.check.rules import choosers as choosers
from prose.check.rules import conditions as conditions
from prose.check.rules import contract as contract
from prose.check.rules import expressions as expressions
from prose.check.rules import flow_rules as flow_rules
from prose.check.rules import gates as gates
from prose.check.rules import invariants as invariants
from prose.check.rules import model_choice as model_choice
from prose.check.rules import order as order
from prose.check.rules import requires as requires
from prose.check.rules import results as results
from prose.check.rules import returns as returns
from prose.check.rules import second_let as second_let
from prose.check.rules import structure_invariants as structure_invariants
from prose.check.rules import termination as termination
from prose.check.rules import text_fields as text_fields
from prose.check.rules import tools as tools
from prose.check.rules import typed_reads as typed_reads
from prose.check.rules import undefined_name as undefined_name
from prose.check.rules import unknown_call_target as unknown_call_target
from prose.check.rules import unused as unused
from prose.check.rules import uses as uses
