"""The evaluation dataset (`cases.services.eval_dataset`) in the shapes of three evaluation tools.

- `ragas`: JSON Lines, one Ragas `SingleTurnSample` a line (`user_input`, `retrieved_contexts`,
  `response`, `reference`), what `EvaluationDataset.from_jsonl` reads. `reference` is left out
  without an approved case, as Ragas' own `to_jsonl` leaves out what is None. SelfEval's metadata
  goes under `selfeval`, a key Ragas does not know: its samples are pydantic models with the default
  `extra="ignore"`, so loading drops it instead of failing.
- `deepeval`: one JSON array of DeepEval goldens (`input`, `actual_output`, `expected_output`,
  `retrieval_context`, `name`, `additional_metadata`) under the default key names of
  `EvaluationDataset.add_goldens_from_json_file`. `context` (DeepEval's ideal, human-checked
  context) stays null: nobody checked the retrieved contexts as such.
- `promptfoo`: one JSON array of promptfoo test cases (`tests: file://...json`): `vars` `query`,
  `context` (the retrieved contexts, an array) and `answer` (the recorded answer, for the `echo`
  provider), `assert` a `context-faithfulness` check when there are contexts and an `llm-rubric`
  from the reviewed reference when there is one, `metadata` SelfEval's.

Keys are sorted at every level and the samples come in the dataset's order, so two exports of the
same data are the same bytes.
"""

from collections.abc import Callable, Iterable, Iterator
from datetime import datetime
from enum import StrEnum
from typing import Any

from cases.selectors import DatasetSource, session_list_for_eval_dataset
from cases.services.eval_dataset import EXPORT_CHUNK_SIZE, EvalSample, eval_samples, sample_metadata
from core.tenancy.models import Project
from core.text import json_sorted_keys
from diagnosis.services.transfer import json_line

# The share of the answer's claims the retrieved contexts must support (promptfoo scores supported
# claims / claims; its default threshold, 0, passes anything).
PROMPTFOO_FAITHFULNESS_THRESHOLD = 0.8
PROMPTFOO_RUBRIC = (
    "The answer agrees with this reference answer, which a reviewer approved: the same root cause and "
    "the same solution (wording, order and extra detail may differ; a contradiction fails).\n\n"
    "Reference answer:\n{reference}"
)


class DatasetFormat(StrEnum):
    RAGAS = "ragas"
    DEEPEVAL = "deepeval"
    PROMPTFOO = "promptfoo"


def eval_dataset_lines(
    *,
    dataset_format: DatasetFormat,
    source: DatasetSource = DatasetSource.SESSIONS,
    project: Project | None = None,
    since: datetime | None = None,
    until: datetime | None = None,
    chunk_size: int = EXPORT_CHUNK_SIZE,
) -> Iterator[str]:
    """The dataset as lines of text (each without its newline) in `dataset_format`, streamed."""
    sessions = session_list_for_eval_dataset(source=source, project=project, since=since, until=until)
    return FORMAT_LINES[dataset_format](eval_samples(sessions=sessions, chunk_size=chunk_size))


def ragas_sample(sample: EvalSample) -> dict[str, Any]:
    row: dict[str, Any] = {
        "user_input": sample.query,
        "retrieved_contexts": list(sample.contexts),
        "response": sample.answer,
        "selfeval": sample_metadata(sample),
    }
    if sample.reference is not None:
        row["reference"] = sample.reference
    return row


def deepeval_golden(sample: EvalSample) -> dict[str, Any]:
    return {
        "input": sample.query,
        "actual_output": sample.answer,
        "expected_output": sample.reference,
        "retrieval_context": list(sample.contexts),
        "context": None,
        "name": f"{sample.project}/{sample.session_id}",
        "additional_metadata": sample_metadata(sample),
    }


def promptfoo_test(sample: EvalSample) -> dict[str, Any]:
    asserts: list[dict[str, Any]] = []
    if sample.contexts:
        asserts.append({"type": "context-faithfulness", "threshold": PROMPTFOO_FAITHFULNESS_THRESHOLD})
    if sample.reference is not None:
        asserts.append({"type": "llm-rubric", "value": PROMPTFOO_RUBRIC.format(reference=sample.reference)})
    return {
        "description": f"{sample.project}/{sample.session_id}",
        "vars": {"query": sample.query, "context": list(sample.contexts), "answer": sample.answer},
        "assert": asserts,
        "metadata": sample_metadata(sample),
    }


def json_lines(items: Iterable[dict[str, Any]]) -> Iterator[str]:
    """One JSON object a line, keys sorted."""
    for item in items:
        yield json_line(json_sorted_keys(item))


def json_array_lines(items: Iterable[dict[str, Any]]) -> Iterator[str]:
    """A JSON array written one element a line (`[`, the elements, `]`), keys sorted, streamed."""
    yield "["
    previous: str | None = None
    for line in json_lines(items):
        if previous is not None:
            yield previous + ","
        previous = line
    if previous is not None:
        yield previous
    yield "]"


FORMAT_LINES: dict[DatasetFormat, Callable[[Iterable[EvalSample]], Iterator[str]]] = {
    DatasetFormat.RAGAS: lambda samples: json_lines(map(ragas_sample, samples)),
    DatasetFormat.DEEPEVAL: lambda samples: json_array_lines(map(deepeval_golden, samples)),
    DatasetFormat.PROMPTFOO: lambda samples: json_array_lines(map(promptfoo_test, samples)),
}
