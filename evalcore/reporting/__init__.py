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

from typing import TYPE_CHECKING

from evalcore._lazy import lazy_exports

if TYPE_CHECKING:
    from evalcore.reporting._agent_views import combine_agent_results as combine_agent_results
    from evalcore.reporting._benchmark_views import CODE_COLUMNS as CODE_COLUMNS
    from evalcore.reporting._benchmark_views import accuracy_table as accuracy_table
    from evalcore.reporting._benchmark_views import audit_examples as audit_examples
    from evalcore.reporting._benchmark_views import benchmark_records as benchmark_records
    from evalcore.reporting._benchmark_views import extraction_audit as extraction_audit
    from evalcore.reporting._benchmark_views import extraction_methods as extraction_methods
    from evalcore.reporting._benchmark_views import latency_cost_figure as latency_cost_figure
    from evalcore.reporting._benchmark_views import latency_cost_notes as latency_cost_notes
    from evalcore.reporting._benchmark_views import pass_at_k_frame as pass_at_k_frame
    from evalcore.reporting._benchmark_views import pass_fail_figure as pass_fail_figure
    from evalcore.reporting._benchmark_views import pass_fail_grid as pass_fail_grid
    from evalcore.reporting._benchmark_views import pass_fail_table as pass_fail_table
    from evalcore.reporting._benchmark_views import run_overview as run_overview
    from evalcore.reporting._benchmark_views import sample_table as sample_table
    from evalcore.reporting._benchmark_views import samples_frame as samples_frame
    from evalcore.reporting._benchmark_views import subject_figure as subject_figure
    from evalcore.reporting._benchmark_views import subject_table as subject_table
    from evalcore.reporting._benchmark_views import usage_summary as usage_summary
    from evalcore.reporting._browser import sample_browser_html as sample_browser_html
    from evalcore.reporting._browser import sample_browser_link as sample_browser_link
    from evalcore.reporting._browser import sample_browsers_section as sample_browsers_section
    from evalcore.reporting._browser import suite_sample_browsers as suite_sample_browsers
    from evalcore.reporting._browser import write_sample_browser as write_sample_browser
    from evalcore.reporting._compare_views import compare_records as compare_records
    from evalcore.reporting._compare_views import compare_runs as compare_runs
    from evalcore.reporting._compare_views import difference_figure as difference_figure
    from evalcore.reporting._compare_views import item_scores as item_scores
    from evalcore.reporting._compare_views import power_notes as power_notes
    from evalcore.reporting._compare_views import power_table as power_table
    from evalcore.reporting._compare_views import shared_items as shared_items
    from evalcore.reporting._export import CHROMIUM_HINT as CHROMIUM_HINT
    from evalcore.reporting._export import ExportResult as ExportResult
    from evalcore.reporting._export import export_notebook as export_notebook
    from evalcore.reporting._export import extract_figures as extract_figures
    from evalcore.reporting._export import find_chromium as find_chromium
    from evalcore.reporting._export import html_to_pdf as html_to_pdf
    from evalcore.reporting._export import notebook_to_html as notebook_to_html
    from evalcore.reporting._export import pdf_layout_problems as pdf_layout_problems
    from evalcore.reporting._figures import figures_dir as figures_dir
    from evalcore.reporting._figures import no_figure as no_figure
    from evalcore.reporting._figures import save_figure as save_figure
    from evalcore.reporting._headline import Headline as Headline
    from evalcore.reporting._headline import headline as headline
    from evalcore.reporting._headline import headline_tables as headline_tables
    from evalcore.reporting._notebook_index import write_index as write_index
    from evalcore.reporting._notebook_kernel import AGENT_SEED_FILE as AGENT_SEED_FILE
    from evalcore.reporting._notebook_kernel import suite_agent_seed as suite_agent_seed
    from evalcore.reporting._notebook_suite import NotebookEntry as NotebookEntry
    from evalcore.reporting._notebook_suite import find_root as find_root
    from evalcore.reporting._notebook_suite import load_notebook_suite as load_notebook_suite
    from evalcore.reporting._notebook_suite import load_smoke as load_smoke
    from evalcore.reporting._notebook_suite import project_path as project_path
    from evalcore.reporting._notebook_suite import substitute as substitute
    from evalcore.reporting._notebooks import EntryResult as EntryResult
    from evalcore.reporting._notebooks import NotebookSuiteResult as NotebookSuiteResult
    from evalcore.reporting._notebooks import format_duration as format_duration
    from evalcore.reporting._notebooks import run_notebooks as run_notebooks
    from evalcore.reporting._notebooks import run_suite_entry as run_suite_entry
    from evalcore.reporting._notebooks import summary_frame as summary_frame
    from evalcore.reporting._record import RECORD_DIR_ENV as RECORD_DIR_ENV
    from evalcore.reporting._record import RECORD_MIMETYPE as RECORD_MIMETYPE
    from evalcore.reporting._record import agent_seed_note as agent_seed_note
    from evalcore.reporting._record import collect as collect
    from evalcore.reporting._record import notebook_outputs as notebook_outputs
    from evalcore.reporting._record import notebook_parameters as notebook_parameters
    from evalcore.reporting._record import read_records as read_records
    from evalcore.reporting._record import record as record
    from evalcore.reporting._record import record_dir as record_dir
    from evalcore.reporting._record import reports_root as reports_root
    from evalcore.reporting._record import shared_agent_seed as shared_agent_seed
    from evalcore.reporting._report import report as report
    from evalcore.reporting._tables import docstring_markdown as docstring_markdown
    from evalcore.reporting._tables import format_number as format_number
    from evalcore.reporting._tables import format_table as format_table
    from evalcore.reporting._tables import shown_path as shown_path

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
        "CHROMIUM_HINT",
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
        "notebook_outputs",
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
    "evalcore.reporting._notebooks": (
        "EntryResult",
        "NotebookSuiteResult",
        "format_duration",
        "run_notebooks",
        "run_suite_entry",
        "summary_frame",
    ),
    "evalcore.reporting._notebook_suite": (
        "NotebookEntry",
        "find_root",
        "load_smoke",
        "load_notebook_suite",
        "project_path",
        "substitute",
    ),
    # the suite's pieces an executor that runs entries elsewhere needs (cluster/_notebooks.py;
    # with run_suite_entry and format_duration above)
    "evalcore.reporting._notebook_kernel": ("AGENT_SEED_FILE", "suite_agent_seed"),
    "evalcore.reporting._notebook_index": ("write_index",),
}

__all__, __getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
