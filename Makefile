# Two commands do everything on a fresh machine with Python 3.10+:
#   make test   lint, unit tests, then every chapter as a learner gets it: the built wheel in a
#               fresh environment, the student and instructor notebooks run in an empty folder
#   make book   build the whole book (executing every chapter) into _build/html
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
WIDGETS_JS := _widgets_js
# Real data sets for the loaders' tests and the chapters' real-data cells: a local copy laid out
# like the download cache (wnut17/, wikitext-2/). CI has one beside the clone; users may set it.
SHARED_DATA := $(abspath ../shared/data)
export MLMCOURSE_DATA_DIR ?= $(if $(wildcard $(SHARED_DATA)),$(SHARED_DATA),)

.PHONY: test book venv lint unit learner notebooks classroom benchmarks clean

$(VENV)/.installed: requirements.txt pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --upgrade pip
	$(PY) -m pip install -r requirements.txt
	touch $@

venv: $(VENV)/.installed

lint: venv
	$(PY) -m ruff check .
	$(PY) -m ruff format --check .

test: venv lint unit learner

# Two workers: most tests run on one thread, and the slowest (the world retrain, the crash
# test, the experiment scripts' smoke runs) then overlap. Each test is handed to the next free
# worker (worksteal), so a long file does not hold one worker while the other idles.
unit: venv
	$(PY) -m pytest -p no:cacheprovider -n 2 --dist worksteal tests

# The notebooks learners open, executed from the built wheel (scripts/test_notebooks.py).
learner: venv
	$(PY) scripts/test_notebooks.py --parallel

# The static book loads the ipywidgets JavaScript from here instead of a CDN.
$(WIDGETS_JS)/embed-amd.js:
	rm -rf $(WIDGETS_JS) && mkdir -p $(WIDGETS_JS)/.npm
	cd $(WIDGETS_JS)/.npm && npm pack --silent @jupyter-widgets/html-manager@1.0.6 requirejs@2.3.4 \
	  && tar xzf jupyter-widgets-html-manager-1.0.6.tgz && cp package/dist/embed-amd.js ../embed-amd.js \
	  && rm -rf package && tar xzf requirejs-2.3.4.tgz && cp package/require.js ../require.min.js
	rm -rf $(WIDGETS_JS)/.npm

# Every reference solution must pass while the book is built.
book: venv $(WIDGETS_JS)/embed-amd.js
	MLMCOURSE_STRICT_EXERCISES=1 $(VENV)/bin/jupyter-book build . -W -n --keep-going

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
