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
            "chart_title": "{title}: leading groups",
            "chart_alt": "Horizontal bar chart of {what} for the leading groups of {by}.",
            "caption": "{title}, leading groups by value.",
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
            "chart_title": "{title}: 상위 그룹",
            "chart_alt": "{by}의 상위 그룹별 {what}을 보여 주는 가로 막대 차트.",
            "caption": "{title}, 값 기준 상위 그룹.",
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
            "r": "The Pearson correlation between `{x}` and `{y}` is {r} over {n} rows: a {strength} {sign} "
            "relationship that explains {r2} of the variance.",
            "none": "`{x}` and `{y}` do not vary enough across {n} rows to measure a correlation.",
            "none_one": "`{x}` and `{y}` are both present in only {n} row, too few to measure a correlation.",
            "strong": "strong",
            "moderate": "moderate",
            "weak": "weak",
            "negligible": "negligible",
            "positive": "positive",
            "negative": "negative",
            "chart_alt": "Scatter chart of `{y}` against `{x}`.",
            "caption": "`{y}` against `{x}`, one point per row.",
            "caption_binned": "`{y}` against `{x}`; each hexagon is shaded by how many rows fall in it, since single "
            "points would hide each other.",
        },
        "ko": {
            "title": "`{x}`와(과) `{y}`의 상관관계",
            "r": "`{x}`와(과) `{y}`의 피어슨 상관계수는 {n}개 행 기준 {r}로, {strength} {sign} 관계이며 분산의 {r2}를 "
            "설명합니다.",
            "none": "{n}개 행에서 `{x}`와(과) `{y}`의 변동이 부족해 상관계수를 계산할 수 없습니다.",
            "strong": "강한",
            "moderate": "중간 정도의",
            "weak": "약한",
            "negligible": "거의 없는",
            "positive": "양의",
            "negative": "음의",
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
            "outliers": "{outliers} values ({share}) fall outside the IQR fences.",
            "outliers_one": "{outliers} value ({share}) falls outside the IQR fences.",
            "chart_alt": "Histogram of `{m}` with the median marked.",
            "caption": "Distribution of `{m}`; the dashed line marks the median.",
            "caption_log": "Distribution of `{m}` on a logarithmic axis, since a few large values would flatten the "
            "rest; the dashed line marks the median.",
            "caption_clipped": "Distribution of `{m}` without its most extreme values, which would flatten the "
            "rest; the dashed line marks the median.",
        },
        "ko": {
            "title": "`{m}` 분포",
            "center": "`{m}` 값의 절반은 중앙값 {median}보다 작고, 열 개 중 하나는 {p90}보다 큽니다.",
            "spread": "가운데 절반은 {q1}부터 {q3} 사이에 있습니다.",
            "std": "표준편차는 {std}입니다.",
            "outliers": "IQR 경계를 벗어난 이상치는 {outliers}개({share})입니다.",
            "chart_alt": "중앙값이 표시된 `{m}` 히스토그램.",
            "caption": "`{m}` 분포, 점선은 중앙값.",
            "caption_log": "`{m}` 분포(일부 큰 값이 나머지를 납작하게 만들어 로그 축 사용), 점선은 중앙값.",
            "caption_clipped": "`{m}` 분포(나머지를 납작하게 만드는 극단값은 축에서 제외), 점선은 중앙값.",
        },
    },
}

DESCRIPTIONS: dict[str, dict[str, dict[str, str]]] = {
    "overview": {
        "en": {
            "d_rows": "Number of rows",
            "d_columns": "Number of columns",
            "d_analysed": "Columns analysed (personal data and identifiers excluded)",
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
            "d_analysed": "분석 대상 열 수(개인정보·식별자 제외)",
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
        },
        "ko": {
            "d_mean": "행당 {m} 평균",
            "d_total": "{m} 합계",
            "d_outcome": "{m} 비율(1의 비중)",
            "d_min": "{m} 최솟값",
            "d_max": "{m} 최댓값",
            "d_rate": "구성 요소로 다시 계산한 {label}",
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
        },
        "ko": {
            "d_groups": "{by} 그룹 수",
            "d_top": "{what} 기준 가장 큰 {by} 그룹",
            "d_value": "{by} = {g}의 {what}",
            "d_share": "전체 중 {by} = {g}의 비중",
            "d_rate": "{g}의 {label}",
            "d_bottom": "{what} 기준 가장 작은 {by} 그룹",
            "d_bottom_value": "가장 작은 {by} 그룹의 {what}",
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
        },
    },
    "correlation": {
        "en": {
            "d_n": "Rows with both {x} and {y}",
            "d_r": "Pearson correlation of {x} and {y}",
            "d_r2": "Variance explained (r squared) between {x} and {y}",
        },
        "ko": {
            "d_n": "{x}와(과) {y}가 모두 있는 행 수",
            "d_r": "{x}와(과) {y}의 피어슨 상관계수",
            "d_r2": "{x}와(과) {y} 사이 설명된 분산(r 제곱)",
        },
    },
    "distribution": {
        "en": {
            "d_median": "Median of {m}",
            "d_p90": "90th percentile of {m}",
            "d_q1": "First quartile of {m}",
            "d_q3": "Third quartile of {m}",
            "d_std": "Standard deviation of {m} (sample)",
            "d_outliers": "IQR outliers in {m}",
            "d_outlier_share": "Share of IQR outliers in {m}",
        },
        "ko": {
            "d_median": "{m} 중앙값",
            "d_p90": "{m} 90번째 백분위수",
            "d_q1": "{m} 1사분위수",
            "d_q3": "{m} 3사분위수",
            "d_std": "{m} 표준편차(표본)",
            "d_outliers": "{m} IQR 이상치 수",
            "d_outlier_share": "{m} IQR 이상치 비율",
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
