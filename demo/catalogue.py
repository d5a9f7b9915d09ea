"""Fault topics the demo generator draws from, in Chinese and English.

Each topic is one realistic incident: the evidence chunks the agent's tools retrieve, the claims
an executor makes from them (each excerpt occurs verbatim in its chunk), the fix, an error code
and a service. `{pct}` is a percentage the generator picks so that swapping its digits gives a
different number (59% -> 95%): the "altered number" case. `{pod}` is a pod name.
"""

from dataclasses import dataclass


@dataclass(frozen=True)
class Claim:
    text: str
    chunk: int  # index into TopicText.chunks of the chunk holding the excerpt
    excerpt: str
    critical: bool = True


@dataclass(frozen=True)
class TopicText:
    query: str
    alert_query: str  # the AIOps agent's task line for the alert
    chunks: tuple[str, str]  # (runbook chunk, log/metric chunk)
    claims: tuple[Claim, Claim, Claim]  # root cause, number fact (uses {pct}), fix
    fabricated_excerpt: str  # plausible but absent from every chunk
    absence_claim: str  # a claim of absence that $.no_evidence can never support
    no_hit_claim: str  # an honest "nothing was found" statement
    fix_steps: tuple[str, str]


@dataclass(frozen=True)
class Topic:
    key: str
    service: str
    alert: str
    severity: str
    error_code: str
    metric: str
    zh: TopicText
    en: TopicText

    def text(self, language: str) -> TopicText:
        return self.zh if language == "zh" else self.en


TOPICS: tuple[Topic, ...] = (
    Topic(
        key="order-db-pool",
        service="order-service",
        alert="HighErrorRate",
        severity="critical",
        error_code="HikariPool-1 - Connection is not available",
        metric="hikaricp_connections_pending",
        zh=TopicText(
            query="订单服务 5xx 突增，原因是什么？",
            alert_query="诊断告警 HighErrorRate（order-service），给出根因和处理建议。",
            chunks=(
                "order-service 的数据库连接池耗尽导致请求排队超时，返回 HTTP 503。"
                "处理方法：扩大连接池（maximumPoolSize）并排查慢查询。",
                "{pod} ERROR HikariPool-1 - Connection is not available, request timed out after 30000ms。"
                "过去 10 分钟 {pct}% 的请求等待连接超过 30 秒。",
            ),
            claims=(
                Claim(
                    "order-service 的数据库连接池耗尽导致请求排队超时，返回 HTTP 503",
                    0,
                    "数据库连接池耗尽导致请求排队超时，返回 HTTP 503",
                ),
                Claim("{pct}% 的请求等待连接超过 30 秒", 1, "{pct}% 的请求等待连接超过 30 秒"),
                Claim("扩大连接池并排查慢查询", 0, "扩大连接池（maximumPoolSize）并排查慢查询", critical=False),
            ),
            fabricated_excerpt="数据库主从切换导致连接全部中断",
            absence_claim="已排除网络故障，问题与网络无关",
            no_hit_claim="知识库中未检索到该错误码的历史工单",
            fix_steps=("将 maximumPoolSize 从 20 提高到 40 并滚动重启", "定位并优化 orders 表上的慢查询"),
        ),
        en=TopicText(
            query="Why did order-service start returning 5xx errors?",
            alert_query="Diagnose alert HighErrorRate on order-service and propose a fix.",
            chunks=(
                "An exhausted order-service database connection pool causes requests to queue until they "
                "time out with HTTP 503. Fix: raise the pool size (maximumPoolSize) and look for slow queries.",
                "{pod} ERROR HikariPool-1 - Connection is not available, request timed out after 30000ms. "
                "In the last 10 minutes {pct}% of requests waited more than 30 s for a connection.",
            ),
            claims=(
                Claim(
                    "An exhausted order-service database connection pool causes requests to time out with HTTP 503",
                    0,
                    "database connection pool causes requests to queue until they time out with HTTP 503",
                ),
                Claim(
                    "{pct}% of requests waited more than 30 s for a connection",
                    1,
                    "{pct}% of requests waited more than 30 s for a connection",
                ),
                Claim(
                    "Raise the pool size and look for slow queries",
                    0,
                    "raise the pool size (maximumPoolSize) and look for slow queries",
                    critical=False,
                ),
            ),
            fabricated_excerpt="a database failover dropped every connection",
            absence_claim="Network problems were ruled out",
            no_hit_claim="No past ticket for this error code was found in the knowledge base",
            fix_steps=(
                "Raise maximumPoolSize from 20 to 40 and roll the pods",
                "Find and fix the slow queries on orders",
            ),
        ),
    ),
    Topic(
        key="payment-tls",
        service="payment-gateway",
        alert="TLSHandshakeErrors",
        severity="critical",
        error_code="x509: certificate has expired or is not yet valid",
        metric="tls_handshake_failures_total",
        zh=TopicText(
            query="支付网关调用银行接口全部失败，报 x509 错误，怎么回事？",
            alert_query="诊断告警 TLSHandshakeErrors（payment-gateway）。",
            chunks=(
                "payment-gateway 到银行通道使用双向 TLS，客户端证书过期导致 TLS 握手失败，"
                "日志出现 x509: certificate has expired or is not yet valid。处理：更新证书并重新加载网关。",
                "{pod} WARN tls: handshake failure x509: certificate has expired or is not yet valid；"
                "TLS 握手失败率 {pct}%，证书有效期至 2026-11-28。",
            ),
            claims=(
                Claim("payment-gateway 的客户端证书过期导致 TLS 握手失败", 0, "客户端证书过期导致 TLS 握手失败"),
                Claim("TLS 握手失败率达到 {pct}%", 1, "TLS 握手失败率 {pct}%"),
                Claim("更新证书并重新加载网关", 0, "更新证书并重新加载网关", critical=False),
            ),
            fabricated_excerpt="银行通道因维护暂停服务",
            absence_claim="确认没有证书相关问题",
            no_hit_claim="未检索到该银行通道的变更记录",
            fix_steps=("签发新的客户端证书并更新 Secret", "对 payment-gateway 执行 reload，并添加证书过期告警"),
        ),
        en=TopicText(
            query="Every call from payment-gateway to the bank fails with an x509 error. What happened?",
            alert_query="Diagnose alert TLSHandshakeErrors on payment-gateway.",
            chunks=(
                "payment-gateway talks to the bank over mutual TLS. The payment-gateway client certificate "
                "expired, so TLS handshakes fail with x509: certificate has expired or is not yet valid. Fix: "
                "renew the certificate and reload the gateway.",
                "{pod} WARN tls: handshake failure x509: certificate has expired or is not yet valid. "
                "The TLS handshake failure rate is {pct}%; the certificate was valid until 2026-11-28.",
            ),
            claims=(
                Claim(
                    "The payment-gateway client certificate expired, so TLS handshakes fail",
                    0,
                    "client certificate expired, so TLS handshakes fail",
                ),
                Claim("The TLS handshake failure rate is {pct}%", 1, "The TLS handshake failure rate is {pct}%"),
                Claim(
                    "Renew the certificate and reload the gateway",
                    0,
                    "renew the certificate and reload the gateway",
                    critical=False,
                ),
            ),
            fabricated_excerpt="the bank channel was paused for maintenance",
            absence_claim="Confirmed there is no certificate problem",
            no_hit_claim="No change record for the bank channel was found",
            fix_steps=(
                "Issue a new client certificate and update the Secret",
                "Reload payment-gateway and alert on expiry",
            ),
        ),
    ),
    Topic(
        key="inventory-oom",
        service="inventory-service",
        alert="PodCrashLooping",
        severity="warning",
        error_code="OOMKilled (exit code 137)",
        metric="container_memory_working_set_bytes",
        zh=TopicText(
            query="inventory-service 的 Pod 一直重启，是什么原因？",
            alert_query="诊断告警 PodCrashLooping（inventory-service）。",
            chunks=(
                "inventory-service 在全量同步库存时会把整张 SKU 表加载进内存，超过 1Gi 限制后被 OOMKilled（exit code 137）。"
                "处理：改为分页同步，或把内存限制提高到 2Gi。",
                "{pod} Last State: Terminated, Reason: OOMKilled, Exit Code: 137；"
                "过去 1 小时 {pct}% 的 Pod 发生过重启。",
            ),
            claims=(
                Claim("inventory-service 的内存超过 1Gi 限制后被 OOMKilled", 0, "超过 1Gi 限制后被 OOMKilled"),
                Claim("{pct}% 的 Pod 发生过重启", 1, "{pct}% 的 Pod 发生过重启"),
                Claim("改为分页同步或提高内存限制", 0, "改为分页同步，或把内存限制提高到 2Gi", critical=False),
            ),
            fabricated_excerpt="节点磁盘压力导致 Pod 被驱逐",
            absence_claim="已排除内存泄漏",
            no_hit_claim="未检索到最近的发布记录",
            fix_steps=("把库存全量同步改为每页 5000 条的分页同步", "临时把 memory limit 提高到 2Gi"),
        ),
        en=TopicText(
            query="Why do the inventory-service pods keep restarting?",
            alert_query="Diagnose alert PodCrashLooping on inventory-service.",
            chunks=(
                "During a full stock sync inventory-service loads the whole SKU table into memory and is "
                "OOMKilled (exit code 137) once it exceeds its 1Gi limit. Fix: sync page by page, or raise "
                "the memory limit to 2Gi.",
                "{pod} Last State: Terminated, Reason: OOMKilled, Exit Code: 137; "
                "{pct}% of pods restarted in the last hour.",
            ),
            claims=(
                Claim(
                    "inventory-service is OOMKilled once its memory exceeds its 1Gi limit",
                    0,
                    "OOMKilled (exit code 137) once it exceeds its 1Gi limit",
                ),
                Claim("{pct}% of pods restarted in the last hour", 1, "{pct}% of pods restarted in the last hour"),
                Claim(
                    "Sync page by page or raise the memory limit",
                    0,
                    "sync page by page, or raise the memory limit to 2Gi",
                    critical=False,
                ),
            ),
            fabricated_excerpt="node disk pressure evicted the pods",
            absence_claim="A memory leak has been ruled out",
            no_hit_claim="No recent deployment record was found",
            fix_steps=("Sync stock in pages of 5000 rows", "Raise the memory limit to 2Gi for now"),
        ),
    ),
    Topic(
        key="user-dns",
        service="user-service",
        alert="DependencyUnreachable",
        severity="critical",
        error_code="lookup auth-db.internal: no such host",
        metric="coredns_dns_responses_total",
        zh=TopicText(
            query="user-service 登录接口报 no such host，怎么排查？",
            alert_query="诊断告警 DependencyUnreachable（user-service）。",
            chunks=(
                "user-service 通过 auth-db.internal 访问认证库，auth-db.internal 的 DNS 记录被删除，导致域名解析失败，"
                "返回 NXDOMAIN，登录请求失败。处理：恢复 DNS 记录并缩短客户端 DNS 缓存。",
                "{pod} ERROR dial tcp: lookup auth-db.internal: no such host；CoreDNS 中 {pct}% 的查询返回 NXDOMAIN。",
            ),
            claims=(
                Claim(
                    "auth-db.internal 的 DNS 记录被删除，导致域名解析失败",
                    0,
                    "auth-db.internal 的 DNS 记录被删除，导致域名解析失败",
                ),
                Claim("CoreDNS 中 {pct}% 的查询返回 NXDOMAIN", 1, "{pct}% 的查询返回 NXDOMAIN"),
                Claim("恢复 DNS 记录", 0, "恢复 DNS 记录并缩短客户端 DNS 缓存", critical=False),
            ),
            fabricated_excerpt="认证库磁盘已满导致拒绝连接",
            absence_claim="已排除 DNS 问题",
            no_hit_claim="未检索到 auth-db.internal 的变更工单",
            fix_steps=("在内部 DNS 中恢复 auth-db.internal 的 A 记录", "把客户端 DNS 缓存 TTL 降到 30 秒"),
        ),
        en=TopicText(
            query="user-service login fails with 'no such host'. How do I troubleshoot it?",
            alert_query="Diagnose alert DependencyUnreachable on user-service.",
            chunks=(
                "The DNS record of auth-db.internal, the auth database of user-service, was deleted, so lookups "
                "return NXDOMAIN and logins fail. Fix: restore the DNS record and shorten the client DNS cache.",
                "{pod} ERROR dial tcp: lookup auth-db.internal: no such host; {pct}% of CoreDNS queries return NXDOMAIN.",
            ),
            claims=(
                Claim(
                    "The DNS record of auth-db.internal was deleted, so lookups return NXDOMAIN and user-service logins fail",
                    0,
                    "was deleted, so lookups return NXDOMAIN and logins fail",
                ),
                Claim("{pct}% of CoreDNS queries return NXDOMAIN", 1, "{pct}% of CoreDNS queries return NXDOMAIN"),
                Claim(
                    "Restore the DNS record",
                    0,
                    "restore the DNS record and shorten the client DNS cache",
                    critical=False,
                ),
            ),
            fabricated_excerpt="the auth database disk is full and refuses connections",
            absence_claim="DNS has been ruled out",
            no_hit_claim="No change ticket for auth-db.internal was found",
            fix_steps=("Restore the A record of auth-db.internal", "Lower the client DNS cache TTL to 30 s"),
        ),
    ),
    Topic(
        key="search-cpu",
        service="search-service",
        alert="HighLatencyP99",
        severity="warning",
        error_code="ERR_SEARCH_TIMEOUT",
        metric="container_cpu_cfs_throttled_periods_total",
        zh=TopicText(
            query="搜索接口 P99 延迟从 200ms 涨到 3s，为什么？",
            alert_query="诊断告警 HighLatencyP99（search-service）。",
            chunks=(
                "search-service 的 CPU limit 为 2 核，查询高峰期发生 CPU throttling，导致请求排队，"
                "超时后返回 ERR_SEARCH_TIMEOUT。处理：提高 CPU limit 或增加副本数。",
                "{pod} CPU throttling 比例 {pct}%，P99 延迟 3.1s，ERR_SEARCH_TIMEOUT 每分钟 420 次。",
            ),
            claims=(
                Claim(
                    "search-service 在查询高峰期发生 CPU throttling，导致请求排队",
                    0,
                    "查询高峰期发生 CPU throttling，导致请求排队",
                ),
                Claim("CPU throttling 比例为 {pct}%", 1, "CPU throttling 比例 {pct}%"),
                Claim("提高 CPU limit 或增加副本数", 0, "提高 CPU limit 或增加副本数", critical=False),
            ),
            fabricated_excerpt="Elasticsearch 集群状态为 red",
            absence_claim="确认没有 CPU 瓶颈",
            no_hit_claim="未检索到索引重建任务的记录",
            fix_steps=("把 CPU limit 从 2 核提高到 4 核", "把 HPA 最小副本数从 3 调到 5"),
        ),
        en=TopicText(
            query="Search p99 latency went from 200ms to 3s. Why?",
            alert_query="Diagnose alert HighLatencyP99 on search-service.",
            chunks=(
                "search-service has a CPU limit of 2 cores; at query peaks it is CPU throttled, requests "
                "queue and time out with ERR_SEARCH_TIMEOUT. Fix: raise the CPU limit or add replicas.",
                "{pod} cpu throttled periods {pct}%, p99 latency 3.1s, ERR_SEARCH_TIMEOUT 420 per minute.",
            ),
            claims=(
                Claim(
                    "search-service is CPU throttled at peak, so requests queue",
                    0,
                    "at query peaks it is CPU throttled, requests queue",
                ),
                Claim("{pct}% of CPU periods are throttled", 1, "cpu throttled periods {pct}%"),
                Claim("Raise the CPU limit or add replicas", 0, "raise the CPU limit or add replicas", critical=False),
            ),
            fabricated_excerpt="the Elasticsearch cluster health is red",
            absence_claim="Confirmed there is no CPU bottleneck",
            no_hit_claim="No index rebuild job was found",
            fix_steps=("Raise the CPU limit from 2 to 4 cores", "Raise the HPA minimum from 3 to 5 replicas"),
        ),
    ),
    Topic(
        key="checkout-redis",
        service="checkout-service",
        alert="CacheTimeouts",
        severity="warning",
        error_code="RedisCommandTimeoutException",
        metric="redis_command_duration_seconds",
        zh=TopicText(
            query="结算服务大量 RedisCommandTimeoutException，是 Redis 挂了吗？",
            alert_query="诊断告警 CacheTimeouts（checkout-service）。",
            chunks=(
                "checkout-service 在大促期间执行 KEYS cart:* 扫描，阻塞 Redis 主线程，"
                "导致其他命令超时并抛出 RedisCommandTimeoutException。处理：用 SCAN 替换 KEYS 并在配置中禁用 KEYS。",
                "{pod} WARN io.lettuce.core.RedisCommandTimeoutException: Command timed out after 1 second(s)；"
                "{pct}% 的 Redis 命令超时，slowlog 中出现 KEYS cart:*。",
            ),
            claims=(
                Claim(
                    "KEYS cart:* 扫描阻塞了 Redis 主线程，导致命令超时",
                    0,
                    "KEYS cart:* 扫描，阻塞 Redis 主线程，导致其他命令超时",
                ),
                Claim("{pct}% 的 Redis 命令超时", 1, "{pct}% 的 Redis 命令超时"),
                Claim("用 SCAN 替换 KEYS", 0, "用 SCAN 替换 KEYS 并在配置中禁用 KEYS", critical=False),
            ),
            fabricated_excerpt="Redis 主节点宕机并发生了故障转移",
            absence_claim="已排除 Redis 内存不足",
            no_hit_claim="未检索到 Redis 集群的扩容记录",
            fix_steps=("把购物车清理任务中的 KEYS 改为 SCAN", "在 redis.conf 中用 rename-command 禁用 KEYS"),
        ),
        en=TopicText(
            query="checkout-service throws lots of RedisCommandTimeoutException. Is Redis down?",
            alert_query="Diagnose alert CacheTimeouts on checkout-service.",
            chunks=(
                "During the sale checkout-service runs a KEYS cart:* scan that blocks the Redis main thread, "
                "so other commands time out with RedisCommandTimeoutException. Fix: replace KEYS with SCAN and "
                "disable KEYS in the configuration.",
                "{pod} WARN io.lettuce.core.RedisCommandTimeoutException: Command timed out after 1 second(s); "
                "{pct}% of Redis commands time out, slowlog shows KEYS cart:*.",
            ),
            claims=(
                Claim(
                    "A KEYS scan blocks the Redis main thread, so commands time out",
                    0,
                    "a KEYS cart:* scan that blocks the Redis main thread, so other commands time out",
                ),
                Claim("{pct}% of Redis commands time out", 1, "{pct}% of Redis commands time out"),
                Claim("Replace KEYS with SCAN", 0, "replace KEYS with SCAN and disable KEYS", critical=False),
            ),
            fabricated_excerpt="the Redis primary crashed and failed over",
            absence_claim="Redis running out of memory was ruled out",
            no_hit_claim="No scaling record for the Redis cluster was found",
            fix_steps=("Replace KEYS with SCAN in the cart cleanup job", "Disable KEYS with rename-command"),
        ),
    ),
)

# Other alerts firing at the same time; the AIOps agent must not make them the diagnosis.
UNRELATED_ALERTS: tuple[dict[str, str], ...] = (
    {"name": "DiskFull", "service": "log-agent", "severity": "warning"},
    {"name": "NodeNotReady", "service": "node-7", "severity": "warning"},
    {"name": "CertificateExpiringSoon", "service": "ingress-nginx", "severity": "info"},
    {"name": "HighMemoryUsage", "service": "prometheus", "severity": "warning"},
)

UNRELATED_DIAGNOSIS = {
    "zh": "{service} 触发了 {name} 告警，是本次故障的根因：磁盘和节点资源不足会拖慢所有服务。",
    "en": "{service} fired {name}, which is the root cause of this incident: the resource shortage slows every service.",
}
