"""evalcore.reporting: notebook records, figures, HTML/PDF export and the papermill suite runner.

- :func:`record` / :func:`collect`: publish key numbers from a notebook; gather many
  executed notebooks into one DataFrame with their papermill parameters.
- :func:`save_figure`: PNG next to the records.
- :func:`export_notebook`, :func:`notebook_to_html`, :func:`html_to_pdf`, :func:`report`.
- :func:`run_suite`: the runner behind ``evalcore notebooks run``.
- Views of one run (:func:`samples_frame`, :func:`accuracy_table`, :func:`extraction_audit`,
  ...) and of several (:func:`compare_runs`, :func:`power_table`, ...) used by the notebooks.
"""

from evalcore.reporting._benchmark_views import (
    accuracy_table,
    audit_examples,
    benchmark_records,
    extraction_audit,
    extraction_methods,
    latency_cost_figure,
    pass_at_k_table,
    pass_fail_figure,
    pass_fail_grid,
    run_overview,
    sample_table,
    samples_frame,
    subject_figure,
    subject_table,
    usage_summary,
)
from evalcore.reporting._compare_views import (
    compare_records,
    compare_runs,
    difference_figure,
    item_scores,
    load_item_scores,
    power_notes,
    power_table,
    shared_items,
)
from evalcore.reporting._export import (
    ExportResult,
    export_notebook,
    extract_figures,
    find_chromium,
    html_to_pdf,
    notebook_to_html,
)
from evalcore.reporting._figures import figures_dir, save_figure
from evalcore.reporting._record import (
    RECORD_DIR_ENV,
    RECORD_MIMETYPE,
    collect,
    notebook_parameters,
    read_records,
    record,
    record_dir,
    to_native,
)
from evalcore.reporting._report import report
from evalcore.reporting._runner import (
    EntryResult,
    SuiteResult,
    run_suite,
    summary_frame,
)
from evalcore.reporting._suite import (
    SuiteEntry,
    find_root,
    load_smoke,
    load_suite,
    project_path,
)

__all__ = [
    "RECORD_DIR_ENV",
    "RECORD_MIMETYPE",
    "EntryResult",
    "ExportResult",
    "SuiteEntry",
    "SuiteResult",
    "accuracy_table",
    "audit_examples",
    "benchmark_records",
    "collect",
    "compare_records",
    "compare_runs",
    "difference_figure",
    "export_notebook",
    "extract_figures",
    "extraction_audit",
    "extraction_methods",
    "figures_dir",
    "find_chromium",
    "find_root",
    "html_to_pdf",
    "item_scores",
    "latency_cost_figure",
    "load_item_scores",
    "load_smoke",
    "load_suite",
    "notebook_parameters",
    "notebook_to_html",
    "pass_at_k_table",
    "pass_fail_figure",
    "pass_fail_grid",
    "power_notes",
    "power_table",
    "project_path",
    "read_records",
    "record",
    "record_dir",
    "report",
    "run_overview",
    "run_suite",
    "sample_table",
    "samples_frame",
    "save_figure",
    "shared_items",
    "subject_figure",
    "subject_table",
    "summary_frame",
    "to_native",
    "usage_summary",
]
