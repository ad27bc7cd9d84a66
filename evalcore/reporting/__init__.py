"""evalcore.reporting: notebook records, figures, HTML/PDF export and the papermill suite runner.

- :func:`record` / :func:`collect`: publish key numbers from a notebook; gather many
  executed notebooks into one DataFrame with their papermill parameters.
- :func:`save_figure`: PNG next to the records.
- :func:`export_notebook`, :func:`notebook_to_html`, :func:`html_to_pdf`, :func:`report`.
- :func:`run_suite`: the runner behind ``evalcore notebooks run``.
"""

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
from evalcore.reporting._runner import EntryResult, SuiteResult, run_suite, summary_frame
from evalcore.reporting._suite import SuiteEntry, load_smoke, load_suite

__all__ = [
    "RECORD_DIR_ENV",
    "RECORD_MIMETYPE",
    "record",
    "record_dir",
    "collect",
    "read_records",
    "notebook_parameters",
    "to_native",
    "save_figure",
    "figures_dir",
    "ExportResult",
    "export_notebook",
    "notebook_to_html",
    "html_to_pdf",
    "extract_figures",
    "find_chromium",
    "report",
    "EntryResult",
    "SuiteResult",
    "run_suite",
    "summary_frame",
    "SuiteEntry",
    "load_suite",
    "load_smoke",
]
