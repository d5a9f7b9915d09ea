"""Gatekeeper and executor-output parsing: every binding status, normalisation, fabrications."""

import pytest

from diagnosis.evaluation_layers import layer_json
from diagnosis.services.producers.executor_output import executor_output_parse
from diagnosis.services.producers.gatekeeper import (
    binding_check,
    excerpt_locate,
    gatekeeper_check,
    gatekeeper_result,
    source_index,
)

from .builders import claim, executor, inv, retrieval

KB = "当 order-service 的数据库连接池耗尽时，请求排队超时并返回 5xx。HikariPool-1 - Connection is not available."
INVOCATIONS = (
    retrieval("inv-1", KB),
    retrieval("inv-2", "slow query log: 12 statements over 2s", status="FAILED"),
    inv("inv-3", tool="query_metrics", output={"cpu": "93%", "pod": "order-service-7d9f8b6c4-x2x9z"}),
)


def check(ref_id: str, excerpt: str) -> dict:
    parsed = executor_output_parse(raw=executor(claim("c1", "text", (ref_id, excerpt))))
    (binding,) = gatekeeper_check(claims=parsed.claims, invocations=INVOCATIONS)
    return binding


@pytest.mark.parametrize(
    ("ref_id", "excerpt", "status"),
    [
        ("inv-1#1", "连接池耗尽", "VERIFIED"),
        ("inv-9#1", "连接池耗尽", "REF_NOT_FOUND"),
        ("inv-2#1", "slow query log", "REF_FROM_FAILED_CALL"),
        ("inv-1#1", "线程池耗尽", "EXCERPT_MISMATCH"),
        ("$.no_evidence", "", "NO_EVIDENCE"),
        # A non-retrieval call's raw output can be cited by its invocation id.
        ("inv-3", '"cpu": "93%"', "VERIFIED"),
    ],
)
def test_each_binding_gets_its_status(ref_id, excerpt, status):
    assert check(ref_id, excerpt).status == status


@pytest.mark.parametrize(
    "excerpt",
    [
        "ＯＲＤＥＲ－ＳＥＲＶＩＣＥ 的数据库",  # full width and case
        "order-service   的\n数据库  连接池",  # whitespace runs and spaces next to Chinese
        "connection IS NOT available",  # case
        "HikariPool-1 - Connection is not available.",  # trailing punctuation kept in the content
        "order-service...返回 5xx",  # ASCII ellipsis: parts in order
        "数据库连接池耗尽…返回 5xx",  # Unicode ellipsis
        "当 order-service……请求排队超时",  # Chinese double ellipsis
    ],
)
def test_normalised_excerpts_verify(excerpt):
    assert check("inv-1#1", excerpt).status == "VERIFIED"


@pytest.mark.parametrize(
    ("excerpt", "why"),
    [
        ("", "empty excerpt"),
        ("   ", "empty excerpt"),
        ("返回 5xx...order-service", "ellipsis parts out of order"),
        ("连接池...内存泄漏", "second part fabricated"),
        ("订...池", "parts too short to anchor anything"),
        ("...", "nothing but an ellipsis"),
        ("数据库连接池耗尽导致订单丢失", "plausible but fabricated"),
        ("order-service 的数据库连接池耗尽时, 请求排队超时并返回 503", "one changed character"),
    ],
)
def test_fabricated_or_empty_excerpts_never_verify(excerpt, why):
    assert check("inv-1#1", excerpt).status == "EXCERPT_MISMATCH", why


def test_result_counts_statuses_per_claim():
    parsed = executor_output_parse(
        raw=executor(
            claim("c1", "a", ("inv-1#1", "连接池耗尽"), ("nope", "x")),
            claim("c2", "b", ("$.no_evidence", ""), ("inv-2#1", "slow query")),
        )
    )
    result = layer_json(gatekeeper_result(bindings=gatekeeper_check(claims=parsed.claims, invocations=INVOCATIONS)))

    assert result["by_claim"] == {"c1": ["VERIFIED", "REF_NOT_FOUND"], "c2": ["NO_EVIDENCE", "REF_FROM_FAILED_CALL"]}
    assert result["summary"] == {
        "total": 4,
        "VERIFIED": 1,
        "REF_NOT_FOUND": 1,
        "REF_FROM_FAILED_CALL": 1,
        "EXCERPT_MISMATCH": 0,
        "NO_EVIDENCE": 1,
        "passed": False,
    }


def test_valid_output_parses_claims_and_ignores_final_answer():
    parsed = executor_output_parse(raw=executor(claim("c1", "text", ("inv-1#1", "x")), final_answer="extra fact: 42%"))

    assert layer_json(parsed.parse_status()) == {"status": "VALID", "errors": [], "fallback": None}
    assert "finalAnswer" not in parsed.structured_output()
    assert [c.claim_id for c in parsed.claims] == ["c1"]


def test_missing_output_has_an_explicit_fallback():
    status = layer_json(executor_output_parse(raw=None).parse_status())

    assert status["status"] == "MISSING"
    assert status["fallback"]["strategy"] == "no_claims_judged"
    assert status["fallback"]["verdict"] == "LOW_CONFID"
    assert status["fallback"]["final_answer_used"] is False


@pytest.mark.parametrize(
    ("raw", "error"),
    [
        ("a string", "Expected `object`, got `str`"),
        (
            {"version": "executor_evidence_v1", "claims": []},
            "Invalid enum value 'executor_evidence_v1' - at `$.version`",
        ),
        ({"version": "executor_evidence_v2"}, "Object missing required field `claims`"),
        ({"version": "executor_evidence_v2", "claims": ["x"]}, "Expected `object`, got `str` - at `$.claims[0]`"),
        ({"version": "executor_evidence_v2", "claims": [{"claimId": "c1", "text": ""}]}, "claims[0].text"),
        ({"version": "executor_evidence_v2", "claims": [{"text": "t"}]}, "Object missing required field `claimId`"),
        (
            {"version": "executor_evidence_v2", "claims": [{"claimId": "c1", "text": "t", "critical": "yes"}]},
            "Expected `bool`, got `str` - at `$.claims[0].critical`",
        ),
        (
            {
                "version": "executor_evidence_v2",
                "claims": [{"claimId": "c1", "text": "t", "evidence": [{"excerpt": "x"}]}],
            },
            "Object missing required field `refId` - at `$.claims[0].evidence[0]`",
        ),
        (
            {"version": "executor_evidence_v2", "claims": [claim("c1", "t"), claim("c1", "u")]},
            "claims[1].claimId 'c1' is duplicated",
        ),
    ],
)
def test_invalid_output_names_the_problem(raw, error):
    parsed = executor_output_parse(raw=raw)

    assert parsed.status == "INVALID"
    assert any(error in e for e in parsed.errors), parsed.errors
    assert parsed.claims == []
    assert layer_json(parsed.parse_status())["fallback"]["reason"] == "structured executor output invalid"


@pytest.mark.parametrize(
    ("content", "excerpt", "marked"),
    [
        ("Connection   Pool exhausted", "connection pool", "Connection   Pool"),
        ("  leading spaces", "leading", "leading"),
        ("当 order-service 的数据库 连接池 耗尽时", "连接池耗尽", "连接池 耗尽"),
        ("ＨＴＴＰ ５０３ returned", "HTTP 503", "ＨＴＴＰ ５０３"),
        ("pool started, then the pool failed", "started...failed", "started, then the pool failed"),
        ("nothing relevant", "other text", None),
    ],
)
def test_excerpt_locate_finds_in_the_raw_content_what_the_gatekeeper_verified(content, excerpt, marked):
    span = excerpt_locate(excerpt, content)

    assert (content[span[0] : span[1]] if span else None) == marked
    verdict = binding_check(
        claim_id="c1", ref_id="r#1", excerpt=excerpt, sources=source_index((retrieval("r", content, level="L0"),))
    )
    assert (verdict.status == "VERIFIED") == (span is not None)
