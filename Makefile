# `make run` and `make test` each create or refresh .venv first.
PYTHON ?= python3
VENV   ?= .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed-stamp

.PHONY: venv browser run lint test simulate clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -e '.[dev,plot]'
	touch $(STAMP)

venv: $(STAMP)

run: venv
	$(VENV)/bin/berth demo -f examples/cluster-small.yaml

# The web view's tests drive Debian's Chromium; as root it is installed here, elsewhere they say
# why they skip (apt-get install chromium chromium-driver).
browser:
	@if command -v chromium >/dev/null && command -v chromedriver >/dev/null; then :; \
	elif [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
		apt-get install -y -q chromium chromium-driver >/dev/null 2>&1 || \
		(apt-get update -q >/dev/null 2>&1 && apt-get install -y -q chromium chromium-driver >/dev/null 2>&1) || \
		echo "could not install chromium: the web view's browser tests will skip"; \
	else echo "chromium is not installed: the web view's browser tests will skip"; fi

# ruff (lint and import order) and mypy (pyproject.toml configures both) must pass before the tests run.
lint: venv
	$(VENV)/bin/ruff check .
	$(VENV)/bin/mypy

# pytest exits 5 when it collects nothing; that is reported, not hidden.
test: venv browser lint
	$(PY) -m pytest $(PYTEST_ARGS); rc=$$?; \
	if [ $$rc -eq 5 ]; then echo "pytest collected no tests"; fi; exit $$rc

clean:
	rm -rf $(VENV) .pytest_cache .hypothesis
