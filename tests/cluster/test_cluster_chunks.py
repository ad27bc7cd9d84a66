"""Issue 38: adaptive chunk sizes for code verdicts on a cluster (``chunk_size=None``).

The sizer grows the chunks while the per-chunk overhead the workers measure is a noticeable share
of a chunk's compute time, within the bounds that keep the last chunks small; a fixed size stays
fixed; and the results file does not depend on how the samples were cut.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from _cluster_helpers import corpus_rows, write_samples
from evalcore.cluster._verdicts import DEFAULT_CHUNK_SIZE, MAX_CHUNK_SIZE, TARGET_OVERHEAD, ChunkSizer

pytestmark = pytest.mark.timeout(300)


def test_sizer_grows_with_the_measured_overhead() -> None:
    sizer = ChunkSizer(64, 100_000, threads=2, fixed=False)
    sizer.observe(64, 64 * 0.01, None)  # a worker's first chunk: no gap yet
    assert sizer.size == 64
    sizer.observe(64, 64 * 0.01, 0.1)  # 100 ms between chunks, 10 ms a sample
    # n = g / (TARGET * c) = 0.1 / (0.02 * 0.01) = 500
    assert sizer.size == round(0.1 / (TARGET_OVERHEAD * 0.01)) == 500


def test_sizer_stays_at_the_start_when_the_overhead_is_small() -> None:
    sizer = ChunkSizer(64, 100_000, threads=2, fixed=False)
    for _ in range(5):
        sizer.observe(64, 64 * 0.01, 0.002)  # 2 ms a chunk: 0.3 % of a 64-sample chunk
    assert sizer.size == DEFAULT_CHUNK_SIZE


def test_sizer_is_bounded_by_the_cap_and_by_what_is_left() -> None:
    sizer = ChunkSizer(64, 1_000_000, threads=2, fixed=False)
    sizer.observe(64, 64 * 0.001, 5.0)  # a huge gap: capped
    assert sizer.size == MAX_CHUNK_SIZE
    sizer.take(1_000_000 - 2_000)  # 2,000 left over 2 threads: at most 2000 / 8 = 250
    sizer.observe(64, 64 * 0.001, 5.0)
    assert sizer.size == 250
    sizer.take(1_990)  # 10 left: back to the start, never below it
    sizer.observe(64, 64 * 0.001, 5.0)
    assert sizer.size == 64


def test_a_fixed_size_stays_fixed() -> None:
    sizer = ChunkSizer(5, 10_000, threads=2, fixed=True)
    sizer.observe(5, 0.01, 3.0)
    assert sizer.size == 5


def test_adaptive_chunks_write_the_same_results_as_fixed_ones(tmp_path: Path, local_client: object) -> None:
    from distributed import get_task_stream

    from evalcore.cluster import score_samples_file_on_cluster
    from evalcore.evaluators._humaneval_files import results_path

    rows = corpus_rows(123)
    fixed = write_samples(tmp_path / "fixed.jsonl", rows)
    adaptive = write_samples(tmp_path / "adaptive.jsonl", rows)
    a = score_samples_file_on_cluster(fixed, cluster=local_client, ks=(1,), timeout_s=10, chunk_size=3)
    with get_task_stream(local_client) as stream:  # type: ignore[arg-type]
        b = score_samples_file_on_cluster(adaptive, cluster=local_client, ks=(1,), timeout_s=10)
    assert a == b
    assert results_path(fixed).read_bytes() == results_path(adaptive).read_bytes()
    got = [json.loads(line) for line in results_path(adaptive).read_text(encoding="utf-8").splitlines()]
    assert [(r["task_id"], r["completion"]) for r in got] == [(r["task_id"], r["completion"]) for r in rows]
    chunks = [t for t in stream.data if str(t["key"]).startswith("evalcore-verdicts-")]
    # 123 samples: chunks of the starting size (64) at most; never smaller, so two at most
    assert 1 <= len(chunks) <= 2
