#!/usr/bin/env python3
"""What watching loopd costs: the web dashboard (loopd-web) and `loopctl top`.

    .build/web-venv/bin/python Benchmarks/dashboard.py --web PATH [--bin DIR]
        [--bench PATH] [--pairs N] [--jobs N] [--quick]

  cost     LoopdBench `--only seq1,c16,pipe64 --rounds 1`, run 2N times in N
           pairs, the two conditions alternating A B, B A, A B, ...:
             A  nothing watching loopd;
             B  loopd-web (`--interval 1`) with its overview open in headless
                Chromium, live updates on, and `loopctl top` (interval 1 s)
                in a 120x40 tmux window, both on the loopd LoopdBench runs.
           LoopdBench starts its own loopd in a fresh directory below
           `--tmp DIR`; this script finds its socket there, stops LoopdBench
           (SIGSTOP) before its first submit, attaches the watchers (B) or
           none (A), lets them settle for 2 s and lets LoopdBench go on
           (SIGCONT). Per scenario: the median jobs/s and loopd CPU per job
           of each condition, B/A, every pair's figures, and whether the
           change is within the spread of the runs of one condition.
  server   loopd holding 1,000 finished noop jobs (--jobs N), loopd-web
           on loopback driven by `wrk --latency -t2 -c8 -d10s` (3 s with
           --quick): req/s, p50, p99, and the CPU loopd-web and loopd spent per request, for
           the overview (`/`), a jobs page of 100 (`/jobs?limit=100`) and
           the next one (`...&cursor=...`).

--bin DIR holds loopd and loopctl (default .build/release); --web is a
loopd-web (`swift build -c release --package-path Web --product loopd-web`);
--bench the LoopdBench executable (default: Benchmarks/.build-bench/release,
else Benchmarks/.build/release). Needs Selenium (the venv `make test-web`
makes in .build/web-venv), /usr/bin/chromium, /usr/bin/chromedriver, tmux
and wrk. --pairs N (default 4, 1 with --quick); --quick also runs LoopdBench
with --quick (1 s a scenario). Prints a Markdown report on stdout, progress
on stderr. Exit status 0 when everything ran, 1 when something could not
run, 2 when a tool is missing. Every process it starts is stopped at the
end, also after an error or SIGINT/SIGTERM.
"""

import argparse
import glob
import html
import os
import re
import resource
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request

sys.dont_write_bytecode = True
REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(REPO, "Tests", "reliability"))
from loopdtest import Client, LoopdProcess, binary_dir, make_workdir, on_exit, wait_until  # noqa: E402

SCENARIOS = [("seq1", "1 client, sequential"), ("c16", "16 clients, sequential each"),
             ("pipe64", "1 client, 64 pipelined")]
SETTLE_SECONDS = 2.0
# LoopdBench gives up when loopd has not answered a ping within 15 s of its
# start; the watchers must be attached well within that.
ATTACH_SECONDS = 10.0
CHROMIUM = "/usr/bin/chromium"
CHROMEDRIVER = "/usr/bin/chromedriver"


def progress(text):
    print(f"  {text}", file=sys.stderr, flush=True)


class RunError(Exception):
    """Something that should have run did not."""


class MissedStart(RunError):
    """LoopdBench had begun submitting before it was stopped: the run is tried again."""


# ---------------------------------------------------------------- /proc


def load_average():
    with open("/proc/loadavg") as f:
        return " ".join(f.read().split()[:3])


def busy_seconds():
    """CPU seconds the whole machine has spent busy (user, nice, system,
    irq, softirq; not idle, iowait or steal) since boot."""
    with open("/proc/stat") as f:
        fields = [int(x) for x in f.readline().split()[1:]]
    return (fields[0] + fields[1] + fields[2] + fields[5] + fields[6]) / os.sysconf("SC_CLK_TCK")


def process_cpu(pid):
    """CPU seconds of the process, with those of its reaped children; 0 when gone."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return sum(int(x) for x in fields[11:15]) / os.sysconf("SC_CLK_TCK")


def descendants(pid):
    """`pid` and every process below it."""
    parents = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as f:
                    parents[int(entry)] = int(f.read().rsplit(")", 1)[1].split()[1])
            except OSError:
                pass
    found, todo = [], [pid]
    while todo:
        p = todo.pop()
        found.append(p)
        todo.extend(c for c, parent in parents.items() if parent == p)
    return found


def tree_cpu(pid):
    return sum(process_cpu(p) for p in descendants(pid))


def children_cpu():
    """CPU seconds of this script's reaped children (LoopdBench and its loopd)."""
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def own_cpu():
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def machine():
    with open("/proc/meminfo") as f:
        mem = int(f.readline().split()[1]) / (1 << 20)
    return f"{os.cpu_count()} CPUs, {mem:.0f} GiB, Linux {os.uname().release}"


# ---------------------------------------------------------------- processes


def stop_process(proc, grace=5.0):
    """SIGTERM (after SIGCONT, in case it is stopped), SIGKILL after `grace`; reaps."""
    if proc is None or proc.poll() is not None:
        return
    for sig in (signal.SIGCONT, signal.SIGTERM):
        try:
            os.kill(proc.pid, sig)
        except ProcessLookupError:
            return
    try:
        proc.wait(timeout=grace)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait(timeout=10)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Web:
    """loopd-web on a free loopback port, on the loopd at `sock`."""

    def __init__(self, binary, sock, directory):
        self.port = free_port()
        self.log_path = os.path.join(directory, "loopd-web.log")
        log = open(self.log_path, "w")
        self.proc = subprocess.Popen([binary, "--socket", sock, "--server-uid", "any", "--listen",
                                      f"127.0.0.1:{self.port}", "--interval", "1"],
                                     stdin=subprocess.DEVNULL, stdout=log, stderr=log)
        log.close()
        on_exit(self.stop)
        if not wait_until(self.listening, 30, 0.02):
            raise RunError(f"loopd-web did not say it listens within 30 s: {self.log_tail()}")

    def listening(self):
        if self.proc.poll() is not None:
            raise RunError(f"loopd-web exited with {self.proc.returncode}: {self.log_tail()}")
        with open(self.log_path, errors="replace") as f:
            return "loopd-web listening on" in f.read()

    def log_tail(self):
        with open(self.log_path, errors="replace") as f:
            return f.read()[-1000:]

    def url(self, path):
        return f"http://127.0.0.1:{self.port}{path}"

    def cpu(self):
        return process_cpu(self.proc.pid)

    def stop(self):
        stop_process(self.proc)


class Browser:
    """Headless Chromium through chromedriver (Selenium)."""

    def __init__(self, selenium):
        webdriver, Options, Service = selenium
        options = Options()
        options.binary_location = CHROMIUM
        for a in ["--headless=new", "--no-sandbox", "--window-size=1280,800", "--disable-gpu",
                  "--disable-background-networking", "--disable-component-update", "--no-first-run"]:
            options.add_argument(a)
        self.service = Service(CHROMEDRIVER)
        self.driver = None
        on_exit(self.stop)
        self.driver = webdriver.Chrome(service=self.service, options=options)
        self.driver.set_page_load_timeout(30)
        self.pid = self.service.process.pid

    def open_live(self, url):
        """Opens `url` and waits until its live updates stream."""
        self.driver.get(url)

        def streaming():
            return self.driver.execute_script(
                "const s = document.getElementById('live-status'); return s && s.textContent === 'live';")
        if not wait_until(streaming, ATTACH_SECONDS, 0.05):
            raise RunError(f"the page at {url} did not start its live updates")
        # Counts the updates the page applies (each replaces the live part).
        self.driver.execute_script(
            "window.liveUpdates = 0; new MutationObserver(() => { window.liveUpdates += 1; })"
            ".observe(document.getElementById('live'), {childList: true});")

    def updates(self):
        """Live updates applied since `open_live`."""
        return self.driver.execute_script("return window.liveUpdates;")

    def cpu(self):
        return tree_cpu(self.pid)

    def stop(self):
        if self.driver is not None:
            try:
                self.driver.quit()
            except Exception as e:  # the browser may be gone already
                progress(f"chromium: {e}")
            self.driver = None
        proc = getattr(self.service, "process", None)
        if proc is not None and proc.poll() is None:
            stop_process(proc)


class Top:
    """`loopctl top` in a tmux server of its own (its socket in `directory`)."""

    def __init__(self, loopctl, sock, directory):
        self.tmux = ["tmux", "-S", os.path.join(directory, "tmux.sock")]
        self.server_pid = self.pid = None
        on_exit(self.stop)
        command = f"exec {loopctl} top --socket {sock}"
        subprocess.run(self.tmux + ["new-session", "-d", "-s", "top", "-x", "120", "-y", "40", command],
                       check=True, timeout=10)
        ids = subprocess.run(self.tmux + ["display-message", "-p", "-t", "top", "#{pid} #{pane_pid}"],
                             check=True, capture_output=True, text=True, timeout=10).stdout.split()
        self.server_pid, self.pid = int(ids[0]), int(ids[1])
        if not wait_until(self.showing, ATTACH_SECONDS, 0.05):
            raise RunError(f"loopctl top shows no workers: {self.screen()!r}")

    def screen(self):
        r = subprocess.run(self.tmux + ["capture-pane", "-p", "-t", "top"], capture_output=True, text=True,
                           timeout=10)
        return r.stdout

    def showing(self):
        return "w1" in self.screen()

    def cpu(self):
        return process_cpu(self.pid)

    def stop(self):
        for pid in (self.pid, self.server_pid):
            if pid:
                try:
                    os.kill(pid, signal.SIGTERM)
                except ProcessLookupError:
                    pass
        if self.server_pid:
            wait_until(lambda: not os.path.exists(f"/proc/{self.server_pid}"), 5, 0.05)
            try:
                os.kill(self.server_pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        self.pid = self.server_pid = None


# ---------------------------------------------------------------- LoopdBench


def number(text):
    """A LoopdBench figure: "22,261" -> 22261.0, "41.0 µs" and "1.11 ms" -> µs."""
    text = text.strip()
    m = re.match(r"([0-9.,]+)\s*(µs|ms|s)?", text)
    if not m:
        return None
    value = float(m.group(1).replace(",", ""))
    return value * {"µs": 1, "ms": 1e3, "s": 1e6}.get(m.group(2), 1) if m.group(2) else value


def table_rows(text, first_column):
    """The rows of the Markdown table whose header starts with `first_column`."""
    rows, inside = [], False
    for line in text.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")] if line.startswith("|") else None
        if cells and cells[0] == first_column:
            inside = True
        elif inside and cells is None:
            inside = False
        elif inside and not set(cells[0]) <= set("-"):
            rows.append(cells)
    return rows


def parse_bench(text):
    """{key: {rate, p50, p99, cpu_per_job}} from LoopdBench's report."""
    figures = {}
    main = {r[0]: r for r in table_rows(text, "scenario")}
    details = {r[0]: r for r in table_rows(text, "measurement")}
    for key, name in SCENARIOS:
        row, detail = main.get(name), details.get(name)
        if not row or number(row[1]) is None:
            raise RunError(f"LoopdBench reported no figure for {name}:\n{text[-2000:]}")
        figures[key] = {"rate": number(row[1]), "p50": number(row[2]), "p99": number(row[3]),
                        "cpu_per_job": number(detail[4]) if detail else None}
    return figures


class BenchRun:
    """One LoopdBench run, with the watchers (B) or without (A)."""

    def __init__(self, args, condition, pair, selenium):
        self.args, self.condition, self.pair, self.selenium = args, condition, pair, selenium
        self.directory = tempfile.mkdtemp(prefix=f"pair{pair}-{condition}-", dir=args.work)
        self.proc = self.web = self.browser = self.top = None

    def run(self):
        try:
            return self._run()
        finally:
            for watcher in (self.browser, self.top, self.web):
                if watcher:
                    watcher.stop()
            stop_process(self.proc)

    def _run(self):
        args = self.args
        if self.condition == "B":
            # Chromium's start is the slow part: done before LoopdBench runs,
            # so the pause before its first submit stays short.
            self.browser = Browser(self.selenium)
        argv = [args.bench, "--only", ",".join(k for k, _ in SCENARIOS), "--rounds", "1",
                "--loopd", os.path.join(args.bin, "loopd"), "--tmp", self.directory]
        if args.quick:
            argv.append("--quick")
        out_path = os.path.join(self.directory, "bench.out")
        err_path = os.path.join(self.directory, "bench.err")
        cpu_children = children_cpu()
        with open(out_path, "w") as out, open(err_path, "w") as err:
            self.proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=out, stderr=err)
        on_exit(lambda p=self.proc: stop_process(p))
        sock = self._socket(err_path)
        os.kill(self.proc.pid, signal.SIGSTOP)
        paused = time.monotonic()
        try:
            if not wait_until(lambda: self._answers(sock), ATTACH_SECONDS, 0.01):
                raise RunError(f"LoopdBench's loopd at {sock} does not answer")
            with Client(sock, timeout=5) as c:
                s = c.call({"op": "stats"})
            if s.get("completed", 0) or s.get("queued", 0) or s.get("running", 0):
                raise MissedStart("LoopdBench had submitted before it was stopped; trying again")
            if self.condition == "B":
                self.web = Web(args.web, sock, self.directory)
                self.browser.open_live(self.web.url("/"))
                self.top = Top(os.path.join(args.bin, "loopctl"), sock, self.directory)
            time.sleep(SETTLE_SECONDS)
            updates = self.browser.updates() if self.browser else 0
            attach = time.monotonic() - paused
            load = load_average()
            watchers = self._watcher_cpu()
            # LoopdBench's and its loopd's CPU so far (their start), which
            # the CPU of reaped children will include at the end.
            before = tree_cpu(self.proc.pid)
            busy, mine = busy_seconds(), own_cpu()
            start = time.monotonic()
        finally:
            os.kill(self.proc.pid, signal.SIGCONT)
        try:
            status = self.proc.wait(timeout=600)
        except subprocess.TimeoutExpired:
            raise RunError("LoopdBench did not finish within 600 s")
        wall = time.monotonic() - start
        watchers = {k: v - watchers[k] for k, v in self._watcher_cpu().items()}
        updates = self.browser.updates() - updates if self.browser else None
        ours = (children_cpu() - cpu_children - before) + (own_cpu() - mine) + sum(watchers.values())
        others = max(0.0, busy_seconds() - busy - ours)
        with open(out_path, errors="replace") as f:
            text = f.read()
        if status != 0:
            with open(err_path, errors="replace") as f:
                raise RunError(f"LoopdBench exited with {status}:\n{text[-1500:]}\n{f.read()[-1500:]}")
        figures = parse_bench(text)
        return {"condition": self.condition, "pair": self.pair, "figures": figures, "load": load,
                "attach": attach, "wall": wall, "others": others / wall, "updates": updates,
                "watchers": {k: v / wall for k, v in watchers.items()}}

    def _socket(self, err_path):
        """LoopdBench's loopd socket, as soon as it exists (LoopdBench then
        pings it every 20 ms before its first submit)."""
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            found = glob.glob(os.path.join(self.directory, "loopd-bench-*", "loopd.sock"))
            if found:
                return found[0]
            if self.proc.poll() is not None:
                with open(err_path, errors="replace") as f:
                    raise RunError(f"LoopdBench exited with {self.proc.returncode} before loopd was up:\n"
                                   + f.read()[-1500:])
            time.sleep(0.001)
        raise RunError("LoopdBench's loopd made no socket within 30 s")

    @staticmethod
    def _answers(sock):
        try:
            with Client(sock, timeout=2) as c:
                return c.call({"op": "ping"}).get("ok") is True
        except OSError:
            return False

    def _watcher_cpu(self):
        if self.condition == "A":
            return {}
        return {"loopd-web": self.web.cpu(), "Chromium": self.browser.cpu(), "loopctl top": self.top.cpu()}


def measure_cost(args, selenium):
    runs = []
    for pair in range(1, args.pairs + 1):
        order = "AB" if pair % 2 == 1 else "BA"
        for condition in order:
            progress(f"pair {pair} of {args.pairs}: {condition} "
                     f"({'nothing watching' if condition == 'A' else 'dashboard and top watching'}), "
                     f"load average {load_average()}")
            for attempt in (1, 2, 3):
                try:
                    run = BenchRun(args, condition, pair, selenium).run()
                    break
                except MissedStart as e:
                    if attempt == 3:
                        raise
                    progress(f"  {e}")
            f = run["figures"]
            progress("  " + ", ".join(f"{k} {f[k]['rate']:,.0f} jobs/s" for k, _ in SCENARIOS)
                     + f"; others used {run['others']:.2f} cores")
            runs.append(run)
    return runs


# ---------------------------------------------------------------- wrk


def wrk(url, seconds):
    r = subprocess.run(["wrk", "--latency", "-t2", "-c8", f"-d{seconds}s", url], capture_output=True,
                       text=True, timeout=seconds + 60)
    if r.returncode != 0:
        raise RunError(f"wrk {url} exited with {r.returncode}: {r.stderr or r.stdout}")
    out = r.stdout

    def latency(percent):
        m = re.search(rf"^\s*{percent}%\s+([0-9.]+)(us|ms|s)\s*$", out, re.MULTILINE)
        if not m:
            raise RunError(f"no {percent}% latency in wrk's output:\n{out}")
        return float(m.group(1)) * {"us": 1, "ms": 1e3, "s": 1e6}[m.group(2)]

    requests = re.search(r"^\s*(\d+) requests in", out, re.MULTILINE)
    rps = re.search(r"^Requests/sec:\s+([0-9.]+)", out, re.MULTILINE)
    if not requests or not rps:
        raise RunError(f"wrk's output has no totals:\n{out}")
    bad = re.search(r"Non-2xx or 3xx responses: (\d+)", out)
    errors = re.search(r"Socket errors: (.*)", out)
    return {"p50": latency(50), "p99": latency(99), "rps": float(rps.group(1)),
            "requests": int(requests.group(1)), "non2xx": int(bad.group(1)) if bad else 0,
            "socket_errors": errors.group(1).strip() if errors else ""}


def fetch(url):
    with urllib.request.urlopen(url, timeout=30) as r:
        if r.status != 200:
            raise RunError(f"GET {url}: {r.status}")
        return r.read().decode()


def job_rows(page):
    return len(re.findall(r"<tr><td><a ", page))


def submit_finished(sock, count):
    """`count` noop jobs, pipelined, not waited for; returns once all have ended."""
    with Client(sock, timeout=60) as c:
        c.send_many([{"id": k, "op": "submit", "action": "noop", "wait": False} for k in range(count)])
        for _ in range(count):
            r = c.read_reply()
            if not r or r.get("ok") is not True:
                raise RunError(f"submit refused: {r}")

    def ended():
        with Client(sock) as c:
            return c.call({"op": "stats"}).get("completed", 0) >= count
    if not wait_until(ended, 60, 0.05):
        raise RunError(f"the {count} jobs did not end within 60 s")


def measure_server(args):
    directory = tempfile.mkdtemp(prefix="server-", dir=args.work)
    daemon = LoopdProcess(args.bin, directory, fsync=False)
    web = None
    try:
        if not daemon.start():
            raise RunError("loopd did not start: " + daemon.log_tail())
        submit_finished(daemon.socket_path, args.jobs)
        web = Web(args.web, daemon.socket_path, directory)
        first = fetch(web.url("/jobs?limit=100"))
        nxt = re.search(r'<a href="([^"]+)" rel="next">', first)
        if not nxt:
            raise RunError("the jobs list has no next page")
        second_path = html.unescape(nxt.group(1))
        pages = [("GET / (overview)", "/"), ("GET /jobs?limit=100, first page", "/jobs?limit=100"),
                 ("GET /jobs?limit=100&cursor=..., next page", second_path)]
        results = []
        seconds = 3 if args.quick else 10
        load = load_average()
        for name, path in pages:
            url = web.url(path)
            body = fetch(url)
            rows = job_rows(body) if path != "/" else None
            progress(f"wrk {path[:40]}: warm-up, then {seconds} s")
            wrk(url, 1)
            web_cpu, loopd_cpu = web.cpu(), daemon.cpu_seconds()
            r = wrk(url, seconds)
            r["web_cpu"] = (web.cpu() - web_cpu) / r["requests"] * 1e6
            r["loopd_cpu"] = (daemon.cpu_seconds() - loopd_cpu) / r["requests"] * 1e6
            r.update(name=name, path=path, rows=rows, bytes=len(body.encode()))
            progress(f"  {r['rps']:,.0f} req/s, p50 {r['p50']:.0f} µs, p99 {r['p99']:.0f} µs")
            results.append(r)
        return {"results": results, "load_before": load, "load_after": load_average(), "seconds": seconds}
    finally:
        if web:
            web.stop()
        daemon.terminate()


# ---------------------------------------------------------------- report


def rate(v):
    return f"{v:,.0f}"


def spread(values):
    """(max - min) / median: how far runs of one condition lie apart."""
    return (max(values) - min(values)) / statistics.median(values) if len(values) > 1 else None


def verdict(a, b, higher_is_better):
    """Whether B's median differs from A's by more than either condition's spread."""
    if len(a) < 2:
        return "one pair: no spread to judge by"
    change = statistics.median(b) / statistics.median(a) - 1
    noise = max(spread(a), spread(b))
    if abs(change) <= noise:
        return f"within noise (spread {noise * 100:.0f}%)"
    worse = change < 0 if higher_is_better else change > 0
    return f"{'worse' if worse else 'better'} beyond the spread ({noise * 100:.0f}%)"


def cost_report(args, runs):
    by = {c: [r for r in runs if r["condition"] == c] for c in "AB"}
    pairs = sorted({r["pair"] for r in runs})

    def of(condition, pair):
        return next(r for r in by[condition] if r["pair"] == pair)

    print("### The dashboard's cost to loopd\n")
    print(f"LoopdBench `--only seq1,c16,pipe64 --rounds 1{' --quick' if args.quick else ''}`, "
          f"{len(pairs)} pair(s) in the order "
          + " ".join("AB" if p % 2 else "BA" for p in pairs)
          + ". A: nothing watching. B: loopd-web `--interval 1` with the overview open in headless "
          "Chromium (live updates on) and `loopctl top` (1 s) in tmux, on the loopd LoopdBench measures. "
          "Medians over the pairs; B/A of the medians.\n")
    print("| scenario | A jobs/s | B jobs/s | B/A | per pair: A / B (B/A) | judged |")
    print("|---|---|---|---|---|---|")
    for key, name in SCENARIOS:
        a = [r["figures"][key]["rate"] for r in by["A"]]
        b = [r["figures"][key]["rate"] for r in by["B"]]
        per = ", ".join(f"{rate(x)} / {rate(y)} ({y / x:.2f})" for x, y in
                        ((of("A", p)["figures"][key]["rate"], of("B", p)["figures"][key]["rate"]) for p in pairs))
        print(f"| {name} | {rate(statistics.median(a))} | {rate(statistics.median(b))} | "
              f"{statistics.median(b) / statistics.median(a):.2f} | {per} | {verdict(a, b, True)} |")
    print()
    print("| scenario | loopd CPU per job A | B | B/A | p50 A / B | p99 A / B | judged (CPU per job) |")
    print("|---|---|---|---|---|---|---|")
    for key, name in SCENARIOS:
        a = [r["figures"][key]["cpu_per_job"] for r in by["A"]]
        b = [r["figures"][key]["cpu_per_job"] for r in by["B"]]
        if None in a or None in b:
            continue

        def med(condition, field):
            return statistics.median(r["figures"][key][field] for r in by[condition])
        print(f"| {name} | {statistics.median(a):.1f} µs | {statistics.median(b):.1f} µs | "
              f"{statistics.median(b) / statistics.median(a):.2f} | {med('A', 'p50'):.0f} / {med('B', 'p50'):.0f} µs | "
              f"{med('A', 'p99'):.0f} / {med('B', 'p99'):.0f} µs | {verdict(a, b, False)} |")
    print()
    watchers = {}
    for r in by["B"]:
        for k, v in r["watchers"].items():
            watchers.setdefault(k, []).append(v)
    print("- the watchers' own CPU during the B runs (median, cores): "
          + ", ".join(f"{k} {statistics.median(v):.3f}" for k, v in watchers.items()))
    print("- per run: " + "; ".join(
        f"{r['pair']}{r['condition']} load {r['load'].split()[0]}, others {r['others']:.2f} cores, "
        f"paused {r['attach']:.1f} s" + (f", {r['updates']} live updates in {r['wall']:.0f} s" if r["updates"] is not None
                                          else "") for r in runs))
    print("- judged: \"within noise\" when the change of the medians is no larger than the spread "
          "((max − min) ÷ median) of either condition's runs; \"others\": CPU the rest of the machine used "
          "during the run, in cores; \"paused\": how long LoopdBench was stopped before its first submit "
          f"(attaching the watchers, then {SETTLE_SECONDS:.0f} s to settle).\n")


def server_report(args, server):
    s = server["seconds"]
    print("### The dashboard's own server\n")
    print(f"loopd (2 workers, journal fsync off) holding {args.jobs:,} finished noop jobs; loopd-web "
          f"`--interval 1` on 127.0.0.1; `wrk --latency -t2 -c8 -d{s}s` after a 1 s warm-up, one page at a "
          f"time. Load average {server['load_before']} before, {server['load_after']} after.\n")
    print("| request | jobs shown | bytes | req/s | p50 | p99 | loopd-web CPU per request | loopd CPU per request |")
    print("|---|---|---|---|---|---|---|---|")
    for r in server["results"]:
        print(f"| {r['name']} | {r['rows'] if r['rows'] is not None else '—'} | {r['bytes']:,} | {rate(r['rps'])} | "
              f"{latency_text(r['p50'])} | {latency_text(r['p99'])} | {r['web_cpu']:.0f} µs | {r['loopd_cpu']:.0f} µs |")
    print()
    problems = [f"{r['name']}: {r['non2xx']} responses not 2xx" for r in server["results"] if r["non2xx"]]
    problems += [f"{r['name']}: socket errors {r['socket_errors']}" for r in server["results"] if r["socket_errors"]]
    for p in problems:
        print(f"- {p}")
    print("- a jobs page of 100 (`limit=100`; 50 by default), the first and the next (its `cursor` from the "
          "first page's \"Next page\" link).\n")


def latency_text(us):
    return f"{us:.0f} µs" if us < 1000 else f"{us / 1000:.2f} ms"


# ---------------------------------------------------------------- main


def missing_tools(args):
    missing = []
    try:
        from selenium import webdriver
        from selenium.webdriver.chrome.options import Options
        from selenium.webdriver.chrome.service import Service
        selenium = (webdriver, Options, Service)
    except ImportError:
        selenium = None
        missing.append(f"selenium is missing for {sys.executable}: run this script with a python that has it, "
                       "e.g. .build/web-venv/bin/python (make test-web makes that venv), or "
                       "pip install selenium")
    for path in (CHROMIUM, CHROMEDRIVER):
        if not os.access(path, os.X_OK):
            missing.append(f"no {path} (Debian: apt-get install chromium chromium-driver)")
    for tool in ("tmux", "wrk"):
        if not shutil.which(tool):
            missing.append(f"no {tool} on PATH (Debian: apt-get install {tool})")
    if not os.access(args.web, os.X_OK):
        missing.append(f"no executable loopd-web at {args.web}: "
                       "swift build -c release --package-path Web --product loopd-web")
    if not os.access(os.path.join(args.bin, "loopctl"), os.X_OK):
        missing.append(f"no loopctl in {args.bin}: swift build -c release --product loopctl")
    if not args.bench or not os.access(args.bench, os.X_OK):
        missing.append("no LoopdBench: in Benchmarks/, swift build -c release --scratch-path .build-bench "
                       "--product LoopdBench (or name one with --bench PATH)")
    return missing, selenium


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bin", help="directory of loopd and loopctl (default .build/release)")
    ap.add_argument("--web", required=True, help="the loopd-web executable")
    ap.add_argument("--bench", help="the LoopdBench executable")
    ap.add_argument("--pairs", type=int, help="A/B pairs of LoopdBench runs (default 4, --quick 1)")
    ap.add_argument("--jobs", type=int, default=1000, help="finished jobs loopd holds for the server's pages")
    ap.add_argument("--quick", action="store_true", help="one pair of short runs, wrk for 3 s")
    args = ap.parse_args()
    args.bin = binary_dir(args.bin)
    args.web = os.path.abspath(args.web)
    args.pairs = args.pairs or (1 if args.quick else 4)
    if args.pairs < 1 or args.jobs < 100:
        ap.error("--pairs takes 1 or more, --jobs 100 or more")
    if args.bench is None:
        for d in (".build-bench", ".build"):
            candidate = os.path.join(REPO, "Benchmarks", d, "release", "LoopdBench")
            if os.access(candidate, os.X_OK):
                args.bench = candidate
                break
    else:
        args.bench = os.path.abspath(args.bench)
    missing, selenium = missing_tools(args)
    if missing:
        for m in missing:
            print(f"dashboard.py: {m}", file=sys.stderr)
        return 2
    args.work = make_workdir("loopd-dashboard-")

    started = time.strftime("%Y-%m-%d %H:%M")
    load_before = load_average()
    try:
        runs = measure_cost(args, selenium)
        server = measure_server(args)
    except (RunError, OSError, subprocess.SubprocessError) as e:
        print(f"dashboard.py: {e}", file=sys.stderr)
        return 1
    print(f"## What watching loopd costs: loopd-web and loopctl top{' (--quick)' if args.quick else ''}\n")
    print(f"- {started}; {machine()}; load average {load_before} before, {load_average()} after")
    print(f"- loopd and loopctl: `{args.bin}`; loopd-web: `{args.web}`; LoopdBench: `{args.bench}`\n")
    cost_report(args, runs)
    server_report(args, server)
    return 0


if __name__ == "__main__":
    sys.exit(main())
