# One entry point for people and CI. `make test` sets up and passes everything.
SWIFT ?= swift
export PATH := /opt/swift/usr/bin:$(PATH)

.PHONY: setup build test test-tsan bench bench-quick example clean

## Debian packages the build and the tests need (idempotent; needs root).
setup:
	@if command -v apt-get >/dev/null 2>&1 && [ "$$(id -u)" = 0 ]; then \
		need=""; for p in $(shell cat .ci/apt-packages); do dpkg -s $$p >/dev/null 2>&1 || need="$$need $$p"; done; \
		if [ -n "$$need" ]; then apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$need; fi; \
	fi

build: setup
	$(SWIFT) build

## The whole suite, then again under ThreadSanitizer.
test: setup
	$(SWIFT) build --product loopdPackageTests
	$(SWIFT) test --skip-build
	$(MAKE) test-tsan

test-tsan:
	$(SWIFT) build --product loopdPackageTests --sanitize=thread --scratch-path .build-tsan
	$(SWIFT) test --skip-build --sanitize=thread --scratch-path .build-tsan

## Side-by-side benchmarks (LoopRuntime vs Dispatch, SwiftNIO, Foundation, the raw limit).
bench: setup
	$(SWIFT) run -c release LoopBench

bench-quick: setup
	$(SWIFT) run -c release LoopBench --quick

example:
	$(SWIFT) run loop-example

clean:
	rm -rf .build .build-tsan .build-bench
