# `make demo` and `make test` each create .venv when missing and install what they need.
VENV ?= .venv
PY := $(VENV)/bin/python
PIP := $(PY) -m pip
# DI-engine, a benchmark peer, pins numpy<2 and legacy gym: it lives in a venv of its own.
DI_VENV ?= .venv-di-engine
DI_PY := $(DI_VENV)/bin/python

.PHONY: demo test lint format docs bench clean

$(PY):
	python3 -m venv $(VENV)
	$(PIP) install --quiet --upgrade pip

$(VENV)/.installed-base: $(PY) setup.py
	$(PIP) install --quiet -e .
	touch $@

$(VENV)/.installed-test: $(VENV)/.installed-base requirements-test.txt requirements-no-deps.txt setup.py
	$(PIP) install --quiet -e ".[atari,mujoco,box2d,minigrid]" -r requirements-test.txt
	$(PIP) install --quiet --no-deps -r requirements-no-deps.txt
	touch $@

$(VENV)/.installed-docs: $(VENV)/.installed-base setup.py
	$(PIP) install --quiet -e ".[docs]"
	touch $@

$(DI_VENV)/.installed: benchmarks/requirements-di-engine.txt
	python3 -m venv $(DI_VENV)
	$(DI_PY) -m pip install --quiet --upgrade pip
	$(DI_PY) -m pip install --quiet --no-deps $$(grep '^DI-engine==' benchmarks/requirements-di-engine.txt)
	$(DI_PY) -m pip install --quiet $$(grep -v -e '^#' -e '^DI-engine==' benchmarks/requirements-di-engine.txt)
	touch $@

demo: $(VENV)/.installed-base
	$(PY) -m ding_env run configs/cartpole.py --manager subprocess

lint: $(VENV)/.installed-test
	$(PY) -m ruff check .
	$(PY) -m ruff format --check .

format: $(VENV)/.installed-test
	$(PY) -m ruff format .
	$(PY) -m ruff check --fix .

# The site goes to site/ (git-ignored); --strict fails on a broken link or a stale API reference.
docs: $(VENV)/.installed-docs
	NO_MKDOCS_2_WARNING=1 $(PY) -m mkdocs build --strict --site-dir site

test: lint docs $(DI_VENV)/.installed
	$(PY) -m pytest -q

bench: $(VENV)/.installed-test $(DI_VENV)/.installed
	$(PIP) install --quiet -e ".[bench]"
	$(PY) benchmarks/bench_env_manager.py

clean:
	rm -rf $(VENV) $(DI_VENV) build site *.egg-info
