# One entry point for people and CI. `make test` sets up and passes everything.
SWIFT ?= swift
export PATH := /opt/swift/usr/bin:$(PATH)

.PHONY: setup build run test test-tsan test-asan check-words docs bench bench-quick example consumer clean

## Debian packages the build and the tests need (idempotent; needs root).
setup:
	@if command -v apt-get >/dev/null 2>&1 && [ "$$(id -u)" = 0 ]; then \
		need=""; for p in $(shell cat .ci/apt-packages); do dpkg -s $$p >/dev/null 2>&1 || need="$$need $$p"; done; \
		if [ -n "$$need" ]; then apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$need; fi; \
	fi

build: setup
	$(SWIFT) build

## loopd in the foreground on Config/loopd.toml, socket ./loopd.sock;
## in another terminal: .build/release/loopctl ping
run: setup
	$(SWIFT) build -c release --product loopctl
	$(SWIFT) build -c release --product loopd
	.build/release/loopd --config Config/loopd.toml

## The whole suite, then again under ThreadSanitizer.
test: setup
	$(SWIFT) build --product loopdPackageTests
	$(SWIFT) test --skip-build
	$(MAKE) test-tsan

test-tsan:
	$(SWIFT) build --product loopdPackageTests --sanitize=thread --scratch-path .build-tsan
	$(SWIFT) test --skip-build --sanitize=thread --scratch-path .build-tsan

## Tracked files name no ticket numbers and no paths outside the repository;
## the documentation speaks of the product, not of how the work was organised.
check-words: setup
	.ci/check-words

## LoopRuntime's API documentation: the DocC catalog
## (Sources/LoopRuntime/LoopRuntime.docc) and LoopRuntime's symbol graph,
## not LoopPlatform's, as a static site in .build/docs, served under
## /LoopRuntime/. Fails on any DocC warning, on a public symbol without a
## doc comment, and on a catalog snippet missing from the snippets the test
## target compiles (.ci/check-docs). Builds in .build-docs with the
## toolchain's docc; the package gains no dependency.
DOCS_SCRATCH = .build-docs
DOCS_GRAPHS = $(DOCS_SCRATCH)/symbol-graphs
docs: setup
	.ci/check-docs snippets
	$(SWIFT) build --target LoopRuntime --scratch-path $(DOCS_SCRATCH) \
		-Xswiftc -emit-symbol-graph -Xswiftc -emit-symbol-graph-dir -Xswiftc $(CURDIR)/$(DOCS_GRAPHS)
	rm -rf $(DOCS_SCRATCH)/loopruntime-graphs .build/docs
	mkdir -p $(DOCS_SCRATCH)/loopruntime-graphs
	find $(DOCS_GRAPHS) \( -name LoopRuntime.symbols.json -o -name 'LoopRuntime@*.symbols.json' \) \
		-exec cp {} $(DOCS_SCRATCH)/loopruntime-graphs/ \;
	.ci/check-docs coverage $(DOCS_SCRATCH)/loopruntime-graphs
	docc convert Sources/LoopRuntime/LoopRuntime.docc --warnings-as-errors \
		--additional-symbol-graph-dir $(DOCS_SCRATCH)/loopruntime-graphs \
		--fallback-display-name LoopRuntime --fallback-bundle-identifier org.loopd.LoopRuntime \
		--output-path .build/docs --transform-for-static-hosting --hosting-base-path LoopRuntime
	@echo "LoopRuntime's documentation: .build/docs, to be served under /LoopRuntime/ (start at /LoopRuntime/documentation/loopruntime)"

## The suites under AddressSanitizer (CI runs both sanitizers).
## lld (Fuzz/toolset.json): gold warns about every ASan symbol it cannot export.
## SWIFT_BACKTRACE=enable=no: after a crash the Swift backtracer's memory
## reader trips ASan and the test process hangs instead of failing.
test-asan:
	$(SWIFT) build --product loopdPackageTests --sanitize=address --scratch-path .build-asan --toolset Fuzz/toolset.json
	SWIFT_BACKTRACE=enable=no LSAN_OPTIONS=suppressions=$(CURDIR)/.ci/lsan.supp $(SWIFT) test --skip-build --sanitize=address \
		--scratch-path .build-asan --toolset Fuzz/toolset.json

## Side-by-side benchmarks: LoopRuntime vs Dispatch, SwiftNIO, Foundation and the raw
## limit (LoopBench); loopd end to end over its socket beside redis (LoopdBench).
## They are a package of their own (Benchmarks/Package.swift), so depending on
## LoopRuntime pulls in none of their peers; LoopdBench tests .build/release/loopd.
BENCH = $(SWIFT) run -c release --package-path Benchmarks
bench: setup
	$(SWIFT) build -c release --product loopd
	$(BENCH) LoopBench
	$(BENCH) LoopdBench

bench-quick: setup
	$(SWIFT) build -c release --product loopd
	$(BENCH) LoopBench --quick
	$(BENCH) LoopdBench --quick

example:
	$(SWIFT) run loop-example

## Examples/consumer, a package that depends on this repository by URL as an
## outside user's does, built and run against a clone of the committed HEAD.
# The clone's folder is named loopd: SwiftPM names a package by its URL's last part.
CONSUMER_CLONE ?= /tmp/loopd-consumer/loopd
consumer: setup
	rm -rf $(CONSUMER_CLONE) Examples/consumer/.build
	git clone -q --no-hardlinks . $(CONSUMER_CLONE)
	git -C $(CONSUMER_CLONE) checkout -q -B main
	LOOPD_PACKAGE_URL=file://$(CONSUMER_CLONE) $(SWIFT) run --package-path Examples/consumer consumer

clean:
	rm -rf .build .build-tsan .build-asan .build-bench .build-fuzz .build-docs Benchmarks/.build

## Install loopd as a system service (docs/OPERATIONS.md): release binaries,
## units, config (an existing one is kept), journal catalog, sysusers file.
## DESTDIR= stages into a tree (then nothing is run on this machine); PREFIX=
## moves binaries and data, and the unit's ExecStart= follows BINDIR.
## Then: systemctl enable --now loopd.socket
.PHONY: install uninstall test-systemd
PREFIX ?= /usr/local
BINDIR ?= $(PREFIX)/bin
SYSCONFDIR ?= /etc
UNITDIR ?= /etc/systemd/system
CATALOGDIR ?= $(PREFIX)/lib/systemd/catalog
SYSUSERSDIR ?= $(PREFIX)/lib/sysusers.d
DOCDIR ?= $(PREFIX)/share/doc/loopd
RELEASE_SCRATCH ?= .build
# A directory with loopd and loopctl already built: install those, build nothing.
PREBUILT ?=
RELEASE_BUILD = $(SWIFT) build -c release --scratch-path $(RELEASE_SCRATCH)
# The toolchain's static backtracer (see SWIFT_BACKTRACE in systemd/loopd.service).
SWIFT_BACKTRACER ?= $(shell d=$$(dirname "$$(readlink -f "$$(command -v $(SWIFT))")") && \
	echo "$$(dirname "$$d")/libexec/swift/linux/swift-backtrace-static")
UNIT_PATHS = -e 's|/usr/local/bin/|$(BINDIR)/|g' -e 's|/etc/loopd/|$(SYSCONFDIR)/loopd/|g' \
	-e 's|/usr/local/share/doc/loopd/|$(DOCDIR)/|g' \
	-e 's|/opt/swift/usr/libexec/swift/linux/swift-backtrace-static|$(SWIFT_BACKTRACER)|g'

install: setup
	@if [ -n "$(PREBUILT)" ]; then echo "installing the binaries in $(PREBUILT) (no build)"; \
	else $(RELEASE_BUILD) --product loopd && $(RELEASE_BUILD) --product loopctl; fi
	bin="$(PREBUILT)" && { [ -n "$$bin" ] || bin=$$($(RELEASE_BUILD) --show-bin-path); } && \
		install -d -m 0755 $(DESTDIR)$(BINDIR) && \
		install -m 0755 "$$bin/loopd" "$$bin/loopctl" $(DESTDIR)$(BINDIR)/
	install -d -m 0755 $(DESTDIR)$(UNITDIR) $(DESTDIR)$(CATALOGDIR) $(DESTDIR)$(SYSUSERSDIR) \
		$(DESTDIR)$(DOCDIR) $(DESTDIR)$(SYSCONFDIR)/loopd
	@[ -x "$(SWIFT_BACKTRACER)" ] || echo "warning: no $(SWIFT_BACKTRACER): crash backtraces will be missing"
	sed $(UNIT_PATHS) systemd/loopd.service >$(DESTDIR)$(UNITDIR)/loopd.service
	sed $(UNIT_PATHS) systemd/loopd.socket >$(DESTDIR)$(UNITDIR)/loopd.socket
	chmod 0644 $(DESTDIR)$(UNITDIR)/loopd.service $(DESTDIR)$(UNITDIR)/loopd.socket
	install -m 0644 systemd/loopd.catalog $(DESTDIR)$(CATALOGDIR)/loopd.catalog
	install -m 0644 systemd/loopd.sysusers $(DESTDIR)$(SYSUSERSDIR)/loopd.conf
	install -m 0644 docs/OPERATIONS.md docs/PROTOCOL.md $(DESTDIR)$(DOCDIR)/
	install -m 0644 Config/loopd.production.toml $(DESTDIR)$(DOCDIR)/loopd.production.toml
	install -m 0644 Config/loopd.toml $(DESTDIR)$(DOCDIR)/loopd.reference.toml
	@if [ -e $(DESTDIR)$(SYSCONFDIR)/loopd/loopd.toml ]; then \
		echo "kept the existing $(SYSCONFDIR)/loopd/loopd.toml (the shipped one: $(DOCDIR)/loopd.production.toml)"; \
	else install -m 0644 Config/loopd.production.toml $(DESTDIR)$(SYSCONFDIR)/loopd/loopd.toml; fi
	@if [ -z "$(DESTDIR)" ]; then \
		set -e; \
		systemd-sysusers $(SYSUSERSDIR)/loopd.conf; \
		if command -v journalctl >/dev/null; then journalctl --update-catalog; fi; \
		if [ -d /run/systemd/system ]; then systemctl daemon-reload; fi; \
		$(BINDIR)/loopd --check-config --config $(SYSCONFDIR)/loopd/loopd.toml; \
		echo "installed; start with: systemctl enable --now loopd.socket"; \
	fi

## Removes what `make install` put in place, except the config in
## $(SYSCONFDIR)/loopd, the durable state in /var/lib/loopd and the group.
uninstall:
	@if [ -z "$(DESTDIR)" ] && [ -d /run/systemd/system ]; then \
		systemctl disable --now loopd.socket loopd.service || true; fi
	rm -f $(DESTDIR)$(BINDIR)/loopd $(DESTDIR)$(BINDIR)/loopctl \
		$(DESTDIR)$(UNITDIR)/loopd.service $(DESTDIR)$(UNITDIR)/loopd.socket \
		$(DESTDIR)$(CATALOGDIR)/loopd.catalog $(DESTDIR)$(SYSUSERSDIR)/loopd.conf
	rm -rf $(DESTDIR)$(DOCDIR)
	@if [ -z "$(DESTDIR)" ]; then \
		if command -v journalctl >/dev/null; then journalctl --update-catalog; fi; \
		if [ -d /run/systemd/system ]; then systemctl daemon-reload; fi; \
		echo "kept $(SYSCONFDIR)/loopd, /var/lib/loopd (durable jobs) and the group loopd"; \
	fi

## loopd under a real systemd booted privately for the test (needs root;
## builds release binaries in .build, then installs them into a private root
## inside the test's namespaces: it neither depends on nor changes what this
## machine has installed): Tests/systemd/run.sh.
test-systemd: setup
	Tests/systemd/run.sh

## libFuzzer targets for the request decoder, line framer and config parser
## (Fuzz/run.sh; docs/RELIABILITY.md, "Fuzzing"): each for 60 s (CI), or for
## 10 minutes each (the documented long run). Builds in .build-fuzz.
.PHONY: fuzz fuzz-long
fuzz: setup
	Fuzz/run.sh 60

fuzz-long: setup
	Fuzz/run.sh 600

## Load, crash consistency, resource faults, leaks and privilege, against the
## real daemon (Tests/reliability/; docs/RELIABILITY.md, "Load" onwards).
## `reliability` runs the CI forms (about 4 minutes after the build; the
## disk-full and privilege parts need root and say so when they skip);
## `soak` is the 10-minute load. Release binaries in .build (shared with
## `bench` and `test-systemd`, so CI builds them once).
.PHONY: reliability soak
RELIABILITY_BUILD = $(SWIFT) build -c release
reliability: setup
	$(RELIABILITY_BUILD) --product loopd
	$(RELIABILITY_BUILD) --product loopctl
	Tests/reliability/run.sh "$$($(RELIABILITY_BUILD) --show-bin-path)"

soak: setup
	$(RELIABILITY_BUILD) --product loopd
	python3 Tests/reliability/load.py --bin "$$($(RELIABILITY_BUILD) --show-bin-path)" --duration 600 --soak
