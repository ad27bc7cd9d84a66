"""Every statistic's docstring names its source, as the metrics' do (issue 32 item 6)."""

from __future__ import annotations

import inspect

import pytest

from evalcore import runs, stats
from evalcore.evaluators import _pass_at_k
from evalcore.stats import _intervals, _multiple, _paired, _power, _resample, _wilson

SOURCES = [
    (stats.holm, ["Holm 1979"]),
    (stats.benjamini_hochberg, ["Benjamini", "Hochberg 1995"]),
    (stats.wilson_interval, ["Wilson 1927"]),
    (stats.clustered_wilson, ["Wilson 1927", "Kish"]),
    (stats.mean_ci, ["Wilson 1927", "Student", "1908", "Efron 1987"]),
    (stats.bootstrap_interval, ["Efron 1979", "Efron 1987"]),
    (stats.mcnemar, ["McNemar 1947"]),
    (stats.wilcoxon, ["Wilcoxon 1945"]),
    (stats.paired_t, ["Student 1908"]),
    (stats.mean_difference, ["Student 1908"]),
    (stats.paired_bootstrap, ["Efron 1979", "Efron 1987"]),
    (stats.permutation_test, ["Fisher 1935"]),
    (stats.cohens_d_paired, ["Cohen 1988"]),
    (stats.clustered_difference, ["Cameron & Miller 2015", "Miller 2024"]),
    (stats.clustered_se, ["Miller 2024"]),
    (stats.compare, ["McNemar 1947", "Student 1908", "Wilcoxon 1945"]),
    (stats.compare_many, ["Holm 1979", "Hochberg 1995"]),
    (_resample.bca_interval_mean, ["Efron 1987"]),
    (_resample.percentile_interval, ["Efron 1979"]),
    (_pass_at_k.pass_at_k, ["Chen et", "2021"]),
    (_pass_at_k.estimate_pass_at_k, ["Chen et", "2021"]),
    (runs.pass_at_k_table, ["Chen et al., 2021"]),
]

# the module docstrings carry the full references (title and journal)
REFERENCES = [
    (_multiple, ["Scandinavian Journal of Statistics", "Journal of the Royal Statistical Society B"]),
    (_wilson, ["Journal of the American Statistical Association"]),
    (
        _paired,
        [
            "Biometrika",
            "Biometrics Bulletin",
            "Psychometrika",
            "Annals of Statistics",
            "Better bootstrap confidence intervals",
        ],
    ),
    (_resample, ["Bootstrap methods: another look at the jackknife", "Better bootstrap confidence intervals"]),
    (_intervals, ["Probable inference", "cluster-robust inference", "Adding error bars to evals"]),
    (_power, ["Statistical Power Analysis"]),
]


@pytest.mark.parametrize("func,needles", SOURCES, ids=lambda v: getattr(v, "__name__", ""))
def test_docstring_cites_its_source(func, needles):
    doc = " ".join(inspect.getdoc(func).split())
    missing = [n for n in needles if n not in doc]
    assert missing == [], f"{func.__module__}.{func.__name__} does not cite {missing}"


@pytest.mark.parametrize("module,needles", REFERENCES, ids=lambda v: getattr(v, "__name__", ""))
def test_module_docstring_gives_the_full_reference(module, needles):
    doc = " ".join((module.__doc__ or "").split())
    assert [n for n in needles if n not in doc] == []
