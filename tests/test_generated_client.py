"""A client generated from the schema with openapi-python-client, against a live server.

The client is generated at test time into a temporary directory (never committed), from the schema
`/api/schema/` serves, and imported from there. It ingests sessions (one and a batch), posts
feedback, reads the trace and pages through the session list by the `cursor` field of each page: every answer must parse into the
client's models without an exception, with `raise_on_unexpected_status` on, so an undocumented
status raises too.
"""

import importlib
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests import contract
from tests.factories import aiops_payload, chat_payload

pytestmark = pytest.mark.django_db(transaction=True)

PACKAGE = "selfeval_client"


@pytest.fixture(scope="module")
def generated(tmp_path_factory):
    """The generated package, imported from a temporary directory."""
    root = tmp_path_factory.mktemp("generated")
    schema = root / "schema.json"
    schema.write_text(json.dumps(contract.openapi_schema()))
    binary = Path(sys.executable).with_name("openapi-python-client")
    # The generator formats its output with ruff, found on PATH (the virtualenv's).
    env = {**os.environ, "PATH": f"{binary.parent}{os.pathsep}{os.environ.get('PATH', '')}"}
    subprocess.run(  # noqa: S603 (our own virtualenv's generator, on a schema we wrote)
        [binary, "generate", "--path", schema, "--meta", "none", "--output-path", root / PACKAGE],
        check=True,
        capture_output=True,
        env=env,
        cwd=root,
    )
    sys.path.insert(0, str(root))
    try:
        yield lambda name="": importlib.import_module(f"{PACKAGE}.{name}" if name else PACKAGE)
    finally:
        sys.path.remove(str(root))
        for module in [m for m in sys.modules if m == PACKAGE or m.startswith(f"{PACKAGE}.")]:
            del sys.modules[module]


@pytest.fixture
def client(generated, live_server, api_key):
    package = generated()
    return package.AuthenticatedClient(
        base_url=live_server.url, token=api_key, prefix="Api-Key", raise_on_unexpected_status=True
    )


def test_the_generated_client_ingests_votes_reads_the_trace_and_pages_the_list(generated, client):
    api = generated("api.api")
    models = generated("models")
    from_module = {name: importlib.import_module(f"{api.__name__}.{name}") for name in _OPERATIONS}

    created = from_module["api_sessions_create"].sync_detailed(
        client=client, body=models.SessionIngestRequest.from_dict(chat_payload(sessionId="gen-1"))
    )
    assert created.status_code == 201
    assert isinstance(created.parsed, models.SessionSummary) and created.parsed.feedback is None

    batch = from_module["api_sessions_batch_create"].sync_detailed(
        client=client,
        body=[
            models.SessionIngestRequest.from_dict(chat_payload(sessionId="gen-2")),
            models.SessionIngestRequest.from_dict(aiops_payload(sessionId="gen-3")),
            models.SessionIngestRequest.from_dict(chat_payload(sessionId="gen-1", answer="replaced")),
        ],
    )
    assert isinstance(batch.parsed, models.BatchResult)
    assert [r.status.value for r in batch.parsed.results] == ["created", "created", "replaced"]

    vote = from_module["api_feedback_create"].sync_detailed(
        client=client, body=models.FeedbackInputRequest.from_dict({"sessionId": "gen-1", "feedback": "useful"})
    )
    assert isinstance(vote.parsed, models.FeedbackResponse) and vote.parsed.success is True

    trace = from_module["api_trace_retrieve"].sync_detailed(client=client, session_id="gen-1")
    assert isinstance(trace.parsed, models.Trace)
    assert trace.parsed.session.feedback.value == "useful"
    assert trace.parsed.views.user.case is not None

    seen: list[str] = []
    cursor = None
    while True:
        page = from_module["api_sessions_list"].sync_detailed(client=client, page_size=2, **_cursor(cursor))
        assert isinstance(page.parsed, models.PaginatedSessionSummaryList), page.content
        seen += [row.session_id for row in page.parsed.results]
        # The page's own `cursor` field, never dug out of the `next` URL; null on the last page.
        assert (page.parsed.cursor is None) == (page.parsed.next_ is None)
        if page.parsed.cursor is None:
            break
        cursor = page.parsed.cursor
    assert sorted(seen) == ["gen-1", "gen-2", "gen-3"]

    missing = from_module["api_trace_retrieve"].sync_detailed(client=client, session_id="nobody")
    assert missing.status_code == 404 and isinstance(missing.parsed, models.ErrorEnvelope)


_OPERATIONS = (
    "api_sessions_create",
    "api_sessions_batch_create",
    "api_feedback_create",
    "api_trace_retrieve",
    "api_sessions_list",
)


def _cursor(cursor: str | None) -> dict[str, str]:
    return {"cursor": cursor} if cursor else {}
