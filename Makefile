# mockbroker's set-up and test commands. Every target creates .venv and installs what it needs,
# so each works from a fresh clone on a fresh machine.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed
# mypy --strict covers these packages (assignors/ joins when it exists).
TYPED  := protocol mockbroker $(wildcard assignors)

.PHONY: test lint typecheck pytest regen bench clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)

# Reinstall whenever pyproject.toml changes.
$(STAMP): pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	touch $(STAMP)

## test: install everything, then lint, type-check and run the whole suite.
test: lint typecheck pytest

lint: $(STAMP)
	$(BIN)/ruff check .

typecheck: $(STAMP)
	$(BIN)/mypy --strict $(TYPED)

pytest: $(STAMP)
	$(BIN)/python -m pytest

## regen: rewrite protocol/messages/ from the Kafka message specs kafka-python ships.
regen: $(STAMP)
	$(BIN)/python -m protocol._codegen

## bench: the codec benchmark, side by side with kafka-python; appends to bench/RESULTS.md.
bench: $(STAMP)
	$(BIN)/python bench/codec.py

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache .hypothesis
