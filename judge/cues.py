"""Cue words of sentence structure: moods (conditions, plans, beliefs, instructions), ranks,
frequencies and "most". Like glossary.py, a reviewed table: add a row only with a dev-set pair
(tests/fixtures/judge/dev.jsonl) that needs it. English entries are simplemma lemmas or surface
forms, Chinese entries words as jieba cuts them.
"""

import re

# A condition governs its whole sentence ("If the vote passes, the stadium will be built").
CONDITION_EN = frozenset({"if", "unless", "whenever", "lest"})
CONDITION_ZH = frozenset(
    {"如果", "假如", "假若", "要是", "一旦", "只要", "除非", "倘若", "如若", "假设", "万一", "若是", "若"}
)
# "When" / "当" are conditions in generic or future sentences, facts in past ones.
WHEN = frozenset({"when", "当", "每当"})
# "Whether (or not) X, Y": only X's clause is open.
WHETHER = frozenset({"whether", "无论", "不管", "是否"})
PAST_EN = frozenset({"was", "were", "had", "did", "went", "came", "took", "got", "made", "ran", "began", "left"})
PAST_ZH = frozenset({"了", "已", "已经", "曾", "曾经", "过", "昨天", "昨晚", "去年"})
MODAL_EN = frozenset({"will", "would", "can", "could", "may", "might", "should", "must", "shall"})
MODAL_ZH = frozenset({"会", "将会", "就会", "可以", "能", "能够", "可", "将"})

# Plans, beliefs, expectations, the future and instructions: the evidence says someone intends,
# expects or recommends it, not that it is so.
PLAN_EN = frozenset(
    {"believe", "think", "expect", "plan", "intend", "hope", "predict", "forecast", "aim", "propose", "recommend",
     "advise", "should", "will", "shall", "would", "want", "wish", "promise", "assume", "schedule", "scheduled",
     "planned", "intended", "supposed", "runbook", "playbook", "must", "going", "anticipate", "project", "projected",
     "aims", "hopes", "expects", "plans", "believes", "thinks", "predicts", "recommends", "estimate", "estimated",
     "rumoured", "rumored", "reputedly", "supposedly", "legend", "legendary",
     # Claims, attempts: someone says or tries it, which is not that it is so or happened.
     "claim", "claims", "claimed", "allege", "insist", "contend", "argue", "try", "tried", "attempt", "attempted",
     "seek", "sought", "strive", "please"}
)  # fmt: skip
PLAN_ZH = frozenset(
    {"计划", "打算", "拟", "准备", "预计", "预报", "预测", "希望", "认为", "相信", "建议", "应该", "应当", "应",
     "需要", "将于", "将会", "即将", "有望", "届时", "会", "手册", "预案", "规划", "拟于", "计划于", "力争", "争取",
     "据说", "传说", "据传", "相传", "号称", "传闻", "听说", "声称", "宣称", "自称", "试图", "尝试", "企图", "设法", "请", "报道", "据报道", "据称", "据悉"}
)  # fmt: skip
# Plan words that are also ordinary content in ops text when used as nouns ("the release plan").
PLAN_NOUN_EN = frozenset({"plan", "project", "schedule", "estimate", "attempt", "claim"})

ORDINALS = {
    "first": 1, "second": 2, "third": 3, "fourth": 4, "fifth": 5, "sixth": 6, "seventh": 7, "eighth": 8,
    "ninth": 9, "tenth": 10,
}  # fmt: skip
ORDINAL_NUMBER = re.compile(r"^(\d+)(?:st|nd|rd|th)$")
ORDINAL_ZH = re.compile(r"^第([一二两三四五六七八九十\d]+)(.*)$")
ZH_DIGITS = {"一": 1, "二": 2, "两": 2, "三": 3, "四": 4, "五": 5, "六": 6, "七": 7, "八": 8, "九": 9, "十": 10}
SUPERLATIVE_ZH = "最"

# Frequencies: "every 2 years", "twice a week", "daily", "每两年", "每周一次". Seconds per unit.
PERIOD_UNITS = {
    "second": 1, "minute": 60, "hour": 3600, "day": 86400, "night": 86400, "week": 604800, "fortnight": 1209600,
    "month": 2592000, "quarter": 7776000, "year": 31536000, "decade": 315360000,
    "秒": 1, "秒钟": 1, "分钟": 60, "小时": 3600, "天": 86400, "日": 86400, "晚": 86400, "周": 604800,
    "星期": 604800, "月": 2592000, "季度": 7776000, "年": 31536000,
}  # fmt: skip
PERIOD_WORDS = {
    "hourly": 3600, "daily": 86400, "nightly": 86400, "weekly": 604800, "fortnightly": 1209600,
    "biweekly": 1209600, "monthly": 2592000, "quarterly": 7776000, "yearly": 31536000, "annually": 31536000,
    "annual": 31536000, "biennially": 63072000, "biennial": 63072000,
}  # fmt: skip
_EN_UNIT = r"(second|minute|hour|day|night|week|fortnight|month|quarter|year|decade)s?"
PERIOD_EN = (
    re.compile(rf"\bevery\s+(?:(\d+(?:\.\d+)?)\s+|(other)\s+)?{_EN_UNIT}\b"),
    re.compile(rf"\b(\d+)\s+times?\s+(?:a|an|per|each|every)\s+{_EN_UNIT}\b"),
    re.compile(r"\b(" + "|".join(PERIOD_WORDS) + r")\b"),
)
_ZH_UNIT = "(秒钟|秒|分钟|小时|天|日|晚|周|星期|月|季度|年)"
PERIOD_ZH = re.compile(rf"每(?:隔)?\s*(\d+(?:\.\d+)?)?\s*个?\s*{_ZH_UNIT}(?:[^，,。；;]{{0,12}}?(\d+)\s*次)?")

# A state of the past only: "headquartered in Boston until 2019", "曾是全省最大的纺织厂".
PAST_ONLY = frozenset({"until", "formerly", "previously", "former", "once", "曾", "曾经", "此前", "原为", "原来",
                       "以前", "前任", "原本", "直到"})  # fmt: skip
# A clause that says "now" speaks of the present even beside a past one ("曾出现一次告警，目前使用率为 45%").
PRESENT = frozenset({"now", "currently", "presently", "nowadays", "目前", "现在", "当前", "如今", "现"})
# Someone denies it, or it proved false ("denied that", "turned out to be false", "辟谣").
DENIAL = frozenset({"deny", "denied", "denies", "refute", "refuted", "debunk", "debunked", "disprove", "disproved",
                    "hoax", "否认", "辟谣", "不实", "谣言", "谣传", "虚假"})  # fmt: skip
# An exception to what the sentence says of everything ("open every day except Mondays").
EXCEPT = frozenset({"except", "excluding", "除了", "除"})
# Words jieba cuts wrongly or leaves untagged in this domain (从节点 is not 从 "from" + 节点), with
# their part of speech.
ZH_WORDS = {
    **dict.fromkeys(("主节点", "从节点", "主库", "从库", "主实例", "从实例", "主服务器", "从服务器"), "n"),
    **dict.fromkeys(("缩容", "扩容", "回滚", "限流", "熔断", "降级", "重试", "宕机", "写满", "驱逐"), "v"),
}
# "除了 X，每天 ...": X is excepted; "除了 X，还 ...": X is added.
EXCEPT_ZH = frozenset({"除了", "除"})
ADDITION_ZH = frozenset({"还", "也", "另外", "以及"})
# Copulas: the pivot between a subject and what is said of it.
COPULAS = frozenset({"is", "are", "was", "were", "be", "是", "为"})

# Two words that deny what follows them: "rather than", "instead of".
CONTRAST_NEGATORS = frozenset({("rather", "than"), ("instead", "of")})

# "Most": between some and all. "most" itself only before "of" or at the head of a noun phrase.
MOST = frozenset({"mostly", "majority", "mainly", "largely", "primarily", "predominantly", "大多数", "多数", "大部分",
                  "绝大多数", "绝大部分", "多半", "大都", "大多"})  # fmt: skip
FEW = frozenset({"few", "少数", "个别", "极少数"})

# Words after which a wide negation scope ends (the next clause of a contrast or a cause).
WIDE_SCOPE_END = frozenset(
    {"but", "because", "however", "although", "though", "while", "whereas", "yet", "so", "and", "但", "但是", "因为",
     "而", "却", "然而", "所以", "而是", "并且", "同时"}
)  # fmt: skip

# English verbs whose past form is their base form: an uninflected word that still relates two others.
PLAIN_VERBS = frozenset(
    {"beat", "hit", "put", "set", "cut", "let", "hurt", "cost", "quit", "spread", "shut", "split", "burst", "cast",
     "broadcast", "upset", "bet", "bid", "read", "lead", "call", "kill", "defeat", "replace", "follow", "precede",
     "chase", "acquire", "buy", "sell", "own", "employ", "hire", "fire", "block", "preempt", "evict", "overtake",
     "outrank", "outnumber", "exceed", "trail", "lose", "win", "teach", "marry", "succeed"}
)  # fmt: skip
# Irregular past forms and participles: verbs, whatever simplemma makes of them ("left", "rose").
IRREGULAR_PAST = frozenset(
    [
        "went",
        "gone",
        "ran",
        "rose",
        "risen",
        "fell",
        "fallen",
        "grew",
        "grown",
        "won",
        "lost",
        "left",
        "took",
        "taken",
        "gave",
        "given",
        "made",
        "saw",
        "seen",
        "wrote",
        "written",
        "began",
        "begun",
        "broke",
        "broken",
        "brought",
        "bought",
        "built",
        "caught",
        "chose",
        "chosen",
        "came",
        "did",
        "done",
        "drew",
        "drawn",
        "drove",
        "driven",
        "ate",
        "eaten",
        "felt",
        "fought",
        "found",
        "flew",
        "flown",
        "forgot",
        "forgotten",
        "froze",
        "frozen",
        "got",
        "gotten",
        "hid",
        "hidden",
        "held",
        "kept",
        "knew",
        "known",
        "laid",
        "led",
        "lent",
        "met",
        "paid",
        "rode",
        "ridden",
        "rang",
        "rung",
        "said",
        "sold",
        "sent",
        "shook",
        "shaken",
        "shot",
        "sang",
        "sung",
        "sank",
        "sunk",
        "sat",
        "slept",
        "spoke",
        "spoken",
        "spent",
        "stood",
        "stole",
        "stolen",
        "struck",
        "swam",
        "swum",
        "taught",
        "tore",
        "torn",
        "told",
        "thought",
        "threw",
        "thrown",
        "understood",
        "woke",
        "woken",
        "wore",
        "worn",
        "beaten",
        "bitten",
        "shown",
        "dealt",
        "meant",
        "heard",
        "sought",
        "fed",
        "fled",
        "bred",
        "bound",
        "wound",
        "born",
        "borne",
        "arose",
        "arisen",
        "bent",
        "blew",
        "blown",
        "dug",
        "hung",
        "lit",
        "overcame",
        "overcome",
        "proven",
        "shone",
        "shrank",
        "shrunk",
        "slid",
        "spun",
        "sprang",
        "sprung",
        "stuck",
        "swept",
        "swung",
        "swore",
        "sworn",
        "withdrew",
        "withdrawn",
        "wept",
        "became",
    ]
)
# Comparison and role markers: "X higher than Y", "X 比 Y 高", "X 绕 Y 运行", "X 向 Y 借": the
# order of X and Y is the claim.
ROLE_MARKERS = frozenset({"than", "比", "绕", "绕着", "向", "给", "对", "替"})
# Adverbs that may stand between a subject and its verb ("checkout-api quickly recovered").
ADVERBS = frozenset({"also", "then", "later", "again", "often", "still", "soon", "finally", "first", "never", "sharply",
                     "suddenly", "gradually", "quickly", "rapidly", "immediately", "significantly", "steadily",
                     "明显", "显著", "大幅", "突然", "逐渐", "迅速", "立即", "仍然", "依然", "一直", "持续", "又"})  # fmt: skip

# Prepositions that give a noun its role ("from Boston" / "to Boston", "on the sofa" / "under the
# sofa"), by class; two classes listed as opposite make a located conflict, any other two differing
# places a structure gap (from / into: a river may flow into a lake and out of it). English words as written; Chinese localizers follow their noun (桌子上).
PREPOSITION_CLASS = {
    **dict.fromkeys(("from", "out"), "source"), **dict.fromkeys(("to", "into", "onto", "toward", "towards"), "goal"),
    **dict.fromkeys(("under", "below", "beneath", "underneath"), "under"),
    **dict.fromkeys(("above", "over", "atop"), "above"), "on": "on", **dict.fromkeys(("inside", "within"), "inside"),
    "outside": "outside", "before": "before", "after": "after", "with": "with", "without": "without",
    "for": "for", "against": "against", "near": "near", "behind": "behind",
}  # fmt: skip
LOCALIZER_CLASS = {
    "上": "on", "上面": "on", "上方": "above", "下": "under", "下面": "under", "下方": "under", "底下": "under",
    "里": "inside", "里面": "inside", "内": "inside", "中": "inside", "外": "outside", "外面": "outside",
    "前": "before", "之前": "before", "以前": "before", "后": "after", "之后": "after", "以后": "after",
    "旁": "near", "旁边": "near", "附近": "near", "左": "left", "左边": "left", "右": "right", "右边": "right",
}  # fmt: skip
OPPOSITE_CLASSES = frozenset(
    frozenset(pair) for pair in (("on", "under"), ("above", "under"), ("inside", "outside"),
                                 ("before", "after"), ("with", "without"), ("for", "against"), ("left", "right"))
)  # fmt: skip
# Words that say the evidence's predicate did not quite happen ("nearly won", "差点错过", "几乎耗尽").
ATTENUATORS = frozenset({"almost", "nearly", "barely", "practically", "virtually", "差点", "差一点", "险些", "几乎",
                         "接近", "快要", "将近", "近乎", "濒临"})  # fmt: skip
# Future in the evidence ("expires in 14 days", "将于 3 天后过期", "下周上线"): what it says is not done yet.
FUTURE_EN = frozenset({"next", "upcoming", "tomorrow", "soon"})
FUTURE_ZH = frozenset({"将", "将于", "即将", "明天", "明年", "下周", "下个月", "下月", "稍后", "随后将"})
# The claim says it is done: past forms are read by context.past_tense; these words too.
DONE = frozenset({"already", "已", "已经", "了", "完毕"})
