# The two commands a new machine needs: `make dev` and `make test`. Both set the machine up first.
SHELL := /bin/bash
PORT ?= 8787
# When this make started: `make dev` says how long it took to be ready.
export ZOTERO_MCP_MAKE_STARTED := $(shell date +%s)

.PHONY: setup setup-build setup-dev build dev deploy test fmt lint unit wasm-unit e2e deploy-test size size-breakdown bench bench-pdf read-corpus fuzz clean

## What each target needs, installed once (scripts/setup.sh; docs/development.md says what each OS gets).
setup:
	@bash scripts/setup.sh test

setup-build:
	@bash scripts/setup.sh build

setup-dev:
	@bash scripts/setup.sh dev

build: setup-build
	@bash scripts/build.sh
	@bash scripts/size.sh

## Serve the release Worker locally on 127.0.0.1:$(PORT), local KV under .wrangler/, secrets from .dev.vars.
dev: setup-dev build
	@bash scripts/dev.sh $(PORT)

## Build, check the account's secrets, deploy on DOMAIN, then check it end to end (docs/deployment.md).
## DEPLOY_FLAGS passes options: --dry-run, --skip-build, --skip-e2e, --write (scripts/deploy --help).
deploy: setup-build
	@bash scripts/deploy "$(DOMAIN)" $(DEPLOY_FLAGS)

## Every check CI runs: format, lint, native tests, the wasm build, the Worker end to end, the deploy script.
test: setup fmt lint unit wasm-unit build e2e deploy-test
	@echo "make test: every check passed, $$(( $$(date +%s) - ZOTERO_MCP_MAKE_STARTED )) s after make started"

fmt:
	cargo fmt --all -- --check

lint:
	cargo clippy --workspace --all-targets --locked -- -D warnings
	cargo clippy -p zotero-mcp --lib --target wasm32-unknown-unknown --locked -- -D warnings

## The native tests: passed, failed, skipped and ignored counted together; a skip not declared for this
## environment in tests/expected-skips.txt fails (scripts/skips.sh, checked by tests/skips/skips.test.sh).
unit:
	@bash tests/skips/skips.test.sh
	@bash scripts/unit.sh

## The PDF engine as WebAssembly in V8 (crates/core/tests/pdf_wasm.rs), run by wasm-bindgen-test-runner (installed by
## setup with the wasm-bindgen CLI). Release: the runner cannot load a debug build of it.
wasm-unit:
	CARGO_TARGET_WASM32_UNKNOWN_UNKNOWN_RUNNER=wasm-bindgen-test-runner cargo test --release --locked \
		--target wasm32-unknown-unknown -p zotero-mcp-core --test pdf_wasm
	CARGO_TARGET_WASM32_UNKNOWN_UNKNOWN_RUNNER=wasm-bindgen-test-runner cargo test --release --locked \
		--target wasm32-unknown-unknown -p zotero-mcp --test fold_wasm

e2e:
	@bash scripts/e2e.sh

## scripts/deploy against stand-ins for wrangler, the build and the e2e check, then its --dry-run with the real
## wrangler on build/ (when built); scripts/setup.sh's choices on stand-in macOS and Linux machines; shellcheck on
## the scripts where it is installed.
deploy-test:
	@bash tests/deploy/deploy.test.sh
	@bash tests/deploy/setup.test.sh
	@if command -v shellcheck >/dev/null; then shellcheck -x scripts/deploy scripts/setup.sh tests/deploy/*.test.sh; \
	else echo "deploy-test: shellcheck not installed, not run (apt-get install shellcheck)"; fi

size:
	@bash scripts/size.sh

## Where the wasm's bytes are, by crate and module, as shares of the gzip size (docs/performance.md).
size-breakdown: setup-build
	@bash scripts/size-breakdown.sh

## Benchmarks (print figures; compare within one run).
bench: build
	cargo bench -p zotero-sim --bench client_page
	cargo bench -p zotero-mcp-server --bench tools_call
	@bash scripts/bench-runtimes.sh
	@bash scripts/bench-cpu.sh
	@bash scripts/bench-load.sh
	@bash scripts/bench-sidebyside.sh
	@bash scripts/bench-coldstart.sh
	@bash scripts/bench-attachments.sh
	@bash scripts/bench-retrieve.sh
	@bash scripts/bench-check-references.sh
	@bash scripts/bench-index.sh
	@bash scripts/bench-desktop.sh
	@bash scripts/bench-memory.sh
	@bash scripts/bench-scale.sh

## The PDF engine as wasm in V8 beside pdf.js (unpdf) on a corpus of real PDFs, scored against poppler's pdftotext
## (docs/pdf.md). PDF_CORPUS=<dir> points at the corpus (default ../shared/data/pdf-corpus); PDF_FILES="a.pdf b.pdf"
## runs a few files only.
bench-pdf: setup
	@bash scripts/bench-pdf.sh

## Every corpus PDF read through zotero_read_attachment from the first page to the last, continuing with
## nextFromPage (issue 34; not part of `make test`): one line per file, non-zero exit on any FAIL. PDF_CORPUS=<dir>
## as for bench-pdf.
read-corpus:
	@bash scripts/read-corpus.sh

## Fuzzing (cargo +nightly fuzz; not part of `make test`): each target in turn for FUZZ_RUNS executions (default
## 1,000,000), printing its figures, then every input in fuzz/regressions once. See fuzz/README.md.
fuzz:
	@bash fuzz/run.sh

clean:
	cargo clean
	rm -rf build .wrangler
