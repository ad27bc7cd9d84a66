"""evalcore.reporting: notebook records, figures, HTML/PDF export and the notebook-suite runner (papermill).

- :func:`record` / :func:`collect`: publish key numbers from a notebook; gather many
  executed notebooks into one DataFrame with their papermill parameters.
- :func:`save_figure`: PNG next to the records; :func:`no_figure`: the sentence shown instead
  of an empty figure.
- :func:`format_table`: a DataFrame as a report shows it (formatted numbers, no index);
  :func:`shown_path`: a path as a report prints it (relative, never an absolute machine path).
- :func:`export_notebook`, :func:`notebook_to_html`, :func:`html_to_pdf`, :func:`report`.
- :func:`run_notebooks`: runs a notebook suite (the papermill batch behind ``evalcore notebooks run``).
- :func:`write_sample_browser`: a run's offline sample browser (``evalcore browse RUN_DIR``).
- Views of one run (:func:`samples_frame`, :func:`accuracy_table`, :func:`extraction_audit`,
  ...) and of several (:func:`compare_runs`, :func:`power_table`, ...) used by the notebooks.
"""

from evalcore._lazy import lazy_exports

_EXPORTS = {
    "evalcore.reporting._agent_views": ("combine_agent_results",),
    "evalcore.reporting._benchmark_views": (
        "CODE_COLUMNS",
        "accuracy_table",
        "audit_examples",
        "benchmark_records",
        "extraction_audit",
        "extraction_methods",
        "latency_cost_figure",
        "latency_cost_notes",
        "pass_at_k_frame",
        "pass_fail_figure",
        "pass_fail_grid",
        "pass_fail_table",
        "run_overview",
        "sample_table",
        "samples_frame",
        "subject_figure",
        "subject_table",
        "usage_summary",
    ),
    "evalcore.reporting._browser": (
        "sample_browser_html",
        "sample_browser_link",
        "sample_browsers_section",
        "suite_sample_browsers",
        "write_sample_browser",
    ),
    "evalcore.reporting._compare_views": (
        "compare_records",
        "compare_runs",
        "difference_figure",
        "item_scores",
        "power_notes",
        "power_table",
        "shared_items",
    ),
    "evalcore.reporting._export": (
        "ExportResult",
        "export_notebook",
        "extract_figures",
        "find_chromium",
        "html_to_pdf",
        "notebook_to_html",
        "pdf_layout_problems",
    ),
    "evalcore.reporting._figures": ("figures_dir", "no_figure", "save_figure"),
    "evalcore.reporting._tables": ("docstring_markdown", "format_number", "format_table", "shown_path"),
    "evalcore.reporting._record": (
        "RECORD_DIR_ENV",
        "RECORD_MIMETYPE",
        "collect",
        "notebook_parameters",
        "read_records",
        "record",
        "record_dir",
        "reports_root",
        "shared_agent_seed",
        "agent_seed_note",
    ),
    "evalcore.reporting._headline": ("Headline", "headline", "headline_tables"),
    "evalcore.reporting._report": ("report",),
    "evalcore.reporting._notebooks": ("EntryResult", "NotebookSuiteResult", "run_notebooks", "summary_frame"),
    "evalcore.reporting._notebook_suite": (
        "NotebookEntry",
        "find_root",
        "load_smoke",
        "load_notebook_suite",
        "project_path",
    ),
}

__all__, __getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
