"""Pull case-library fields out of a diagnosis answer: pure functions, no ORM.

Fault category taxonomy (cases.models.FaultCategory), with the keywords that vote for each one.
Chinese text is cut into words with jieba and matched word by word, so "内存" does not match
inside an unrelated compound; English is matched on whole words, lower-cased.

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
    GENERAL     nothing above scored (the seed's fixed value)

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

Sections: markdown headings, or label lines ("**根因**：...", "Root cause: ...", a bold line
alone such as "**Remediation**"). A field line ("**Error code**: ...", "**服务**：...") ends the
section before it: it is the answer's metadata, not part of the fix.
"""

import logging
import re
from collections import Counter
from dataclasses import dataclass
from functools import lru_cache

from markdown_it import MarkdownIt

from cases.models import FaultCategory

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
        ),
        "zh": ("网络", "丢包", "连接被拒绝", "连接重置", "域名解析", "网卡", "带宽", "防火墙", "负载均衡", "不可达"),
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
        ),
        "zh": ("配置", "参数", "环境变量", "配置错误", "配置项"),
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

ROOT_CAUSE_HEADINGS = (
    "root cause",
    "root-cause",
    "cause",
    "diagnosis",
    "根因",
    "根本原因",
    "原因",
    "问题原因",
    "故障原因",
)
SOLUTION_HEADINGS = (
    "fix", "solution", "resolution", "remediation", "mitigation", "recommendation", "next steps",
    "解决方案", "处理建议", "修复", "解决办法", "处理方案", "建议", "处置",
)  # fmt: skip

_CJK = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff]")
_EN_WORD = re.compile(r"[a-z0-9][a-z0-9_.-]*")

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
    (re.compile(r"(?<![A-Za-z0-9])(?:ORA|ERR|SQLSTATE|PG|E)[-_ ]?\d{3,6}(?!\d)"), "{}"),
    (re.compile(r"(?<![A-Za-z0-9])(?i:http)(?:/\d(?:\.\d)?)?[-_ ]?([1-5]\d\d)(?!\d)"), "HTTP {}"),
    (re.compile(r"(?<![A-Za-z0-9])E(?:CONNREFUSED|CONNRESET|TIMEDOUT|NOSPC|ACCES|PERM|HOSTUNREACH|NOTFOUND|PIPE|MFILE)(?![A-Za-z0-9])"), "{}"),
    (re.compile(r"(?<![A-Za-z0-9_])ERR?_[A-Z0-9]+(?:_[A-Z0-9]+)*(?![A-Za-z0-9_])"), "{}"),
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
_INLINE_LABEL = re.compile(r"^\s*(?:[-*]\s*)?(?:\*\*)?([^:：*\n]{1,20}?)(?:\*\*)?\s*[:：]\s*(.*)$")
_BOLD_LINE = re.compile(r"^\s*\*\*([^*\n]{1,30})\*\*\s*$")
# Labels of the answer's field lines ("**Error code**: `...`  **Service**: ..."), which end a section.
_FIELD_LABELS = frozenset({"error code", "错误码", "错误代码", "service", "服务", "alert", "告警"})

_markdown = MarkdownIt("commonmark")


@dataclass(frozen=True, slots=True)
class Extraction:
    fault_category: str
    error_code: str
    service: str
    root_cause: str
    solution: str


def case_fields_extract(*, query: str, answer: str, alert_name: str = "", alert_service: str = "") -> Extraction:
    """Every extracted field for a case built from one session."""
    sections = answer_sections(answer=answer)
    root_cause = sections.get("root_cause") or answer
    solution = sections.get("solution") or answer
    return Extraction(
        fault_category=fault_category(
            query=query, answer=answer, root_cause=sections.get("root_cause", ""), alert_name=alert_name
        ),
        error_code=error_code(text=f"{sections.get('root_cause', '')}\n{answer}\n{query}"),
        service=service(alert_service=alert_service, text=f"{answer}\n{query}"),
        root_cause=root_cause,
        solution=solution,
    )


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


def answer_sections(*, answer: str) -> dict[str, str]:
    """{"root_cause": ..., "solution": ...} from markdown headings or "根因：..." label lines."""
    found: dict[str, str] = {}
    lines = (answer or "").splitlines()
    tokens = _markdown.parse(answer or "")
    headings = [
        (tokens[i].map[0], tokens[i + 1].content)
        for i, token in enumerate(tokens)
        if token.type == "heading_open" and token.map and i + 1 < len(tokens)
    ]
    for position, (start, title) in enumerate(headings):
        kind = _section_kind(title)
        if kind is None or kind in found:
            continue
        end = headings[position + 1][0] if position + 1 < len(headings) else len(lines)
        end = next((i for i in range(start + 1, end) if _is_field_line(lines[i])), end)
        body = "\n".join(lines[start + 1 : end]).strip()
        if body:
            found[kind] = body
    if len(found) < 2:
        found = {**_label_sections(lines), **found}
    return found


def _label(line: str) -> tuple[str, str] | None:
    """(label, text after it) of a `Label: text` line or of a bold line alone (`**修复方案**`)."""
    match = _INLINE_LABEL.match(line) or _BOLD_LINE.match(line)
    if match is None:
        return None
    return match.group(1), match.group(2) if match.re is _INLINE_LABEL else ""


def _is_field_line(line: str) -> bool:
    label = _label(line)
    return label is not None and label[0].strip().lower() in _FIELD_LABELS


def _label_sections(lines: list[str]) -> dict[str, str]:
    """`**根因**：...` / `Root cause: ...` / `**Remediation**` lines; the section runs to the next
    label line."""
    found: dict[str, str] = {}
    current: str | None = None
    collected: list[str] = []

    def close() -> None:
        if current and current not in found and "\n".join(collected).strip():
            found[current] = "\n".join(collected).strip()

    for line in lines:
        label = _label(line)
        kind = _section_kind(label[0]) if label else None
        if label and (kind or current):
            if kind is None and label[0].strip():
                close()
                current, collected = None, []
                continue
            close()
            current, collected = kind, [label[1]]
        elif current:
            collected.append(line)
    close()
    return found


def _section_kind(title: str) -> str | None:
    normalised = re.sub(r"[#*`:：\s]+", " ", title).strip().lower()
    normalised = re.sub(r"^\d+[.)、]\s*", "", normalised)
    if not normalised:
        return None
    if any(normalised == h or normalised.startswith(h) for h in ROOT_CAUSE_HEADINGS):
        return "root_cause"
    if any(normalised == h or normalised.startswith(h) for h in SOLUTION_HEADINGS):
        return "solution"
    return None


def _keyword_hits(text: str) -> Counter[str]:
    lowered = text.lower()
    hits: Counter[str] = Counter()
    en_words = _EN_WORD.findall(lowered)
    en_text = " " + " ".join(en_words) + " "
    zh_words = Counter(_zh_words(lowered)) if _CJK.search(lowered) else Counter()
    for category, keywords in CATEGORY_KEYWORDS.items():
        count = 0
        for keyword in keywords["en"]:
            count += en_text.count(f" {keyword} ")
        for keyword in keywords["zh"]:
            count += zh_words.get(keyword, 0)
        if count:
            hits[category] = count
    return hits


def _zh_words(text: str) -> list[str]:
    return [word.strip() for word in _taxonomy_tokenizer().lcut(text) if word.strip()]


@lru_cache(maxsize=1)
def _taxonomy_tokenizer():
    """A jieba tokenizer of its own: the taxonomy words added here must not change how the
    verifier or the evolution scorer (which use jieba's default tokenizer) segment text."""
    import jieba  # loads its dictionary on first use (about a second); only Chinese text needs it

    jieba.setLogLevel(logging.WARNING)
    tokenizer = jieba.Tokenizer()
    # Keep the taxonomy's compound words whole, so "连接池耗尽" yields "连接池".
    for keywords in CATEGORY_KEYWORDS.values():
        for word in keywords["zh"]:
            tokenizer.add_word(word, freq=200000)
    return tokenizer


def _split_camel(name: str) -> str:
    return re.sub(r"(?<=[a-z0-9])(?=[A-Z])", " ", name or "")
