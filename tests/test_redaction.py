"""A key the provider echoes back is masked in every output of a run (issue 14.6):
what `prose run` prints, the response cache, the trace, `prose export` and `prose stats`.

The provider is the loopback OpenAI-compatible server of `llm_server.py`; its reply
quotes the Authorization header the client sent it (`Bearer <key>`).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from llm_server import FakeLLMServer, Reply

from prose.llm.redact import MASK, redact, run_secrets
from tests.conftest import run_prose_in_process
from tests.loopback import write_project

pytestmark = pytest.mark.filterwarnings("ignore:Item.*ReadOnly:UserWarning")

KEY = "sk-echoed-SECRET-0123456789abcdef"
ENV_NAME = "PROSE_REDACTION_TEST_API_KEY"

@pytest.fixture
def server(server: FakeLLMServer) -> FakeLLMServer:
    """The shared loopback server (tests/conftest.py), whose reply quotes the key."""
    server.enqueue("echo", Reply(f"I saw your key: Bearer {KEY}"))
    return server


def _project(tmp_path: Path, server: FakeLLMServer, api_key: str) -> Path:
    return write_project(tmp_path, server, api_key=api_key)


def _run(project: Path, env: dict[str, str] | None = None) -> tuple[str, str, list[Path]]:
    result = run_prose_in_process(
        "run", "echo.prose.md", "--json", "--cache", "-q", "--input", "task=hi",
        cwd=project, env=env,
    )
    assert result.code == 0, result.output
    return result.stdout, result.stderr, sorted((project / ".prose" / "cache").rglob("*.json"))


def _the_reply_echoed_the_key(server: FakeLLMServer) -> None:
    (request,) = server.requests
    headers = {name.lower(): value for name, value in request.headers.items()}
    assert headers["authorization"] == f"Bearer {KEY}"


def test_a_key_from_the_environment_is_masked_in_stdout_the_cache_and_the_trace(
    tmp_path: Path, server: FakeLLMServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(ENV_NAME, KEY)
    project = _project(tmp_path, server, f"os.environ/{ENV_NAME}")
    stdout, stderr, cached = _run(project)
    _the_reply_echoed_the_key(server)
    assert json.loads(stdout) == {"result": f"I saw your key: Bearer {MASK}"}
    assert KEY not in stderr
    assert len(cached) == 1
    assert KEY not in cached[0].read_text(encoding="utf-8")
    assert json.loads(cached[0].read_text(encoding="utf-8"))["text"] == (
        f"I saw your key: Bearer {MASK}"
    )
    (trace,) = (project / ".prose" / "runs").rglob("trace.jsonl")
    assert KEY not in trace.read_text(encoding="utf-8")
    assert f"Bearer {MASK}" in trace.read_text(encoding="utf-8")


def test_a_key_written_in_the_config_is_masked_in_stdout_and_the_trace(
    tmp_path: Path, server: FakeLLMServer
) -> None:
    project = _project(tmp_path, server, KEY)
    stdout, stderr, _ = _run(project)
    _the_reply_echoed_the_key(server)
    assert json.loads(stdout) == {"result": f"I saw your key: Bearer {MASK}"}
    assert KEY not in stderr
    (trace,) = (project / ".prose" / "runs").rglob("trace.jsonl")
    assert KEY not in trace.read_text(encoding="utf-8")


def test_a_key_written_in_the_config_is_masked_in_the_cache(
    tmp_path: Path, server: FakeLLMServer
) -> None:
    project = _project(tmp_path, server, KEY)
    _, _, cached = _run(project)
    assert len(cached) == 1
    assert KEY not in cached[0].read_text(encoding="utf-8")


def test_the_cache_masks_the_secrets_it_is_given(tmp_path: Path) -> None:
    from prose.runtime.cache import CachedResponse, ResponseCache

    cache = ResponseCache(tmp_path, secrets=[KEY])
    cache.put("ab12", CachedResponse(f"echo {KEY}", {"seen": KEY, "api_key": "x" * 8}, "m"))
    stored = cache.get("ab12")
    assert stored is not None
    assert stored.text == f"echo {MASK}"
    assert stored.parsed == {"seen": MASK, "api_key": MASK}


def test_export_and_stats_mask_the_secrets_of_the_environment(
    tmp_path: Path, server: FakeLLMServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A trace written before the key was known to the run (here: edited in) still
    # does not show it in the ledger's markdown or in the stats.
    project = _project(tmp_path, server, "none")
    _run(project)
    (trace,) = (project / ".prose" / "runs").rglob("trace.jsonl")
    assert KEY in trace.read_text(encoding="utf-8")  # the run did not know this key
    monkeypatch.setenv(ENV_NAME, KEY)
    exported = run_prose_in_process("export", str(trace), str(tmp_path / "ledger"))
    assert exported.code == 0, exported.output
    for path in (tmp_path / "ledger").rglob("*.md"):
        assert KEY not in path.read_text(encoding="utf-8"), path
    assert MASK in (tmp_path / "ledger" / "README.md").read_text(encoding="utf-8")
    for args in ([], ["--json"]):
        stats = run_prose_in_process("stats", str(trace), *args)
        assert stats.code == 0, stats.output
        assert KEY not in stats.output


def test_redact_masks_secret_fields_and_known_secrets_everywhere() -> None:
    secrets = run_secrets(["a-long-config-secret", "short"], environ={"HF_TOKEN": "hf_0123456789"})
    assert secrets == ["a-long-config-secret", "hf_0123456789"]
    value = {
        "text": "a-long-config-secret and hf_0123456789",
        "nested": [("hf_0123456789",), {"authorization": "Basic abc"}],
        "key": "a cache key is not a secret",
        "prompt_tokens": 12,
        "hf_0123456789": 1,
    }
    assert redact(value, secrets) == {
        "text": f"{MASK} and {MASK}",
        "nested": [[MASK], {"authorization": MASK}],
        "key": "a cache key is not a secret",
        "prompt_tokens": 12,
        MASK: 1,
    }
