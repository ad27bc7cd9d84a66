"""Pricing table and retry policy."""

from __future__ import annotations

import random
from email.utils import formatdate

import pytest

from evalcore.errors import EvalcoreError
from evalcore.models import Price, RetryPolicy, load_pricing, parse_retry_after, price_for


def test_shipped_table_has_gpt4o_mini_and_cost_formula() -> None:
    table = load_pricing()
    price = price_for("gpt-4o-mini", table)
    assert price == Price(input=0.15, output=0.60)
    # 1000 prompt + 500 completion tokens: (1000*0.15 + 500*0.60) / 1e6
    assert price.cost(1000, 500) == pytest.approx(0.00045)
    # dated snapshot resolves to its family, longest prefix wins (gpt-4o-mini, not gpt-4o)
    assert price_for("gpt-4o-mini-2024-07-18", table) == price
    assert price_for("gpt-4o-2024-08-06", table) == table["gpt-4o"]
    assert price_for("unknown-model", table) is None


def test_override_file_and_env(tmp_path, monkeypatch) -> None:
    f = tmp_path / "prices.yaml"
    f.write_text("models:\n  gpt-4o-mini: {input: 1.0, output: 2.0}\n  mine: {input: 3, output: 4}\n")
    table = load_pricing(f)
    assert table["gpt-4o-mini"] == Price(1.0, 2.0)
    assert table["mine"].cost(1_000_000, 1_000_000) == pytest.approx(7.0)
    assert "gpt-4o" in table  # shipped entries remain
    monkeypatch.setenv("EVALCORE_PRICING", str(f))
    assert load_pricing()["mine"] == Price(3.0, 4.0)


@pytest.mark.parametrize(
    "text, field",
    [
        ("models:\n  x: {input: -1, output: 2}\n", "models.x.input"),
        ("models:\n  x: {input: 1}\n", "models.x.output"),
        ("models:\n  x: {input: 1, output: 2, extra: 3}\n", "models.x"),
        ("prices: {}\n", "models"),
        ("models:\n  x: {input: .nan, output: 2}\n", "models.x.input"),
        ("models:\n  x: {input: 1, output: .inf}\n", "models.x.output"),
    ],
)
def test_bad_override_names_file_and_field(tmp_path, text, field) -> None:
    f = tmp_path / "p.yaml"
    f.write_text(text)
    with pytest.raises(EvalcoreError) as info:
        load_pricing(f)
    assert info.value.field == field and info.value.path == str(f)


def test_missing_override_file(tmp_path) -> None:
    with pytest.raises(EvalcoreError, match="pricing file not found"):
        load_pricing(tmp_path / "nope.yaml")


def test_malformed_override_names_file_and_line(tmp_path) -> None:
    f = tmp_path / "p.yaml"
    f.write_text("models:\n  x: {input: 1, output: 2}\n  y: {input: [1, output: 2}\n")
    with pytest.raises(EvalcoreError, match="malformed YAML") as info:
        load_pricing(f)
    assert info.value.path == str(f) and info.value.line == 3


def test_parse_retry_after_forms() -> None:
    assert parse_retry_after({"Retry-After": "3"}) == 3.0
    assert parse_retry_after({"retry-after": "0.5"}) == 0.5
    assert parse_retry_after({"retry-after-ms": "250", "Retry-After": "9"}) == 0.25
    now = 1_700_000_000.0
    date = formatdate(now + 7, usegmt=True)
    assert parse_retry_after({"Retry-After": date}, now=now) == pytest.approx(7.0, abs=1.0)
    assert parse_retry_after({"Retry-After": formatdate(now - 60, usegmt=True)}, now=now) == 0.0
    assert parse_retry_after({"Retry-After": "soon"}) is None
    assert parse_retry_after({}) is None
    assert parse_retry_after(None) is None


@pytest.mark.parametrize(
    "headers, expected",
    [
        ({"Retry-After": "nan"}, None),
        ({"Retry-After": "inf"}, None),
        ({"Retry-After": "-3"}, 0.0),
        ({"retry-after-ms": "nan", "Retry-After": "2"}, 2.0),
        ({"retry-after-ms": "oops"}, None),
    ],
)
def test_parse_retry_after_rejects_non_finite_waits(headers, expected) -> None:
    # a NaN wait would reach asyncio.sleep; a server cannot mean it, so backoff decides instead
    assert parse_retry_after(headers) == expected


def test_backoff_is_bounded_exponential_with_jitter() -> None:
    policy = RetryPolicy(max_retries=5, base_delay=0.5, max_delay=4.0)
    rng = random.Random(0)
    for attempt in range(8):
        cap = min(4.0, 0.5 * 2**attempt)
        waits = [policy.backoff(attempt, rng) for _ in range(200)]
        assert all(0.0 <= w <= cap for w in waits)
        assert max(waits) > 0.7 * cap  # jitter spreads over the whole range
    assert policy.backoff(0, rng, retry_after=2.5) == 2.5
    assert RetryPolicy(max_retry_after=10).backoff(0, rng, retry_after=100) == 10
