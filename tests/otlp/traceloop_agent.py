"""An agent instrumented with OpenLLMetry's own SDK, traceloop-sdk, unchanged: `Traceloop.init` pointed
at SelfEval as docs/otlp.md says (its own OTLP/HTTP exporter, to `<api_endpoint>/v1/traces`), its @workflow and @tool decorators, its OpenAI
instrumentation recording the OpenAI SDK's calls (to a local fake OpenAI server), and the
conversation named the SDK's way: `associations` (its session-id association property, as
`Associations.set` sets it) or `conversation` (its @conversation decorator: `gen_ai.conversation.id`).

Run in a process of its own (`python -m tests.otlp.traceloop_agent`), never imported by a test:
`Traceloop.init` is once per process, sets the global tracer provider and instruments the threading
module and the OpenAI SDK for good. The process reads its settings from the environment
(SELFEVAL_URL, SELFEVAL_API_KEY, OPENAI_BASE_URL, CONVERSATION_MODE), runs one turn per line of its
standard input and prints its answers as one JSON list.
"""

import json
import os
import sys

from openai import OpenAI
from opentelemetry import trace
from traceloop.sdk import Traceloop
from traceloop.sdk.associations import AssociationProperty, Associations
from traceloop.sdk.decorators import conversation, tool, workflow
from traceloop.sdk.instruments import Instruments

CONVERSATION_ID = "conv-traceloop"
USER_ID = "u-9"
RUNBOOK = "order-service 的数据库连接池耗尽，请求排队超时并返回 5xx。"


def main() -> None:
    url, mode = os.environ["SELFEVAL_URL"], os.environ["CONVERSATION_MODE"]
    Traceloop.init(
        app_name="diagnosis-agent",
        api_endpoint=url,
        headers={"Authorization": f"Api-Key {os.environ['SELFEVAL_API_KEY']}"},
        disable_batch=True,
        telemetry_enabled=False,
        instruments={Instruments.OPENAI},
    )
    llm = OpenAI(max_retries=0)  # OPENAI_BASE_URL and OPENAI_API_KEY from the environment

    @tool(name="lookup_knowledge")
    def lookup_knowledge(q: str) -> str:
        return RUNBOOK

    @workflow(name="diagnose")
    def diagnose(question: str) -> str:
        runbook = lookup_knowledge(q=question)
        completion = llm.chat.completions.create(
            model="gpt-4o-mini", messages=[{"role": "user", "content": f"{runbook}\n{question}"}]
        )
        return completion.choices[0].message.content

    if mode == "associations":
        Associations.set([(AssociationProperty.SESSION_ID, CONVERSATION_ID), (AssociationProperty.USER_ID, USER_ID)])
        turn = diagnose
    elif mode == "conversation":
        Associations.set([(AssociationProperty.USER_ID, USER_ID)])
        turn = conversation(conversation_id=CONVERSATION_ID)(diagnose)
    else:
        raise SystemExit(f"unknown CONVERSATION_MODE {mode!r}")

    answers = [turn(line.rstrip("\n")) for line in sys.stdin if line.strip()]
    trace.get_tracer_provider().shutdown()
    print(json.dumps(answers, ensure_ascii=False))


if __name__ == "__main__":
    main()
