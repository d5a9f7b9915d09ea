"""Pull case-library fields out of a diagnosis answer: pure functions, no ORM.

Fault category taxonomy (cases.models.FaultCategory), with the keywords that vote for each one,
counted as whole words by `core.text.phrase_counts` (jieba's words in Chinese, so "存" does not
match inside 存储; the longest keyword wins where two overlap).

    NETWORK     network, dns, connection refused/reset, packet loss, 网络, 丢包, 连接被拒绝, 域名解析 ...
    DATABASE    database, mysql, postgres, sql, connection pool, deadlock, 数据库, 连接池, 慢查询, 死锁 ...
    MEMORY      memory, oom, heap, memory leak, 内存, 内存泄漏, 堆内存, 溢出 ...
    CPU         cpu, load average, throttling, cpu 使用率, 负载, 线程, 计算 ...
    DISK        disk, inode, no space left, iops, 磁盘, 存储, 空间不足 ...
    CONFIG      configuration, config, misconfigured, parameter, env var, 配置, 参数, 环境变量 ...
    DEPLOYMENT  deploy, release, rollout, rollback, image, version, 发布, 部署, 回滚, 上线, 版本 ...
    DEPENDENCY  dependency, upstream, downstream, third-party, 依赖, 上游, 下游, 第三方 ...
    PERMISSION  permission, forbidden, unauthorized, access denied, 权限, 鉴权, 认证, 拒绝访问 ...
    TIMEOUT     timeout, timed out, latency, deadline exceeded, 超时, 延迟, 响应慢 ...
    GENERAL     nothing above scored (seed document 000's fixed value)

The root-cause section of the answer counts double, the query and the alert name count once,
the rest of the answer once; the highest score wins and ties go to the earlier category in the
list above (a database pool exhaustion that causes timeouts is a DATABASE case).

Error code: the code the answer names after a label ("**Error code**: `...`", "错误码 1040",
"error code: ERR_CONN_POOL") wins, as written (backquotes dropped); else the first code found,
most specific kind first. Normal forms: HTTP statuses are `HTTP <status>` however they are
written ("HTTP/1.1 503", "HTTP-503", "状态码: 502", "返回 502" all give "HTTP 503" / "HTTP 502"),
a status class is `HTTP 5xx`, a MySQL server error is `MySQL <number>` ("MySQL error 1040",
"MYSQL-1040"); vendor codes (ORA-00600), symbolic names (ER_CON_COUNT_ERROR, ECONNREFUSED,
OOMKilled) and exception classes stay as written.

Sections are `core.markdown.answer_sections`: under a heading or after a label line ("**根因**：...",
"Root cause: ...", a bold line alone such as "**Remediation**"); the root cause is the root-cause
section, else the conclusion.
"""

import re
from collections import Counter
from dataclasses import dataclass

from cases.models import FaultCategory
from core.markdown import SectionKind, answer_sections
from core.text import normalise, phrase_counts

CATEGORY_KEYWORDS: dict[str, dict[str, tuple[str, ...]]] = {
    FaultCategory.NETWORK: {
        "en": (
            "network",
            "dns",
            "packet loss",
            "connection refused",
            "connection reset",
            "unreachable",
            "econnrefused",
            "econnreset",
            "tcp",
            "socket",
            "bandwidth",
            "firewall",
            "load balancer",
            "nxdomain",
            "servfail",
            "name resolution",
        ),
        "zh": (
            "网络",
            "丢包",
            "连接被拒绝",
            "连接重置",
            "域名解析",
            "解析失败",
            "网卡",
            "带宽",
            "防火墙",
            "负载均衡",
            "不可达",
        ),  # fmt: skip
    },
    FaultCategory.DATABASE: {
        "en": (
            "database",
            "mysql",
            "postgres",
            "postgresql",
            "sql",
            "connection pool",
            "deadlock",
            "slow query",
            "hikaripool",
            "hikaricp",
            "maximumpoolsize",
            "pool size",
            "pool sizing",
            "table scan",
            "replication",
            "db",
        ),
        "zh": ("数据库", "连接池", "慢查询", "死锁", "主从", "索引", "事务", "锁表"),
    },
    FaultCategory.MEMORY: {
        "en": ("memory", "oom", "oomkilled", "out of memory", "heap", "memory leak", "gc", "outofmemoryerror"),
        "zh": ("内存", "内存泄漏", "堆内存", "内存溢出", "垃圾回收"),
    },
    FaultCategory.CPU: {
        "en": ("cpu", "load average", "cpu throttling", "high load", "busy loop"),
        "zh": ("cpu", "负载", "算力", "死循环"),
    },
    FaultCategory.DISK: {
        "en": ("disk", "inode", "no space left", "enospc", "iops", "filesystem", "volume"),
        "zh": ("磁盘", "存储", "空间不足", "磁盘满", "文件系统"),
    },
    FaultCategory.CONFIG: {
        "en": (
            "configuration",
            "config",
            "misconfigured",
            "misconfiguration",
            "parameter",
            "env var",
            "environment variable",
            "setting",
            "certificate",
            "tls",
            "ssl",
        ),
        "zh": ("配置", "参数", "环境变量", "配置错误", "配置项", "证书"),
    },
    FaultCategory.DEPLOYMENT: {
        "en": ("deploy", "deployment", "release", "rollout", "rollback", "image", "canary", "crashloopbackoff"),
        "zh": ("发布", "部署", "回滚", "上线", "灰度", "镜像", "变更"),
    },
    FaultCategory.DEPENDENCY: {
        "en": ("dependency", "upstream", "downstream", "third-party", "third party", "external service"),
        "zh": ("依赖", "上游", "下游", "第三方", "外部服务"),
    },
    FaultCategory.PERMISSION: {
        "en": ("permission", "forbidden", "unauthorized", "access denied", "401", "403", "credential", "rbac"),
        "zh": ("权限", "鉴权", "认证", "拒绝访问", "无权限", "授权"),
    },
    FaultCategory.TIMEOUT: {
        "en": ("timeout", "timed out", "time out", "deadline exceeded", "latency", "etimedout", "slow"),
        "zh": ("超时", "延迟", "响应慢", "卡顿"),
    },
}

# Each category's keywords, English and Chinese together, as `phrase_counts` counts them.
_CATEGORY_PHRASES = {
    category: frozenset(normalise(word) for words in keywords.values() for word in words)
    for category, keywords in CATEGORY_KEYWORDS.items()
}
_PHRASES = frozenset().union(*_CATEGORY_PHRASES.values())

_ERROR_LABEL = r"(?:(?i:error[ _-]?code)|错误码|错误代码)"
# (pattern, normal form of its first matched group, or of the whole match when it has none),
# most specific first; ASCII look-arounds instead of \b, which fails next to Chinese text.
_ERROR_CODE_PATTERNS: tuple[tuple[re.Pattern[str], str], ...] = (
    (
        re.compile(
            _ERROR_LABEL + r"(?:\*\*)?\s*(?:[:：=]|(?i:is)\s|为|是)?\s*"
            r"(?:`([^`\n]{1,100})`|((?=[A-Za-z0-9_.-]*[A-Z0-9_])[A-Za-z0-9][A-Za-z0-9_.-]*))"
        ),
        "{}",
    ),
    (
        re.compile(r"(?<![A-Za-z0-9])(?i:mysql)(?:[-_ ]?(?i:errno|error|err)(?:\s*(?i:code))?|\s*错误码?)?\s*[-:：#]?\s*(\d{4})(?!\d)"),
        "MySQL {}",
    ),
    # The mysql client's own form: "ERROR 1205 (HY000): Lock wait timeout exceeded".
    (re.compile(r"(?<![A-Za-z0-9])ERROR (\d{4}) \([0-9A-Z]{5}\)"), "MySQL {}"),
    (re.compile(r"(?<![A-Za-z0-9])(?:ORA|ERR|SQLSTATE|PG|E)[-_ ]?\d{3,6}(?!\d)"), "{}"),
    (re.compile(r"(?<![A-Za-z0-9])(?i:http)(?:/\d(?:\.\d)?)?[-_ ]?([1-5]\d\d)(?!\d)"), "HTTP {}"),
    (re.compile(r"(?<![A-Za-z0-9])E(?:CONNREFUSED|CONNRESET|TIMEDOUT|NOSPC|ACCES|PERM|HOSTUNREACH|NOTFOUND|PIPE|MFILE)(?![A-Za-z0-9])"), "{}"),
    # Symbolic error names: ER_CON_COUNT_ERROR, ERR_CONN_POOL, SSL_ERROR_EXPIRED_CERT, SEC_ERROR_...
    (re.compile(r"(?<![A-Za-z0-9_])(?:[A-Z][A-Z0-9]*_)*(?:ER|ERR|ERROR)_[A-Z0-9]+(?:_[A-Z0-9]+)*(?![A-Za-z0-9_])"), "{}"),
    # DNS answers that are errors.
    (re.compile(r"(?<![A-Za-z0-9_])(?:NXDOMAIN|SERVFAIL)(?![A-Za-z0-9_])"), "{}"),
    (re.compile(r"(?<![A-Za-z0-9])(?:OOMKilled|CrashLoopBackOff|ImagePullBackOff|ErrImagePull)(?![A-Za-z0-9])"), "{}"),
    (re.compile(r"(?<![A-Za-z0-9.])(?:[a-z]+\.)*[A-Z][A-Za-z0-9]*(?:Exception|Error)(?![A-Za-z0-9])"), "{}"),
    (re.compile(r"(?:(?i:status(?:\s+code)?)|状态码|返回码?)\s*[:：]?\s*([1-5]\d\d)(?!\d)"), "HTTP {}"),
    (re.compile(r"(?<![A-Za-z0-9])([45])(?i:xx)(?![A-Za-z0-9])"), "HTTP {}xx"),
)  # fmt: skip
_SERVICE_SUFFIXES = (
    "service", "svc", "api", "gateway", "server", "worker", "agent", "proxy", "db", "cache", "web", "app",
    "backend", "frontend", "consumer", "producer", "job", "scheduler",
)  # fmt: skip
_KEBAB = re.compile(r"(?<![\w/.-])([a-z][a-z0-9]*(?:-[a-z0-9]+)+)(?![\w-])")
# Hyphenated English words that look like service names but are not.
_NOT_SERVICES = frozenset(
    {"out-of-memory", "read-only", "up-to-date", "real-time", "built-in", "re-run", "third-party", "so-called",
     "time-out", "follow-up", "long-running", "high-load", "end-to-end", "pre-release", "non-zero", "e-mail",
     "well-known", "step-by-step", "root-cause", "self-evaluation", "on-call", "x-request-id"}
)  # fmt: skip


@dataclass(frozen=True, slots=True)
class Extraction:
    fault_category: str
    error_code: str
    service: str
    root_cause: str
    solution: str


def case_fields_extract(*, query: str, answer: str, alert_name: str = "", alert_service: str = "") -> Extraction:
    """Every extracted field for a case built from one session."""
    found = root_cause_and_solution(answer=answer)
    return Extraction(
        fault_category=fault_category(query=query, answer=answer, root_cause=found.root_cause, alert_name=alert_name),
        error_code=error_code(text=f"{found.root_cause}\n{answer}\n{query}"),
        service=service(alert_service=alert_service, text=f"{answer}\n{query}"),
        root_cause=found.root_cause or answer,
        solution=found.solution or answer,
    )


@dataclass(frozen=True, slots=True)
class RootCauseAndSolution:
    root_cause: str  # "" when the answer has no such section
    solution: str


def root_cause_and_solution(*, answer: str) -> RootCauseAndSolution:
    """The bodies of the answer's root-cause section (else its conclusion) and solution section."""
    sections = answer_sections(answer)
    cause = sections.get(SectionKind.ROOT_CAUSE) or sections.get(SectionKind.CONCLUSION)
    solution = sections.get(SectionKind.SOLUTION)
    return RootCauseAndSolution(root_cause=cause.body if cause else "", solution=solution.body if solution else "")


def fault_category(*, query: str, answer: str, root_cause: str = "", alert_name: str = "") -> str:
    scores: Counter[str] = Counter()
    for text, weight in ((root_cause, 2), (answer, 1), (query, 1), (_split_camel(alert_name), 1)):
        if text:
            for category, hits in _keyword_hits(text).items():
                scores[category] += hits * weight
    if not scores:
        return FaultCategory.GENERAL
    order = list(CATEGORY_KEYWORDS)
    return max(scores, key=lambda category: (scores[category], -order.index(category)))


def error_code(*, text: str) -> str:
    """The error code `text` names, in its normal form (module docstring); "" when none."""
    for pattern, normal_form in _ERROR_CODE_PATTERNS:
        match = pattern.search(text or "")
        if match:
            found = next((group for group in match.groups() if group), match.group())
            return normal_form.format(found.strip())[:100]
    return ""


def service(*, alert_service: str = "", text: str = "") -> str:
    """The alert's service; else the most mentioned kebab-case name, service-like suffixes first."""
    if alert_service:
        return alert_service[:200]
    candidates = Counter(
        name for name in _KEBAB.findall(text or "") if name not in _NOT_SERVICES and not name.replace("-", "").isdigit()
    )
    if not candidates:
        return ""
    first_seen = {name: index for index, name in reversed(list(enumerate(_KEBAB.findall(text))))}

    def rank(name: str) -> tuple[bool, int, int]:
        return (name.rsplit("-", 1)[-1] in _SERVICE_SUFFIXES, candidates[name], -first_seen.get(name, 0))

    return max(candidates, key=rank)[:200]


def _keyword_hits(text: str) -> Counter[str]:
    counts = phrase_counts(text, _PHRASES)
    hits: Counter[str] = Counter()
    for category, phrases in _CATEGORY_PHRASES.items():
        count = sum(counts[phrase] for phrase in phrases if phrase in counts)
        if count:
            hits[category] = count
    return hits


def _split_camel(name: str) -> str:
    return re.sub(r"(?<=[a-z0-9])(?=[A-Z])", " ", name or "")
