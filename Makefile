# Personal memory — every command installs what it needs into .venv first.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed

.PHONY: run test demo bench package mutate chaos lint install clean browser-deps redrive

$(STAMP): requirements.txt requirements-dev.txt requirements-package.txt
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q -r requirements-dev.txt
	touch $(STAMP)

install: $(STAMP)

run: $(STAMP)
	$(PY) -m local.run

test: $(STAMP) browser-deps
	$(PY) -m pytest -q

demo: $(STAMP)
	$(PY) -m local.demo

bench: $(STAMP)
	$(PY) bench/run.py

package: $(STAMP)
	bash scripts/package.sh

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
chaos: $(STAMP)
	$(PY) -m tests.support.chaos --seed $(SEED) --n $(N) --rate $(RATE) --workers $(WORKERS)

lint: $(STAMP)
	$(VENV)/bin/ruff check app.py chalicelib local tests sdk bench scripts infra examples

# The browser tests drive Debian's Chromium (never a downloaded browser).
browser-deps:
	@command -v chromium >/dev/null 2>&1 || (apt-get update -qq && apt-get install -y -qq chromium >/dev/null)

clean:
	rm -rf $(VENV) build .local
