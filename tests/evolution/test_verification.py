"""evolution_verify logs every call and caches identical ones; evolution_adopt adopts or rejects."""

import types

import pytest
from django.conf import settings as django_settings
from django.core.cache.backends import base as cache_base
from django.core.cache.backends import locmem

from evolution.models import VerificationLog
from evolution.services.thresholds import thresholds_update
from evolution.services.types import UserFeedback
from evolution.services.verification import evolution_adopt, evolution_should_sample, evolution_verify
from tests.evolution.samples import NEW_STUDY_ANSWER, OLD_STUDY_ANSWER, ONE_LINE_ANSWER, STUDY_QUERY

pytestmark = pytest.mark.django_db


def test_verification_is_logged_with_inputs_result_and_thresholds():
    result = evolution_verify(
        query=STUDY_QUERY,
        old_response=OLD_STUDY_ANSWER,
        new_response=NEW_STUDY_ANSWER,
        user_feedback={"satisfaction": 4.5, "comments": "好"},
    )

    log = VerificationLog.objects.get(pk=result.log_id)
    assert (log.query, log.old_response, log.new_response) == (STUDY_QUERY, OLD_STUDY_ANSWER, NEW_STUDY_ANSWER)
    assert log.user_feedback == {"satisfaction": 4.5, "comments": "好"}
    assert log.is_valid and log.confidence == result.confidence == 1.0
    assert log.metrics == result.metrics and log.reasons == result.reasons
    assert log.thresholds["min_length"] == 500
    assert log.source == "code" and not log.cached and log.duration_ms > 0
    assert log.lang == "zh"  # Chinese query, Chinese reasons
    assert log.new_length == result.metrics["basic"]["new_length"]
    assert log.structure_score == 0.75


def test_identical_verification_is_served_from_cache_and_still_logged(django_assert_num_queries):
    first = evolution_verify(query=STUDY_QUERY, old_response=OLD_STUDY_ANSWER, new_response=NEW_STUDY_ANSWER)

    with django_assert_num_queries(2):  # thresholds, log insert
        second = evolution_verify(query=STUDY_QUERY, old_response=OLD_STUDY_ANSWER, new_response=NEW_STUDY_ANSWER)

    assert second.to_dict() == first.to_dict()
    assert list(VerificationLog.objects.order_by("id").values_list("cached", flat=True)) == [False, True]


def test_cache_is_keyed_by_thresholds_feedback_and_language():
    evolution_verify(query=STUDY_QUERY, old_response=OLD_STUDY_ANSWER, new_response=NEW_STUDY_ANSWER)
    evolution_verify(query=STUDY_QUERY, old_response=OLD_STUDY_ANSWER, new_response=NEW_STUDY_ANSWER, lang="en")
    evolution_verify(
        query=STUDY_QUERY,
        old_response=OLD_STUDY_ANSWER,
        new_response=NEW_STUDY_ANSWER,
        user_feedback={"satisfaction": 5},
    )
    thresholds_update(changes={"min_confidence": 0.9})
    stricter = evolution_verify(query=STUDY_QUERY, old_response=OLD_STUDY_ANSWER, new_response=NEW_STUDY_ANSWER)

    assert not VerificationLog.objects.filter(cached=True).exists()
    assert not stricter.is_valid  # the new threshold applied, not a stale cached decision


def test_cache_serves_identical_verifications_for_one_hour_by_default(monkeypatch):
    """Seed document 004's 1-hour cache, with the cache's clock moved instead of waiting."""
    assert django_settings.SELFEVAL_EVOLUTION_CACHE_TTL == 3600
    clock = [1_000_000.0]
    fake_time = types.SimpleNamespace(time=lambda: clock[0])
    monkeypatch.setattr(locmem, "time", fake_time)
    monkeypatch.setattr(cache_base, "time", fake_time)

    evolution_verify(query=STUDY_QUERY, old_response=OLD_STUDY_ANSWER, new_response=NEW_STUDY_ANSWER)
    clock[0] += 3599
    evolution_verify(query=STUDY_QUERY, old_response=OLD_STUDY_ANSWER, new_response=NEW_STUDY_ANSWER)
    clock[0] += 2  # 3601 s after the first verification
    evolution_verify(query=STUDY_QUERY, old_response=OLD_STUDY_ANSWER, new_response=NEW_STUDY_ANSWER)

    assert list(VerificationLog.objects.order_by("id").values_list("cached", flat=True)) == [False, True, False]


def test_default_competitor_timeouts_and_sample_rate_are_seed_document_004_s():
    assert django_settings.SELFEVAL_EVOLUTION_PROVIDER_TIMEOUT == 15.0
    assert django_settings.SELFEVAL_EVOLUTION_OVERALL_TIMEOUT == 20.0
    assert django_settings.SELFEVAL_EVOLUTION_SAMPLE_RATE == 0.2


def test_english_query_gets_english_reasons_by_default():
    result = evolution_verify(query="How do I focus better?", old_response="Rest.", new_response="Rest more.")

    assert result.reasons[0].startswith("basic.new_length: the new answer has only")


def test_unknown_language_is_refused():
    with pytest.raises(ValueError, match="lang"):
        evolution_verify(query=STUDY_QUERY, old_response=OLD_STUDY_ANSWER, new_response=NEW_STUDY_ANSWER, lang="fr")
    assert not VerificationLog.objects.exists()


@pytest.mark.parametrize(
    "feedback",
    [
        {"satisfaction": 7},
        {"satisfaction": -1},
        {"satisfaction": float("nan")},
        {"satisfaction": "5"},
        {"satisfaction": True},
        {"comments": "no score"},
        {"satisfaction": 4, "comments": 3},
        UserFeedback(satisfaction=9.0),
        [5],
    ],
)
def test_invalid_user_feedback_is_refused_before_anything_is_logged(feedback):
    with pytest.raises(ValueError, match="user_feedback"):
        evolution_verify(
            query=STUDY_QUERY, old_response=OLD_STUDY_ANSWER, new_response=NEW_STUDY_ANSWER, user_feedback=feedback
        )
    assert not VerificationLog.objects.exists()


def test_evolve_adopts_a_better_candidate_and_logs_it():
    outcome = evolution_adopt(query=STUDY_QUERY, old_response=OLD_STUDY_ANSWER, candidate=NEW_STUDY_ANSWER)

    assert outcome.adopted and outcome.response == NEW_STUDY_ANSWER
    log = VerificationLog.objects.get(pk=outcome.log_id)
    assert (log.source, log.adoption) == ("pipeline", "adopted")


def test_evolve_rejects_a_worse_candidate_and_keeps_the_old_answer():
    outcome = evolution_adopt(query=STUDY_QUERY, old_response=OLD_STUDY_ANSWER, candidate=ONE_LINE_ANSWER)

    assert not outcome.adopted and outcome.response == OLD_STUDY_ANSWER
    assert outcome.result.reasons
    assert VerificationLog.objects.get(pk=outcome.log_id).adoption == "rejected"


def test_should_sample_follows_the_rate(settings):
    settings.SELFEVAL_EVOLUTION_SAMPLE_RATE = 0.2
    assert not any(evolution_should_sample(rate=0.0) for _ in range(100))
    assert all(evolution_should_sample(rate=1.0) for _ in range(100))
    sampled = sum(evolution_should_sample(key=f"query {i}") for i in range(2000))
    assert 300 < sampled < 500  # about 20 % of 2000


def test_should_sample_is_stable_per_key_and_refuses_bad_rates():
    assert len({evolution_should_sample(rate=0.5, key="如何提高学习注意力？") for _ in range(20)}) == 1
    with pytest.raises(ValueError):
        evolution_should_sample(rate=1.5)
