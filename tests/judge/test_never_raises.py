"""The judge never raises: whatever the claim and the cited text, a claim gets a verdict."""

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from diagnosis.services.judge_benchmark import judge_pair_verify
from diagnosis.services.producers.judges import JUDGE_VERDICTS, DeterministicJudge

JUDGE = DeterministicJudge()

# Every form of Chinese numeral and percentage, the pieces cn2an and the analysis trip on.
NUMERALS = [
    "百分之百", "百分之点五", "百分之二三十", "百分之三十五", "百分之 40", "百分之一百零五", "百分之零点五", "百分之",
    "两百毫秒", "三次", "十万个", "一千二百三十四", "二三十个", "十几次", "几百", "万", "亿", "零", "〇", "点五",
    "第二", "第十一", "三分之一", "五成", "一半", "两倍", "半小时", "一个半", "1,284", "2.4s", "99.9%", "5xx",
    "１２３", "４５％", "ＯＯＭ", "v1.4.2", "2026-11-29 14:20:01", "pid=4242", "12:00", "3点20分",
]  # fmt: skip
WORDS = [
    "payment-api 的 P99 延迟高达 2.4 秒", "运维将 worker 副本数从 3 调整为 6", "The node's disk usage is 91%",
    "not", "no", "未", "没有", "把", "将", "被", "如果", "吗？", "?", "。", "，", ",", ". ", "\n", " ", "",
    "order-service", "→", "->", "“引号”", '"quoted"', "'", "🙂", "🔥🔥", "\u200b", "\ufeff", "％", "－",
]  # fmt: skip
fragment = st.one_of(st.sampled_from(NUMERALS), st.sampled_from(WORDS), st.text(max_size=12))
text = st.lists(fragment, max_size=12).map("".join)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(claim=text, evidence=text)
def test_the_judge_returns_a_verdict_on_any_text(claim, evidence):
    outcome = judge_pair_verify(claim=claim or "x", evidence=evidence or "y", judge=JUDGE, language="zh")

    assert outcome.verdict in (*JUDGE_VERDICTS, "NO_EVIDENCE")
    assert outcome.band is not None and len(outcome.reasons) <= 3


def test_a_claim_the_analysis_cannot_read_is_unsupported_with_a_judge_error(monkeypatch, caplog):
    from judge import decision

    def broken(*args, **kwargs):
        raise ValueError("cannot read")

    monkeypatch.setattr(decision, "pair_analyse", broken)

    outcome = judge_pair_verify(claim="磁盘使用率 91%", evidence="磁盘使用率 91%", judge=JUDGE, language="zh")

    assert (outcome.verdict, outcome.message.code, outcome.band) == ("UNSUPPORTED", "judge.error", "unsupported")
    assert "ValueError: cannot read" in outcome.rationale and "cannot read" in caplog.text


def test_chinese_percentages_are_read_as_numbers():
    for claim, evidence in (("成功率为百分之百", "success rate 100%"), ("错误率百分之点五", "error rate 0.5%")):
        outcome = judge_pair_verify(claim=claim, evidence=evidence, judge=JUDGE, language="zh")
        assert outcome.message.code != "judge.error"
