"""`prose run` and `prose batch` carry their options as one typed, frozen object each
(issue 36), whose fields are the command's click parameters, no more and no fewer."""

from __future__ import annotations

import dataclasses

import pytest

from prose.cli.batch_cmd import batch_command
from prose.cli.command_options import BatchCommandOptions, CommandOptions, RunCommandOptions
from prose.cli.run_cmd import run_command


@pytest.mark.parametrize(("command", "options"), [(run_command, RunCommandOptions),
                                                  (batch_command, BatchCommandOptions)])
def test_the_fields_are_the_command_s_parameters(command: object, options: type) -> None:
    names = [param.name for param in command.params]  # type: ignore[attr-defined]
    assert sorted(names) == sorted(options.names())


def test_what_click_parses_becomes_the_object_and_an_unknown_option_is_refused() -> None:
    context = run_command.make_context(
        "run", ["p.prose.md", "--input", "a=1", "--input", "b=2", "--max-calls", "3", "-q"])
    options = RunCommandOptions.from_click(context.params)
    assert options.inputs == ("a=1", "b=2") and options.max_calls == 3 and options.quiet
    assert options.target == "p.prose.md" and options.script is None
    with pytest.raises(dataclasses.FrozenInstanceError):
        options.quiet = False  # type: ignore[misc]
    with pytest.raises(TypeError):
        CommandOptions.from_click({"target": "p.prose.md", "no_such_option": 1})
