"""The words of statistics questions, in English and Korean: operations, parameters, rounding and verdicts.

A general lexicon, not one made for a benchmark: each entry is how analysts name an operation. The catalog's
operations are in :data:`OPERATION_WORDS`; :data:`UNSUPPORTED_WORDS` names operations the catalog knows it lacks,
so a question asking one is refused naming it instead of being read as a nearby operation (a "geometric mean" is no
mean, a "moving average" no average).
"""

from __future__ import annotations

import re

# Op name -> patterns (English and Korean), matched on the casefolded question. Longer phrases come first where
# one contains another; a pattern's named groups carry parameters (q for a percentile).
OPERATION_WORDS: dict[str, tuple[str, ...]] = {
    "std": (r"standard\s+deviations?", r"\bstd\.?(?:\s*dev)?\b", r"\bstdev\b", r"\bsd\b", "표준\\s*편차"),
    "var": (r"(?<!analysis of )\bvariances?\b", r"(?<!분산)분산(?!\s*분석)"),
    "quantile": (
        r"(?P<pct>\d{1,2}(?:\.\d+)?)\s*(?:st|nd|rd|th)?[\s-]*percentile",
        r"percentile\s+(?P<pct2>\d{1,2}(?:\.\d+)?)",
        r"(?P<share>0?\.\d+)\s+quantile",
        r"quantile\s+(?P<share2>0?\.\d+)",
        r"(?P<first>first|lower|1st)\s+quartile|\bq1\b",
        r"(?P<third>third|upper|3rd)\s+quartile|\bq3\b",
        r"(?P<pct3>\d{1,2})\s*(?:번째)?\s*백분위(?:수)?",
        r"(?P<ko1>제?\s*1)\s*사분위(?:수)?",
        r"(?P<ko3>제?\s*3)\s*사분위(?:수)?",
    ),
    "iqr": (r"interquartile\s+range", r"\biqr\b", "사분위\\s*(?:수\\s*)?범위"),
    "range": (r"\brange\b", "범위"),
    "median": (r"\bmedian\b", "중앙값", "중위수"),
    "mean": (r"\bmeans?\b", r"\baverages?\b", r"\bavg\b", "평균"),
    "min": (r"\bminimum\b", r"\bmin\b", r"\bsmallest\s+value\b", r"\blowest\s+value\b", "최솟값", "최소값", "최소"),
    "max": (r"\bmaximum\b", r"\bmax\b", r"\blargest\s+value\b", r"\bhighest\s+value\b", "최댓값", "최대값", "최대"),
    # "총 Amount": 총 standing alone, unless it counts ("총 몇 명", "총 주문 수")
    "sum": (
        r"\btotals?\b",
        r"\bsum\b",
        "합계",
        "총합",
        "총\\s*합",
        r"(?<![가-힣])총(?![가-힣])(?!\s*(?:몇|개수|건수|인원|\S*\s*수(?![가-힣])))",
    ),
    "skew": (r"\bskew(?:ness)?\b", "왜도"),
    "kurtosis": (r"\bkurtosis\b", "첨도"),
    "zscore_outliers": (r"\bz[\s-]*scores?\b", r"\bz\s*[-]?\s*점수", r"\|\s*z\s*\|", "z값"),
    "outliers": (r"\boutliers?\b", "이상치", "이상값"),
    "normality": (
        r"d'?agostino(?:[\s-]+and)?[\s-]+pearson'?s?",
        r"normal(?:ly)?\s+distribut\w*",
        r"\bnormality\b",
        r"shapiro",
        r"d'?agostino",
        r"정규\s*분포",
        "정규성",
        r"\bnormal\b",
    ),
    "pearson": (r"\bpearson'?s?\b", "피어슨"),
    "spearman": (r"\bspearman'?s?\b", "스피어만"),
    "kendall": (r"\bkendall'?s?\b", "켄달"),
    "correlation": (r"\bcorrelat\w*", r"\bcorrelation\s+coefficient\b", "상관"),
    "regression": (
        r"\bregress\w*",
        r"\bslope\b",
        r"\bintercept\b",
        r"r[\s-]*squared|r²|\br2\b",
        r"coefficient\s+of\s+determination",
        "회귀",
        "기울기",
        "절편",
        "결정\\s*계수",
    ),  # fmt: skip
    "ttest": (r"\bt[\s-]*tests?\b", r"\bwelch'?s?\b", r"\bstudent'?s\s+t\b", r"t\s*-?\s*검정"),
    "anova": (r"\banova\b", r"analysis\s+of\s+variance", "분산\\s*분석"),
    "chi2": (r"chi[\s-]*squared?", r"χ\s*²|χ2|\bchi2\b", "카이\\s*제곱", r"\bindependen(?:t|ce)\b", "독립"),
    "count": (
        r"\bhow\s+many\b",
        r"\bnumber\s+of\b",
        r"\bcount\b",
        "몇\\s*(?:개|명|건|행|채|마리|가구|곳|대|회|번|편|그루|장|해|년|가지|종|개월|사람|통|권|명의)",
        "개수",
        "건수",
        r"행\s*수",
    ),
    "distinct": (r"\bdistinct\b", r"\bunique\b", r"\bdifferent\s+values\b", "고유", "서로\\s*다른"),
    "missing": (
        r"\bno\s+(?:[\w`'-]+\s+){0,3}recorded\b",
        r"\bnot\s+recorded\b",
        r"\bmissing\b",
        r"\bnulls?\b",
        r"\bna\s+values\b",
        r"\bnan\b",
        "결측",
    ),
    "share": (
        r"\bpercent(?:age)?\b",
        r"\bshare\b",
        r"\bproportion\b",
        r"\bfraction\b",
        "비율",
        "비중",
        "퍼센트",
        r"몇\s*(?:%|프로)",
    ),
}

#: Operations the catalog lacks, as analysts name them: a question naming one is refused, naming it.
UNSUPPORTED_WORDS: tuple[str, ...] = (
    r"geometric\s+mean", r"harmonic\s+mean", r"weighted\s+(?:mean|average)", r"moving\s+average",
    r"rolling\s+\w+", r"trimmed\s+mean", r"\bmode\b", r"most\s+frequent\s+value", r"coefficient\s+of\s+variation",
    r"mann[\s-]*whitney", r"wilcoxon", r"kruskal", r"multiple\s+(?:linear\s+)?regression",
    r"multivariate", r"polynomial", r"auto[\s-]*correlation", r"forecast\w*", r"predict\w*", r"projection",
    r"gini", r"entropy", r"interaction", r"percentile\s+rank", r"median\s+absolute\s+deviation", r"cumulative\s+\w+",
    r"exponential\s+smoothing", r"covariance", r"confidence\s+interval", r"standard\s+error", r"effect\s+size",
    r"cohen'?s\s+d", r"odds\s+ratio", r"kolmogorov", r"levene", r"bartlett", r"paired\s+t[\s-]*test", r"tukey",
    r"k[\s-]*means", r"cluster\w*", r"principal\s+component", r"\bpca\b", r"time\s+series\s+decomposition",
    r"seasonal\w*",
    r"growth\s+rate", r"year[\s-]+over[\s-]+year", r"\bcagr\b", r"elasticity", r"\bvif\b", r"durbin",
    r"two[\s-]+way\s+anova", r"f[\s-]*test\s+for\s+variances",
    r"\bpoisson\b", r"\bcox\b", r"hazards?\s+ratio", r"proportional\s+hazards", r"kaplan[\s-]*meier",
    r"log[\s-]*rank", r"survival\s+(?:analysis|curve|function)", r"incidence\s+rate\s+ratio",
    r"negative\s+binomial", r"\bprobit\b", r"\blogit\b", r"\bsensitivity\b", r"\bspecificity\b",
    r"area\s+under\s+(?:the\s+)?[\w-]*\s*curve", r"\bauc\b", r"trapezoid\w*", r"propensity\s+score\w*",
    r"naive\s+bayes", r"classifier", r"half[\s-]+life", r"mixed[\s-]+effects?", r"random\s+(?:intercepts?|effects?)",
    r"bonferroni", r"cronbach", r"weibull", r"bootstrap\w*", r"\blasso\b", r"\bridge\s+regression",
    r"discriminant", r"classif(?:y|ier|ication)", r"instrumental\s+variables?", r"two[\s-]+stage\s+least\s+squares",
    r"\b2sls\b", r"multi[\s-]?level", r"intra[\s-]?class", r"random[\s-]+intercepts?", r"hierarchical\s+model",
    r"breusch", r"heteroskedastic\w*", r"heteroscedastic\w*", r"non[\s-]?linear\s+(?:least\s+squares|regression|model)",
    r"\bmanova\b", r"\btobit\b", r"\bancova\b",
    r"generali[sz]ed\s+estimating\s+equations?", r"\bgee\b", r"maximum\s+likelihood", r"\bmle\b",
    r"double[\s-]+bounded", r"interval\s+(?:regression|model)", r"\blogistic\b", r"factor\s+analysis",
    r"random\s+forest", r"decision\s+tree", r"neural\s+network", r"\barima\b", r"\bloess\b", r"\blowess\b",
    "기하\\s*평균", "조화\\s*평균", "가중\\s*평균", "이동\\s*평균", "최빈값", "변동\\s*계수", "로지스틱",
    "다중\\s*회귀", "자기\\s*상관", "예측", "지니", "엔트로피", "상호\\s*작용", "공분산", "신뢰\\s*구간",
    "표준\\s*오차", "백분위\\s*순위", "이원\\s*분산", "성장률", "증가율", "포아송", "푸아송", "위험\\s*비",
    "생존\\s*분석", "카플란", "군집", r"k[\s-]*평균", "랜덤\\s*포레스트", "의사\\s*결정\\s*나무", "신경망", "주성분",
    "요인\\s*분석", "최대\\s*우도", "일반화\\s*추정",
)  # fmt: skip

_NUMBER_WORDS = {"zero": 0, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6}
_KO_ORDINALS = {"첫째": 1, "둘째": 2, "셋째": 3, "넷째": 4, "다섯째": 5, "첫": 1, "두": 2, "세": 3, "네": 4, "다섯": 5}
#: Rounding: "round to 2 decimal places", "two decimals", "nearest integer", "소수점 둘째 자리", "소수점 3자리".
DECIMALS_PATTERNS: tuple[tuple[re.Pattern[str], int | None], ...] = (
    (re.compile(r"(?P<n>\d+|zero|one|two|three|four|five|six)\s*(?:decimal|d\.\s?p\.?|dp\b|digits?\s+after)"), None),
    # "rounded to 3 places", "to two places"
    (re.compile(r"(?:rounded\s+|round(?:ing)?\s+)?to\s+(?P<n>\d+|zero|one|two|three|four|five|six)\s+places"), None),
    (re.compile(r"nearest\s+(?:whole\s+number|integer)|whole\s+number|an\s+integer|no\s+decimals?"), 0),
    (re.compile(r"(?:to\s+the\s+)?nearest\s+whole(?:\s+[^\W\d_]+)?"), 0),  # "to the nearest whole kelvin"
    # "rounded to the nearest peso": a whole unit (tenths, hundredths and cents are read above or below)
    (re.compile(r"(?:to\s+the\s+)?nearest\s+(?!tenth|hundredth|thousandth|cent\b|decimal)[^\W\d_]+"), 0),
    (re.compile(r"nearest\s+tenth"), 1),
    (re.compile(r"nearest\s+hundredth"), 2),
    (re.compile(r"nearest\s+thousandth"), 3),
    (
        re.compile(r"소수\s*점?\s*(?:이하\s*)?(?P<ko>첫째|둘째|셋째|넷째|다섯째|첫|두|세|네|다섯)\s*(?:째\s*)?자리"),
        None,
    ),
    (re.compile(r"소수\s*점?\s*(?:이하\s*)?(?P<n>\d+)\s*(?:번?째\s*)?자리"), None),
    # "R²는 셋째 자리까지": a later part's rounding without 소수점 again
    (re.compile(r"(?<![\w])(?P<ko>첫째|둘째|셋째|넷째|다섯째)\s*자리"), None),
    (re.compile(r"정수로|정수\s*(?:값|단위)"), 0),
)


def decimals_word(match: re.Match[str]) -> int:
    """The decimals a rounding phrase names."""
    found = match.groupdict()
    if found.get("ko"):
        return _KO_ORDINALS[found["ko"]]
    text = found.get("n") or "0"
    return int(text) if text.isdigit() else _NUMBER_WORDS[text]


ALPHA_RE = re.compile(
    r"(?:α|alpha|significance(?:\s+level)?|유의\s*수준)\s*(?:of|=|:|is|at|으로|을|를)?\s*(?P<a>0?\.\d+|\d+(?:\.\d+)?\s*%)"
    r"|(?P<b>0?\.\d+|\d+(?:\.\d+)?\s*%)\s*(?:significance|level\s+of\s+significance|유의\s*수준|수준)"
    r"|(?:significant\w*|differ\w*|association)\s+at\s+(?:the\s+)?(?:α\s*=\s*)?(?P<c>0?\.\d+|\d+(?:\.\d+)?\s*%)"
    r"(?:\s+(?:significance\s+)?level)?"
    r"|\bat\s+the\s+(?P<d>0?\.\d+|\d+(?:\.\d+)?\s*%)\s+(?:significance\s+)?level"
    r"|(?P<e>0?\.\d+|\d+(?:\.\d+)?\s*%)\s*(?:에서\s*)?유의(?!\s*수준)"  # "5% 유의 여부", "0.05에서 유의한가"
)
ZTHRESHOLD_RE = re.compile(
    r"\|\s*z\s*\|\s*(?:>=?|≥|greater\s+than|above|over|exceeds?)\s*(?P<t>\d+(?:\.\d+)?)"
    r"|z[\s-]*(?:scores?|점수|값)?\s*(?:of\s+)?(?:>=?|≥|greater\s+than|above|over|exceeding|more\s+than|beyond|"
    r"larger\s+than)\s*(?P<u>\d+(?:\.\d+)?)"
    r"|(?:threshold|cut[\s-]*off)\s*(?:of|=|:)?\s*(?P<v>\d+(?:\.\d+)?)"
    r"|(?P<w>\d+(?:\.\d+)?)\s*(?:standard\s+deviations|sd|표준\s*편차)"
    r"|(?P<x>\d+(?:\.\d+)?)\s*(?:을|를)?\s*(?:초과|넘는|이상)"
    r"|(?:exceeds?|exceeding|above|over|beyond)\s+(?P<y>\d+(?:\.\d+)?)\s+in\s+absolute\s+value"
)
IQR_FACTOR_RE = re.compile(
    r"(?P<k>\d+(?:\.\d+)?)\s*(?:x|×|\*|times)?\s*(?:the\s+)?(?:iqr|interquartile)"
    r"|(?:iqr|interquartile\s+range)\s*(?:factor|multiplier|rule)?\s*(?:of|=|:|x|×|\*)\s*(?P<j>\d+(?:\.\d+)?)"
    r"|(?:k|factor|multiplier)\s*(?:=|of)\s*(?P<m>\d+(?:\.\d+)?)"
    # "IQR의 1.5배", "IQR 기준(1.5배)"
    r"|(?:iqr|사분위\s*(?:수\s*)?범위)\s*(?:의|\s*기준)?\s*\(?\s*(?P<q>\d+(?:\.\d+)?)\s*배"
    r"|(?P<r>\d+(?:\.\d+)?)\s*(?:x|×)?\s*(?:iqr\s+)?rule"  # "(1.5 rule)", "the 1.5×IQR rule"
)
STRONG_RE = re.compile(
    r"\|\s*(?:r|rho|tau|ρ|τ)\s*\|\s*(?:>=|≥|>|greater\s+than|at\s+least|of\s+at\s+least|above)\s*(?P<r>0?\.\d+)"
    r"|(?:at\s+least|above|over|exceeds?)\s*(?P<s>0?\.\d+)\s*(?:in\s+absolute|absolute)"
    r"|(?P<t>0?\.\d+)\s*(?:이상)"
    r"|(?P<v>0?\.\d+)\s+(?:cut[\s-]*off|threshold)|(?:cut[\s-]*off|threshold)\s*(?:of|=|:)?\s*(?P<w>0?\.\d+)"
    r"|\|\s*(?:r|rho|tau|ρ|τ)\s*\|\s*(?:is\s+|of\s+)?(?P<u>0?\.\d+)\s+or\s+(?:more|above|greater|higher|larger)"
)
P_VALUE_RE = re.compile(r"\bp[\s-]*values?\b|\bp\s*값|p-값|유의\s*확률|\bsignificance\b|\bp\b", re.I)
STATISTIC_RE = re.compile(
    r"\bstatistics?\b|\bt[\s-]*(?:value|statistic)\b|\bf[\s-]*(?:value|statistic|ratio)\b|\bw\b|"
    r"chi[\s-]*squared?\s+(?:value|statistic)|검정\s*통계량|통계량|\bt값|\bf값|"
    r"(?:\bchi2|χ\s*²|χ2)\s+(?:to|rounded|\()|"  # "give chi2 to 3 decimals"
    r"chi[\s-]*squared?(?=\s*\(\s*\d|\s+(?:to|rounded)\b)"  # "chi-square (2 dp)": the statistic, not the test
)
#: The test statistic named by its symbol ("report t and p", "F to 3 decimals", "χ² and p"), not the test's name
#: ("t-test", "F-test", "χ² test"): matched where the question's values and operation words are already read.
STATISTIC_SYMBOL_RE = re.compile(
    r"(?<![\w'`-])[tf](?![\w'`-])(?!\s*-?\s*(?:tests?|검정|분포|distribution))|"
    r"χ\s*²(?!\s*-?\s*(?:tests?\b|검정|독립))|\bχ2\b(?!\s*-?\s*(?:tests?\b|검정))"
)
#: A chi-square test's degrees of freedom asked for.
DOF_RE = re.compile(r"degrees?\s+of\s+freedom|\bdof\b|\bdf\b|자유도")
STRENGTH_RE = re.compile(r"how\s+strong|strength|강도|얼마나\s+강")
#: The direction a yes/no asks of a correlation ("is it positive?", "양의 상관인가요?").
SIGN_WORDS: tuple[tuple[str, str], ...] = (
    ("positive", r"\bpositive(?:ly)?\b|양의|양\s*\(\+\)|정적"),
    ("negative", r"\bnegative(?:ly)?\b|음의|부적|역의"),
)
STRONG_WORD_RE = re.compile(r"\bstrong\b|강한")
#: A yes/no question: "Is ...", "Are ...", "Does ...", "... 인가?", "... 있는가?", "여부".
VERDICT_RE = re.compile(
    r"(?:^|[.?!:;,]\s+|\(\s*|\s[—–-]+\s*)(?:is|are|does|do|did|was|were|can|could|would|will)\b|yes\s+or\s+no|"
    r",?\s+and\s+(?:is|are|does|do)\s+(?:it|they|the|this|that|there)\b|\bwhether\b|"
    r"(?:^|[.?!;]\s+)(?:significant|strong|normal|independent|different|positive|negative)\b(?:[^.?!]|\.\d)*\?|"
    r"(?<!몇 개)(?<!몇개)(?<!얼마)(?:[인한는은]가\s*\??\s*$|[인한는은]가요|입니까|습니까|있는가|있나요|나요\s*\??\s*$|"
    r"여부|[인한는]지(?:도|를|가)?(?=\s|\(|$)|않은가|않는가|일까|할까)|"
    r"(?:이야|야|니|냐|나|지|죠|어|아|래)\s*\?"  # the casual endings: "양의 상관이야?", "유의하니?"
)
#: A Korean question asking for an amount, not a yes/no ("몇 개인가?", "얼마인가?").
KO_AMOUNT_RE = re.compile(r"몇|얼마|무엇|어느|어떤|누구|뭐|뭔|어디|언제")
#: A verdict asked the other way round: "are they independent?", "the same means?" (yes = not significant).
INVERTED_RE = re.compile(
    r"independen|\bthe\s+same\b|\bequal\s+means?\b|no\s+(?:significant\s+)?difference|독립|같은가|동일"
)
SIGNIFICANT_RE = re.compile(r"significan|유의")
WELCH_RE = re.compile(
    r"welch|unequal\s+variances?|equal_var\s*=\s*false|등분산\s*(?:을\s*)?가정하지|이분산|"
    r"(?:not|n't|without)\s+assum\w*\s+(?:equal|the\s+same)\s+variances?"  # "does not assume equal variances"
)
POOLED_RE = re.compile(r"pooled|equal\s+variances?|student'?s\s+t|등분산")
#: "(ddof = 0)": the rule POPULATION_RE reads, so its number is no constraint left unread.
DDOF_RE = re.compile(r"\bddof\s*=\s*[01]\b")
POPULATION_RE = re.compile(r"population|ddof\s*=\s*0|모\s*표준편차|모분산|모집단")
#: A superlative that names its measure ("the hottest star": temperature), with the column names it reads as.
MEASURE_ADJECTIVES: dict[str, tuple[str, ...]] = {
    "hottest": ("temperature", "temp"), "warmest": ("temperature", "temp"), "coldest": ("temperature", "temp"),
    "tallest": ("height",), "heaviest": ("weight", "mass"), "lightest": ("weight", "mass"),
    "oldest": ("age",), "youngest": ("age",), "fastest": ("speed",), "slowest": ("speed",),
    "richest": ("income", "wealth"), "poorest": ("income", "wealth"), "cheapest": ("price", "cost"),
}  # fmt: skip
#: A verb or participle that names its measure and compares it ("aged 50 or over", "weigh more than 50 g").
MEASURE_VERBS: dict[str, tuple[str, ...]] = {
    r"aged": ("age",), r"weigh(?:s|ed|ing)?": ("weight", "mass"), r"cost(?:s|ing)?": ("cost", "price"),
    r"earn(?:s|ed|ing)?": ("income", "earnings", "salary", "wage", "wages"),
}  # fmt: skip
HIGH_RE = re.compile(
    r"\b(?:hottest|warmest|tallest|heaviest|oldest|fastest|richest)\b|"
    r"\b(?:highest|largest|greatest|biggest|longest|(?<!at )most|maximum|max|top|best)\b|"
    r"\b(?:higher|larger|greater|bigger|longer)\b|"
    r"가장\s*(?:높|크|많|큰|긴)|최대|최고|제일\s*(?:높|크|많)|더\s*(?:높|크|많|긴)"
)
LOW_RE = re.compile(
    r"\b(?:coldest|lightest|youngest|slowest|poorest|cheapest)\b|"
    r"\b(?:lowest|smallest|(?<!at )least|fewest|shortest|minimum|min|bottom|worst|lower|smaller|fewer|shorter)\b|"
    r"가장\s*(?:낮|작|적|짧)|최소|최저|제일\s*(?:낮|작|적)|더\s*(?:낮|작|적|짧)"
)
#: "the most customers", "the fewest runners": a count of rows (entities); "the most sales" is a measure's total.
ENTITY_COUNT_RE = re.compile(
    r"\b(?:most|fewest|least|(?:highest|largest|greatest|smallest|lowest)\s+number\s+of)\s+"
    r"(?!sales\b|revenues?\b|profits?\b|earnings\b|spending\b|costs?\b|\w+'s\b)[a-z]+s\b"
)
WHICH_RE = re.compile(r"\bwhich\b|\bwhat\b|어느|어떤|무엇|누구|어디|언제")
#: Words that compare a column with a number.
COMPARISONS: tuple[tuple[str, str], ...] = (
    (r">=|≥|at\s+least|greater\s+than\s+or\s+equal\s+to|no\s+less\s+than", ">="),
    (r"<=|≤|at\s+most|less\s+than\s+or\s+equal\s+to|no\s+more\s+than", "<="),
    (r"!=|≠|not\s+equal\s+to|other\s+than", "!="),
    (r">|greater\s+than|more\s+than|larger\s+than|higher\s+than|above|over|exceeds?|exceeding", ">"),
    (r"<|less\s+than|fewer\s+than|smaller\s+than|lower\s+than|below|under", "<"),
    (r"==|=|equals?|equal\s+to|exactly|is", "="),
)
KO_COMPARISONS = {"이상": ">=", "이하": "<=", "초과": ">", "미만": "<", "보다 큰": ">", "보다 작은": "<"}
#: A period filter the catalog cannot express ("in March", "last month", "2024", "1분기").
PERIOD_RE = re.compile(
    r"\b(?:last|latest|previous|past|this|next|final|first|most\s+recent)\s+(?:day|week|month|quarter|year)\b|"
    r"\bin\s+(?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*\b|\b(?:19|20)\d{2}-\d{2}\b|"
    r"\b(?:daily|weekly|monthly|quarterly|yearly|annual|per\s+(?:day|week|month|year))\b|"
    r"지난\s*(?:달|주|해)|\d+\s*월|\d+\s*분기|월별|주별|연도별|일별"
)
#: The part a rounding phrase right after it applies to ("the slope (3 decimals), the intercept (2 decimals)").
PART_WORDS: tuple[tuple[str, str], ...] = (
    ("p_value", r"p[\s-]*values?|p\s*값|p-값|유의\s*확률|\bp\b(?=\s+(?:to|at|rounded|\())"),
    # a statistic by its symbol only as "F to 2 decimals", never a level F
    (
        "statistic",
        r"statistic|t[\s-]*value|f[\s-]*value|통계량|χ\s*²\s*value|\b(?:[tf]|chi2|χ\s*²)(?=\s+(?:to|rounded|\())|"
        r"chi[\s-]*squared?(?=\s*\(\s*\d|\s+(?:to|rounded)\b)",
    ),
    ("slope", r"slope|기울기"),
    ("intercept", r"intercept|절편"),
    ("r_squared", r"r[\s-]*squared|r²|r\^2|\br2\b|결정\s*계수"),
    ("value", r"coefficient|correlation|상관\s*계수|\brho\b|\btau\b"),
)
#: "ignoring missing values": every statistic drops them already, so the phrase asks for nothing more.
IGNORE_MISSING_RE = re.compile(
    r"(?:ignoring|excluding|dropping|without|skipping|omitting|after\s+removing)\s+(?:the\s+|any\s+)?"
    r"(?:missing|null|na|nan|blank)(?:\s+(?:values?|entries|rows|cells))?|결측\S*\s*(?:을|를)?\s*(?:제외|무시)\S*"
)
#: Korean particles a name may carry ("Volume의", "나이는").
KO_PARTICLES = "에서의|에서|에게|으로|의|은|는|이|가|을|를|에|로|와|과|도|만|별"
