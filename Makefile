# Two commands do everything on a fresh machine with Python 3.10+:
#   make test   lint, unit tests, then every chapter as a learner gets it: the built wheel in a
#               fresh environment, the student and instructor notebooks run in an empty folder;
#               then the book is built and opened in headless Chromium (make browser)
#   make book   build the whole book (executing every chapter) into _build/html
# The browser tests need Debian's chromium and chromium-driver (.ci/run installs them).
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
WIDGETS_JS := _widgets_js
# Real data sets for the loaders' tests and the chapters' real-data cells: a local copy laid out
# like the download cache (wnut17/, wikitext-2/). CI has one beside the clone; users may set it.
SHARED_DATA := $(abspath ../shared/data)
export MLMCOURSE_DATA_DIR ?= $(if $(wildcard $(SHARED_DATA)),$(SHARED_DATA),)

.PHONY: test book browser venv lint unit learner notebooks classroom benchmarks clean

$(VENV)/.installed: requirements.txt pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --upgrade pip
	$(PY) -m pip install -r requirements.txt
	touch $@

venv: $(VENV)/.installed

lint: venv
	$(PY) -m ruff check .
	$(PY) -m ruff format --check .

test: venv lint unit learner browser

# Two workers: most tests run on one thread, and the slowest (the world retrain, the crash
# test, the experiment scripts' smoke runs) then overlap. Each test is handed to the next free
# worker (worksteal), so a long file does not hold one worker while the other idles.
unit: venv
	$(PY) -m pytest -p no:cacheprovider -n 2 --dist worksteal -m "not book" tests

# The notebooks learners open, executed from the built wheel (scripts/test_notebooks.py).
learner: venv
	$(PY) scripts/test_notebooks.py --parallel

# The static book loads MathJax from here instead of a CDN
# (fetched from the npm registry, sha256-checked; no npm needed).
$(WIDGETS_JS)/.fetched: scripts/fetch_book_js.py
	$(PY) scripts/fetch_book_js.py $(WIDGETS_JS) && touch $@

# Every reference solution must pass while the book is built.
book: venv $(WIDGETS_JS)/.fetched
	MLMCOURSE_STRICT_EXERCISES=1 $(VENV)/bin/jupyter-book build . -W -n --keep-going

# Every chapter page in headless Chromium, no kernel, no network: no console errors, alt text,
# each interactive view answers its controls; screenshots in _build/screenshots/.
browser: book
	MLMCOURSE_REQUIRE_BROWSER=1 $(PY) -m pytest -p no:cacheprovider -m book -v tests/test_browser.py

# Regenerate the Colab notebooks (book/*.ipynb) from the chapters (book/*.md).
notebooks: venv
	$(PY) scripts/make_notebooks.py

# The classroom editions: _build/classroom/{student,instructor}/ and a zip of each.
classroom: venv
	$(PY) scripts/make_notebooks.py --classroom _build/classroom

benchmarks: venv
	for f in benchmarks/*.py; do $(PY) $$f || exit 1; done

clean:
	rm -rf _build $(WIDGETS_JS) dist
