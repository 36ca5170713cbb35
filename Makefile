# One entry point for people and CI. `make test` sets up and passes everything.
SWIFT ?= swift
# Tools taken out of Debian packages that also bring a service (.ci/setup)
# live in .build/tools/bin, after the system's own directories.
TOOLS_BIN := $(CURDIR)/.build/tools/bin
export PATH := /opt/swift/usr/bin:$(PATH):$(TOOLS_BIN)

.PHONY: setup setup-test setup-package setup-bench check-setup build run test test-tsan test-asan test-python test-web test-fleet \
	check-words check-metrics docs bench bench-build bench-quick bench-instructions example consumer clean

## What each purpose needs, from .ci/packages/PURPOSE (each line says why),
## installed without recommends, only when missing, and said before it is
## (.ci/setup; as non-root it names what is missing instead). `setup` is
## building and running loopd only; the test, package and benchmark lists
## add their tools, none of which enables or starts a service.
setup:
	@.ci/setup run
setup-test:
	@.ci/setup run test
setup-package:
	@.ci/setup run package
setup-bench:
	@.ci/setup run bench

## CI's first step: the setup steps install only what their purpose needs
## and leave no service enabled or running (needs root).
check-setup:
	.ci/check-setup

build: setup
	$(SWIFT) build

## loopd in the foreground on Config/loopd.toml, socket ./loopd.sock;
## in another terminal: .build/release/loopctl ping --socket ./loopd.sock
run: setup
	$(SWIFT) build -c release --product loopctl
	$(SWIFT) build -c release --product loopd
	.build/release/loopd --config Config/loopd.toml

## The whole suite, the web dashboard's, the fleet's (against a private
## PostgreSQL), then again under ThreadSanitizer.
test: setup-test
	$(SWIFT) build --product loopdPackageTests
	$(SWIFT) test --skip-build
	$(MAKE) test-web
	$(MAKE) test-fleet
	$(MAKE) test-tsan

test-tsan:
	$(SWIFT) build --product loopdPackageTests --sanitize=thread --scratch-path .build-tsan
	TSAN_OPTIONS=suppressions=$(CURDIR)/.ci/tsan.supp $(SWIFT) test --skip-build --sanitize=thread --scratch-path .build-tsan

## The Python client (clients/python; docs/clients/python.md): its tests
## against a real loopd, then `pip install` of the package into a throwaway
## venv. The loopd is LOOPD_BIN= if given, else the debug build (built here
## when out of date). pytest comes from Debian (.ci/packages/test); for a
## python3 without it (PYTHON=…), pip installs it.
PYTHON ?= python3
test-python: setup-test
	@$(PYTHON) -c 'import pytest' 2>/dev/null || $(PYTHON) -m pip install --quiet --break-system-packages pytest
	@bin="$(LOOPD_BIN)"; \
	if [ -z "$$bin" ]; then $(SWIFT) build --product loopd && bin="$$($(SWIFT) build --show-bin-path)/loopd"; fi; \
	echo "loopd: $$bin"; \
	LOOPD_BIN="$$bin" $(PYTHON) -m pytest -q -p no:cacheprovider clients/python/tests
	tmp=$$(mktemp -d) && trap 'rm -rf "$$tmp"' EXIT && \
		cp -r clients/python "$$tmp/src" && rm -rf "$$tmp/src/tests" && \
		$(PYTHON) -m venv "$$tmp/venv" && \
		"$$tmp/venv/bin/python" -m pip install --quiet --disable-pip-version-check "$$tmp/src" && \
		cd "$$tmp" && venv/bin/python -c 'import os, loopd; d = os.path.dirname(loopd.__file__); \
			assert "/venv/" in d and os.path.isfile(os.path.join(d, "py.typed")), d; \
			print("pip install ./clients/python: ok, loopd", loopd.__version__, "in", d)'

## The web dashboard (Web/, a package of its own): its Swift tests, then
## Tests/web/browser.py, which drives it in Debian's headless Chromium
## through chromedriver (.ci/packages/test) with Selenium (from PyPI, in a
## venv in .build/web-venv) against a real loopd, and saves screenshots in
## .build/web-screenshots. Needs root: a second dashboard runs as nobody.
WEB = $(SWIFT) build --package-path Web
WEB_VENV = .build/web-venv
test-web: setup-test
	$(SWIFT) build --product loopd
	$(SWIFT) build --product loopctl
	$(WEB) --build-tests
	$(SWIFT) test --package-path Web --skip-build
	@[ -x $(WEB_VENV)/bin/python ] && $(WEB_VENV)/bin/python -c 'import selenium' 2>/dev/null || \
		{ $(PYTHON) -m venv $(WEB_VENV) && $(WEB_VENV)/bin/pip install --quiet --disable-pip-version-check selenium; }
	bin="$$($(SWIFT) build --show-bin-path)" && $(WEB_VENV)/bin/python Tests/web/browser.py \
		--loopd "$$bin/loopd" --loopctl "$$bin/loopctl" --web "$$($(WEB) --show-bin-path)/loopd-web" \
		--screenshots .build/web-screenshots

## The fleet's tests (Tests/fleet): loopd daemons sharing a PostgreSQL
## database, a private cluster each test starts and removes
## (Tests/fleet/pgcluster.py) from Debian's server taken out of its package
## without its service (.ci/packages/test). They run the debug loopd and
## loopctl that `make test` built (test-web builds them), and build nothing.
## As root the cluster runs as nobody.
test-fleet: setup-test
	LOOPD_BIN=$(CURDIR)/.build/debug/loopd LOOPCTL_BIN=$(CURDIR)/.build/debug/loopctl \
		python3 -m pytest -q -p no:cacheprovider Tests/fleet

## Tracked files name no ticket numbers and no paths outside the repository;
## the documentation speaks of the product, not of how the work was organised.
check-words: setup-test
	.ci/check-words

## `loopctl metrics` from a real loopd passes Prometheus's `promtool check
## metrics` (promtool, taken out of Debian's prometheus package without its
## server: .ci/packages/test), and every family docs/OPERATIONS.md lists is
## there (Tests/metrics/promtool-check.sh).
check-metrics: setup-test
	$(SWIFT) build --product loopd
	$(SWIFT) build --product loopctl
	Tests/metrics/promtool-check.sh "$$($(SWIFT) build --show-bin-path)"

## The API documentation of LoopRuntime and LoopdClient, each a DocC catalog
## (Sources/LoopRuntime/LoopRuntime.docc, Sources/LoopdClient/LoopdClient.docc)
## with its module's own symbol graph (not LoopPlatform's; not the symbols
## LoopdClient re-exports from LoopdProtocol), as static sites: LoopRuntime's
## in .build/docs, served under /LoopRuntime/, LoopdClient's in
## .build/docs-loopdclient, served under /LoopdClient/. Fails on any DocC
## warning, on a public symbol without a doc comment, and on a catalog
## snippet missing from the snippets its test target compiles
## (.ci/check-docs). Builds in .build-docs with the toolchain's docc; the
## package gains no dependency.
DOCS_SCRATCH = .build-docs
DOCS_GRAPHS = $(DOCS_SCRATCH)/symbol-graphs
DOCS_SYMBOL_GRAPH_FLAGS = -Xswiftc -emit-symbol-graph -Xswiftc -emit-symbol-graph-dir -Xswiftc $(CURDIR)/$(DOCS_GRAPHS)
docs: setup
	.ci/check-docs snippets
	$(SWIFT) build --target LoopRuntime --scratch-path $(DOCS_SCRATCH) $(DOCS_SYMBOL_GRAPH_FLAGS)
	$(SWIFT) build --target LoopdClient --scratch-path $(DOCS_SCRATCH) $(DOCS_SYMBOL_GRAPH_FLAGS)
	rm -rf .build/docs .build/docs-loopdclient
	.ci/check-docs graphs LoopRuntime $(DOCS_GRAPHS) $(DOCS_SCRATCH)/loopruntime-graphs
	.ci/check-docs graphs LoopdClient $(DOCS_GRAPHS) $(DOCS_SCRATCH)/loopdclient-graphs
	.ci/check-docs coverage LoopRuntime $(DOCS_SCRATCH)/loopruntime-graphs
	.ci/check-docs coverage LoopdClient $(DOCS_SCRATCH)/loopdclient-graphs
	docc convert Sources/LoopRuntime/LoopRuntime.docc --warnings-as-errors \
		--additional-symbol-graph-dir $(DOCS_SCRATCH)/loopruntime-graphs \
		--fallback-display-name LoopRuntime --fallback-bundle-identifier org.loopd.LoopRuntime \
		--output-path .build/docs --transform-for-static-hosting --hosting-base-path LoopRuntime
	docc convert Sources/LoopdClient/LoopdClient.docc --warnings-as-errors \
		--additional-symbol-graph-dir $(DOCS_SCRATCH)/loopdclient-graphs \
		--fallback-display-name LoopdClient --fallback-bundle-identifier org.loopd.LoopdClient \
		--output-path .build/docs-loopdclient --transform-for-static-hosting --hosting-base-path LoopdClient
	@echo "LoopRuntime's documentation: .build/docs, to be served under /LoopRuntime/ (start at /LoopRuntime/documentation/loopruntime)"
	@echo "LoopdClient's documentation: .build/docs-loopdclient, to be served under /LoopdClient/ (start at /LoopdClient/documentation/loopdclient)"

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
## LoopRuntime pulls in none of their peers; LoopdBench tests the shipped
## release loopd in .build/release (`make release`). Benchmarks/million.py:
## that loopd holding a million delayed jobs beside beanstalkd (50,000 with --quick).
## LoopdBench counts each server's context switches and, with perf, its
## wake-ups per job; `bench-instructions` (part of `bench`) counts
## instructions and allocations per job under valgrind, about a minute.
## `--versus-beanstalkd` sets loopd beside beanstalkd in four workloads,
## unpinned and with every process on CPU 0 (`--pin 0`).
BENCH = $(SWIFT) run -c release --package-path Benchmarks
bench: setup-bench release
	$(BENCH) LoopBench
	$(BENCH) LoopdBench
	$(BENCH) LoopdBench --versus-beanstalkd
	$(BENCH) LoopdBench --versus-beanstalkd --pin 0
	$(BENCH) LoopdBench --instructions
	python3 Benchmarks/million.py --bin "$$($(RELEASE_BUILD) --show-bin-path)"

bench-instructions: setup-bench release
	$(BENCH) LoopdBench --instructions

## The quick benchmarks' binaries alone (CI builds them beside another step;
## building needs only the toolchain, so it installs nothing).
bench-build:
	$(SWIFT) build -c release --package-path Benchmarks --product LoopBench
	$(SWIFT) build -c release --package-path Benchmarks --product LoopdBench

bench-quick: setup-bench release
	$(BENCH) LoopBench --quick
	$(BENCH) LoopdBench --quick
	$(BENCH) LoopdBench --versus-beanstalkd --quick
	$(BENCH) LoopdBench --versus-beanstalkd --quick --pin 0
	python3 Benchmarks/million.py --quick --bin "$$($(RELEASE_BUILD) --show-bin-path)"

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
	rm -rf .build .build-web .build-tsan .build-asan .build-bench .build-fuzz .build-docs Benchmarks/.build Web/.build

## The version lives in Sources/LoopdProtocol/Version.swift and nowhere else:
## the binaries print it, and these lines read it for the manuals and the package.
VERSION := $(shell sed -n 's/^ *public static let current = "\([^"]*\)"$$/\1/p' Sources/LoopdProtocol/Version.swift)

## Release binaries with the Swift runtime linked in (`ldd` lists system
## libraries only), built once in $(RELEASE_SCRATCH) and reused by install,
## deb, test-systemd and reliability. Linked by lld (Fuzz/toolset.json): gold
## warns at every link about a mktemp call inside the static Foundation.
## -z now: the whole GOT read-only after start (full RELRO).
## loopd-web, the web dashboard, is a package of its own (Web/Package.swift,
## on Hummingbird, so the daemon's package pulls in no HTTP server): built
## with the same flags in $(WEB_SCRATCH), next to the daemon's build.
.PHONY: release version
RELEASE_SCRATCH ?= .build
WEB_SCRATCH ?= $(RELEASE_SCRATCH)-web
RELEASE_FLAGS = -c release --static-swift-stdlib --toolset Fuzz/toolset.json -Xlinker -z -Xlinker now
RELEASE_BUILD = $(SWIFT) build $(RELEASE_FLAGS) --scratch-path $(RELEASE_SCRATCH)
WEB_RELEASE_BUILD = $(SWIFT) build $(RELEASE_FLAGS) --package-path Web --scratch-path $(WEB_SCRATCH)
release: setup
	$(RELEASE_BUILD) --product loopd
	$(RELEASE_BUILD) --product loopctl
	$(WEB_RELEASE_BUILD) --product loopd-web

version:
	@echo $(VERSION)

## Regenerates man/loopctl.1 from loopctl's commands with swift-argument-parser's
## generate-manual plugin (it builds the whole package in release mode: minutes).
## Run it after changing loopctl's commands or options; commit the page.
.PHONY: man
man: setup
	$(SWIFT) package plugin --allow-writing-to-directory .build/plugins generate-manual --section 1 --date "$$(date -u +%F)"
	{ echo ".\\\" Generated from loopctl's commands by swift-argument-parser's generate-manual"; \
	  echo ".\\\" plugin: \`make man\` regenerates it. The Makefile fills in @VERSION@."; \
	  sed -e 's/^\.Os$$/.Os loopd @VERSION@/' -e 's/^$$/.Pp/' .build/plugins/GenerateManual/outputs/loopctl/loopctl.1; } >man/loopctl.1

## Install loopd as a system service (docs/OPERATIONS.md): release binaries
## (loopd-web's too), the crash backtracer, units (loopd's, the timer that
## writes its metrics for node_exporter, and the web dashboard's socket and
## service), config (an existing one is kept), journal catalog, sysusers file
## (the group loopd, the users loopd-job and loopd-web), manuals, shell
## completions, docs.
## DESTDIR= stages into a tree (then nothing is run on this machine; `make deb`
## does that); PREFIX= moves binaries and data, and the unit follows.
## Then: systemctl enable --now loopd.socket (and loopd-metrics.timer,
## loopd-web.socket: neither is enabled by the install)
.PHONY: install uninstall test-systemd deb lintian
PREFIX ?= /usr/local
BINDIR ?= $(PREFIX)/bin
SYSCONFDIR ?= /etc
UNITDIR ?= /etc/systemd/system
CATALOGDIR ?= $(PREFIX)/lib/systemd/catalog
SYSUSERSDIR ?= $(PREFIX)/lib/sysusers.d
PKGLIBDIR ?= $(PREFIX)/lib/loopd
DOCDIR ?= $(PREFIX)/share/doc/loopd
MANDIR ?= $(PREFIX)/share/man
BASHCOMPDIR ?= $(PREFIX)/share/bash-completion/completions
ZSHCOMPDIR ?= $(PREFIX)/share/zsh/site-functions
FISHCOMPDIR ?= $(PREFIX)/share/fish/vendor_completions.d
# A directory with loopd, loopctl and loopd-web already built: install
# those, build nothing. A swift-backtrace-static in it is installed too.
# PREBUILT_WEB= names another directory for loopd-web (`make deb` passes
# the two build directories).
PREBUILT ?=
PREBUILT_WEB ?= $(PREBUILT)
# The toolchain's static crash backtracer, installed as $(PKGLIBDIR)/swift-backtrace-static
# (SWIFT_BACKTRACE in systemd/loopd.service; docs/OPERATIONS.md, "Crash reports").
TOOLCHAIN_BACKTRACER = $(shell d=$$(dirname "$$(readlink -f "$$(command -v $(SWIFT))")") && \
	echo "$$(dirname "$$d")/libexec/swift/linux/swift-backtrace-static")
SWIFT_BACKTRACER ?= $(if $(wildcard $(PREBUILT)/swift-backtrace-static),$(PREBUILT)/swift-backtrace-static,$(TOOLCHAIN_BACKTRACER))
UNIT_PATHS = -e 's|/usr/local/bin/|$(BINDIR)/|g' -e 's|/etc/loopd/|$(SYSCONFDIR)/loopd/|g' \
	-e 's|/usr/local/share/doc/loopd/|$(DOCDIR)/|g' -e 's|/usr/local/lib/loopd/|$(PKGLIBDIR)/|g'
MAN_VERSION = -e 's|@VERSION@|$(VERSION)|g'

install: setup
	@if [ -n "$(PREBUILT)" ]; then echo "installing the binaries in $(PREBUILT) (no build)"; \
	else $(RELEASE_BUILD) --product loopd && $(RELEASE_BUILD) --product loopctl && \
		$(WEB_RELEASE_BUILD) --product loopd-web; fi
	bin="$(PREBUILT)" && { [ -n "$$bin" ] || bin=$$($(RELEASE_BUILD) --show-bin-path); } && \
		web="$(PREBUILT_WEB)" && { [ -n "$$web" ] || web=$$($(WEB_RELEASE_BUILD) --show-bin-path); } && \
		install -d -m 0755 $(DESTDIR)$(BINDIR) && \
		install -m 0755 "$$bin/loopd" "$$bin/loopctl" "$$web/loopd-web" $(DESTDIR)$(BINDIR)/
	install -d -m 0755 $(DESTDIR)$(UNITDIR) $(DESTDIR)$(CATALOGDIR) $(DESTDIR)$(SYSUSERSDIR) \
		$(DESTDIR)$(DOCDIR) $(DESTDIR)$(SYSCONFDIR)/loopd $(DESTDIR)$(PKGLIBDIR) \
		$(DESTDIR)$(MANDIR)/man1 $(DESTDIR)$(MANDIR)/man5 $(DESTDIR)$(MANDIR)/man8 \
		$(DESTDIR)$(BASHCOMPDIR) $(DESTDIR)$(ZSHCOMPDIR) $(DESTDIR)$(FISHCOMPDIR)
	@[ -x "$(SWIFT_BACKTRACER)" ] || { echo "error: no $(SWIFT_BACKTRACER) (the Swift toolchain's static crash backtracer)"; exit 1; }
	install -m 0755 "$(SWIFT_BACKTRACER)" $(DESTDIR)$(PKGLIBDIR)/swift-backtrace-static
	sed $(UNIT_PATHS) systemd/loopd.service >$(DESTDIR)$(UNITDIR)/loopd.service
	sed $(UNIT_PATHS) systemd/loopd.socket >$(DESTDIR)$(UNITDIR)/loopd.socket
	sed $(UNIT_PATHS) systemd/loopd-metrics.service >$(DESTDIR)$(UNITDIR)/loopd-metrics.service
	sed $(UNIT_PATHS) systemd/loopd-metrics.timer >$(DESTDIR)$(UNITDIR)/loopd-metrics.timer
	sed $(UNIT_PATHS) systemd/loopd-web.service >$(DESTDIR)$(UNITDIR)/loopd-web.service
	sed $(UNIT_PATHS) systemd/loopd-web.socket >$(DESTDIR)$(UNITDIR)/loopd-web.socket
	chmod 0644 $(DESTDIR)$(UNITDIR)/loopd.service $(DESTDIR)$(UNITDIR)/loopd.socket \
		$(DESTDIR)$(UNITDIR)/loopd-metrics.service $(DESTDIR)$(UNITDIR)/loopd-metrics.timer \
		$(DESTDIR)$(UNITDIR)/loopd-web.service $(DESTDIR)$(UNITDIR)/loopd-web.socket
	sed $(UNIT_PATHS) systemd/loopd.catalog >$(DESTDIR)$(CATALOGDIR)/loopd.catalog
	chmod 0644 $(DESTDIR)$(CATALOGDIR)/loopd.catalog
	install -m 0644 systemd/loopd.sysusers $(DESTDIR)$(SYSUSERSDIR)/loopd.conf
	for page in loopctl.1 loopd.toml.5 loopd.8 loopd-web.8; do \
		sed $(MAN_VERSION) $(UNIT_PATHS) man/$$page | gzip -9n >$(DESTDIR)$(MANDIR)/man$${page##*.}/$$page.gz && \
		chmod 0644 $(DESTDIR)$(MANDIR)/man$${page##*.}/$$page.gz || exit 1; done
	bin="$(PREBUILT)" && { [ -n "$$bin" ] || bin=$$($(RELEASE_BUILD) --show-bin-path); } && \
		"$$bin/loopctl" --generate-completion-script bash >$(DESTDIR)$(BASHCOMPDIR)/loopctl && \
		"$$bin/loopctl" --generate-completion-script zsh >$(DESTDIR)$(ZSHCOMPDIR)/_loopctl && \
		"$$bin/loopctl" --generate-completion-script fish >$(DESTDIR)$(FISHCOMPDIR)/loopctl.fish
	chmod 0644 $(DESTDIR)$(BASHCOMPDIR)/loopctl $(DESTDIR)$(ZSHCOMPDIR)/_loopctl $(DESTDIR)$(FISHCOMPDIR)/loopctl.fish
	install -m 0644 docs/OPERATIONS.md docs/PROTOCOL.md docs/FLEET.md $(DESTDIR)$(DOCDIR)/
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
		echo "metrics for node_exporter's textfile collector: systemctl enable --now loopd-metrics.timer"; \
		echo "the web dashboard on 127.0.0.1:9477: systemctl enable --now loopd-web.socket"; \
	fi

## Removes what `make install` put in place, except the config in
## $(SYSCONFDIR)/loopd (the dashboard's password file too), the durable
## state in /var/lib/loopd, the group and the users loopd-job and loopd-web.
## The dashboard stops first: it is a client, and would start loopd again.
uninstall:
	@if [ -z "$(DESTDIR)" ] && [ -d /run/systemd/system ]; then \
		systemctl disable --now loopd-web.socket loopd-web.service || true; \
		systemctl disable --now loopd-metrics.timer loopd-metrics.service || true; \
		systemctl disable --now loopd.socket loopd.service || true; fi
	rm -f $(DESTDIR)$(BINDIR)/loopd $(DESTDIR)$(BINDIR)/loopctl $(DESTDIR)$(BINDIR)/loopd-web \
		$(DESTDIR)$(UNITDIR)/loopd.service $(DESTDIR)$(UNITDIR)/loopd.socket \
		$(DESTDIR)$(UNITDIR)/loopd-metrics.service $(DESTDIR)$(UNITDIR)/loopd-metrics.timer \
		$(DESTDIR)$(UNITDIR)/loopd-web.service $(DESTDIR)$(UNITDIR)/loopd-web.socket \
		$(DESTDIR)$(CATALOGDIR)/loopd.catalog $(DESTDIR)$(SYSUSERSDIR)/loopd.conf \
		$(DESTDIR)$(MANDIR)/man1/loopctl.1.gz $(DESTDIR)$(MANDIR)/man5/loopd.toml.5.gz \
		$(DESTDIR)$(MANDIR)/man8/loopd.8.gz $(DESTDIR)$(MANDIR)/man8/loopd-web.8.gz \
		$(DESTDIR)$(BASHCOMPDIR)/loopctl $(DESTDIR)$(ZSHCOMPDIR)/_loopctl $(DESTDIR)$(FISHCOMPDIR)/loopctl.fish
	rm -rf $(DESTDIR)$(DOCDIR) $(DESTDIR)$(PKGLIBDIR)
	@if [ -z "$(DESTDIR)" ]; then \
		if command -v journalctl >/dev/null; then journalctl --update-catalog; fi; \
		if [ -d /run/systemd/system ]; then systemctl daemon-reload; fi; \
		echo "kept $(SYSCONFDIR)/loopd, /var/lib/loopd (durable jobs), the group loopd and the users loopd-job and loopd-web"; \
	fi

## The Debian package loopd_$(VERSION)-$(DEB_REVISION)_ARCH.deb (docs/OPERATIONS.md,
## "Install"): `make install` staged into a tree with Debian's paths, plus
## the maintainer scripts and the package's docs in packaging/deb. Uses the
## release binaries of `make release`, loopd-web's included (no second
## build). It installs loopd-web and its units but enables none of them
## (docs/OPERATIONS.md, "Web dashboard"). `make lintian` checks it
## (fails on any error or warning; docs/OPERATIONS.md lists the one override).
DEB_REVISION ?= 1
DEB_VERSION = $(VERSION)-$(DEB_REVISION)
DEB_ARCH := $(shell dpkg --print-architecture 2>/dev/null)
DEB_FILE = loopd_$(DEB_VERSION)_$(DEB_ARCH).deb
DEB_OUT ?= $(RELEASE_SCRATCH)/deb
DEB_MAINTAINER ?= loopd maintainers <maintainers@users.noreply.a-seed-4e264c2f.example>
deb: setup-package release
	packaging/deb/build "$(DEB_OUT)" "$(VERSION)" "$(DEB_REVISION)" "$(DEB_MAINTAINER)" \
		"$$($(RELEASE_BUILD) --show-bin-path)" "$$($(WEB_RELEASE_BUILD) --show-bin-path)" "$(SWIFT_BACKTRACER)"

lintian: deb
	lintian --fail-on error,warning --info "$(DEB_OUT)/$(DEB_FILE)"

## loopd and its web dashboard under a real systemd booted privately for the
## test (needs root): builds the release binaries and the .deb (checked by
## lintian), then, inside the test's namespaces with the toolchain hidden,
## `make install` and the package each go into a private root: it neither
## depends on nor changes what this machine has installed. Tests/systemd/run.sh.
test-systemd: setup-test lintian
	Tests/systemd/run.sh "$(DEB_OUT)/$(DEB_FILE)"

## libFuzzer targets for the request decoder, line framer and config parser
## (Fuzz/run.sh; docs/RELIABILITY.md, "Fuzzing"): each for 60 s (CI), or for
## 10 minutes each (the documented long run). Builds in .build-fuzz.
.PHONY: fuzz fuzz-long
fuzz: setup-test
	Fuzz/run.sh 60

fuzz-long: setup-test
	Fuzz/run.sh 600

## Load, crash consistency, resource faults, leaks and privilege, against the
## real daemon (Tests/reliability/; docs/RELIABILITY.md, "Load" onwards).
## `reliability` runs the CI forms (about 4 minutes after the build; the
## disk-full and privilege parts need root and say so when they skip);
## `soak` is the 10-minute load. The release binaries of `make release`, as
## shipped (shared with `deb` and `test-systemd`, so CI builds them once).
.PHONY: reliability soak
reliability: setup-test release
	Tests/reliability/run.sh "$$($(RELEASE_BUILD) --show-bin-path)"

soak: setup-test release
	python3 Tests/reliability/load.py --bin "$$($(RELEASE_BUILD) --show-bin-path)" --duration 600 --soak
