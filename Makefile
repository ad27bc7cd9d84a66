# evalcore: `make demo` runs the main job, `make test` runs the whole test suite.
# Both set everything up on a fresh machine first (virtual environment at .venv).
SHELL := /bin/bash
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
PIP := $(PY) -m pip
STAMP := $(VENV)/.evalcore-installed

.PHONY: install system-deps test unit integration notebooks demo bench clean

$(STAMP): pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PIP) install -q --upgrade pip
	# The CPU build of torch first: a plain `torch` would pull CUDA packages.
	$(PIP) install -q torch==2.13.0
	$(PIP) install -q -e '.[all]'
	$(PY) -m ipykernel install --sys-prefix --name python3 --display-name "Python 3 (evalcore)" >/dev/null
	touch $@

install: $(STAMP)

# Chromium (PDF export) and poppler-utils (PDF checks) come from Debian; skipped with a
# message where apt-get is not available or we are not root.
system-deps:
	@if command -v chromium >/dev/null && command -v pdftoppm >/dev/null; then \
	  echo "chromium and poppler-utils present"; \
	elif [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
	  (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium poppler-utils >/dev/null) \
	    || echo "could not install chromium/poppler-utils: HTML reports only"; \
	else echo "chromium not installed (apt-get install chromium poppler-utils): HTML reports only"; fi

test: $(STAMP) system-deps
	$(PY) -m pytest -m "" -q

unit: $(STAMP)
	$(PY) -m pytest -q

integration: $(STAMP)
	$(PY) -m pytest -m integration -q

notebooks: $(STAMP) system-deps
	$(PY) -m pytest -m notebooks -q

demo: $(STAMP) system-deps
	$(VENV)/bin/evalcore notebooks run --suite params/suite.yaml

bench: $(STAMP)
	for f in benchmarks/bench_*.py; do echo "== $$f"; $(PY) $$f || exit 1; done

clean:
	rm -rf $(VENV) reports/2* reports/latest .pytest_cache
