# `make demo` and `make test` each create .venv when missing and install what they need.
VENV ?= .venv
PY := $(VENV)/bin/python
PIP := $(PY) -m pip

.PHONY: demo test lint format bench clean

$(PY):
	python3 -m venv $(VENV)
	$(PIP) install --quiet --upgrade pip

$(VENV)/.installed-base: $(PY) setup.py
	$(PIP) install --quiet -e .
	touch $@

$(VENV)/.installed-test: $(VENV)/.installed-base requirements-test.txt setup.py
	$(PIP) install --quiet -e ".[atari,mujoco]" -r requirements-test.txt
	touch $@

demo: $(VENV)/.installed-base
	$(PY) -m ding_env run configs/cartpole.py --manager subprocess

lint: $(VENV)/.installed-test
	$(PY) -m ruff check .
	$(PY) -m ruff format --check .

format: $(VENV)/.installed-test
	$(PY) -m ruff format .
	$(PY) -m ruff check --fix .

test: lint
	$(PY) -m pytest -q

bench: $(VENV)/.installed-test
	$(PIP) install --quiet -e ".[bench]"
	$(PY) benchmarks/bench_env_manager.py

clean:
	rm -rf $(VENV) build *.egg-info
