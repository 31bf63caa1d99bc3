# `make run` and `make test` each create or refresh .venv first.
PYTHON ?= python3
VENV   ?= .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed-stamp

.PHONY: venv run test simulate clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -e '.[dev,plot]'
	touch $(STAMP)

venv: $(STAMP)

run: venv
	$(VENV)/bin/berth demo -f examples/cluster-small.yaml --filter-workers 1

# pytest exits 5 when it collects nothing; that is reported, not hidden.
test: venv
	$(PY) -m pytest $(PYTEST_ARGS); rc=$$?; \
	if [ $$rc -eq 5 ]; then echo "pytest collected no tests"; fi; exit $$rc

clean:
	rm -rf $(VENV) .pytest_cache .hypothesis
