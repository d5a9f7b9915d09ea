"""The evaluation settings, read once into a typed config, and this process's judge."""

import pytest
from django.core.exceptions import ImproperlyConfigured

from diagnosis.services.evaluation_config import evaluation_config, evaluation_config_reset, evaluation_judge
from diagnosis.services.producers.config import VerifierThresholds
from diagnosis.services.producers.judges import DeterministicJudge


def test_the_config_is_read_once_and_again_after_a_settings_change(settings):
    config = evaluation_config()
    assert evaluation_config() is config
    assert config.thresholds == VerifierThresholds(pass_groundedness=0.8, reject_groundedness=0.4)

    settings.SELFEVAL_AIOPS_TOOL_CATEGORIES = {"traces": ["Jaeger_Search", "TEMPO"]}

    assert evaluation_config() is not config
    assert evaluation_config().tool_categories == {"traces": ("jaeger_search", "tempo")}  # compared without case


@pytest.mark.parametrize(
    "thresholds",
    [
        {"pass_groundedness": 0.6},  # the defaults live in the settings, not here
        {"pass_groundedness": 0.8, "reject_groundedness": 0.4, "typo": 1},
        [0.8, 0.4],
    ],
)
def test_thresholds_must_name_exactly_the_three_keys(settings, thresholds):
    settings.SELFEVAL_VERIFIER_THRESHOLDS = thresholds

    with pytest.raises(ImproperlyConfigured, match="SELFEVAL_VERIFIER_THRESHOLDS"):
        evaluation_config()


def test_the_judge_is_built_once_per_process():
    judge = evaluation_judge()

    assert isinstance(judge, DeterministicJudge)
    assert evaluation_judge() is judge
    evaluation_config_reset()
    assert evaluation_judge() is not judge
