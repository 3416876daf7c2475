# fedcast: `make run` starts the demo, `make test` runs the tests.
GO      ?= go
BIN     := bin
WEB     := $(BIN)/web
GOROOT  := $(shell $(GO) env GOROOT)
# Native builds use Go 1.26's experimental SIMD package for the training
# kernels (shared/nn: AVX-512 or AVX2, bit-identical to the scalar code,
# picked at run time). Every other build (wasm, plain `go build`) uses the scalar kernels.
SIMD    := GOEXPERIMENT=simd
WASMEXEC_DIR := $(GOROOT)/lib/wasm

.PHONY: all build web worker run test test-wasm bench vet fmt clean

all: build

## build: the fedcast binary (bin/fedcast) with the browser app (bin/web) built in
build: web
	$(GO) run ./wasm/webbuild/cmd/webbuild -o $(WEB) -overlay $(BIN)/overlay.json
	$(SIMD) $(GO) build -overlay $(BIN)/overlay.json -o $(BIN)/fedcast ./coordinator/cmd/fedcast

## web: the browser app: index.html, wasm_exec.js, main.wasm (+ .gz)
web:
	$(GO) generate ./ui/...
	$(GO) run ./wasm/webbuild/cmd/webbuild -go $(GO) -o $(WEB)

## worker: the Cloudflare worker in bin/worker (app.wasm, wasm_exec.js, worker.mjs,
## workerd.capnp); docs/deploy-cloudflare.md runs it under workerd or deploys it
WORKER := $(BIN)/worker
worker:
	mkdir -p $(WORKER)
	GOOS=js GOARCH=wasm $(GO) build -trimpath -ldflags=-s -o $(WORKER)/app.wasm ./coordinator/worker
	$(GO) run github.com/syumai/workers/cmd/workers-assets-gen -mode go -o $(WORKER)/assets
	cp $(WORKER)/assets/wasm_exec.js $(WORKER)/wasm_exec.js
	rm -rf $(WORKER)/assets
	cp coordinator/worker/js/worker.mjs coordinator/worker/workerd.capnp $(WORKER)/

## run: the built-in demo (coordinator + simulated LHAs + a seat for you in the browser);
## make run ADDR=host:port (or the environment variable FEDCAST_ADDR) changes its address
ADDR ?= $(or $(FEDCAST_ADDR),127.0.0.1:8080)
run: build
	$(BIN)/fedcast demo --state state/demo --addr $(ADDR)

## test: vet (native and wasm), unit tests, wasm tests under node, browser tests
test: vet
	$(GO) test -count=1 -timeout 20m ./...
	$(SIMD) $(GO) test -count=1 -timeout 10m ./shared/nn/ ./shared/fl/
	$(MAKE) test-wasm

## test-wasm: the shared packages' tests compiled to wasm and run under node
test-wasm:
	PATH="$$PATH:$(WASMEXEC_DIR)" GOOS=js GOARCH=wasm $(GO) test -count=1 -timeout 15m ./shared/...

vet:
	@test -z "$$(gofmt -l $$(git ls-files '*.go'))" || { echo "gofmt needed:"; gofmt -l $$(git ls-files '*.go'); exit 1; }
	$(GO) vet ./...
	GOOS=js GOARCH=wasm $(GO) vet ./shared/... ./wasm/...

## bench: benchmarks (native); see docs/benchmarks.md for the wasm runs
bench:
	$(SIMD) $(GO) test -run=NONE -bench=. -benchmem ./...

clean:
	rm -rf $(BIN)
