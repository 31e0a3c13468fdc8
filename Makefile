# Two commands for a newcomer: `make run` and `make test`. Everything else is a helper.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
# `make run` serves this machine only; `make run HOST=0.0.0.0` serves the network (the Docker image sets it).
HOST ?= 127.0.0.1
PORT ?= 8000
export DATABASE_URL ?= sqlite:///scalecost.db

.PHONY: run test install install-dev migrate seed openapi docs lint fuzz bench bench-compare bench-listing bench-planner bench-stall clean \
	compile-translations translations

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

# The stamp files re-install when pyproject.toml changes.
$(VENV)/.installed: pyproject.toml | $(BIN)/python
	$(BIN)/pip install --quiet -e .
	touch $@

$(VENV)/.installed-dev: pyproject.toml | $(BIN)/python
	$(BIN)/pip install --quiet -e '.[dev]'
	touch $@ $(VENV)/.installed $(VENV)/.installed-docs

install: $(VENV)/.installed
install-dev: $(VENV)/.installed-dev

# The gettext catalogs (service/translations/<locale>/LC_MESSAGES/messages.po) compiled to .mo (not committed).
compile-translations: install
	$(BIN)/pybabel -q compile -d service/translations -D messages

# After changing a message in the code: extract every msgid, merge into the .po files, then translate the new ones
# (tests/api/test_languages.py fails on any missing, empty or fuzzy entry).
translations: install
	$(BIN)/pybabel -q extract -F babel.cfg -k N_ --no-location --omit-header --sort-output \
		-o service/translations/messages.pot service
	$(BIN)/pybabel -q update -i service/translations/messages.pot -d service/translations -D messages \
		--no-fuzzy-matching --omit-header

migrate: install
	$(BIN)/scalecost db upgrade

seed: migrate
	$(BIN)/scalecost catalog seed

run: seed compile-translations
	HOST=$(HOST) PORT=$(PORT) $(BIN)/gunicorn -c service/gunicorn_conf.py 'scalecost:create_app()'

test: install-dev compile-translations
	$(BIN)/scalecost db upgrade
	$(BIN)/scalecost catalog seed
	$(BIN)/pytest

openapi: install
	$(BIN)/scalecost openapi write

# The docs site (mkdocs.yml, pages in docs/, the API reference from openapi.yaml) into site/; offline, and
# --strict makes a broken link or a page left out of the navigation an error.
$(VENV)/.installed-docs: pyproject.toml | $(BIN)/python
	$(BIN)/pip install --quiet -e '.[docs]'
	touch $@ $(VENV)/.installed

docs: $(VENV)/.installed-docs
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs build --strict --quiet

# ruff (style, imports, complexity) and mypy on service/: .ci/run runs this before the tests.
lint: install-dev
	$(BIN)/ruff check .
	$(BIN)/ruff format --check service tests
	$(BIN)/mypy

# Load test of the real server (gunicorn + locust, one run per endpoint), then the engine alone.
# Knobs: BENCH_SECONDS, BENCH_USERS, BENCH_SCENARIOS, WEB_CONCURRENCY, BENCH_DATABASE_URL (docs/benchmarks.md).
bench: install-dev
	$(BIN)/python bench/load.py
	$(BIN)/python bench/engine_bench.py

# Our training estimate (lean and with verified recommendations) side by side with llm-analysis 0.2.2, in one run.
# Installs nothing: llm-analysis is looked up in this venv, then in bench/.venv-llm-analysis (docs/benchmarks.md).
bench-compare: install-dev
	$(BIN)/python bench/compare_llm_analysis.py

# GET /v1/scenarios at 1,000,000 scenarios on PostgreSQL, every filter and sort, 1 and 8 clients (~35 min of seeding;
# BENCH_ROWS, BENCH_DATABASE_URL, BENCH_SCHEMA + --keep to reuse: docs/benchmarks.md).
bench-listing: install-dev
	$(BIN)/python bench/listing_bench.py

# The training planner: the vectorised model alone (configurations/s) and whole searches at ~10k / 100k / 1M.
bench-planner: install-dev
	$(BIN)/python bench/planner_bench.py

# Can one client stall the service? /healthz and an ordinary estimate under 8 worst plans + 4 worst batches against
# a real gunicorn (BENCH_SECONDS, BENCH_PLANS, BENCH_BATCHES, WEB_CONCURRENCY).
bench-stall: install-dev
	$(BIN)/python bench/stall_bench.py

clean:
	rm -rf $(VENV) site service/translations/*/LC_MESSAGES/*.mo scalecost.db scalecost.db-wal scalecost.db-shm .pytest_cache

# A much longer schemathesis campaign than the suite's (FUZZ_EXAMPLES examples per operation and mode).
FUZZ_EXAMPLES ?= 300
fuzz: install-dev
	rm -f .fuzz-report.tsv
	FUZZ_EXAMPLES=$(FUZZ_EXAMPLES) FUZZ_REPORT=.fuzz-report.tsv $(BIN)/pytest tests/contract/test_schemathesis.py \
		-p no:cacheprovider -q -rfEs; status=$$?; \
	awk -F'\t' '{ops[$$1]=1; runs++; cases+=$$4; if ($$5 == "failed") failed++; if ($$5 == "skipped") skipped++} END {printf "fuzz: %d operations, %d runs (operation x mode x database), %d cases, %d runs failed, %d skipped\n", length(ops), runs, cases, failed, skipped}' .fuzz-report.tsv; \
	exit $$status
