"""Competitor providers over real HTTP against local fake servers: parallel, time-boxed, degrading."""

import time

import pytest

from evolution.models import VerificationLog
from evolution.services.competitors import Provider, competitor_answers_fetch
from evolution.services.verification import evolution_verify
from tests.evolution.conftest import SLOW_SECONDS, provider
from tests.evolution.samples import COMPETITOR_ANSWER, NEW_STUDY_ANSWER, OLD_STUDY_ANSWER, STUDY_QUERY


def providers(server, *modes) -> list[Provider]:
    return [Provider.from_setting(provider(server, mode)) for mode in modes]


def test_good_provider_answer_is_returned_and_request_is_openai_shaped(fake_provider_server):
    [answer] = competitor_answers_fetch(
        query=STUDY_QUERY,
        providers=[Provider.from_setting(provider(fake_provider_server, "good", api_key="sk-test"))],
        provider_timeout=2,
        overall_timeout=3,
    )

    assert answer.ok and answer.content == COMPETITOR_ANSWER
    [request] = fake_provider_server.requests
    assert request["path"] == "/good/v1/chat/completions"
    assert request["body"]["model"] == "fake-model"
    assert request["body"]["messages"] == [{"role": "user", "content": STUDY_QUERY}]
    assert request["auth"] == "Bearer sk-test"


def test_slow_failing_and_garbage_providers_degrade_in_parallel(fake_provider_server):
    started = time.perf_counter()

    answers = competitor_answers_fetch(
        query=STUDY_QUERY,
        providers=providers(fake_provider_server, "good", "slow", "fail", "garbage", "empty"),
        provider_timeout=2,
        overall_timeout=5,
    )

    elapsed = time.perf_counter() - started
    assert elapsed < SLOW_SECONDS  # the slow one was cut off by its own timeout
    by_name = {answer.name: answer for answer in answers}
    assert [answer.name for answer in answers] == ["good", "slow", "fail", "garbage", "empty"]
    assert by_name["good"].ok
    assert by_name["slow"].error == "timeout after 2 s"
    assert by_name["fail"].error == "HTTP 500"
    assert by_name["garbage"].error.startswith("invalid response")
    assert by_name["empty"].error.startswith("invalid response")
    assert not any(by_name[name].ok for name in ("slow", "fail", "garbage", "empty"))


def test_overall_timeout_bounds_the_whole_comparison(fake_provider_server):
    started = time.perf_counter()

    answers = competitor_answers_fetch(
        query=STUDY_QUERY,
        providers=providers(fake_provider_server, "good", "slow"),
        provider_timeout=10,
        overall_timeout=2,
    )

    assert time.perf_counter() - started < SLOW_SECONDS
    assert answers[0].ok
    assert answers[1].error == "overall timeout after 2 s"


def test_provider_timeout_bounds_the_whole_answer_not_each_read(fake_provider_server):
    """A provider that keeps sending one byte at a time never trips a per-read timeout; its own
    timeout still ends it long before the overall deadline."""
    started = time.perf_counter()

    [answer] = competitor_answers_fetch(
        query=STUDY_QUERY,
        providers=providers(fake_provider_server, "trickle"),
        provider_timeout=0.5,
        overall_timeout=10,
    )

    assert time.perf_counter() - started < 1.5
    assert not answer.ok and answer.error == "timeout after 0.5 s"


def test_unreachable_provider_is_a_connection_error():
    [answer] = competitor_answers_fetch(
        query=STUDY_QUERY,
        providers=[Provider(name="nowhere", base_url="http://127.0.0.1:9/v1", model="m")],
        provider_timeout=1,
        overall_timeout=2,
    )

    assert not answer.ok and answer.error.startswith("connection error")


@pytest.mark.django_db
def test_verification_with_one_good_one_slow_one_failing_provider(fake_provider_server, settings):
    settings.SELFEVAL_EVOLUTION_COMPETITORS = [
        provider(fake_provider_server, "good", name="hunyuan"),
        provider(fake_provider_server, "slow", name="deepseek"),
        provider(fake_provider_server, "fail", name="qwen"),
    ]
    settings.SELFEVAL_EVOLUTION_PROVIDER_TIMEOUT = 2
    settings.SELFEVAL_EVOLUTION_OVERALL_TIMEOUT = 3

    result = evolution_verify(query=STUDY_QUERY, old_response=OLD_STUDY_ANSWER, new_response=NEW_STUDY_ANSWER)

    competitors = result.metrics["competitors"]
    assert competitors["status"] == "degraded"
    assert competitors["failures"] == [
        {"name": "deepseek", "error": "timeout after 2 s"},
        {"name": "qwen", "error": "HTTP 500"},
    ]
    assert competitors["rank"] == 1 and competitors["winner"] == "ours"
    # Rank 1 of the answers received, but the two failures could have beaten us: not proven.
    assert competitors["rank_worst_case"] == 3 and not competitors["meets_threshold"]
    assert result.is_valid  # degraded, not blocked
    log = VerificationLog.objects.get()
    assert log.competitor_status == "degraded" and log.competitor_rank == 1


@pytest.mark.django_db
def test_competitors_can_be_skipped_per_call(fake_provider_server, settings):
    settings.SELFEVAL_EVOLUTION_COMPETITORS = [provider(fake_provider_server, "good")]

    result = evolution_verify(
        query=STUDY_QUERY, old_response=OLD_STUDY_ANSWER, new_response=NEW_STUDY_ANSWER, compare_competitors=False
    )

    assert result.metrics["competitors"]["status"] == "disabled"
    assert fake_provider_server.requests == []


@pytest.mark.django_db
def test_degraded_result_is_not_cached_so_providers_are_asked_again(fake_provider_server, settings):
    settings.SELFEVAL_EVOLUTION_COMPETITORS = [provider(fake_provider_server, "fail")]

    evolution_verify(query=STUDY_QUERY, old_response=OLD_STUDY_ANSWER, new_response=NEW_STUDY_ANSWER)
    evolution_verify(query=STUDY_QUERY, old_response=OLD_STUDY_ANSWER, new_response=NEW_STUDY_ANSWER)

    assert len(fake_provider_server.requests) == 2
    assert not VerificationLog.objects.filter(cached=True).exists()


@pytest.mark.django_db
def test_successful_comparison_is_cached(fake_provider_server, settings):
    settings.SELFEVAL_EVOLUTION_COMPETITORS = [provider(fake_provider_server, "good")]

    first = evolution_verify(query=STUDY_QUERY, old_response=OLD_STUDY_ANSWER, new_response=NEW_STUDY_ANSWER)
    second = evolution_verify(query=STUDY_QUERY, old_response=OLD_STUDY_ANSWER, new_response=NEW_STUDY_ANSWER)

    assert len(fake_provider_server.requests) == 1
    assert second.metrics["competitors"] == first.metrics["competitors"]
    assert first.metrics["competitors"]["meets_threshold"]  # rank 1 of 2, nobody failed
    assert first.confidence == 1.0
