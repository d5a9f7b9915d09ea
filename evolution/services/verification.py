"""`evolution_verify` (seed document 004's `verify_evolution`), its evolution pipeline
`evolution_adopt`, and `evolution_should_sample` (seed document 004's `should_sample_for_verification`).

Every verification is logged in `VerificationLog`, including those answered from the cache:
identical inputs (query, both answers, feedback, language, competitors) under identical
thresholds from the same project are served from Django's cache for SELFEVAL_EVOLUTION_CACHE_TTL
seconds, unless a competitor provider failed (a degraded result is never cached). The cache is
per project: a hit (answered in a fraction of the time) would tell one project what another asked.
"""

import hashlib
import json
import random
import time
from dataclasses import dataclass

from django.conf import settings
from django.contrib.auth.base_user import AbstractBaseUser
from django.core.cache import cache

from core.tenancy.models import Project
from core.text import has_cjk
from evolution.models import Adoption, VerificationLog, VerificationSource
from evolution.selectors import thresholds_get
from evolution.services.competitors import Provider, competitor_answers_fetch
from evolution.services.decision import evolution_decide
from evolution.services.messages import LANGUAGES
from evolution.services.types import Thresholds, UserFeedback, VerificationResult

CACHE_PREFIX = "evolution:verify:v2:"


def _configured_providers() -> list[Provider]:
    return [Provider.from_setting(entry) for entry in settings.SELFEVAL_EVOLUTION_COMPETITORS]


def _feedback(user_feedback: UserFeedback | dict | None) -> UserFeedback | None:
    """The API validates its input; code callers get the same checks here, before anything is
    logged (a satisfaction of 7 or "5" would otherwise be compared and stored as given)."""
    if user_feedback is None:
        return None
    if isinstance(user_feedback, UserFeedback):
        satisfaction, comments = user_feedback.satisfaction, user_feedback.comments
    elif isinstance(user_feedback, dict):
        if "satisfaction" not in user_feedback:
            raise ValueError("user_feedback needs a satisfaction")
        satisfaction, comments = user_feedback["satisfaction"], user_feedback.get("comments") or ""
    else:
        raise ValueError("user_feedback must be a dict, a UserFeedback or None")
    if isinstance(satisfaction, bool) or not isinstance(satisfaction, (int, float)):
        raise ValueError("user_feedback satisfaction must be a number")
    if not 0.0 <= satisfaction <= 5.0:  # also refuses NaN
        raise ValueError("user_feedback satisfaction must be between 0 and 5")
    if not isinstance(comments, str):
        raise ValueError("user_feedback comments must be a string")
    return UserFeedback(satisfaction=float(satisfaction), comments=comments)


def _fingerprint(
    *,
    query: str,
    old: str,
    new: str,
    feedback: UserFeedback | None,
    lang: str,
    providers: list[Provider],
    thresholds: Thresholds,
) -> str:
    payload = {
        "query": query,
        "old": old,
        "new": new,
        "feedback": None if feedback is None else [feedback.satisfaction, feedback.comments],
        "lang": lang,
        "competitors": [[p.name, p.base_url, p.model] for p in providers],
        "thresholds": thresholds.to_dict(),
    }
    return hashlib.sha256(json.dumps(payload, ensure_ascii=False, sort_keys=True).encode()).hexdigest()


def evolution_verify(
    *,
    query: str,
    old_response: str,
    new_response: str,
    user_feedback: UserFeedback | dict | None = None,
    lang: str | None = None,
    compare_competitors: bool = True,
    source: str = VerificationSource.CODE,
    user: AbstractBaseUser | None = None,
    project: Project | None = None,
) -> VerificationResult:
    """Verify that `new_response` really improves on `old_response` for `query` and log it.

    `user_feedback`: `{"satisfaction": 0..5, "comments": str}` or None. `lang`: "zh" or "en"
    for reasons and suggestions (default: Chinese when the query is Chinese). Competitors are
    asked only when configured and `compare_competitors`; their failures degrade, never block.
    The result's log row id is `result.log_id`.
    """
    started = time.perf_counter()
    lang = lang or ("zh" if has_cjk(query) else "en")
    if lang not in LANGUAGES:
        raise ValueError(f"lang must be one of {LANGUAGES}")
    feedback = _feedback(user_feedback)
    thresholds = thresholds_get()
    providers = _configured_providers() if compare_competitors else []
    fingerprint = _fingerprint(
        query=query,
        old=old_response,
        new=new_response,
        feedback=feedback,
        lang=lang,
        providers=providers,
        thresholds=thresholds,
    )
    cache_key = f"{CACHE_PREFIX}{project.pk if project is not None else 'site'}:{fingerprint}"
    cached = cache.get(cache_key)
    if cached is not None:
        result = VerificationResult.from_dict(cached)
    else:
        answers = (
            competitor_answers_fetch(
                query=query,
                providers=providers,
                provider_timeout=settings.SELFEVAL_EVOLUTION_PROVIDER_TIMEOUT,
                overall_timeout=settings.SELFEVAL_EVOLUTION_OVERALL_TIMEOUT,
            )
            if providers
            else None
        )
        result = evolution_decide(
            query=query,
            old_response=old_response,
            new_response=new_response,
            thresholds=thresholds,
            user_feedback=feedback,
            competitor_answers=answers,
            lang=lang,
        )
        # A degraded comparison is not remembered: the next identical call asks the providers again.
        if not result.metrics["competitors"]["degraded"]:
            cache.set(cache_key, result.to_dict(), settings.SELFEVAL_EVOLUTION_CACHE_TTL)
    metrics = result.metrics
    log = VerificationLog.objects.create(
        source=source,
        project=project,
        requested_by=user if user is not None and user.is_authenticated else None,
        query=query,
        old_response=old_response,
        new_response=new_response,
        user_feedback=None
        if feedback is None
        else {"satisfaction": feedback.satisfaction, "comments": feedback.comments},
        lang=lang,
        fingerprint=fingerprint,
        is_valid=result.is_valid,
        confidence=result.confidence,
        reasons=result.reasons,
        suggestions=result.suggestions,
        metrics=metrics,
        thresholds=thresholds.to_dict(),
        duration_ms=round((time.perf_counter() - started) * 1000, 3),
        cached=cached is not None,
        # The pipeline's gate acts on the decision at once; other callers only ask.
        adoption=(Adoption.ADOPTED if result.is_valid else Adoption.REJECTED)
        if source == VerificationSource.PIPELINE
        else Adoption.NONE,
        new_length=metrics["basic"]["new_length"],
        structure_score=metrics["structure"]["structure_score"],
        quality_overall=metrics["quality"]["new_scores"]["overall"],
        quality_delta=metrics["quality"]["improvement"]["overall_delta"],
        competitor_status=metrics["competitors"]["status"],
        competitor_rank=metrics["competitors"]["rank"],
    )
    result.log_id = log.pk
    return result


@dataclass(frozen=True)
class EvolutionOutcome:
    adopted: bool
    response: str  # the answer to use from now on: the candidate if adopted, else the old one
    result: VerificationResult
    log_id: int


def evolution_adopt(
    *,
    query: str,
    old_response: str,
    candidate: str,
    user_feedback: UserFeedback | dict | None = None,
    lang: str | None = None,
    user: AbstractBaseUser | None = None,
) -> EvolutionOutcome:
    """Seed document 004's evolution pipeline: verify the candidate, adopt it if valid, else keep the old
    answer; its log row records which (source "pipeline", adoption adopted / rejected). The gate
    always verifies: sampling is for callers that merely monitor answers (`evolution_should_sample`)."""
    result = evolution_verify(
        query=query,
        old_response=old_response,
        new_response=candidate,
        user_feedback=user_feedback,
        lang=lang,
        source=VerificationSource.PIPELINE,
        user=user,
    )
    return EvolutionOutcome(
        adopted=result.is_valid,
        response=candidate if result.is_valid else old_response,
        result=result,
        log_id=result.log_id,
    )


def evolution_should_sample(*, rate: float | None = None, key: str | None = None) -> bool:
    """Seed document 004's `should_sample_for_verification`: True for about `rate` of the calls
    (default SELFEVAL_EVOLUTION_SAMPLE_RATE). With a `key` (e.g. the query) the choice is stable:
    the same key is always sampled or always not."""
    rate = settings.SELFEVAL_EVOLUTION_SAMPLE_RATE if rate is None else rate
    if not 0.0 <= rate <= 1.0:
        raise ValueError("rate must be between 0 and 1")
    if key is None:
        return random.random() < rate
    bucket = int.from_bytes(hashlib.sha256(key.encode()).digest()[:8], "big") / 2**64
    return bucket < rate
