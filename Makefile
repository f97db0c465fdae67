# Two commands do everything on a fresh machine with Python 3.10+:
#   make test   lint; the unit tests (fast, then slow); every chapter once, as a learner gets it
#               (the built wheel, a fresh environment, an empty folder); the book, rendered from
#               those executed chapters (it executes none); the book in headless Chromium
#   make book   build the book into _build/html, executing only the chapters whose cached
#               outputs are stale (none right after `make chapters` or `make test`)
# For a chapter's author: `make chapter NAME=masking` executes one chapter the way `make test`
# does (and refreshes its outputs for the book); `make unit` runs the fast tests in minutes;
# `make quick` runs only what your change touches.
# The browser tests need Debian's chromium and chromium-driver (.ci/run installs them).
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
WIDGETS_JS := _widgets_js
DIST := dist
# Real data sets for the loaders' tests and the chapters' real-data cells: a local copy laid out
# like the download cache (wnut17/, wikitext-2/). CI has one beside the clone; users may set it.
SHARED_DATA := $(abspath ../shared/data)
export MLMCOURSE_DATA_DIR ?= $(if $(wildcard $(SHARED_DATA)),$(SHARED_DATA),)
# The Hugging Face Hub, offline: the chapters' real-model cells (bert-base-uncased, a CoNLL-2003
# tagger, an SST-2 classifier, a SQuAD reader) run in Colab and say in one line that they
# skipped here, so the book, CI and every workflow test what no download can change.
export HF_HUB_OFFLINE ?= 1
# Python caches what it compiles (__pycache__, ignored by git) even where the environment turns
# that off: the suite's processes import the same sources hundreds of times, and without the
# cache each pytest process rewrites every test module again (5 of its 20 s of collection).
unexport PYTHONDONTWRITEBYTECODE
# The wheel, built once (make dist): the chapters run from it and the packaging tests read it.
export MLMCOURSE_DIST := $(abspath $(DIST))
PACKAGE_SOURCES := pyproject.toml README.md $(shell find mlmcourse -type f -not -name '*.pyc' -not -path '*/__pycache__/*')
PYTEST := $(PY) -m pytest -p no:cacheprovider

.PHONY: test book browser venv lint unit slow dist chapters chapter book-current book-from-chapters \
	notebooks classroom benchmarks clean quick

$(VENV)/.installed: requirements.txt pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -r requirements.txt
	touch $@

venv: $(VENV)/.installed

lint: venv
	$(PY) -m ruff check .
	$(PY) -m ruff format --check .

# What differs from origin/main (or HEAD; BASE=<rev> for another), checked in minutes: lint of the
# changed files, the fast tests that import them, the chapters they touch (scripts/quick.py).
quick: venv
	@$(call timed,quick,$(PY) scripts/quick.py)

# The stages, each printing its time. After the fast tests, the slow tests and the chapters
# (then the book and the browser) run side by side: each alone leaves a core idle while pip
# installs the learner's environment, while Sphinx builds and at the end of its run, and the
# other fills it. Every process runs on one thread, so four share the two cores without waste.
test: venv
	@start=$$(date +%s); \
	$(MAKE) --no-print-directory lint unit && \
	$(MAKE) --no-print-directory -j2 --output-sync=target slow book-from-chapters; \
	status=$$?; echo "== make test: $$(( $$(date +%s) - start )) s (exit status $$status)"; \
	exit $$status

# `$(call timed,NAME,COMMAND)`: run COMMAND and print how long it took.
timed = t=$$(date +%s); $(2); s=$$?; echo "== make $(1): $$(( $$(date +%s) - t )) s"; exit $$s

# Two workers; each test goes to the next free one (worksteal), the longest first, by the times
# the last run recorded in tests/durations.json (commit it when it changes: tests/conftest.py).
# `unit` is the fast tests, `slow` the ones that train, spawn processes, build or grade notebooks.
RECORD = MLMCOURSE_RECORD_DURATIONS=tests/durations.json
unit: venv
	@$(call timed,unit,$(RECORD) $(PYTEST) -n 2 --dist worksteal -m "not slow and not book" tests)

slow: venv dist
	@$(call timed,slow,$(RECORD) $(PYTEST) -n 2 --dist worksteal -m "slow and not book" --durations=15 tests)

# The chapters once, then the book from their outputs (it executes none), then the browser.
book-from-chapters: chapters
	@$(MAKE) --no-print-directory book-current browser

$(DIST)/.built: $(VENV)/.installed $(PACKAGE_SOURCES)
	rm -rf $(DIST)
	$(PY) -m build --no-isolation --outdir $(DIST) . > /dev/null
	touch $@

dist: $(DIST)/.built

# Every chapter once, from the built wheel (scripts/test_notebooks.py); its outputs are cached
# for the book.
chapters: venv dist
	@$(call timed,chapters,$(PY) scripts/test_notebooks.py --wheel $(DIST)/mlmcourse-*.whl)


chapter: venv dist
	@test -n "$(NAME)" || { echo "usage: make chapter NAME=masking"; exit 2; }
	$(PY) scripts/test_notebooks.py --wheel $(DIST)/mlmcourse-*.whl --only $(NAME)

# The static book loads MathJax and ONNX Runtime Web from here instead of a CDN
# (fetched from the npm registry, sha256-checked; no npm needed).
$(WIDGETS_JS)/.fetched: scripts/fetch_book_js.py
	$(PY) scripts/fetch_book_js.py $(WIDGETS_JS) && touch $@

# The world model and its NER tagger, exported to ONNX for the pages that run them
# (mlmcourse/viz/in_page.py), with the vocabulary and labels their script reads.
$(WIDGETS_JS)/live/.exported: scripts/export_page_models.py $(VENV)/.installed $(PACKAGE_SOURCES)
	$(PY) scripts/export_page_models.py $(WIDGETS_JS) && touch $@

# The browser tests check every page with axe-core, fetched the same way but for the tests
# only: it goes beside the site (_build/test_js/), never into it.
TEST_JS := _build/test_js
$(TEST_JS)/.fetched: scripts/fetch_book_js.py
	$(PY) scripts/fetch_book_js.py --tests $(TEST_JS) && touch $@

# Every chapter's cached outputs are current: the book build that follows executes none.
book-current: venv
	$(PY) scripts/book_cache.py check

# Stale chapters (none after `make chapters`) are executed by the build, and every reference
# solution must pass while they are.
book: venv $(WIDGETS_JS)/.fetched $(WIDGETS_JS)/live/.exported
	$(PY) scripts/book_cache.py prune
	@$(call timed,book,MLMCOURSE_STRICT_EXERCISES=1 $(VENV)/bin/jupyter-book build . -W -n --keep-going)
	$(PY) scripts/book_cache.py stamp

# Every link of the built site and of the notebooks resolves (scripts/check_links.py); every
# chapter page in headless Chromium, no kernel, no network: no console errors, alt text, each
# interactive view answers its controls, reached and moved from the keyboard alone; screenshots
# in _build/screenshots/; every figure's text inside its canvas, unoverlapped, legible, in
# DejaVu Sans and in Liberation Sans; no serious or critical axe-core violation on any page.
browser: book $(TEST_JS)/.fetched
	@$(call timed,browser,MLMCOURSE_REQUIRE_BROWSER=1 $(PYTEST) -m book -v tests/book/test_links.py tests/book/test_browser.py tests/book/test_figures.py tests/book/test_accessibility.py)

# Regenerate the Colab notebooks (book/*.ipynb) from the chapters (book/*.md).
notebooks: venv
	$(PY) scripts/make_notebooks.py

# The classroom editions: _build/classroom/{student,instructor}/ and a zip of each.
classroom: venv
	$(PY) scripts/make_notebooks.py --classroom _build/classroom

benchmarks: venv
	for f in benchmarks/*.py; do $(PY) $$f || exit 1; done

clean:
	rm -rf _build $(WIDGETS_JS) $(DIST)
