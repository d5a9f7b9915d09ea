"""Settings shared by every environment; the environment is read here and nowhere else.

Development is the default: SQLite under var/, tasks run in process, DEBUG on.
`production.py` tightens everything and refuses to start without real secrets.
"""

import json
import os
from datetime import timedelta
from pathlib import Path

import dj_database_url
from django.core.exceptions import ImproperlyConfigured
from django.utils.csp import CSP
from django.utils.translation import gettext_lazy as _

BASE_DIR = Path(__file__).resolve().parent.parent.parent


def env_str(name: str, default: str = "") -> str:
    """An empty variable counts as unset, as in env_bool and env_int."""
    return os.environ.get(name) or default


def env_bool(name: str, default: bool) -> bool:
    """Strict booleans: a typo in a flag must not silently mean False."""
    raw = os.environ.get(name)
    if raw is None or raw == "":
        return default
    value = raw.strip().lower()
    if value in {"1", "true", "yes", "on"}:
        return True
    if value in {"0", "false", "no", "off"}:
        return False
    raise ImproperlyConfigured(f"{name} must be a boolean (true/false), got {raw!r}")


def env_int(name: str, default: int) -> int:
    raw = os.environ.get(name)
    if raw is None or raw == "":
        return default
    try:
        return int(raw)
    except ValueError:
        raise ImproperlyConfigured(f"{name} must be an integer, got {raw!r}") from None


def env_float(name: str, default: float) -> float:
    raw = os.environ.get(name)
    if raw is None or raw == "":
        return default
    try:
        return float(raw)
    except ValueError:
        raise ImproperlyConfigured(f"{name} must be a number, got {raw!r}") from None


def env_list(name: str, default: str = "") -> list[str]:
    return [item.strip() for item in env_str(name, default).split(",") if item.strip()]


DEBUG = env_bool("DEBUG", True)

SECRET_KEY = env_str("SECRET_KEY")
if not SECRET_KEY:
    if not DEBUG:
        raise ImproperlyConfigured("SECRET_KEY must be set when DEBUG is off")
    SECRET_KEY = "django-insecure-development-only-key-never-use-in-production"  # noqa: S105 (DEBUG only)

ALLOWED_HOSTS = env_list("ALLOWED_HOSTS", "127.0.0.1,localhost,testserver")
CSRF_TRUSTED_ORIGINS = env_list("CSRF_TRUSTED_ORIGINS")

INSTALLED_APPS = [
    "backoffice.apps.SelfEvalAdminConfig",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "rest_framework",
    "rest_framework_api_key",
    "django_filters",
    "drf_spectacular",
    "drf_spectacular_sidecar",
    "django_tasks_db",
    "axes",
    "core.tenancy",
    "core.api",
    "diagnosis",
    "feedback",
    "cases",
    "evolution",
    "reporting",
    "otlp",
    "backoffice",
    "demo",
]

# The Browser* middleware are Django's, passed by for an API request that carries its own
# credentials (core.api.middleware.carries_own_credentials): a machine client has no session.
MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "core.api.middleware.BrowserContentSecurityPolicyMiddleware",
    "core.api.middleware.NulInURLMiddleware",
    "core.api.middleware.RateLimitHeadersMiddleware",
    # Only with a read replica (it leaves the chain otherwise); outside the session middleware.
    "config.replica.ReplicaReadsMiddleware",
    "core.api.middleware.BrowserSessionMiddleware",
    "django.middleware.locale.LocaleMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "core.api.middleware.BrowserAuthenticationMiddleware",
    "core.api.middleware.BrowserMessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "core.api.middleware.DatabaseUnavailableMiddleware",
    # Last, as django-axes asks: it turns a locked-out login into the lockout page.
    "axes.middleware.AxesMiddleware",
]

# The Content-Security-Policy of every answer (Django's CSP middleware). Scripts come from this
# site's files only: no inline script or event handler anywhere, the admin's, the inspector's and
# Swagger UI's included, so an injected <script> or onerror= never runs. Inline <style> elements
# need the request's nonce (Django's admin gives its one to it); style attributes stay allowed for
# the widths of the dashboard's and inspector's bars: they cannot run script.
SECURE_CSP = {
    "default-src": [CSP.SELF],
    "script-src": [CSP.SELF],
    "style-src": [CSP.SELF, CSP.NONCE],
    "style-src-attr": [CSP.UNSAFE_INLINE],
    "img-src": [CSP.SELF, "data:"],
    "object-src": [CSP.NONE],
    "base-uri": [CSP.NONE],
    "form-action": [CSP.SELF],
    "frame-ancestors": [CSP.NONE],
}

ROOT_URLCONF = "config.urls"
WSGI_APPLICATION = "config.wsgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
                "django.template.context_processors.csp",
            ],
        },
    },
]


def database_from_url(url: str) -> dict:
    """The settings of one database alias: the primary's (DATABASE_URL) and the replica's alike."""
    database = dj_database_url.parse(url, conn_max_age=env_int("DATABASE_CONN_MAX_AGE", 60), conn_health_checks=True)
    if database["ENGINE"] == "django.db.backends.sqlite3":
        # WAL lets the in-process task runner read while the dev server writes.
        database["OPTIONS"] = {
            "init_command": "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;",
            "transaction_mode": "IMMEDIATE",
            "timeout": 20,
        }
        database["CONN_MAX_AGE"] = 0
        return database
    # An unreachable server is answered 503 at once, not after the operating system's TCP timeout:
    # psycopg gives up connecting after this many seconds (2 at least, as libpq).
    database.setdefault("OPTIONS", {})["connect_timeout"] = env_int("DATABASE_CONNECT_TIMEOUT", 2)
    if env_bool("DATABASE_POOL", True):
        # psycopg's connection pool, one per process: a request borrows an open connection instead
        # of checking a persistent one with a round trip (CONN_HEALTH_CHECKS). A connection the
        # server dropped fails the one request that uses it and leaves the pool. A request waits at
        # most DATABASE_POOL_TIMEOUT for a connection: with max_size at least the threads of a
        # worker that is only ever the time to open one, so during an outage it is the time to say
        # 503 (the pool keeps reconnecting in the background).
        database["CONN_MAX_AGE"] = 0
        database["CONN_HEALTH_CHECKS"] = False
        database["OPTIONS"]["pool"] = {
            "min_size": env_int("DATABASE_POOL_MIN_SIZE", 2),
            "max_size": env_int("DATABASE_POOL_MAX_SIZE", 8),
            "timeout": env_float("DATABASE_POOL_TIMEOUT", 0.5),
        }
    return database


DATABASES = {
    "default": database_from_url(env_str("DATABASE_URL", f"sqlite:///{BASE_DIR / 'var' / 'selfeval.sqlite3'}"))
}
# A streaming replica of the primary: the admin's lists, dashboard and calibration panel and the
# trace API read from it (config/replica.py). A client that wrote reads from the primary for
# DATABASE_REPLICA_PIN_SECONDS afterwards: set it above the replica's usual lag. Tests read the test
# database itself through the alias (a mirror), never a replica.
DATABASE_REPLICA_PIN_SECONDS = env_int("DATABASE_REPLICA_PIN_SECONDS", 5)
if replica_url := env_str("DATABASE_REPLICA_URL"):
    DATABASES["replica"] = database_from_url(replica_url) | {"TEST": {"MIRROR": "default"}}
    DATABASE_ROUTERS = ["config.replica.ReplicaRouter"]
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"
# Covering indexes (Index(include=...)) speed PostgreSQL up; SQLite builds them as plain indexes.
SILENCED_SYSTEM_CHECKS = ["models.W040"]

CACHE_URL = env_str("CACHE_URL")
if CACHE_URL:
    CACHES = {"default": {"BACKEND": "django.core.cache.backends.redis.RedisCache", "LOCATION": CACHE_URL}}
else:
    CACHES = {"default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"}}

# "immediate": evaluation runs in process right after the ingesting transaction commits.
# "database": tasks are stored in the database and run by `manage.py db_worker` processes.
TASKS_BACKEND = env_str("TASKS_BACKEND", "immediate")
if TASKS_BACKEND == "immediate":
    TASKS = {"default": {"BACKEND": "django.tasks.backends.immediate.ImmediateBackend"}}
elif TASKS_BACKEND == "database":
    TASKS = {"default": {"BACKEND": "django_tasks_db.DatabaseBackend", "QUEUES": ["default"]}}
elif TASKS_BACKEND == "dummy":
    TASKS = {"default": {"BACKEND": "django.tasks.backends.dummy.DummyBackend"}}
else:
    raise ImproperlyConfigured("TASKS_BACKEND must be one of immediate, database, dummy")

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]

LANGUAGE_CODE = "en"
LANGUAGES = [("en", _("English")), ("zh-hans", _("Simplified Chinese"))]
LOCALE_PATHS = [BASE_DIR / "locale"]
TIME_ZONE = env_str("TIME_ZONE", "UTC")
USE_I18N = True
USE_TZ = True

STATIC_URL = "static/"
STATIC_ROOT = BASE_DIR / "staticfiles"
STATICFILES_DIRS = [BASE_DIR / "static"]

LOGIN_URL = "admin:login"

# Admin login throttling (django-axes): after AXES_FAILURE_LIMIT wrong passwords for one username
# from one address, that pair is locked out for AXES_COOLOFF_TIME (the login page answers 429);
# a successful login resets the count. Failures are counted in the database (axes' AccessAttempt,
# shown in the admin, where a superuser can also delete one to unlock early).
AUTHENTICATION_BACKENDS = [
    "axes.backends.AxesStandaloneBackend",
    "django.contrib.auth.backends.ModelBackend",
]
AXES_FAILURE_LIMIT = env_int("SELFEVAL_LOGIN_FAILURE_LIMIT", 5)
AXES_COOLOFF_TIME = timedelta(minutes=env_int("SELFEVAL_LOGIN_COOLOFF_MINUTES", 15))
AXES_LOCKOUT_PARAMETERS = [["username", "ip_address"]]
AXES_RESET_ON_SUCCESS = True
AXES_DISABLE_ACCESS_LOG = True  # no row per successful login; failures are what the lockout needs
AXES_LOCKOUT_CALLABLE = "backoffice.admin_site.login_lockout"
# The client's address, by the same rule as the API's rate limits (SELFEVAL_TRUSTED_PROXIES).
AXES_CLIENT_IP_CALLABLE = "core.api.throttling.client_address"

REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": [
        "core.api.authentication.ProjectAPIKeyAuthentication",
        "rest_framework.authentication.SessionAuthentication",
    ],
    "DEFAULT_PERMISSION_CLASSES": ["core.api.permissions.IsProjectClientOrStaff"],
    "DEFAULT_RENDERER_CLASSES": ["rest_framework.renderers.JSONRenderer"],
    "DEFAULT_PARSER_CLASSES": ["core.api.parsers.CheckedJSONParser"],
    "DEFAULT_FILTER_BACKENDS": ["django_filters.rest_framework.DjangoFilterBackend"],
    "DEFAULT_SCHEMA_CLASS": "drf_spectacular.openapi.AutoSchema",
    "EXCEPTION_HANDLER": "core.api.errors.api_exception_handler",
    "DEFAULT_THROTTLE_CLASSES": ["core.api.throttling.ClientScopedRateThrottle"],
    # One scope per kind of work, each with its own budget per client (docs/operations.md, Configuration).
    "DEFAULT_THROTTLE_RATES": {
        "ingestion": env_str("THROTTLE_INGESTION", "6000/min"),
        "sessions": env_str("THROTTLE_SESSIONS", "3000/min"),
        "feedback": env_str("THROTTLE_FEEDBACK", "600/min"),
        "feedback_token": env_str("THROTTLE_FEEDBACK_TOKEN", "1200/min"),
        "trace": env_str("THROTTLE_TRACE", "3000/min"),
        "cases": env_str("THROTTLE_CASES", "1200/min"),
        "evolution": env_str("THROTTLE_EVOLUTION", "600/min"),
        "otlp": env_str("THROTTLE_OTLP", "6000/min"),
        "thresholds": env_str("THROTTLE_THRESHOLDS", "600/min"),
        # Failed authentications (bad API keys or feedback tokens) per client address.
        "auth_failure": env_str("THROTTLE_AUTH_FAILURES", "20/min"),
    },
    "UNAUTHENTICATED_USER": "django.contrib.auth.models.AnonymousUser",
    # How many proxies in front of the app append to X-Forwarded-For: 0 trusts no header (the
    # client is REMOTE_ADDR), 1 behind one nginx. A client cannot pick its own address.
    "NUM_PROXIES": env_int("SELFEVAL_TRUSTED_PROXIES", 0),
}

SPECTACULAR_SETTINGS = {
    "TITLE": "SelfEval API",
    "DESCRIPTION": (
        "Ingestion, feedback, trace and evolution-verification API of SelfEval. "
        "Machine clients send `Authorization: Api-Key <key>`; admin users use their session.\n\n"
        "Every write endpoint takes a compressed request body: `Content-Encoding: gzip` (or `deflate`) is a "
        "header of the transport, set by the HTTP client that compresses the body, not an operation parameter; "
        "SELFEVAL_MAX_BODY_BYTES applies to the body once inflated, another coding is a 415. Answers carry "
        "`RateLimit-Policy` and `RateLimit` (IETF draft-ietf-httpapi-ratelimit-headers-10) for the operation's "
        'throttle scope, e.g. `RateLimit-Policy: "feedback";q=600;w=60` and `RateLimit: "feedback";r=597;t=42` '
        "(requests left, seconds until the window resets); a 429 or a 503 carries `Retry-After`."
    ),
    "VERSION": "1.0.0",
    # JSON Schema 2020-12: a null alternative is `"type": [..., "null"]` or `oneOf [..., {"type": "null"}]`,
    # which strict validators (openapi-core) and model generators read, unlike 3.0's `nullable` beside a `$ref`.
    "OAS_VERSION": "3.1.0",
    "SERVE_INCLUDE_SCHEMA": False,
    "POSTPROCESSING_HOOKS": [
        "drf_spectacular.hooks.postprocess_schema_enums",
        "core.api.schema.response_headers_postprocess",
        "core.api.schema.write_bodies_required",
    ],
    "COMPONENT_SPLIT_REQUEST": True,
    "SERVE_PERMISSIONS": ["rest_framework.permissions.AllowAny"],
    # Swagger UI is served from the sidecar package's static files, never from a CDN.
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    # One named enum per set of values, whatever the field is called where it appears.
    "ENUM_NAME_OVERRIDES": {
        "SessionStatusEnum": "diagnosis.models.SessionStatus",
        "InvocationStatusEnum": "diagnosis.models.InvocationStatus",
        "SessionModeEnum": "diagnosis.models.SessionMode",
        "MatchLevelEnum": "diagnosis.models.MatchLevel",
        "FeedbackEnum": "diagnosis.models.Feedback",
        "VerifierVerdictEnum": "diagnosis.models.VerifierVerdict",
        "AiOpsVerdictEnum": "diagnosis.models.AiOpsVerdict",
        "ClaimVerdictEnum": "diagnosis.models.ClaimVerdict",
        "EvaluationStateEnum": "diagnosis.models.EvaluationState",
        "FailureAttributionEnum": "diagnosis.models.FailureAttribution",
        "CaseStatusEnum": "cases.models.CaseStatus",
        "CaseSourceTypeEnum": "cases.models.CaseSourceType",
        "FaultCategoryEnum": "cases.models.FaultCategory",
        "BadCaseStatusEnum": "cases.models.BadCaseStatus",
        "BadCaseCategoryEnum": "cases.models.BadCaseCategory",
        "BadCaseSourceEnum": "cases.models.BadCaseSource",
        "FeedbackClientEnum": "feedback.models.FeedbackClient",
        "LanguageEnum": ["zh", "en"],
    },
}

# API bodies larger than this, once inflated (Content-Encoding gzip / deflate), get 413; a declared
# Content-Length over it is refused before a byte is read (core/api/bodies.py).
SELFEVAL_MAX_BODY_BYTES = env_int("SELFEVAL_MAX_BODY_BYTES", 5 * 1024 * 1024)
# Sessions one POST /api/sessions/batch may carry (a JSON array or NDJSON lines); more is a 400.
SELFEVAL_BATCH_MAX_ITEMS = env_int("SELFEVAL_BATCH_MAX_ITEMS", 100)
DATA_UPLOAD_MAX_MEMORY_SIZE = SELFEVAL_MAX_BODY_BYTES
# API bodies nested deeper than this (objects and arrays) get 400 (core/api/parsers.py).
SELFEVAL_MAX_JSON_DEPTH = env_int("SELFEVAL_MAX_JSON_DEPTH", 64)

# Claims of the executor output a session may carry (executor_evidence_v2), evidence bindings per
# claim, and characters of a claim's text or of one evidence excerpt: more is a 400 at ingestion.
SELFEVAL_MAX_CLAIMS = env_int("SELFEVAL_MAX_CLAIMS", 200)
SELFEVAL_MAX_CLAIM_EVIDENCE = env_int("SELFEVAL_MAX_CLAIM_EVIDENCE", 20)
SELFEVAL_MAX_EXCERPT_CHARS = env_int("SELFEVAL_MAX_EXCERPT_CHARS", 2000)

# OpenTelemetry ingestion (POST /v1/traces, otlp). Spans wait in the database until
# their trace's root span arrives; limits refuse spans one by one (OTLP partial success), never a request.
SELFEVAL_OTLP_MAX_BODY_BYTES = env_int("SELFEVAL_OTLP_MAX_BODY_BYTES", 8 * 1024 * 1024)  # after inflating
SELFEVAL_OTLP_MAX_SPANS_PER_TRACE = env_int("SELFEVAL_OTLP_MAX_SPANS_PER_TRACE", 2000)
SELFEVAL_OTLP_MAX_ATTRIBUTE_BYTES = env_int("SELFEVAL_OTLP_MAX_ATTRIBUTE_BYTES", 256 * 1024)
SELFEVAL_OTLP_MAX_TRACE_BYTES = env_int("SELFEVAL_OTLP_MAX_TRACE_BYTES", 32 * 1024 * 1024)
# `manage.py otlp_sweep` (every minute): a trace whose root span has not arrived this long after its
# last span is ingested as it is (a partial session) or expired; spans of ingested traces are kept
# this long after their last span so that late spans can re-ingest the session.
SELFEVAL_OTLP_TRACE_TIMEOUT_MINUTES = env_int("SELFEVAL_OTLP_TRACE_TIMEOUT_MINUTES", 30)
SELFEVAL_OTLP_SPAN_RETENTION_HOURS = env_int("SELFEVAL_OTLP_SPAN_RETENTION_HOURS", 24)
# Match level of a retrieval without a selfeval.match_level attribute, from its best document score.
SELFEVAL_OTLP_L0_SCORE = env_float("SELFEVAL_OTLP_L0_SCORE", 0.9)
SELFEVAL_OTLP_L1_SCORE = env_float("SELFEVAL_OTLP_L1_SCORE", 0.5)
if not SELFEVAL_OTLP_L1_SCORE <= SELFEVAL_OTLP_L0_SCORE:
    raise ImproperlyConfigured("SELFEVAL_OTLP_L1_SCORE must not exceed SELFEVAL_OTLP_L0_SCORE")

# Verifier rounds whose claim checks are kept per session (a round starts when the evidence
# changes); older rounds are deleted by the evaluation that stores a new one.
SELFEVAL_CLAIM_CHECK_ROUNDS = env_int("SELFEVAL_CLAIM_CHECK_ROUNDS", 10)

# Lifetime in seconds of the signed feedback tokens end users' browsers vote with.
SELFEVAL_FEEDBACK_TOKEN_TTL = env_int("SELFEVAL_FEEDBACK_TOKEN_TTL", 15 * 60)
# How long (seconds) POST /api/feedback remembers an Idempotency-Key and the answer it got.
SELFEVAL_IDEMPOTENCY_KEY_TTL = env_int("SELFEVAL_IDEMPOTENCY_KEY_TTL", 24 * 60 * 60)
# Round-robin assignment of new triage queue items: the name of the group whose active staff take
# turns (e.g. "Reviewer"); empty (the default) leaves new items unassigned until someone takes them.
SELFEVAL_TRIAGE_ROUND_ROBIN_GROUP = env_str("SELFEVAL_TRIAGE_ROUND_ROBIN_GROUP")
# How many sessions the triage queue's "Take next" assigns at once.
SELFEVAL_TAKE_NEXT = env_int("SELFEVAL_TAKE_NEXT", 10)
# How many recent feedback events the trace API shows.
SELFEVAL_TRACE_FEEDBACK_HISTORY = env_int("SELFEVAL_TRACE_FEEDBACK_HISTORY", 20)
# Turns of a session's conversation the trace lists (GET /api/trace/<sessionId>, `conversation`).
SELFEVAL_TRACE_CONVERSATION_TURNS = env_int("SELFEVAL_TRACE_CONVERSATION_TURNS", 50)
# Tool invocations per trace page, and characters of a tool output or ref content the trace shows
# before it cuts to a preview with a link to the whole.
SELFEVAL_TRACE_INVOCATIONS = env_int("SELFEVAL_TRACE_INVOCATIONS", 50)
SELFEVAL_TRACE_PREVIEW_CHARS = env_int("SELFEVAL_TRACE_PREVIEW_CHARS", 2000)
# How long a rendered trace stays in the cache (CACHES). A write to the session moves its trace
# version, so a cached body is never stale; this only bounds what the cache holds.
SELFEVAL_TRACE_CACHE_SECONDS = env_int("SELFEVAL_TRACE_CACHE_SECONDS", 3600)

# Evaluation tasks: a failing evaluation is retried this many times in all, waiting
# BACKOFF, 2x BACKOFF, ... between attempts on the database worker, then marked FAILED.
SELFEVAL_EVALUATION_MAX_ATTEMPTS = env_int("SELFEVAL_EVALUATION_MAX_ATTEMPTS", 3)
SELFEVAL_EVALUATION_RETRY_BACKOFF_SECONDS = env_int("SELFEVAL_EVALUATION_RETRY_BACKOFF_SECONDS", 30)
# `manage.py evaluation_sweep` (run every minute): re-enqueue sessions PENDING for longer than
# this, and reclaim evaluation tasks a killed worker left RUNNING for longer than that.
SELFEVAL_SWEEP_PENDING_MINUTES = env_int("SELFEVAL_SWEEP_PENDING_MINUTES", 10)
SELFEVAL_SWEEP_STUCK_TASK_MINUTES = env_int("SELFEVAL_SWEEP_STUCK_TASK_MINUTES", 15)
# `manage.py purge_sessions` without --older-than: delete sessions older than this many days.
# 0 (the default) sets no default: the command then refuses to guess.
SELFEVAL_RETENTION_DAYS = env_int("SELFEVAL_RETENTION_DAYS", 0)
if SELFEVAL_RETENTION_DAYS < 0:
    raise ImproperlyConfigured("SELFEVAL_RETENTION_DAYS must be 0 (no default) or a number of days")

# Evaluation producers (diagnosis/services/producers). The verifier's judge: "deterministic"
# (offline, default), "llm" (any OpenAI-compatible /chat/completions endpoint) or "cascade"
# (deterministic first, the LLM only for claims it could not align); see producers/judges/factory.py.
SELFEVAL_JUDGE = env_str("SELFEVAL_JUDGE", "deterministic")
if SELFEVAL_JUDGE not in {"deterministic", "llm", "cascade"}:
    raise ImproperlyConfigured("SELFEVAL_JUDGE must be deterministic, llm or cascade")
SELFEVAL_LLM_BASE_URL = env_str("SELFEVAL_LLM_BASE_URL")
SELFEVAL_LLM_MODEL = env_str("SELFEVAL_LLM_MODEL")
SELFEVAL_LLM_API_KEY = env_str("SELFEVAL_LLM_API_KEY")
SELFEVAL_LLM_TIMEOUT = env_float("SELFEVAL_LLM_TIMEOUT", 20.0)
SELFEVAL_LLM_RETRIES = env_int("SELFEVAL_LLM_RETRIES", 2)
SELFEVAL_LLM_RETRY_BACKOFF = env_float("SELFEVAL_LLM_RETRY_BACKOFF", 0.5)
# The longest wait between two attempts; an endpoint asking (Retry-After) for longer is not asked again.
SELFEVAL_LLM_RETRY_MAX_WAIT = env_float("SELFEVAL_LLM_RETRY_MAX_WAIT", 30.0)
SELFEVAL_LLM_CACHE_SECONDS = env_int("SELFEVAL_LLM_CACHE_SECONDS", 7 * 86400)
if SELFEVAL_JUDGE != "deterministic" and not (SELFEVAL_LLM_BASE_URL and SELFEVAL_LLM_MODEL):
    raise ImproperlyConfigured(f"SELFEVAL_JUDGE={SELFEVAL_JUDGE} needs SELFEVAL_LLM_BASE_URL and SELFEVAL_LLM_MODEL")
# Verdict thresholds, documented in diagnosis/services/producers/verifier.py.
SELFEVAL_VERIFIER_THRESHOLDS = {
    "pass_groundedness": env_float("SELFEVAL_VERIFIER_PASS_GROUNDEDNESS", 0.8),
    "reject_groundedness": env_float("SELFEVAL_VERIFIER_REJECT_GROUNDEDNESS", 0.4),
}
# AIOps evidence tools per category (comma-separated tool names).
SELFEVAL_AIOPS_TOOL_CATEGORIES = {
    "knowledge": env_list("SELFEVAL_AIOPS_KNOWLEDGE_TOOLS", "lookup_knowledge,search_kb"),
    "logs": env_list("SELFEVAL_AIOPS_LOG_TOOLS", "query_logs,search_logs"),
    "metrics": env_list("SELFEVAL_AIOPS_METRIC_TOOLS", "query_metrics,prometheus_query"),
}


# Evolution verification (evolution app). Competitors are OpenAI-compatible chat-completions
# providers, given as JSON: [{"name": "deepseek", "base_url": "https://api.deepseek.com/v1",
# "model": "deepseek-chat", "api_key_env": "DEEPSEEK_API_KEY"}]; each key is read from the
# environment variable the entry names.
def _evolution_competitors() -> list[dict[str, str]]:
    raw = env_str("SELFEVAL_EVOLUTION_COMPETITORS", "[]")
    try:
        entries = json.loads(raw)
    except ValueError:
        raise ImproperlyConfigured("SELFEVAL_EVOLUTION_COMPETITORS must be a JSON list") from None
    if not isinstance(entries, list):
        raise ImproperlyConfigured("SELFEVAL_EVOLUTION_COMPETITORS must be a JSON list")
    providers, names = [], set()
    for entry in entries:
        if not isinstance(entry, dict) or not all(
            isinstance(entry.get(k), str) and entry[k] for k in ("name", "base_url", "model")
        ):
            raise ImproperlyConfigured("each SELFEVAL_EVOLUTION_COMPETITORS entry needs name, base_url and model")
        if entry["name"] in names or entry["name"] == "ours":
            raise ImproperlyConfigured(f"competitor name {entry['name']!r} is duplicated or reserved")
        names.add(entry["name"])
        key_env = entry.get("api_key_env") or ""
        providers.append(
            {
                "name": entry["name"],
                "base_url": entry["base_url"].rstrip("/"),
                "model": entry["model"],
                "api_key": env_str(key_env) if key_env else "",
            }
        )
    return providers


SELFEVAL_EVOLUTION_COMPETITORS = _evolution_competitors()
SELFEVAL_EVOLUTION_PROVIDER_TIMEOUT = env_float("SELFEVAL_EVOLUTION_PROVIDER_TIMEOUT", 15.0)
SELFEVAL_EVOLUTION_OVERALL_TIMEOUT = env_float("SELFEVAL_EVOLUTION_OVERALL_TIMEOUT", 20.0)
# Seed document 004's best practice: verify a sample (20 %) where verification is optional.
SELFEVAL_EVOLUTION_SAMPLE_RATE = env_float("SELFEVAL_EVOLUTION_SAMPLE_RATE", 0.2)
SELFEVAL_EVOLUTION_CACHE_TTL = env_int("SELFEVAL_EVOLUTION_CACHE_TTL", 3600)
if not 0.0 <= SELFEVAL_EVOLUTION_SAMPLE_RATE <= 1.0:
    raise ImproperlyConfigured("SELFEVAL_EVOLUTION_SAMPLE_RATE must be between 0 and 1")

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "handlers": {"console": {"class": "logging.StreamHandler"}},
    "root": {"handlers": ["console"], "level": env_str("LOG_LEVEL", "INFO")},
    # django.tasks logs every task start and finish at INFO: one evaluation per ingested session.
    "loggers": {
        "jieba": {"level": "WARNING"},
        "axes": {"level": "WARNING"},  # failures and lockouts are warnings; INFO says hello on every start
        "httpx": {"level": "WARNING"},
        "django.tasks": {"level": env_str("TASKS_LOG_LEVEL", "WARNING")},
        "django_tasks_db": {"level": env_str("TASKS_LOG_LEVEL", "WARNING")},
    },
}
