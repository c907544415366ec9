# mockbroker's set-up and test commands. Every target creates .venv and installs what it needs,
# so each works from a fresh clone on a fresh machine.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed
# mypy --strict covers these packages .
TYPED  := mockbroker_protocol mockbroker mockbroker_assignors mockbroker_conformance

.PHONY: test lint typecheck pytest deps build-deps clients bytecode container-images regen bench bench-broker clean serve kafka java-driver streams-app go-drivers bench-peers spark-kafka
# Command-line tools the integration tests drive, by Debian package name (each is also its command).
APT_TOOLS := kcat

# The Spark pipeline (mockbroker_pipeline/) is type-checked too; its tests need java (Spark) and chromium (the
# report's screenshot; also the web console's browser tests, tests/sidecar/test_console.py, through Playwright). An APT_TOOLS entry is COMMAND:PACKAGE when the package has another name.
TYPED     += mockbroker_pipeline
APT_TOOLS += java:openjdk-17-jre-headless chromium

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)

# The codecs' compiled shape (mockbroker_protocol/_compiled/, mypyc) is built by the editable install;
# reinstall whenever it, setup.py or pyproject.toml changes.
COMPILED_SOURCES := $(wildcard mockbroker_protocol/_compiled/*.py)

# Reinstall whenever pyproject.toml changes.
$(STAMP): pyproject.toml setup.py $(COMPILED_SOURCES) | $(BIN)/python build-deps
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	@$(BIN)/python -c "import mockbroker_protocol._runtime as r, sys; s = r.codec_shapes(); print('codecs:', ', '.join(f'{k} {v}' for k, v in s.items()))"
	touch $(STAMP)

## build-deps: a C compiler and the Python headers, so that the install compiles the codecs with
## mypyc (setup.py); apt-get installs them when missing and root (CI). Without them the install
## still works and the pure codecs serve alone.
build-deps:
	@inc=$$($(PYTHON) -c "import sysconfig; print(sysconfig.get_paths()['include'])"); \
	if command -v cc >/dev/null 2>&1 && [ -f "$$inc/Python.h" ]; then exit 0; fi; \
	if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
	  echo "installing gcc python3-dev with apt-get (to compile the codecs)"; \
	  (apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y gcc python3-dev) || exit 1; \
	else \
	  echo "make build-deps: no C compiler or no Python.h in $$inc; the codecs stay pure" \
	    "(Debian/Ubuntu: sudo apt-get install -y gcc python3-dev)." >&2; \
	fi

## test: install everything, then lint, type-check and run the whole suite.
test: lint typecheck pytest

## lint: ruff, and the layering contracts of pyproject.toml [tool.importlinter] (docs/architecture.md).
lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/lint-imports

typecheck: $(STAMP)
	$(BIN)/mypy --strict $(TYPED)

## pytest: the whole suite (on the compiled codecs when they are built), then the protocol suite
## again on the pure codecs (MOCKBROKER_PURE_CODEC=1), so both shapes are tested.
pytest: $(STAMP) deps clients kafka java-driver streams-app go-drivers bench-peers spark-kafka bytecode container-images
	$(BIN)/python -m pytest
	MOCKBROKER_PURE_CODEC=1 $(BIN)/python -m pytest -q -m 'not compiled_codec' tests/protocol

## bytecode: compile the packages once, so every broker process the suite starts reads .pyc files
## (the generated codecs are ~27k lines; compiling them costs ~0.5 s per process otherwise, and
## some environments set PYTHONDONTWRITEBYTECODE, which only stops writing, not reading).
bytecode: $(STAMP)
	@$(BIN)/python -m compileall -q mockbroker_protocol mockbroker mockbroker_assignors mockbroker_conformance

## deps: install the missing APT_TOOLS with apt-get when root (CI runs as root on Debian); otherwise
## say what to install (the tests needing a missing tool skip locally and fail under CI=true).
deps:
	@for entry in $(APT_TOOLS); do \
	  tool=$${entry%%:*}; pkg=$${entry#*:}; \
	  command -v $$tool >/dev/null 2>&1 && continue; \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
	    echo "installing $$pkg with apt-get"; \
	    mkdir -p /usr/share/man/man1; \
	    (apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y $$pkg) || exit 1; \
	  else \
	    echo "make deps: $$tool is missing and this is not root with apt-get; install it yourself" \
	      "(Debian/Ubuntu: sudo apt-get install -y $$pkg). Tests needing it skip locally, fail under CI=true." >&2; \
	  fi; \
	done

## kafka: the real Apache Kafka broker's jars (pinned in mockbroker_conformance/kafka/pom.xml) from
## Maven Central into build/kafka/<version>/ (git-ignored), once (a stamp); the differential suite
## (tests/differential, docs/oracle.md) starts one from them. apt-get installs maven when missing
## and root (CI); java comes from APT_TOOLS (deps).
kafka: $(STAMP) deps
	@if ! command -v mvn >/dev/null 2>&1; then \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
	    echo "installing maven with apt-get"; \
	    mkdir -p /usr/share/man/man1; \
	    (apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y maven) || exit 1; \
	  else \
	    echo "make kafka: mvn is missing and this is not root with apt-get (Debian/Ubuntu: sudo apt-get" \
	      "install -y maven). The differential tests skip locally, fail under CI=true." >&2; exit 0; \
	  fi; \
	fi; \
	$(BIN)/python -m mockbroker_conformance.kafka.launcher fetch

## spark-kafka: Spark's Kafka source (spark-sql-kafka-0-10 at exactly the installed PySpark's version
## and Scala version, plus the dependencies its POM names that PySpark does not bundle: kafka-clients,
## commons-pool2, spark-token-provider-kafka-0-10) from Maven Central into build/spark-kafka/<version>/
## (git-ignored), once, SHA-1 checked (mockbroker_pipeline/jars.py). `mockbroker analyze --bootstrap`
## loads them with spark.jars: no network at run time. When they cannot be fetched, its tests skip
## locally and fail under CI=true.
spark-kafka: $(STAMP)
	@$(BIN)/python -m mockbroker_pipeline.jars fetch || \
	  echo "make spark-kafka: Spark's Kafka source could not be fetched (above); the streaming" \
	    "analyze tests skip locally, fail under CI=true." >&2

## java-driver: the Java client's conformance driver (mockbroker_conformance/drivers/java): Maven
## copies kafka-clients (the broker's version) and its dependencies into build/java-driver/libs, javac
## compiles the driver into build/java-driver/classes; both only when the pom or a source changed.
## javac and mvn come with `make kafka` (Debian's openjdk-17-jdk-headless when javac is missing).
JAVA_DRIVER := build/java-driver
JAVA_DRIVER_SOURCES := $(wildcard mockbroker_conformance/drivers/java/src/main/java/mockbroker/conformance/*.java)
java-driver: kafka $(JAVA_DRIVER)/.built

$(JAVA_DRIVER)/.built: mockbroker_conformance/drivers/java/pom.xml $(JAVA_DRIVER_SOURCES)
	@if ! command -v javac >/dev/null 2>&1 && [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
	  echo "installing openjdk-17-jdk-headless with apt-get (javac)"; mkdir -p /usr/share/man/man1; \
	  (apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y openjdk-17-jdk-headless) || exit 1; \
	fi
	@if ! command -v javac >/dev/null 2>&1 || ! command -v mvn >/dev/null 2>&1; then \
	  echo "make java-driver: javac or mvn missing (Debian/Ubuntu: sudo apt-get install -y openjdk-17-jdk-headless" \
	    "maven); the Java conformance client skips locally, fails under CI=true." >&2; exit 0; \
	fi; \
	rm -rf $(JAVA_DRIVER) && \
	mvn -q -B -f mockbroker_conformance/drivers/java/pom.xml -Ddriver.dir=$(CURDIR)/$(JAVA_DRIVER) dependency:copy-dependencies && \
	javac --release 17 -nowarn -d $(JAVA_DRIVER)/classes -cp '$(JAVA_DRIVER)/libs/*' $(JAVA_DRIVER_SOURCES) && \
	touch $@

## streams-app: the Kafka Streams word count of the streams-group tests (KIP-1071,
## mockbroker_conformance/drivers/streams): Maven copies kafka-streams (the broker's version) and its
## dependencies into build/streams-app/libs, javac compiles the app into build/streams-app/classes;
## both only when the pom or a source changed. javac and mvn as for java-driver.
STREAMS_APP := build/streams-app
STREAMS_APP_SOURCES := $(wildcard mockbroker_conformance/drivers/streams/src/main/java/mockbroker/streams/*.java)
streams-app: kafka $(STREAMS_APP)/.built

$(STREAMS_APP)/.built: mockbroker_conformance/drivers/streams/pom.xml $(STREAMS_APP_SOURCES)
	@if ! command -v javac >/dev/null 2>&1 && [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
	  echo "installing openjdk-17-jdk-headless with apt-get (javac)"; mkdir -p /usr/share/man/man1; \
	  (apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y openjdk-17-jdk-headless) || exit 1; \
	fi
	@if ! command -v javac >/dev/null 2>&1 || ! command -v mvn >/dev/null 2>&1; then \
	  echo "make streams-app: javac or mvn missing (Debian/Ubuntu: sudo apt-get install -y openjdk-17-jdk-headless" \
	    "maven); the Kafka Streams tests skip locally, fail under CI=true." >&2; exit 0; \
	fi; \
	rm -rf $(STREAMS_APP) && \
	mvn -q -B -f mockbroker_conformance/drivers/streams/pom.xml -Dapp.dir=$(CURDIR)/$(STREAMS_APP) dependency:copy-dependencies && \
	javac --release 17 -nowarn -d $(STREAMS_APP)/classes -cp '$(STREAMS_APP)/libs/*' $(STREAMS_APP_SOURCES) && \
	touch $@

## go-drivers: the Go module drivers of the conformance suite (mockbroker_conformance/drivers/franz-go
## and ibm-sarama, their go.mod/go.sum pinning franz-go and the newest IBM/sarama), built from the Go
## module proxy into build/go-drivers/ (module and build caches under build/ too); rebuilt only when
## a source, go.mod or go.sum changed. They need Go >= 1.26 (the newest franz-go's go.mod asks for
## it): /usr/local/go/bin/go or `go` when one is that new, else Go's own toolchain module
## (golang.org/toolchain, GO_TOOLCHAIN) from the module proxy into build/go-toolchain/, once.
GO_DRIVERS := build/go-drivers
GO_TOOLCHAIN := go1.26.8
GO_TOOLCHAIN_DIR := build/go-toolchain
GO_MODULE_ENV := GOPATH=$(CURDIR)/build/gopath GOCACHE=$(CURDIR)/build/gocache GOFLAGS=-mod=readonly GO111MODULE=on GOTOOLCHAIN=local
FRANZ_GO := mockbroker_conformance/drivers/franz-go
IBM_SARAMA := mockbroker_conformance/drivers/ibm-sarama
go-drivers: $(GO_DRIVERS)/franz-go-conformance $(GO_DRIVERS)/ibm-sarama-conformance

# The path of a Go >= 1.26 in $(GO_TOOLCHAIN_DIR)/GO (a stamp the driver builds read).
$(GO_TOOLCHAIN_DIR)/GO:
	@mkdir -p $(GO_TOOLCHAIN_DIR); \
	for go in /usr/local/go/bin/go $$(command -v go 2>/dev/null); do \
	  v=$$($$go env GOVERSION 2>/dev/null | sed 's/^go//'); \
	  if [ -n "$$v" ] && [ "$$(printf '%s\n1.26\n' "$$v" | sort -V | head -1)" = 1.26 ]; then echo $$go > $@; exit 0; fi; \
	done; \
	module=golang.org/toolchain@v0.0.1-$(GO_TOOLCHAIN).linux-$$(dpkg --print-architecture 2>/dev/null || echo amd64); \
	echo "fetching $$module from the Go module proxy (no Go >= 1.26 here)"; \
	$(PYTHON) -c 'import sys, urllib.request; urllib.request.urlretrieve(*sys.argv[1:])' \
	  "https://proxy.golang.org/$${module%@*}/@v/$${module#*@}.zip" $(GO_TOOLCHAIN_DIR)/toolchain.zip || exit 1; \
	$(PYTHON) -m zipfile -e $(GO_TOOLCHAIN_DIR)/toolchain.zip $(GO_TOOLCHAIN_DIR)/ && rm $(GO_TOOLCHAIN_DIR)/toolchain.zip || exit 1; \
	root=$(CURDIR)/$(GO_TOOLCHAIN_DIR)/$$module; chmod +x $$root/bin/* $$root/pkg/tool/*/*; \
	echo $$root/bin/go > $@

$(GO_DRIVERS)/franz-go-conformance: $(wildcard $(FRANZ_GO)/*.go) $(FRANZ_GO)/go.mod $(FRANZ_GO)/go.sum | $(GO_TOOLCHAIN_DIR)/GO
	mkdir -p $(GO_DRIVERS) && cd $(FRANZ_GO) && $(GO_MODULE_ENV) $$(cat $(CURDIR)/$(GO_TOOLCHAIN_DIR)/GO) build -o $(CURDIR)/$@ .

$(GO_DRIVERS)/ibm-sarama-conformance: $(IBM_SARAMA)/main.go $(IBM_SARAMA)/go.mod $(IBM_SARAMA)/go.sum | $(GO_TOOLCHAIN_DIR)/GO
	mkdir -p $(GO_DRIVERS) && cd $(IBM_SARAMA) && $(GO_MODULE_ENV) $$(cat $(CURDIR)/$(GO_TOOLCHAIN_DIR)/GO) build -o $(CURDIR)/$@ .

## bench-peers: kfake, franz-go's fake cluster (bench/kfake: a small main, its go.mod/go.sum pinning
## github.com/twmb/franz-go/pkg/kfake), built from the Go module proxy into build/bench-peers/ as
## the Go drivers are; one of bench/run.py's peers (the real Kafka is `make kafka`'s).
BENCH_PEERS := build/bench-peers
KFAKE_SRC := bench/kfake
bench-peers: $(BENCH_PEERS)/kfake

$(BENCH_PEERS)/kfake: $(KFAKE_SRC)/main.go $(KFAKE_SRC)/go.mod $(KFAKE_SRC)/go.sum | $(GO_TOOLCHAIN_DIR)/GO
	mkdir -p $(BENCH_PEERS) && cd $(KFAKE_SRC) && $(GO_MODULE_ENV) $$(cat $(CURDIR)/$(GO_TOOLCHAIN_DIR)/GO) build -o $(CURDIR)/$@ .

# The sarama and kafkajs tests' clients (tests/integration/clients/) and the conformance suite's
# sarama driver (mockbroker_conformance/drivers/sarama, built to sarama-conformance). sarama 1.22 and its dependencies
# come from Debian and build in GOPATH mode (no go.mod, no module proxy, no network); DataDog/zstd,
# which sarama imports, is cgo, hence gcc and libc6-dev (golang-go only recommends them).
CLIENT_APT_PACKAGES := golang-go golang-github-shopify-sarama-dev gcc libc6-dev
CLIENTS_BUILD := build/integration-clients
NODE_CLIENTS  := tests/integration/clients/node
GO_ENV := GO111MODULE=off GOFLAGS= GOPATH=$(CURDIR)/$(CLIENTS_BUILD)/gopath:/usr/share/gocode GOCACHE=$(CURDIR)/$(CLIENTS_BUILD)/gocache \
  CGO_CFLAGS='-g -O2 -Wno-deprecated-declarations'

## clients: apt-get CLIENT_APT_PACKAGES when missing (as root), build the sarama client into
## build/integration-clients/ (git-ignored; incremental), `npm ci` kafkajs when its lockfile changed.
clients: deps
	@missing=""; for pkg in $(CLIENT_APT_PACKAGES); do \
	  dpkg-query -W -f='$${Status}' $$pkg 2>/dev/null | grep -q 'ok installed' || missing="$$missing $$pkg"; \
	done; \
	if [ -n "$$missing" ]; then \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
	    echo "installing$$missing with apt-get"; \
	    (apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y$$missing) || exit 1; \
	  else \
	    echo "make clients: missing$$missing and this is not root with apt-get (Debian/Ubuntu: sudo apt-get" \
	      "install -y$$missing). The sarama tests skip locally, fail under CI=true." >&2; \
	  fi; \
	fi
	@if command -v go >/dev/null 2>&1 && [ -d /usr/share/gocode/src/github.com/Shopify/sarama ]; then \
	  mkdir -p $(CLIENTS_BUILD)/gopath && cd tests/integration/clients/sarama && \
	  $(GO_ENV) go build -o $(CURDIR)/$(CLIENTS_BUILD)/sarama-client . || exit 1; \
	  cd $(CURDIR)/mockbroker_conformance/drivers/sarama && \
	  $(GO_ENV) go build -o $(CURDIR)/$(CLIENTS_BUILD)/sarama-conformance . || exit 1; \
	fi
	@if ! command -v npm >/dev/null 2>&1 && [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
	  echo "installing nodejs npm with apt-get"; \
	  (apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y nodejs npm) || exit 1; \
	fi
	@if ! command -v npm >/dev/null 2>&1; then \
	  echo "make clients: npm is missing; the kafkajs tests skip locally, fail under CI=true." >&2; \
	elif [ ! -f $(NODE_CLIENTS)/node_modules/.package-lock.json ] || \
	     [ $(NODE_CLIENTS)/package-lock.json -nt $(NODE_CLIENTS)/node_modules/.package-lock.json ]; then \
	  cd $(NODE_CLIENTS) && npm ci --prefer-offline --no-audit --no-fund || exit 1; \
	fi

## container-images: the images of docker/ built with podman (docker/ci/podman.sh): apt-get installs
## podman, buildah, debootstrap, ... when missing (as root), a Debian bookworm base is made once with
## debootstrap (no image registry here), and mockbroker:dev and mockbroker-example:dev are rebuilt
## when their inputs change. tests/sidecar/test_container.py and test_compose.py run them.
container-images:
	@bash docker/ci/podman.sh

## serve: install, then run one broker on 127.0.0.1:9092 with two demo topics (Ctrl-C stops it).
serve: $(STAMP) bytecode
	$(BIN)/mockbroker serve --port 9092 --topic demo:3 --topic events:6

## regen: rewrite mockbroker_protocol/messages/ from the Kafka message specs kafka-python ships.
regen: $(STAMP)
	$(BIN)/python -m mockbroker_protocol._codegen

## bench: the codec benchmark, side by side with kafka-python; appends to bench/RESULTS.md.
bench: $(STAMP)
	$(BIN)/python bench/codec.py

## bench-broker: every broker scenario side by side with librdkafka's mock, and the startup,
## requests, rebalance and data scenarios with kfake and the real Kafka too (bench/run.py);
## appends to bench/RESULTS.md, JSON in bench/out/. BENCH_ARGS=--quick for a smoke run.
bench-broker: $(STAMP) bytecode kafka bench-peers
	$(BIN)/python -m pip install --quiet -e '.[bench]'
	$(BIN)/python bench/run.py $(BENCH_ARGS)

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache .hypothesis build
	find mockbroker_protocol -name '*.so' -delete; rm -f mockbroker_codec__mypyc*.so
