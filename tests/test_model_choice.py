"""A pattern file never chooses the model (issue 35, `prose.lang.model_choice`): a model an
agent, a call or a session names is a request; lint reports it (PK508), and the run sends
to it only when the person running it granted it (`--allow-model`, an instance's
`allow_models:`, or by choosing it as a default or a binding); otherwise the run stops
(R018, exit 1) before the call is sent. Against the loopback OpenAI-compatible server,
which counts what reached it.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from llm_server import FakeLLMServer, Reply

from tests.conftest import run_prose, run_prose_in_process
from tests.loopback import worker_pattern, write_project

pytestmark = pytest.mark.filterwarnings("ignore:Item.*ReadOnly:UserWarning")


def _pattern(program: str) -> str:
    return worker_pattern(program, name="pick", title="Pick",
                          summary="A pattern that asks for a model.")


AGENT = _pattern("""agent critic:
  model: premium
  prompt: "You review."
let draft = call worker
  task: task
let review = session: critic
  draft: draft
return { result: review }""")

COMPUTED = _pattern("""let draft = call worker
  task: task
let tier = "openai/premium-echo"
let again = call worker
  task: draft
  model: tier
return { result: again }""")

SESSION = _pattern("""let draft = session "Say hi"
  model: "openai/premium-echo"
return { result: draft }""")


def _project(tmp_path: Path, server: FakeLLMServer, pattern: str) -> Path:
    return write_project(tmp_path, server, pattern=pattern, name="pick.prose.md",
                         deployments={"fast": "echo", "premium": "premium-echo"})


# A bare LiteLLM name (`openai/...`) goes to OPENAI_API_BASE: the loopback server, so that
# a run that does send it is seen to (and nothing leaves the machine).
def _env(server: FakeLLMServer) -> dict[str, str]:
    return {"OPENAI_API_BASE": server.base_url, "OPENAI_BASE_URL": server.base_url,
            "OPENAI_API_KEY": "none"}


def test_lint_reports_a_model_the_pattern_names(tmp_path: Path, server: FakeLLMServer) -> None:
    project = _project(tmp_path, server, AGENT)
    done = run_prose("lint", "pick.prose.md", cwd=project)
    assert done.code == 0, done.output  # a warning
    assert "pick.prose.md:33:10: PK508 [warning]" in done.stdout
    assert "agent `critic` asks for `premium`" in done.stdout


def test_an_agents_model_is_refused_before_anything_is_sent(
    tmp_path: Path, server: FakeLLMServer
) -> None:
    project = _project(tmp_path, server, AGENT)
    done = run_prose_in_process("run", "pick.prose.md", "-q", "--input", "task=hi", cwd=project)
    assert done.code == 1, done.output
    assert "R018" in done.stderr and "`premium`" in done.stderr
    assert "--allow-model premium" in done.stderr
    assert "pick.prose.md:33:10" in done.stderr
    assert server.requests == []


def test_allow_model_on_the_command_line_grants_it(tmp_path: Path, server: FakeLLMServer) -> None:
    project = _project(tmp_path, server, AGENT)
    done = run_prose_in_process("run", "pick.prose.md", "-q", "--input", "task=hi",
                                "--allow-model", "premium", cwd=project)
    assert done.code == 0, done.output
    assert server.models_called() == ["echo", "premium-echo"]


def test_an_instances_allow_models_grants_it(tmp_path: Path, server: FakeLLMServer) -> None:
    project = _project(tmp_path, server, AGENT)
    (project / "pick.yaml").write_text(
        "pattern: pick.prose.md\nwith:\n  worker: {model: fast}\nallow_models: [premium]\n"
        "inputs: {task: hi}\n", encoding="utf-8")
    done = run_prose_in_process("run", "pick.yaml", "-q", cwd=project)
    assert done.code == 0, done.output
    assert server.models_called() == ["echo", "premium-echo"]
    (project / "bad.yaml").write_text(
        "pattern: pick.prose.md\nwith:\n  worker: {model: fast}\nallow_models: premium\n",
        encoding="utf-8")
    bad = run_prose_in_process("run", "bad.yaml", "-q", "--input", "task=hi", cwd=project)
    assert bad.code == 1, bad.output
    assert "bad.yaml:4:15: PS170 `allow_models` must be a list of model names" in bad.stderr


def test_a_computed_model_is_refused_at_its_call(tmp_path: Path, server: FakeLLMServer) -> None:
    project = _project(tmp_path, server, COMPUTED)
    done = run_prose_in_process("run", "pick.prose.md", "-q", "--input", "task=hi", cwd=project,
                                env=_env(server))
    assert done.code == 1, done.output
    assert "R018" in done.stderr and "`openai/premium-echo`" in done.stderr
    assert server.models_called() == ["echo"]  # the first call; the second was not sent
    (trace,) = (project / ".prose" / "runs").rglob("trace.jsonl")
    events = [json.loads(line) for line in trace.read_text(encoding="utf-8").splitlines()]
    (end,) = [event for event in events if event["type"] == "run_end"]
    assert end["error"]["code"] == "R018"


def test_a_sessions_litellm_name_is_refused_unless_granted(
    tmp_path: Path, server: FakeLLMServer
) -> None:
    project = _project(tmp_path, server, SESSION)
    done = run_prose_in_process("run", "pick.prose.md", "-q", "--input", "task=hi", cwd=project,
                                env=_env(server))
    assert done.code == 1, done.output
    assert "R018" in done.stderr
    assert server.requests == []
    granted = run_prose_in_process("run", "pick.prose.md", "-q", "--input", "task=hi",
                                   "--allow-model", "openai/premium-echo", cwd=project,
                                   env=_env(server))
    assert granted.code == 0, granted.output
    assert server.models_called() == ["premium-echo"]


def test_batch_refuses_and_grants_as_run_does(tmp_path: Path, server: FakeLLMServer) -> None:
    project = _project(tmp_path, server, AGENT)
    (project / "rows.jsonl").write_text('{"task": "a"}\n', encoding="utf-8")
    done = run_prose_in_process("batch", "pick.prose.md", "--inputs", "rows.jsonl", "-q",
                                cwd=project)
    assert done.code == 1, done.output
    (line,) = (project / "rows.results.jsonl").read_text(encoding="utf-8").splitlines()
    assert json.loads(line)["error"]["code"] == "R018"
    assert server.requests == []
    server.enqueue("premium-echo", Reply("reviewed"))
    done = run_prose_in_process("batch", "pick.prose.md", "--inputs", "rows.jsonl", "-q",
                                "--out", "granted.jsonl", "--allow-model", "premium",
                                cwd=project)
    assert done.code == 0, done.output
    (line,) = (project / "granted.jsonl").read_text(encoding="utf-8").splitlines()
    assert json.loads(line)["result"] == {"result": "reviewed"}
