"""Clients nobody here wrote read every answer of the demo: openapi-core's strict response
validator and the models datamodel-code-generator generates from the schema with its defaults."""

import pytest
from django.core.management import call_command
from django.test import Client

from demo.generator import SCENARIOS
from tests.crawl import crawl, generated_models, mismatches

pytestmark = pytest.mark.django_db


def test_every_session_trace_and_case_of_the_demo_keeps_the_schema_for_strict_clients(superuser, tmp_path):
    # Every scenario in both languages, evaluated, with feedback, cases, bad cases and reviews.
    call_command("seed_demo", sessions=2 * len(SCENARIOS), seed=1, verbosity=0)
    client = Client()
    client.force_login(superuser)

    answers = list(crawl(client))

    assert {answer.status for answer in answers} == {200}
    assert sum(answer.path.startswith("/api/trace/") for answer in answers) >= 2 * len(SCENARIOS)
    assert mismatches(answers, generated_models(tmp_path)) == []
