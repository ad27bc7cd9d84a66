# evalcore: `make demo` runs the main job, `make test` runs the whole test suite.
# Both set everything up on a fresh machine first (virtual environment at .venv).
SHELL := /bin/bash
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
PIP := $(PY) -m pip
STAMP := $(VENV)/.evalcore-installed

.PHONY: install system-deps test unit integration notebooks lint demo bench clean

# Each step says what it does and how long it took (the llama-cpp-python build is silent for
# minutes: pip compiles llama.cpp from source unless it has a wheel of it cached).
STEP_FN = step() { echo "==> $$1"; t0=$$(date +%s); shift; "$$@" || return $$?; \
	echo "    done in $$(( $$(date +%s) - t0 )) s"; }

$(STAMP): pyproject.toml
	@echo "==> setting up $(VENV): evalcore with its extras (HF datasets, the local model, embeddings, tests, JupyterLab)"
	@$(STEP_FN); setup_t0=$$(date +%s); \
	step "virtual environment $(VENV)" bash -c 'test -x $(PY) || $(PYTHON) -m venv $(VENV)' && \
	step "upgrading pip" $(PIP) install -q --upgrade pip && \
	step "torch 2.13.0, CPU build (a plain torch would pull CUDA packages)" $(PIP) install -q torch==2.13.0 && \
	if $(PY) -c 'import llama_cpp' 2>/dev/null; then \
	  echo "==> llama-cpp-python: already installed"; \
	elif $(PIP) cache list 2>/dev/null | grep -qi 'llama_cpp_python'; then \
	  echo "==> llama-cpp-python: pip has a built wheel cached (no compile)"; \
	else \
	  echo "==> building llama-cpp-python from source (about 7 min on 2 cores; no output while it compiles)"; \
	fi && \
	step "evalcore and its dependencies: pip install -e '.[all]' (the llama-cpp-python build is part of this step)" \
	  $(PIP) install -q -e '.[all]' && \
	step "Jupyter kernel 'Python 3 (evalcore)' in $(VENV)" \
	  $(PY) -m ipykernel install --sys-prefix --name python3 --display-name "Python 3 (evalcore)" && \
	echo "==> set-up done in $$(( $$(date +%s) - setup_t0 )) s" && \
	touch $@

install: $(STAMP)

# Chromium (PDF export) and poppler-utils (PDF checks) come from Debian; skipped with a
# message where apt-get is not available or we are not root.
# Debian's Chromium prints the PDF reports and runs the JupyterLab browser test
# (tests/reporting/test_jupyterlab_browser.py, Playwright with executable_path=/usr/bin/chromium:
# no browser is downloaded); poppler-utils checks the PDFs
system-deps:
	@if command -v chromium >/dev/null && command -v pdftoppm >/dev/null; then \
	  echo "chromium and poppler-utils present"; \
	elif [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
	  (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium poppler-utils >/dev/null) \
	    || echo "could not install chromium/poppler-utils: HTML reports only, the JupyterLab browser test skipped"; \
	else echo "chromium not installed (apt-get install chromium poppler-utils): HTML reports only, the JupyterLab browser test skipped"; fi

# every test, in TEST_WORKERS pytest-xdist processes, each test file in one process (a module's
# fixture, such as the notebook suite run, is made once); most tests wait on child processes,
# so two processes on 2 cores take about half the time of one. Then, alone, the tests marked
# serial: they measure the CPU share a sample keeps beside spinners pinned to the other CPU, and
# a test of the other process beside them lands on the measured CPU (the kernel places it away
# from the 32 spinners), which once failed CI at 58% where 80% is asked
TEST_WORKERS ?= 2
test: $(STAMP) system-deps
	$(PY) -m pytest -m "not serial" -q -n $(TEST_WORKERS) --dist loadfile
	$(PY) -m pytest -m serial -q

# everything but the notebook, real-model/real-server and slow tests (README: "Tests"), in
# UNIT_WORKERS pytest-xdist processes: most of these tests wait (timeouts, child processes), so
# 4 on 2 cores halves the time; `make test` runs every test, in TEST_WORKERS processes
UNIT_WORKERS ?= 4
unit: $(STAMP)
	$(PY) -m pytest -q -n $(UNIT_WORKERS) -m "not integration and not notebooks and not slow"

# the static checks alone (make test runs them too, as tests/test_static_checks.py)
lint: $(STAMP)
	$(VENV)/bin/ruff check evalcore tests
	$(VENV)/bin/ruff format --check evalcore tests
	$(VENV)/bin/mypy evalcore

integration: $(STAMP)
	$(PY) -m pytest -m integration -q

notebooks: $(STAMP) system-deps
	$(PY) -m pytest -m notebooks -q

demo: $(STAMP) system-deps
	@echo "==> running the notebook suite params/suite.yaml (about 5 min on 2 cores when quiet; a progress line every 30 s)"
	$(VENV)/bin/evalcore notebooks run --suite params/suite.yaml
	@echo "==> to open the notebooks in JupyterLab (kernel 'Python 3 (evalcore)'), from this folder: $(VENV)/bin/jupyter lab$$( [ "$$(id -u)" = 0 ] && echo ' --allow-root')"

bench: $(STAMP)
	for f in benchmarks/bench_*.py; do echo "== $$f"; $(PY) $$f || exit 1; done

clean:
	rm -rf $(VENV) reports/2* reports/latest reports/latest-partial .pytest_cache
