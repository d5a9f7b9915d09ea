"""Twenty answers as diagnosis agents write them, each with the case fields a reviewer would file.

The shapes vary on purpose: markdown headings, label lines (`**根因**：`, `Root cause:`), bold lines
alone, numbered headings, the labels 解决 / 处理 / 结论 / Summary / Actions, error codes as tools
print them, in Chinese and in English. `root_cause` and `solution` are the section bodies (never the
whole answer: every answer here has both sections).
"""

from dataclasses import dataclass


@dataclass(frozen=True)
class Answer:
    query: str
    answer: str
    root_cause: str
    solution: str
    category: str
    error_code: str


ANSWERS = [
    Answer(
        query="订单服务 5xx 突增",
        answer="## 根因\norder-service 的数据库连接池耗尽，请求排队超时。\n\n## 解决方案\n1. 扩大连接池\n2. 优化慢查询",
        root_cause="order-service 的数据库连接池耗尽，请求排队超时。",
        solution="1. 扩大连接池\n2. 优化慢查询",
        category="DATABASE",
        error_code="HTTP 5xx",
    ),
    Answer(
        query="支付回调失败",
        answer=(
            "排查了 payment-service 的日志和指标。\n\n"
            "**根因**：第三方支付网关的证书在 03:00 过期，TLS 握手失败。\n"
            "**解决**：更新网关证书信任链，并为证书到期加 14 天告警。"
        ),
        root_cause="第三方支付网关的证书在 03:00 过期，TLS 握手失败。",
        solution="更新网关证书信任链，并为证书到期加 14 天告警。",
        category="CONFIG",
        error_code="",
    ),
    Answer(
        query="用户服务登录超时",
        answer=(
            "**结论**：user-service 调用 auth-db 时 DNS 解析失败，`nslookup auth-db.internal` 返回 NXDOMAIN。\n\n"
            "**处理**：\n1. 恢复 internal 区域的 auth-db 记录\n2. 在 CoreDNS 上为该域名加监控"
        ),
        root_cause="user-service 调用 auth-db 时 DNS 解析失败，`nslookup auth-db.internal` 返回 NXDOMAIN。",
        solution="1. 恢复 internal 区域的 auth-db 记录\n2. 在 CoreDNS 上为该域名加监控",
        category="NETWORK",
        error_code="NXDOMAIN",
    ),
    Answer(
        query="checkout errors after deploy",
        answer=(
            "## Summary\nThe 14:05 release of checkout-service shipped a config that points payments at the "
            "staging endpoint.\n\n## Actions\n- Roll back the release\n- Add an endpoint check to the deploy pipeline"
        ),
        root_cause=(
            "The 14:05 release of checkout-service shipped a config that points payments at the staging endpoint."
        ),
        solution="- Roll back the release\n- Add an endpoint check to the deploy pipeline",
        category="DEPLOYMENT",
        error_code="",
    ),
    Answer(
        query="inventory sync keeps restarting",
        answer=(
            "Root cause: inventory-service loads the whole catalogue into memory and is OOMKilled at the 2 GiB "
            "limit.\nFix: page the sync in batches of 500 and raise the memory limit to 3 GiB."
        ),
        root_cause="inventory-service loads the whole catalogue into memory and is OOMKilled at the 2 GiB limit.",
        solution="page the sync in batches of 500 and raise the memory limit to 3 GiB.",
        category="MEMORY",
        error_code="OOMKilled",
    ),
    Answer(
        query="search latency p99 doubled",
        answer=(
            "**Summary**\nsearch-api waits on the upstream ranking-service, whose p99 latency rose from 80 ms to "
            "900 ms.\n\n**Actions**\n1. Set a 200 ms timeout with a fallback ranking\n2. Ask the ranking team "
            "to roll back their model"
        ),
        root_cause="search-api waits on the upstream ranking-service, whose p99 latency rose from 80 ms to 900 ms.",
        solution="1. Set a 200 ms timeout with a fallback ranking\n2. Ask the ranking team to roll back their model",
        category="TIMEOUT",
        error_code="",
    ),
    Answer(
        query="订单写入失败",
        answer=(
            "### 1. 问题原因\n订单表上的长事务持有行锁，写入报 `ERROR 1205 (HY000): Lock wait timeout exceeded; "
            "try restarting transaction`。\n\n### 2. 处理步骤\n1. kill 掉长事务\n2. 把批量更新拆成小事务"
        ),
        root_cause=(
            "订单表上的长事务持有行锁，写入报 `ERROR 1205 (HY000): Lock wait timeout exceeded; try restarting "
            "transaction`。"
        ),
        solution="1. kill 掉长事务\n2. 把批量更新拆成小事务",
        category="DATABASE",
        error_code="MySQL 1205",
    ),
    Answer(
        query="报表任务卡住",
        answer=(
            "## 结论\nreport-worker 所在节点磁盘写满，临时文件无法写入。\n\n## 解决办法\n清理 /tmp 下的历史导出文件，"
            "并把临时目录挂到独立的数据盘。"
        ),
        root_cause="report-worker 所在节点磁盘写满，临时文件无法写入。",
        solution="清理 /tmp 下的历史导出文件，并把临时目录挂到独立的数据盘。",
        category="DISK",
        error_code="",
    ),
    Answer(
        query="网关 502",
        answer=(
            "## 诊断结论\napi-gateway 到 order-service 的连接被拒绝，order-service 的 Pod 全部未就绪。\n\n"
            "## 修复建议\n修正 readiness 探针的路径后重新发布。"
        ),
        root_cause="api-gateway 到 order-service 的连接被拒绝，order-service 的 Pod 全部未就绪。",
        solution="修正 readiness 探针的路径后重新发布。",
        category="NETWORK",
        error_code="",
    ),
    Answer(
        query="browser shows certificate error on the portal",
        answer=(
            "## Root cause\nThe portal's certificate expired yesterday; Firefox reports SSL_ERROR_EXPIRED_CERT.\n\n"
            "## Resolution\nRenew the certificate through cert-manager and alert 14 days before expiry."
        ),
        root_cause="The portal's certificate expired yesterday; Firefox reports SSL_ERROR_EXPIRED_CERT.",
        solution="Renew the certificate through cert-manager and alert 14 days before expiry.",
        category="CONFIG",
        error_code="SSL_ERROR_EXPIRED_CERT",
    ),
    Answer(
        query="order-service connection timeouts under load",
        answer=(
            "## Root cause\nThe HikariCP pool of order-service is sized at maximumPoolSize=100 for a database "
            "host with 4 CPU cores: the database spends its CPU switching between connections and every query "
            "slows down, so requests wait for a connection (`HikariPool-1 - Connection is not available`).\n\n"
            "## Fix\nSize the pool by HikariCP's formula, connections = CPU cores x 2 + effective spindles: "
            "set maximumPoolSize=10 and minimumIdle=10, then watch CPU on the database host."
        ),
        root_cause=(
            "The HikariCP pool of order-service is sized at maximumPoolSize=100 for a database host with 4 CPU "
            "cores: the database spends its CPU switching between connections and every query slows down, so "
            "requests wait for a connection (`HikariPool-1 - Connection is not available`)."
        ),
        solution=(
            "Size the pool by HikariCP's formula, connections = CPU cores x 2 + effective spindles: set "
            "maximumPoolSize=10 and minimumIdle=10, then watch CPU on the database host."
        ),
        category="DATABASE",
        error_code="",
    ),
    Answer(
        query="消息积压",
        answer=(
            "**原因分析**\nnotify-consumer 的消费线程被同步调用邮件服务阻塞，邮件服务响应慢。\n\n"
            "**应对措施**\n1. 邮件发送改为异步\n2. 给邮件调用加 2 秒超时"
        ),
        root_cause="notify-consumer 的消费线程被同步调用邮件服务阻塞，邮件服务响应慢。",
        solution="1. 邮件发送改为异步\n2. 给邮件调用加 2 秒超时",
        category="TIMEOUT",
        error_code="",
    ),
    Answer(
        query="上传接口 403",
        answer="根因: upload-service 的服务账号缺少对象存储桶的写权限。\n处理: 给服务账号授予 storage.objects.create 权限。",
        root_cause="upload-service 的服务账号缺少对象存储桶的写权限。",
        solution="给服务账号授予 storage.objects.create 权限。",
        category="PERMISSION",
        error_code="",
    ),
    Answer(
        query="cart errors spiking",
        answer=(
            "## Root Cause Analysis\ncart-service reads a feature flag whose new default disables the price "
            "cache, so every request hits the pricing database.\n\n## Recommended Actions\n- Restore the flag "
            "default\n- Add the flag to the change calendar"
        ),
        root_cause=(
            "cart-service reads a feature flag whose new default disables the price cache, so every request hits "
            "the pricing database."
        ),
        solution="- Restore the flag default\n- Add the flag to the change calendar",
        category="DATABASE",
        error_code="",
    ),
    Answer(
        query="why are image thumbnails failing",
        answer=(
            "## What happened\nThumbnails stopped at 09:12.\n\n## Cause\nthumbnail-worker cannot pull its new "
            "image: ImagePullBackOff, the registry credentials expired.\n\n## Mitigation\nRotate the registry "
            "secret and restart the deployment."
        ),
        root_cause="thumbnail-worker cannot pull its new image: ImagePullBackOff, the registry credentials expired.",
        solution="Rotate the registry secret and restart the deployment.",
        category="DEPLOYMENT",
        error_code="ImagePullBackOff",
    ),
    Answer(
        query="billing job slow",
        answer=(
            "Summary: billing-job runs a full table scan on invoices because the index on customer_id was "
            "dropped in the last migration.\n\nNext steps:\n1. Recreate the index concurrently\n2. Add an index "
            "check to the migration review"
        ),
        root_cause=(
            "billing-job runs a full table scan on invoices because the index on customer_id was dropped in the "
            "last migration."
        ),
        solution="1. Recreate the index concurrently\n2. Add an index check to the migration review",
        category="DATABASE",
        error_code="",
    ),
    Answer(
        query="推荐服务 CPU 100%",
        answer=(
            "## 根因\nrecommend-service 新版本的特征计算进入死循环，CPU 打满。\n\n## 处理\n1. 回滚到上一个版本\n"
            "2. 为特征计算加迭代上限"
        ),
        root_cause="recommend-service 新版本的特征计算进入死循环，CPU 打满。",
        solution="1. 回滚到上一个版本\n2. 为特征计算加迭代上限",
        category="CPU",
        error_code="",
    ),
    Answer(
        query="配置中心推送后服务报错",
        answer=(
            "**根本原因**：配置中心推送的 `db.url` 参数缺少端口，服务启动后连不上数据库。\n"
            "**解决步骤**：\n1. 回退该配置项\n2. 给配置项加格式校验"
        ),
        root_cause="配置中心推送的 `db.url` 参数缺少端口，服务启动后连不上数据库。",
        solution="1. 回退该配置项\n2. 给配置项加格式校验",
        category="CONFIG",
        error_code="",
    ),
    Answer(
        query="login page errors",
        answer=(
            "TL;DR: auth-service returns HTTP 500 because its Redis session store is out of memory.\n\n"
            "Actions:\n- Raise maxmemory to 4 GB\n- Set an eviction policy for session keys"
        ),
        root_cause="auth-service returns HTTP 500 because its Redis session store is out of memory.",
        solution="- Raise maxmemory to 4 GB\n- Set an eviction policy for session keys",
        category="MEMORY",
        error_code="HTTP 500",
    ),
    Answer(
        query="数据同步延迟",
        answer=(
            "## 根因\n主从复制延迟达 600 秒，从库上的大事务回放阻塞。\n\n```sql\nSHOW SLAVE STATUS;\n```\n\n"
            "## 解决\n把大事务拆分为每批 1000 行，并开启并行复制。"
        ),
        root_cause="主从复制延迟达 600 秒，从库上的大事务回放阻塞。\n\n```sql\nSHOW SLAVE STATUS;\n```",
        solution="把大事务拆分为每批 1000 行，并开启并行复制。",
        category="DATABASE",
        error_code="",
    ),
]
