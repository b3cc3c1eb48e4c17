# tmdns: every command sets up what it needs first.
SHELL := /bin/bash
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
DB_URL ?= sqlite:///var/tmdns.db

.DEFAULT_GOAL := help

help: ## list the targets
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  %-10s %s\n", $$1, $$2}'

$(STAMP): pyproject.toml app/dns/_mmsg.c
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[dev]'
	touch $(STAMP)

install: $(STAMP) ## create .venv and install tmdns with its development tools

migrate: $(STAMP) ## bring the database at DB_URL to the newest schema
	TMDNS_DB__URL='$(DB_URL)' $(BIN)/tmdns migrate

run: migrate ## serve the demo zone tm.example. (DNS 127.0.0.1:8053, API 127.0.0.1:8080)
	TMDNS_DB__URL='$(DB_URL)' $(BIN)/tmdns serve --demo

TEST_WORKERS ?= 2

test: $(STAMP) ## run the whole test suite in TEST_WORKERS processes (starts PostgreSQL itself)
	$(BIN)/pytest -n $(TEST_WORKERS) --dist worksteal

test-unit: $(STAMP) ## run the pure unit tests only
	$(BIN)/pytest tests/unit

COV_FLOOR ?= 100

cov: $(STAMP) ## branch coverage of app/domain and app/dns (unit, fuzz and DNS integration tests), gated at COV_FLOOR %
	$(BIN)/pytest -q -n $(TEST_WORKERS) tests/unit tests/fuzz tests/integration/dns \
		--cov=app.domain --cov=app.dns --cov-branch \
		--cov-report=term-missing:skip-covered --cov-fail-under=$(COV_FLOOR)

lint: $(STAMP) ## ruff, mypy --strict, import layering, and a purity check of app/domain
	$(BIN)/ruff check app tests migrations
	$(BIN)/ruff format --check app tests migrations
	$(BIN)/mypy
	$(BIN)/lint-imports
	@! grep -rnP '^\s*import (asyncio|socket|time|random)\b|^\s*from (asyncio|socket|time)\b|^\s*from random import (?!Random$$)' app/domain \
		|| (echo "app/domain must stay free of I/O, clocks and global randomness" && exit 1)

fmt: $(STAMP) ## format the code
	$(BIN)/ruff format app tests migrations
	$(BIN)/ruff check --fix app tests migrations

revision: $(STAMP) ## new alembic revision from the models: make revision m="what changed"
	$(BIN)/alembic revision --autogenerate -m "$(m)"

fuzz: $(STAMP) ## the fast/full differential corpus in full, and 5 min of coverage-guided fuzzing
	TMDNS_CORPUS_SAMPLE=0 $(BIN)/pytest tests/unit/dns/test_fast_path.py -k same_bytes
	TMDNS_FUZZ_SECONDS=300 $(BIN)/pytest tests/fuzz -k coverage_guided

bench: $(STAMP) ## tmdns beside gdnsd and PowerDNS under dnsperf; writes docs/benchmarks.md
	$(BIN)/python -m tests.bench.dns_bench

bench-flood: $(STAMP) ## random-name flood with RRL off and on: a legitimate client's success and p99
	$(BIN)/python -m tests.bench.flood_bench

bench-snapshot: $(STAMP) ## 10,000 profiles × 10 endpoints: cold build time and memory, one change to DNS
	$(BIN)/python -m tests.bench.snapshot_bench

bench-probe: $(STAMP) ## probe 5,000 loopback endpoints for 60 s: CPU use and schedule slip
	$(BIN)/python -m tests.bench.probe_bench --endpoints 5000 --interval 10 --seconds 60

soak: $(STAMP) ## 10 min of DNS load, 1 API write/s, PostgreSQL restart every 2 min, prober kill -9 every 3 min
	$(BIN)/python -m tests.bench.soak --minutes 10

clean: ## remove the virtualenv, the database and caches
	rm -rf $(VENV) var .pytest_cache .mypy_cache .ruff_cache app/dns/_mmsg*.so

.PHONY: help install migrate run test test-unit cov lint fmt revision fuzz bench bench-flood bench-snapshot bench-probe soak clean
