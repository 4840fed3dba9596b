"""Secrets stay out of every output (issue 35): a provider that echoes every header it was
sent (the loopback server's `Echo`) leaves no key in what `prose run --json` prints, the
trace, the cache, report.html, `prose export` or `prose batch`'s results file and row traces;
a password in `api_base` is masked in the run start; a template that links out of
`.prose/templates/` is refused before anything is sent; `prose report` of a foreign trace
copies no line of a local file the trace names as its pattern.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from llm_server import Echo, FakeLLMServer

from tests.conftest import run_prose, run_prose_in_process
from tests.loopback import write_project

pytestmark = pytest.mark.filterwarnings("ignore:Item.*ReadOnly:UserWarning")

CONFIG_KEY = "sk-config-SECRET-0123456789"
ENV_KEY = "env-key-SECRET-9876543210"
ENV_NAME = "PROSE_SECRETS_TEST_API_KEY"
HEADERS = {
    "x-api-key": "hdr-anthropic-SECRET-111",  # Anthropic's name
    "api-key": "hdr-azure-SECRET-222",  # Azure's
    "Ocp-Apim-Subscription-Key": "hdr-ocp-SECRET-333",
}
SECRETS = [CONFIG_KEY, ENV_KEY, *HEADERS.values()]



@pytest.fixture
def server(server: FakeLLMServer) -> FakeLLMServer:
    """The shared loopback server (tests/conftest.py), echoing every header it is sent."""
    for _ in range(20):
        server.enqueue("echo", Echo())
    return server


def _project(tmp_path: Path, server: FakeLLMServer, api_key: str, *,
             api_base: str | None = None) -> Path:
    headers = ", ".join(f"{name}: {value}" for name, value in HEADERS.items())
    return write_project(tmp_path, server, api_key=api_key, api_base=api_base,
                         params=f"extra_headers: {{{headers}}}")


def _every_file(folder: Path) -> Iterator[Path]:
    for path in sorted(folder.rglob("*")):
        if path.is_file():
            yield path


def _assert_masked(texts: dict[str, str], secrets: list[str]) -> None:
    for where, text in texts.items():
        for secret in secrets:
            assert secret not in text, f"{secret} in {where}"


def test_echoed_keys_and_key_bearing_headers_are_masked_in_every_output(
    tmp_path: Path, server: FakeLLMServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(ENV_NAME, ENV_KEY)
    project = _project(tmp_path, server, CONFIG_KEY)
    ran = run_prose_in_process("run", "echo.prose.md", "--json", "--cache", "-q", "--report",
                               "--input", f"task=tell me {ENV_KEY}", cwd=project)
    assert ran.code == 0, ran.output
    (request,) = server.requests  # the provider got every secret, and echoed them all
    sent = "\n".join(f"{name}: {value}" for name, value in request.headers.items())
    for secret in (CONFIG_KEY, *HEADERS.values()):
        assert secret in sent
    assert "x-api-key: ***" in json.loads(ran.stdout)["result"]
    (trace,) = (project / ".prose" / "runs").rglob("trace.jsonl")
    exported = run_prose_in_process("export", str(trace), str(tmp_path / "ledger"), cwd=project)
    assert exported.code == 0, exported.output
    texts = {"stdout": ran.stdout, "stderr": ran.stderr}
    texts |= {str(path): path.read_text(encoding="utf-8", errors="replace")
              for path in _every_file(project) if path.name not in ("prose.yaml",)}
    assert any(path.endswith("report.html") for path in texts)
    assert any(".prose/cache" in path for path in texts)
    assert any("ledger" in path for path in texts)
    _assert_masked(texts, SECRETS)


def test_batch_masks_echoed_keys_in_its_results_file(
    tmp_path: Path, server: FakeLLMServer
) -> None:
    # The config's key (the Authorization header) and the environment's (in the rows).
    project = _project(tmp_path, server, CONFIG_KEY)
    (project / "rows.jsonl").write_text(
        "".join(json.dumps({"task": f"say {ENV_KEY}"}) + "\n" for _ in range(2)),
        encoding="utf-8")
    # A new process, as a user's shell runs it, with the key in its environment.
    batch = run_prose("batch", "echo.prose.md", "--inputs", "rows.jsonl", "-q", cwd=project,
                      env={ENV_NAME: ENV_KEY})
    assert batch.code == 0, batch.output
    assert len(server.requests) == 2
    results = (project / "rows.results.jsonl").read_text(encoding="utf-8")
    assert results.count("authorization: Bearer ***") == 2
    texts = {"output": batch.output, "results": results}
    texts |= {str(p): p.read_text(encoding="utf-8")
              for p in _every_file(project / "rows.results.traces")}
    _assert_masked(texts, [CONFIG_KEY])


def test_a_password_in_api_base_is_masked_in_the_trace_and_its_export(
    tmp_path: Path, server: FakeLLMServer
) -> None:
    password = "PASS-in-the-url-4711"
    url = server.base_url.replace("http://", f"http://user:{password}@")
    project = _project(tmp_path, server, "none", api_base=url)
    ran = run_prose_in_process("run", "echo.prose.md", "--json", "-q", "--input", "task=hi",
                               cwd=project)
    _masked_in_the_trace_and_its_export(tmp_path, project, ran.output, "user:***@", password)


def test_a_short_url_password_is_masked_in_the_run_start_too() -> None:
    from prose.llm.redact import mask_secrets

    assert mask_secrets({"api_base": "http://user:PASS@host/v1"}) == {
        "api_base": "http://user:***@host/v1"}


def test_a_key_in_the_query_of_api_base_is_masked_in_the_trace_and_its_export(
    tmp_path: Path, server: FakeLLMServer
) -> None:
    key = "QUERYSECRET12345"
    project = _project(tmp_path, server, "none", api_base=f"{server.base_url}?Key={key}")
    ran = run_prose_in_process("run", "echo.prose.md", "--json", "-q", "--input",
                               f"task=say {key}", cwd=project)
    assert ran.code == 0, ran.output
    _masked_in_the_trace_and_its_export(tmp_path, project, ran.output, "/v1?Key=***", key)


@pytest.mark.parametrize(("url", "masked"), [
    ("http://h/v1?key=abc", "http://h/v1?key=***"),
    ("http://h/v1?a=1&API_KEY=abc&b=2", "http://h/v1?a=1&API_KEY=***&b=2"),
    ("https://h/o?sv=1&sig=zz%3D&X-Amz-Signature=ff#f", "https://h/o?sv=1&sig=***&X-Amz-Signature=***#f"),
    ("http://h/p?access_token=t&client_secret=s&password=p&page=2",
     "http://h/p?access_token=***&client_secret=***&password=***&page=2"),
    ("http://h/p?signed=1&keyword=x", "http://h/p?signed=1&keyword=***"),
])
def test_secret_named_query_values_are_masked_in_the_run_start_and_in_errors(
    url: str, masked: str
) -> None:
    from prose.llm.redact import Redactor, mask_secrets

    assert mask_secrets({"api_base": url}) == {"api_base": masked}
    assert Redactor()(f"cannot reach {url} now") == f"cannot reach {masked} now"


def test_prose_test_masks_the_environments_key_in_a_failure_message(
    tmp_path: Path, server: FakeLLMServer
) -> None:
    write_project(tmp_path, server)
    (tmp_path / "echo.yaml").write_text(
        "pattern: echo.prose.md\nwith:\n  worker: { model: fast }\ninputs: { task: x }\n",
        encoding="utf-8")
    (tmp_path / "echo.script.yaml").write_text(
        f"slots:\n  worker:\n    - 'here is the key {ENV_KEY}'\n", encoding="utf-8")
    (tmp_path / "echo.test.yaml").write_text(
        "tests:\n  - name: leaky\n    instance: echo.yaml\n    script: echo.script.yaml\n"
        "    expect:\n      result: { result: nope }\n", encoding="utf-8")
    ran = run_prose("test", "echo.test.yaml", cwd=tmp_path, env={ENV_NAME: ENV_KEY})
    assert ran.code == 1, ran.stderr
    assert 'FAIL echo: leaky: result.result: expected "nope", got "here is the key ***"' in ran.stdout
    _assert_masked({"stdout": ran.stdout, "stderr": ran.stderr}, [ENV_KEY])


def test_lint_masks_the_environments_key_in_a_code_frame(tmp_path: Path) -> None:
    write_project(tmp_path, FakeLLMServer())  # the pattern; the server is never started
    (tmp_path / "leak.yaml").write_text(
        f"pattern: echo.prose.md\nwith:\n  worker: {{ model: fast, api_key: {ENV_KEY} }}\n"
        "inputs: { task: x }\n", encoding="utf-8")
    for output_format in ("full", "concise", "json"):
        ran = run_prose("lint", "--format", output_format, "leak.yaml", cwd=tmp_path,
                        env={ENV_NAME: ENV_KEY})
        assert ran.code == 1, ran.stdout
        assert "PS173" in ran.stdout
        _assert_masked({"stdout": ran.stdout, "stderr": ran.stderr}, [ENV_KEY])
        if output_format == "full":
            assert "3 |   worker: { model: fast, api_key: *** }" in ran.stdout


def test_a_template_that_links_out_of_its_folder_is_refused_and_nothing_is_sent(
    tmp_path: Path, server: FakeLLMServer
) -> None:
    project = _project(tmp_path, server, "none")
    outside = tmp_path / "environ"
    outside.write_text("OPENAI_API_KEY=sk-outside-SECRET-000111\n", encoding="utf-8")
    templates = project / ".prose" / "templates"
    templates.mkdir(parents=True)
    (templates / "call_user.j2").symlink_to(outside)
    ran = run_prose_in_process("run", "echo.prose.md", "-q", "--input", "task=hi", cwd=project)
    assert ran.code == 1, ran.output
    assert "call_user.j2" in ran.stderr and "outside .prose/templates" in ran.stderr
    assert server.requests == []
    assert "sk-outside-SECRET-000111" not in ran.output


def test_a_template_linking_inside_its_folder_still_works(
    tmp_path: Path, server: FakeLLMServer
) -> None:
    project = _project(tmp_path, server, "none")
    templates = project / ".prose" / "templates"
    (templates / "shared").mkdir(parents=True)
    (templates / "shared" / "user.j2").write_text("TEMPLATED {{ inputs | length }}",
                                                  encoding="utf-8")
    (templates / "call_user.j2").symlink_to(templates / "shared" / "user.j2")
    ran = run_prose_in_process("run", "echo.prose.md", "-q", "--input", "task=hi", cwd=project)
    assert ran.code == 0, ran.output
    (request,) = server.requests
    assert "TEMPLATED" in json.dumps(request.body)


def test_report_of_a_foreign_trace_copies_no_line_of_a_local_file_it_names(
    tmp_path: Path, server: FakeLLMServer
) -> None:
    project = _project(tmp_path, server, "none")
    ran = run_prose_in_process("run", "echo.prose.md", "-q", "--input", "task=hi", cwd=project)
    assert ran.code == 0, ran.output
    (trace,) = (project / ".prose" / "runs").rglob("trace.jsonl")
    credentials = tmp_path / "credentials"
    credentials.write_text("\n".join(f"line {n} aws_secret=SEKRIT-{n:02d}-abcdef"
                                     for n in range(1, 60)) + "\n", encoding="utf-8")
    # The trace someone sends names that file as its pattern, for every step.
    forged = []
    for line in trace.read_text(encoding="utf-8").splitlines():
        event = json.loads(line)
        if event.get("type") == "run_start":
            event["pattern"] = str(credentials)
        if "file" in event:
            event["file"] = str(credentials)
        forged.append(json.dumps(event))
    sent = tmp_path / "sent" / "trace.jsonl"
    sent.parent.mkdir()
    sent.write_text("\n".join(forged) + "\n", encoding="utf-8")
    reported = run_prose_in_process("report", str(sent), cwd=tmp_path)
    assert reported.code == 0, reported.output
    page = (sent.parent / "report.html").read_text(encoding="utf-8")
    assert "SEKRIT" not in page
    # The pattern the run used is still read (its sha256 matches the recorded one).
    own = run_prose_in_process("report", str(trace), cwd=project)
    assert own.code == 0, own.output
    assert "let answer = call worker" in (trace.parent / "report.html").read_text(
        encoding="utf-8")


def test_the_echo_server_is_real() -> None:
    # The tests above are only as good as the echo: it must reflect what was sent.
    import urllib.request

    with FakeLLMServer() as server:
        server.enqueue("m", Echo())
        request = urllib.request.Request(
            server.base_url + "/chat/completions", data=b'{"model": "m"}',
            headers={"x-api-key": "abc"}, method="POST")
        with urllib.request.urlopen(request) as response:
            body = json.loads(response.read())
    assert "x-api-key: abc" in body["choices"][0]["message"]["content"].lower()
    assert os.environ.get(ENV_NAME) is None


def _masked_in_the_trace_and_its_export(tmp_path: Path, project: Path, output: str,
                                        marker: str, secret: str) -> None:
    """The run's trace shows `marker` where `secret` was, and neither the run's output, the
    trace nor its export (`prose export`) holds `secret`."""
    (trace,) = (project / ".prose" / "runs").rglob("trace.jsonl")
    text = trace.read_text(encoding="utf-8")
    assert marker in text  # the run start records where the calls went, not how
    exported = run_prose_in_process("export", str(trace), str(tmp_path / "ledger"), cwd=project)
    assert exported.code == 0, exported.output
    texts = {"output": output, "trace": text}
    texts |= {str(p): p.read_text(encoding="utf-8") for p in _every_file(tmp_path / "ledger")}
    _assert_masked(texts, [secret])
