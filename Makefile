# AgentKit. `make help` lists the targets. Every target sets up what it needs: a virtual
# environment in .venv with the locked dependencies (uv.lock), installed by a pinned uv.
.DEFAULT_GOAL := help
SHELL := /bin/bash
PYTHON ?= python3
UV_VERSION := 0.13.8
TOOLS := .tools
UV := $(TOOLS)/bin/uv
VENV := .venv
STAMP := $(VENV)/.synced
export UV_PROJECT_ENVIRONMENT := $(VENV)
export UV_PYTHON := $(shell command -v $(PYTHON))
export UV_PYTHON_DOWNLOADS := never

help: ## list the targets
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk -F ':.*## ' '{printf "  %-12s %s\n", $$1, $$2}'

$(UV):
	$(PYTHON) -m venv $(TOOLS)
	$(TOOLS)/bin/pip install --quiet --disable-pip-version-check uv==$(UV_VERSION)

$(STAMP): $(UV) pyproject.toml uv.lock
	$(UV) sync --frozen --all-extras
	@touch $(STAMP)

install: $(STAMP) ## create .venv with the locked dependencies

# API_KEYS defaults to dev-key unless the environment or .env sets it (a value set here would win over .env)
run: $(STAMP) ## run the API on the embedded PostgreSQL and Redis (or DATABASE_URL / REDIS_URL)
	@if [ -z "$${API_KEYS}" ] && ! grep -Eqs '^[[:space:]]*(export[[:space:]]+)?API_KEYS=' "$${AGENTKIT_ENV_FILE:-.env}"; then \
		export API_KEYS=dev-key; fi; exec $(VENV)/bin/agentkit serve

demo: $(STAMP) ## a scripted agent run in the terminal, no server needed
	$(VENV)/bin/agentkit demo

test: $(STAMP) ## run the whole test suite with coverage
	$(VENV)/bin/pytest --cov --cov-report=term-missing:skip-covered

check: $(STAMP) ## lint, format check, mypy --strict, import-linter, hadolint, actionlint
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .
	$(VENV)/bin/mypy
	$(VENV)/bin/lint-imports
	$(VENV)/bin/hadolint docker/Dockerfile
	$(VENV)/bin/actionlint .github/workflows/*.yml

fmt: $(STAMP) ## fix lint findings that can be fixed and format the code
	$(VENV)/bin/ruff check --fix .
	$(VENV)/bin/ruff format .

bench: $(STAMP) ## run the benchmarks under bench/ (the last five need PostgreSQL and Redis)
	$(VENV)/bin/python bench/loop_overhead.py
	$(VENV)/bin/python bench/agent_memory.py
	$(VENV)/bin/python bench/parallel_tools.py
	$(VENV)/bin/python bench/stream_cost.py
	$(VENV)/bin/python bench/trace_write.py
	$(VENV)/bin/python bench/trace_storage.py
	$(VENV)/bin/python bench/observability_overhead.py
	$(VENV)/bin/python bench/http_throughput.py
	$(VENV)/bin/python bench/overload.py
	$(VENV)/bin/python bench/sse_latency.py
	$(VENV)/bin/python bench/stream_latency.py

# The peers come from the `bench` dependency group, which `make install` leaves out: the stamp is
# removed, so the next target that needs .venv syncs it back to the lean set.
bench-peers: $(UV) ## AgentKit's Agent against Pydantic AI and LangGraph (installs them in .venv until the next sync)
	$(UV) sync --frozen --all-extras --group bench
	@rm -f $(STAMP)
	$(VENV)/bin/python bench/agent_peers.py

lock: $(UV) ## re-resolve uv.lock after changing pyproject.toml
	$(UV) lock

clean: ## remove the virtual environments and caches
	rm -rf $(VENV) $(TOOLS) .mypy_cache .ruff_cache .pytest_cache .coverage

.PHONY: help install run demo test check fmt bench bench-peers lock clean
