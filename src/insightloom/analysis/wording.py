"""Wording of section titles, findings, table headers and chart captions, per analysis kind and language.

Templates are filled inside the generated scripts with ``str.format``: ``{m}``-style fields take column names, the
other fields take ``{{calc:<id>}}`` references, so findings never hold a typed number.
"""

from __future__ import annotations

TEXTS: dict[str, dict[str, dict[str, str]]] = {
    "overview": {
        "en": {
            "title": "Data overview and quality",
            "shape": "The data has {rows} {w_rows} and {columns} {w_columns}; {analysed} {w_analysed} can be "
            "analysed (personal data and identifier columns are left out).",
            "shape_all": "The data has {rows} {w_rows} and {columns} {w_columns}; all {analysed} can be analysed.",
            "coverage": "Columns not analysed, and why: {items}.",
            "why_join": "; ",
            "why_pii": "`{c}` holds personal data",
            "why_identifier": "`{c}` is an identifier",
            "why_text": "`{c}` is free text",
            "why_missing": "`{c}` is {share} missing",
            "why_constant": "`{c}` has a single value",
            "why_many_groups": "`{c}` has too many distinct values to break down",
            "why_code": "`{c}` holds codes or numbering, not quantities",
            "why_date": "`{c}` is a date other than the time axis",
            "why_rate": "`{c}` is a rate per row, which the plan does not average",
            "why_more_categories": "`{c}` is a category beyond the plan's breakdowns",
            "why_more_measures": "`{c}` is a measure beyond the plan's headline measures",
            "why_unplanned": "`{c}` is not among the plan's analyses",
            "why_more": "and {more} more {w_more}",
            "missing": "The analysed columns have {missing} missing {w_missing} ({share} of those cells), and "
            "{complete} {w_complete} no missing value.",
            "by_column": "{with_missing} analysed {w_with_missing} missing values; the most are in {top}.",
            "by_column_one": "{with_missing} analysed {w_with_missing} missing values: {top}.",
            "by_column_tied": "{with_missing} analysed {w_with_missing} missing values; {top} tie for the most, "
            "with {top_n} missing cells each.",
            "by_column_tied_many": "{with_missing} analysed {w_with_missing} missing values; {tied} of them tie for "
            "the most, with {top_n} missing cells each.",
            "by_column_all_tied": "{with_missing} analysed {w_with_missing} missing values, the same number in each "
            "(a tie at {top_n} missing cells).",
            "none": "No analysed column has missing values.",
            "h_column": "Column",
            "h_missing": "Missing cells",
            "h_item": "Item",
            "h_count": "Count",
            "row_rows": "Rows",
            "row_columns": "Columns",
            "row_analysed": "Analysed columns",
            "row_complete": "Complete rows",
        },
        "ko": {
            "title": "데이터 개요와 품질",
            "shape": "데이터는 {rows}개 행과 {columns}개 열로 이루어져 있으며, 개인정보와 식별자 열을 제외한 "
            "{analysed}개 열을 분석합니다.",
            "shape_all": "데이터는 {rows}개 행과 {columns}개 열로 이루어져 있으며, {analysed}개 열 모두 분석할 수 "
            "있습니다.",
            "coverage": "분석하지 않은 열과 그 이유: {items}.",
            "why_join": "; ",
            "why_pii": "`{c}`은(는) 개인정보",
            "why_identifier": "`{c}`은(는) 식별자",
            "why_text": "`{c}`은(는) 자유 텍스트",
            "why_missing": "`{c}`은(는) {share} 결측",
            "why_constant": "`{c}`은(는) 값이 하나뿐",
            "why_many_groups": "`{c}`은(는) 서로 다른 값이 너무 많아 구분에 쓸 수 없음",
            "why_code": "`{c}`은(는) 수량이 아닌 코드 또는 번호",
            "why_date": "`{c}`은(는) 시간 축이 아닌 다른 날짜",
            "why_rate": "`{c}`은(는) 행별 비율로 계획에서 평균을 내지 않음",
            "why_more_categories": "`{c}`은(는) 계획된 구분 외의 범주",
            "why_more_measures": "`{c}`은(는) 계획된 주요 측정값 외의 측정값",
            "why_unplanned": "`{c}`은(는) 계획된 분석에 포함되지 않음",
            "why_more": "그 밖에 {more}개 열",
            "missing": "분석 대상 열의 결측 셀은 {missing}개(해당 셀의 {share})이며, 결측이 없는 완전한 행은 "
            "{complete}개입니다.",
            "by_column": "결측값이 있는 분석 대상 열은 {with_missing}개이며, 가장 많은 열은 {top}입니다.",
            "by_column_one": "결측값이 있는 분석 대상 열은 {with_missing}개({top})입니다.",
            "by_column_tied": "결측값이 있는 분석 대상 열은 {with_missing}개이며, {top} 열이 각각 {top_n}개로 "
            "공동 최다입니다.",
            "by_column_tied_many": "결측값이 있는 분석 대상 열은 {with_missing}개이며, 그중 {tied}개 열이 각각 "
            "{top_n}개로 공동 최다입니다.",
            "by_column_all_tied": "결측값이 있는 분석 대상 열은 {with_missing}개이며, 모두 결측 셀이 {top_n}개로 "
            "동률입니다.",
            "none": "분석 대상 열에는 결측값이 없습니다.",
            "h_column": "열",
            "h_missing": "결측 셀 수",
            "h_item": "항목",
            "h_count": "개수",
            "row_rows": "행",
            "row_columns": "열",
            "row_analysed": "분석 대상 열",
            "row_complete": "완전한 행",
        },
    },
    "kpi": {
        "en": {
            "title": "Headline KPIs",
            "additive": "Total `{m}` is {total}, an average of {mean} per row.",
            "additive_named": "`{m}` sums to {total}, an average of {mean} per row.",
            "average": "Average `{m}` is {mean}, ranging from {min} to {max}.",
            "outcome": "`{m}` is a 0/1 outcome; its rate (the share of 1s) is {rate}.",
            "rate": "{label}, recomputed from its parts (`{num}` / `{den}`) rather than averaged, is {value}.",
            "h_measure": "Measure",
            "h_value": "Value",
            "row_total": "{m}, total",
            "row_mean": "{m}, average per row",
            "row_range": "{m}, range",
            "row_rate": "{m}, rate",
            "range_cell": "{min} to {max}",
            "sentinel": "{claim}.",
        },
        "ko": {
            "title": "핵심 지표",
            "additive": "`{m}`의 합계는 {total}이며, 행당 평균은 {mean}입니다.",
            "additive_named": "`{m}`의 합계는 {total}이며, 행당 평균은 {mean}입니다.",
            "average": "`{m}`의 평균은 {mean}이며, 범위는 {min}부터 {max}까지입니다.",
            "outcome": "`{m}`은(는) 0/1 결과이며, 비율(1의 비중)은 {rate}입니다.",
            "rate": "구성 요소(`{num}` / `{den}`)로 다시 계산한 {label}은(는) {value}입니다(행별 비율의 평균이 아님).",
            "h_measure": "지표",
            "h_value": "값",
            "row_total": "{m} 합계",
            "row_mean": "{m} 행당 평균",
            "row_range": "{m} 범위",
            "row_rate": "{m} 비율",
            "range_cell": "{min} ~ {max}",
            "sentinel": "{claim}.",
        },
    },
    "breakdown": {
        "en": {
            "title_sum": "`{m}` by `{by}`",
            "title_mean": "Average `{m}` by `{by}`",
            "title_count": "Rows by `{by}`",
            "title_rate": "`{m}` rate by `{by}`",
            "top_sum": "`{by}` has {groups} {w_groups}; the largest is {top} with {value}, {share} of total `{m}`.",
            "top_mean": "`{by}` has {groups} {w_groups}; the highest average `{m}` is in {top} at {value}.",
            "top_count": "`{by}` has {groups} {w_groups}; the largest is {top} with {value} {w_value}, {share} of all "
            "rows.",
            "top_rate": "`{by}` has {groups} {w_groups}; the highest `{m}` rate is in {top} at {value}.",
            "top_sum_tied": "`{by}` has {groups} {w_groups}; {top} tie for the largest with {value} each, {share} of "
            "total `{m}` each.",
            "top_mean_tied": "`{by}` has {groups} {w_groups}; {top} tie for the highest average `{m}` at {value}.",
            "top_count_tied": "`{by}` has {groups} {w_groups}; {top} tie for the largest with {value} {w_value} each, "
            "{share} of all rows each.",
            "top_rate_tied": "`{by}` has {groups} {w_groups}; {top} tie for the highest `{m}` rate at {value}.",
            "all_tied": "All {groups} `{by}` groups have the same value, {value}.",
            "bottom": "The smallest group is {bottom} with {value}.",
            "bottom_tied": "The smallest groups, tied, are {bottom} with {value} each.",
            "rate": "{label} in the largest group is {value}.",
            "h_value_sum": "Total",
            "h_value_mean": "Average",
            "h_value_count": "Rows",
            "h_value_rate": "Rate",
            "h_share": "Share",
            "driver": "Row by row, {claim}.",
            "row_count": "the row count",
            "concentration": "By group totals, {claim}.",
            "comparison": "Against the next group, {claim}.",
            "axis_sum": "Total {m}",
            "axis_mean": "Average {m}",
            "axis_count": "Rows",
            "axis_rate": "{m} rate",
            "chart_title_all": "{title}, all {groups} groups",
            "chart_title_top": "{title}, top {shown} of {groups}",
            "chart_alt_all": "Horizontal bar chart of {what} for every group of {by}.",
            "chart_alt_top": "Horizontal bar chart of {what} for the largest groups of {by}.",
            "caption_all": "{title}, all groups, largest first.",
            "caption_top": "{title}, top {shown} groups by value.",
        },
        "ko": {
            "title_sum": "`{by}`별 `{m}`",
            "title_mean": "`{by}`별 평균 `{m}`",
            "title_count": "`{by}`별 건수",
            "title_rate": "`{by}`별 `{m}` 비율",
            "top_sum": "`{by}`에는 {groups}개 그룹이 있으며, 가장 큰 그룹은 {top}({value}, "
            "전체 `{m}`의 {share})입니다.",
            "top_mean": "`{by}`에는 {groups}개 그룹이 있으며, 평균 `{m}`이 가장 높은 그룹은 {top}({value})입니다.",
            "top_count": "`{by}`에는 {groups}개 그룹이 있으며, 가장 큰 그룹은 {top}(행 {value}, "
            "전체 행의 {share})입니다.",
            "top_rate": "`{by}`에는 {groups}개 그룹이 있으며, `{m}` 비율이 가장 높은 그룹은 {top}({value})입니다.",
            "top_sum_tied": "`{by}`에는 {groups}개 그룹이 있으며, {top} 그룹이 각각 {value}(전체 `{m}`의 {share})로 "
            "동률 1위입니다.",
            "top_mean_tied": "`{by}`에는 {groups}개 그룹이 있으며, {top} 그룹이 평균 `{m}` {value}로 동률 1위입니다.",
            "top_count_tied": "`{by}`에는 {groups}개 그룹이 있으며, {top} 그룹이 각각 행 {value}(전체 행의 {share})로 "
            "동률 1위입니다.",
            "top_rate_tied": "`{by}`에는 {groups}개 그룹이 있으며, {top} 그룹이 `{m}` 비율 {value}로 동률 1위입니다.",
            "all_tied": "`{by}`의 {groups}개 그룹은 모두 같은 값({value})입니다.",
            "bottom": "가장 작은 그룹은 {bottom}({value})입니다.",
            "bottom_tied": "가장 작은 그룹은 {bottom}(각각 {value}, 동률)입니다.",
            "rate": "가장 큰 그룹의 {label}은(는) {value}입니다.",
            "h_value_sum": "합계",
            "h_value_mean": "평균",
            "h_value_count": "건수",
            "h_value_rate": "비율",
            "h_share": "비중",
            "driver": "행 단위로 보면 {claim}.",
            "row_count": "건수",
            "concentration": "그룹 합계로 보면 {claim}.",
            "comparison": "다음 그룹과 비교하면 {claim}.",
            "axis_sum": "{m} 합계",
            "axis_mean": "{m} 평균",
            "axis_count": "건수",
            "axis_rate": "{m} 비율",
            "chart_title_all": "{title}, 전체 {groups}개 그룹",
            "chart_title_top": "{title}, {groups}개 중 상위 {shown}개",
            "chart_alt_all": "{by}의 모든 그룹별 {what}을 보여 주는 가로 막대 차트.",
            "chart_alt_top": "{by}의 상위 그룹별 {what}을 보여 주는 가로 막대 차트.",
            "caption_all": "{title}, 전체 그룹, 큰 값부터.",
            "caption_top": "{title}, 값 기준 상위 {shown}개 그룹.",
        },
    },
    "trend": {
        "en": {
            "title": "Trend of {what} per {period}",
            "span": "The data covers {periods} periods of one {period} each, from {first} to {last}.",
            "span_one": "The data covers {periods} period ({period}): {first}.",
            "change_complete": "From {first} to {last}, the first and last complete periods, {what} {direction} "
            "from {first_value} to {last_value} ({change}).",
            "change_per_day": "Per observed day, {what} {direction} from {first_value} in the first period to "
            "{last_value} in the last ({change}); too few periods are complete to leave the partial ones out.",
            "partial_first": "The first period is partial and was left out of the change.",
            "partial_last": "The last period is partial and was left out of the change.",
            "partial_both": "The first and last periods are partial and were left out of the change.",
            "partial_kept": "The first or last period is partial; as averages per row, they are compared as they are.",
            "change": "From the first to the last period, {what} {direction} from {first_value} to {last_value} "
            "({change}).",
            "flat": "In the first period {what} was {first_value}, and in the last {last_value}.",
            "claim": "Judged over every period rather than the first and last alone, the trend verdict is {claim}.",
            "claim_complete": "Judged over every complete period rather than the first and last alone, the trend "
            "verdict is {claim}.",
            "claim_per_day": "Judged per observed day over every period rather than the first and last alone, the "
            "trend verdict is {claim}.",
            "up": "rose",
            "down": "fell",
            "same": "stayed level",
            "peak": "The peak was {peak} with {value}.",
            "peak_tied": "The peak, {value}, was reached in {tied} tied periods, first in {peak}.",
            "peak_all": "Every period has the same {what}, {value}: all periods tie, so there is no single peak.",
            "weekend": "Weekends (Saturday and Sunday) account for {share} of {what}.",
            "chart_alt": "Line chart of {what} per {period} over `{date}`.",
            "caption": "{what} per {period}.",
            "sum": "total `{m}`",
            "mean": "average `{m}`",
            "count": "row count",
            "wide_sum": "the total of the year columns",
            "wide_mean": "the average of the year columns",
            "wide_count": "the values present in the year columns",
        },
        "ko": {
            "title": "{period} {what} 추이",
            "span": "데이터는 {first}부터 {last}까지 {periods}개 기간({period})에 걸쳐 있습니다.",
            "change_complete": "완전한 첫 기간 {first}부터 완전한 마지막 기간 {last}까지 {what}은(는) "
            "{first_value}에서 {last_value}(으)로 {direction}({change}).",
            "change_per_day": "관측일 기준 하루당 {what}은(는) 첫 기간 {first_value}에서 "
            "마지막 기간 {last_value}(으)로 {direction}({change}). "
            "완전한 기간이 적어 일부만 포함된 기간을 제외하지 않았습니다.",
            "partial_first": "첫 기간은 일부만 포함되어 변화율 계산에서 제외했습니다.",
            "partial_last": "마지막 기간은 일부만 포함되어 변화율 계산에서 제외했습니다.",
            "partial_both": "첫 기간과 마지막 기간은 일부만 포함되어 변화율 계산에서 제외했습니다.",
            "partial_kept": "첫 기간 또는 마지막 기간이 일부만 포함되었지만, 행당 평균이므로 그대로 비교했습니다.",
            "change": "{what}은(는) 첫 기간 {first_value}에서 마지막 기간 {last_value}(으)로 {direction}({change}).",
            "flat": "{what}은(는) 첫 기간 {first_value}, 마지막 기간 {last_value}입니다.",
            "claim": "첫 기간과 마지막 기간만이 아니라 모든 기간으로 추세를 판단하면 {claim}.",
            "claim_complete": "첫 기간과 마지막 기간만이 아니라 모든 완전한 기간으로 추세를 판단하면 {claim}.",
            "claim_per_day": "첫 기간과 마지막 기간만이 아니라 모든 기간을 관측일 하루당으로 추세를 판단하면 {claim}.",
            "up": "증가했습니다",
            "down": "감소했습니다",
            "same": "변동이 없었습니다",
            "peak": "가장 높은 기간은 {peak}({value})입니다.",
            "peak_tied": "최고값 {value}은(는) {tied}개 기간이 동률이며, 그중 첫 기간은 {peak}입니다.",
            "peak_all": "{what}은(는) 모든 기간에서 {value}(으)로 같습니다(모든 기간이 동률이라 정점이 없습니다).",
            "weekend": "주말(토·일)이 {what}의 {share}를 차지합니다.",
            "chart_alt": "`{date}` 기준 {period} {what}을 보여 주는 선 차트.",
            "caption": "{period} {what}.",
            "sum": "`{m}` 합계",
            "mean": "`{m}` 평균",
            "count": "건수",
            "wide_sum": "연도 열 합계",
            "wide_mean": "연도 열 평균",
            "wide_count": "연도 열 값 개수",
        },
    },
    "correlation": {
        "en": {
            "title": "Correlation of `{x}` and `{y}`",
            "r": "The Pearson correlation between `{x}` and `{y}` is {r} over {n} rows; its square, the share of "
            "the variance the two have in common, is {r2}.",
            "claim": "Checked against Spearman's rank correlation and without the most influential points: {claim}.",
            "none": "`{x}` and `{y}` do not vary enough across {n} rows to measure a correlation.",
            "none_one": "`{x}` and `{y}` are both present in only {n} row, too few to measure a correlation.",
            "chart_alt": "Scatter chart of `{y}` against `{x}`.",
            "caption": "`{y}` against `{x}`, one point per row.",
            "caption_binned": "`{y}` against `{x}`; each hexagon is shaded by how many rows fall in it, since single "
            "points would hide each other.",
        },
        "ko": {
            "title": "`{x}`와(과) `{y}`의 상관관계",
            "r": "`{x}`와(과) `{y}`의 피어슨 상관계수는 {n}개 행 기준 {r}이며, 그 제곱(두 변수가 공유하는 분산의 "
            "비중)은 {r2}입니다.",
            "claim": "스피어만 순위 상관계수와 영향이 가장 큰 점들을 뺀 결과로 확인하면: {claim}.",
            "none": "{n}개 행에서 `{x}`와(과) `{y}`의 변동이 부족해 상관계수를 계산할 수 없습니다.",
            "chart_alt": "`{x}` 대비 `{y}`의 산점도.",
            "caption": "`{x}` 대비 `{y}`, 점 하나가 한 행.",
            "caption_binned": "`{x}` 대비 `{y}`, 점이 너무 많아 육각형 칸마다 행 수를 색으로 나타냈습니다.",
        },
    },
    "distribution": {
        "en": {
            "title": "Distribution of `{m}`",
            "center": "Half of the `{m}` values are below the median of {median}, and one in ten is above {p90}.",
            "spread": "The middle half lies between {q1} and {q3}.",
            "std": "The standard deviation is {std}.",
            "outliers": "{outliers} values ({share}) fall outside the IQR fences; {claim}.",
            "outliers_one": "{outliers} value ({share}) falls outside the IQR fences; {claim}.",
            "sentinel": "{claim}.",
            "axis_rows": "Rows",
            "chart_alt": "Histogram of `{m}` with the median marked.",
            "caption": "Distribution of `{m}`; the dashed line marks the median.",
            "caption_log": "Distribution of `{m}` on a logarithmic axis, since a few large values would flatten the "
            "rest; the dashed line marks the median.",
            "caption_clipped": "Distribution of `{m}` with the axis stopped short of its farthest values, which "
            "would flatten the rest; the dashed line marks the median.",
        },
        "ko": {
            "title": "`{m}` 분포",
            "center": "`{m}` 값의 절반은 중앙값 {median}보다 작고, 열 개 중 하나는 {p90}보다 큽니다.",
            "spread": "가운데 절반은 {q1}부터 {q3} 사이에 있습니다.",
            "std": "표준편차는 {std}입니다.",
            "outliers": "IQR 경계를 벗어난 값은 {outliers}개({share})이며, {claim}.",
            "sentinel": "{claim}.",
            "axis_rows": "행 수",
            "chart_alt": "중앙값이 표시된 `{m}` 히스토그램.",
            "caption": "`{m}` 분포, 점선은 중앙값.",
            "caption_log": "`{m}` 분포(일부 큰 값이 나머지를 납작하게 만들어 로그 축 사용), 점선은 중앙값.",
            "caption_clipped": "`{m}` 분포(나머지를 납작하게 만드는 아주 먼 값은 축에서 제외), 점선은 중앙값.",
        },
    },
}

DESCRIPTIONS: dict[str, dict[str, dict[str, str]]] = {
    "overview": {
        "en": {
            "d_rows": "Number of rows",
            "d_columns": "Number of columns",
            "d_analysed": "Columns that can be analysed (not personal data or identifiers)",
            "d_missing_share_in": "Share of rows missing {c}",
            "d_unanalysed_more": "Columns left out beyond those named",
            "d_missing": "Missing cells in the analysed columns",
            "d_complete": "Rows with no missing value in the analysed columns",
            "d_share": "Share of missing cells in the analysed columns",
            "d_with_missing": "Analysed columns with at least one missing value",
            "d_top": "Analysed column(s) with the most missing cells",
            "d_top_n": "Most missing cells in one analysed column",
            "d_tied": "Analysed columns tied for the most missing cells",
            "d_missing_in": "Missing cells in {c}",
        },
        "ko": {
            "d_rows": "행 수",
            "d_columns": "열 수",
            "d_analysed": "분석 대상 열 수(개인정보·식별자가 아닌 열)",
            "d_missing_share_in": "{c} 열의 결측 행 비율",
            "d_unanalysed_more": "이름을 밝힌 열 외에 분석하지 않은 열 수",
            "d_missing": "분석 대상 열의 결측 셀 수",
            "d_complete": "분석 대상 열에 결측이 없는 행 수",
            "d_share": "분석 대상 열의 결측 셀 비율",
            "d_with_missing": "결측값이 하나 이상 있는 분석 대상 열 수",
            "d_top": "결측 셀이 가장 많은 분석 대상 열",
            "d_top_n": "분석 대상 열 하나의 최대 결측 셀 수",
            "d_tied": "결측 셀 수가 공동 최다인 분석 대상 열 수",
            "d_missing_in": "{c} 열의 결측 셀 수",
        },
    },
    "kpi": {
        "en": {
            "d_mean": "Average {m} per row",
            "d_total": "Sum of {m} over all rows",
            "d_outcome": "Rate of {m} (share of 1s)",
            "d_min": "Minimum {m}",
            "d_max": "Maximum {m}",
            "d_rate": "{label} recomputed from its parts",
            "d_sentinel": "Sentinel code of {m} (a code such as 99999, left out of its statistics)",
            "f_sentinel": "the profile's sentinel rule: a repeated code far outside the other values",
        },
        "ko": {
            "d_mean": "행당 {m} 평균",
            "d_total": "{m} 합계",
            "d_outcome": "{m} 비율(1의 비중)",
            "d_min": "{m} 최솟값",
            "d_max": "{m} 최댓값",
            "d_rate": "구성 요소로 다시 계산한 {label}",
            "d_sentinel": "{m}의 코드 값(99999 같은 코드, 통계에서 제외)",
            "f_sentinel": "프로필의 코드 값 규칙: 다른 값들과 멀리 떨어져 반복되는 코드",
        },
    },
    "breakdown": {
        "en": {
            "d_groups": "Number of {by} groups",
            "d_top": "{by} group with the highest {what}",
            "d_value": "{what} for {by} = {g}",
            "d_share": "Share of {by} = {g} in the total",
            "d_rate": "{label} for {g}",
            "d_bottom": "{by} group with the lowest {what}",
            "d_bottom_value": "{what} of the lowest {by} group",
            "d_driver": "How much of the variation in {m} {by} explains, against the plan's other breakdowns",
            "f_driver": "eta squared (between-group over total sum of squares) of {m} at row level by each of: "
            "{candidates}",
            "d_concentration": "How concentrated the {what} of {m} is across the {by} groups",
            "f_concentration": "share of the largest group and HHI (sum of squared % shares) of the group totals",
            "d_comparison": "Average {m}: {a} against {b}",
            "f_comparison": "Welch's t test of the two groups' means, 95% interval of the difference",
        },
        "ko": {
            "d_groups": "{by} 그룹 수",
            "d_top": "{what} 기준 가장 큰 {by} 그룹",
            "d_value": "{by} = {g}의 {what}",
            "d_share": "전체 중 {by} = {g}의 비중",
            "d_rate": "{g}의 {label}",
            "d_bottom": "{what} 기준 가장 작은 {by} 그룹",
            "d_bottom_value": "가장 작은 {by} 그룹의 {what}",
            "d_driver": "계획의 다른 구분과 비교해 {by}이(가) 설명하는 {m} 변동의 비중",
            "f_driver": "행 단위 {m}의 에타 제곱(그룹 간 제곱합 / 전체 제곱합), 구분: {candidates}",
            "d_concentration": "{by} 그룹별 {m} {what}의 집중도",
            "f_concentration": "최대 그룹의 비중과 그룹 합계의 HHI(비중(%) 제곱의 합)",
            "d_comparison": "평균 {m}: {a} 대 {b}",
            "f_comparison": "두 그룹 평균의 Welch t 검정, 차이의 95% 구간",
        },
    },
    "trend": {
        "en": {
            "d_periods": "Number of {period} periods in {date}",
            "d_first": "First {period} period",
            "d_last": "Last {period} period",
            "d_first_value": "{what} in the first period",
            "d_last_value": "{what} in the last period",
            "d_change": "Change of {what} from the first to the last period",
            "d_peak": "Period with the highest {what}",
            "d_peak_value": "Highest {what} in one period",
            "d_peak_tied": "Number of {period} periods tied for the highest {what}",
            "d_weekend": "Weekend share of {what}",
            "d_from": "First complete {period} period",
            "d_to": "Last complete {period} period",
            "d_from_value": "{what} in the first complete period",
            "d_to_value": "{what} in the last complete period",
            "d_change_complete": "Change of {what} from the first to the last complete period",
            "d_first_per_day": "{what} per observed day in the first period",
            "d_last_per_day": "{what} per observed day in the last period",
            "d_change_per_day": "Change of {what} per observed day from the first to the last period",
            "d_trend": "Trend of {what} per {period} over {date}",
            "f_trend": "Kendall tau-b and Theil-Sen slope of the values per {period}, in period order; CV and "
            "largest swing",
        },
        "ko": {
            "d_periods": "{date}의 {period} 기간 수",
            "d_first": "첫 {period} 기간",
            "d_last": "마지막 {period} 기간",
            "d_first_value": "첫 기간의 {what}",
            "d_last_value": "마지막 기간의 {what}",
            "d_change": "첫 기간 대비 마지막 기간 {what} 변화율",
            "d_peak": "{what} 기준 가장 높은 기간",
            "d_peak_value": "한 기간의 최고 {what}",
            "d_peak_tied": "{what} 최고값이 같은 {period} 기간 수",
            "d_weekend": "{what} 중 주말 비중",
            "d_from": "완전한 첫 {period} 기간",
            "d_to": "완전한 마지막 {period} 기간",
            "d_from_value": "완전한 첫 기간의 {what}",
            "d_to_value": "완전한 마지막 기간의 {what}",
            "d_change_complete": "완전한 첫 기간 대비 마지막 기간 {what} 변화율",
            "d_first_per_day": "첫 기간의 관측일 하루당 {what}",
            "d_last_per_day": "마지막 기간의 관측일 하루당 {what}",
            "d_change_per_day": "첫 기간 대비 마지막 기간 관측일 하루당 {what} 변화율",
            "d_trend": "{date} 기준 {period} {what}의 추세",
            "f_trend": "기간 순서에 따른 {period} 값의 Kendall tau-b와 Theil-Sen 기울기, 변동계수와 최대 변동폭",
        },
    },
    "correlation": {
        "en": {
            "d_n": "Rows with both {x} and {y}",
            "d_r": "Pearson correlation of {x} and {y}",
            "d_r2": "Variance explained (r squared) between {x} and {y}",
            "d_claim": "Correlation of {x} and {y}: strength, and whether a few extreme points drive it",
            "f_claim": "Pearson r and Spearman rho over the rows where both are present; r again without the points "
            "whose Cook's distance exceeds 4/n",
        },
        "ko": {
            "d_n": "{x}와(과) {y}가 모두 있는 행 수",
            "d_r": "{x}와(과) {y}의 피어슨 상관계수",
            "d_r2": "{x}와(과) {y} 사이 설명된 분산(r 제곱)",
            "d_claim": "{x}와(과) {y}의 상관: 강도와 소수의 극단값에 좌우되는지 여부",
            "f_claim": "두 값이 모두 있는 행의 피어슨 r과 스피어만 rho, 쿡의 거리가 4/n을 넘는 점을 뺀 r",
        },
    },
    "distribution": {
        "en": {
            "d_median": "Median of {m}",
            "d_p90": "90th percentile of {m}",
            "d_q1": "First quartile of {m}",
            "d_q3": "Third quartile of {m}",
            "d_std": "Standard deviation of {m} (sample)",
            "d_outliers": "Values of {m} beyond the IQR fences",
            "d_outlier_share": "Share of the values of {m} beyond the IQR fences",
            "d_outlier": "Whether the values of {m} beyond the IQR fences move its mean",
            "f_outlier": "values beyond Q1 - 1.5 IQR or Q3 + 1.5 IQR; the mean with and without them",
            "d_sentinel": "Sentinel code of {m} (a code such as 99999, left out of its statistics)",
            "f_sentinel": "the profile's sentinel rule: a repeated code far outside the other values",
        },
        "ko": {
            "d_median": "{m} 중앙값",
            "d_p90": "{m} 90번째 백분위수",
            "d_q1": "{m} 1사분위수",
            "d_q3": "{m} 3사분위수",
            "d_std": "{m} 표준편차(표본)",
            "d_outliers": "{m}의 IQR 경계 밖 값 수",
            "d_outlier_share": "{m}의 IQR 경계 밖 값 비율",
            "d_outlier": "{m}의 IQR 경계 밖 값이 평균을 바꾸는지 여부",
            "f_outlier": "Q1 - 1.5 IQR 미만 또는 Q3 + 1.5 IQR 초과 값, 그 값을 넣고 뺀 평균",
            "d_sentinel": "{m}의 코드 값(99999 같은 코드, 통계에서 제외)",
            "f_sentinel": "프로필의 코드 값 규칙: 다른 값들과 멀리 떨어져 반복되는 코드",
        },
    },
}

PERIOD_WORDS = {
    "en": {"day": "day", "week": "week", "month": "month", "year": "year"},
    "ko": {"day": "일별", "week": "주별", "month": "월별", "year": "연도별"},
}


_PLURALS = {"row has": "rows have", "column has": "columns have", "cell": "cells"}


def counted(n: float, singular: str, language: str = "en") -> str:
    """The words after a count, singular for exactly 1 (``row``/``rows``, ``column has``/``columns have``).

    Korean templates never use these fields (a counter word does not change), so Korean gets "".
    """
    if language == "ko":
        return ""
    return singular if n == 1 else _PLURALS.get(singular, singular + "s")


def pick(tx: dict[str, str], key: str, n: float) -> str:
    """The ``<key>_one`` template for a count of exactly 1 when the wording has one, else ``<key>``."""
    return tx.get(f"{key}_one", tx[key]) if n == 1 else tx[key]


def texts(kind: str, language: str) -> dict[str, str]:
    """The wording for one analysis kind in ``language`` (``ko`` or English)."""
    lang = "ko" if language == "ko" else "en"
    return {**TEXTS[kind][lang], **DESCRIPTIONS[kind][lang]}
