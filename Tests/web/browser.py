#!/usr/bin/env python3
"""loopd-web in a real browser: Debian's headless Chromium, driven through
chromedriver by Selenium, against a real loopd and loopd-web on loopback.

    Tests/web/browser.py --loopd BIN --loopctl BIN --web BIN --screenshots DIR

Checks, each printed PASS or FAIL: the overview loads; a job submitted with
loopctl appears without a reload; a job's page shows its arguments and
output; cancel and retry work for a logged-in operator, and are refused
without a login and without the CSRF token; a dashboard that connects as
another uid shows none of root's jobs (loopd's isolation rules); the layout
fits a phone's width; times are shown in the viewer's zone with UTC on
hover; the page is reachable by keyboard; and no request leaves loopback.
Screenshots of the overview and of a job at 1280 px and at a phone's
390 px are saved in DIR. Needs root (the second dashboard runs as nobody).
Exits non-zero on any failure.
"""

from __future__ import annotations

import argparse
import json
import os
import pwd
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request

from selenium import webdriver
from selenium.webdriver.chrome.options import Options
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys

PASSWORD = "correct horse battery staple"
# Generous bounds: a check waits for an event, never for a time.
WAIT = 30.0

passed = 0
failed = 0


def check(name: str, ok: bool, why: str = "") -> None:
    global passed, failed
    if ok:
        passed += 1
        print(f"PASS {name}", flush=True)
    else:
        failed += 1
        print(f"FAIL {name}{' -- ' + why if why else ''}", flush=True)


def wait_until(what: str, fn, timeout: float = WAIT):
    deadline = time.monotonic() + timeout
    last = None
    while time.monotonic() < deadline:
        try:
            last = fn()
            if last:
                return last
        except Exception as e:  # a page between two renders
            last = e
        time.sleep(0.1)
    raise TimeoutError(f"{what}: not within {timeout:.0f}s (last: {last!r})")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Stack:
    """loopd, two dashboards (root: an administrator; nobody: not) and Chromium."""

    def __init__(self, args: argparse.Namespace) -> None:
        self.args = args
        self.dir = tempfile.mkdtemp(prefix="loopd-web-browser.")
        os.chmod(self.dir, 0o755)
        self.sock = os.path.join(self.dir, "loopd.sock")
        self.procs: list[subprocess.Popen] = []
        config = os.path.join(self.dir, "loopd.toml")
        with open(config, "w") as f:
            f.write(f"""[server]
socket = {json.dumps(self.sock)}
socket_mode = "0666"
state_dir = {json.dumps(os.path.join(self.dir, "state"))}
log_level = "warning"

[journal]
fsync = false

[exec]
user = "nobody"

[[workers]]
name = "w1"

[[workers]]
name = "w2"

[actions.printf]
argv = ["/usr/bin/printf", "%s\\n"]
max_client_args = 8
allow_users = ["*"]

[actions.exit3]
argv = ["/bin/sh", "-c", "exit 3"]
allow_users = ["*"]

[schedules.nightly]
action = "noop"
cron = "0 3 * * *"
""")
        self.start([args.loopd, "--config", config], "loopd.log")
        wait_until("loopd's socket", lambda: self.loopctl("ping", check=False).returncode == 0)
        pw = os.path.join(self.dir, "password")
        with open(pw, "w") as f:
            f.write(PASSWORD + "\n")
        os.chmod(pw, 0o600)
        self.port = free_port()
        self.start([args.web, "--socket", self.sock, "--server-uid", "any", "--password-file", pw,
                    "--listen", f"127.0.0.1:{self.port}", "--interval", "1"], "web.log")
        self.nobody_port = free_port()
        nobody = pwd.getpwnam("nobody")
        self.start([args.web, "--socket", self.sock, "--server-uid", "any",
                    "--listen", f"127.0.0.1:{self.nobody_port}", "--interval", "1"], "web-nobody.log",
                   user=(nobody.pw_uid, nobody.pw_gid))
        for port in (self.port, self.nobody_port):
            wait_until(f"loopd-web on {port}", lambda p=port: self.http_status(f"http://127.0.0.1:{p}/") == 200)
        options = Options()
        options.binary_location = "/usr/bin/chromium"
        for a in ["--headless=new", "--no-sandbox", "--window-size=1280,800", "--disable-gpu",
                  "--disable-background-networking", "--disable-component-update", "--no-first-run"]:
            options.add_argument(a)
        options.set_capability("goog:loggingPrefs", {"performance": "ALL"})
        # The viewer's zone is not UTC, so a localized time differs from the UTC one.
        os.environ["TZ"] = "Asia/Kolkata"
        self.driver = webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=options)
        self.driver.set_page_load_timeout(WAIT)

    def start(self, argv: list[str], log: str, user: tuple[int, int] | None = None) -> None:
        out = open(os.path.join(self.dir, log), "w")
        kwargs = {}
        if user:
            kwargs = {"user": user[0], "group": user[1], "extra_groups": []}
        self.procs.append(subprocess.Popen(argv, stdout=out, stderr=out, stdin=subprocess.DEVNULL, **kwargs))

    def loopctl(self, *argv: str, check: bool = True) -> subprocess.CompletedProcess:
        cmd, rest = argv[0], list(argv[1:])
        return subprocess.run([self.args.loopctl, cmd, "--socket", self.sock, *rest], capture_output=True,
                              text=True, check=check, timeout=WAIT)

    @staticmethod
    def http_status(url: str) -> int:
        try:
            with urllib.request.urlopen(url, timeout=5) as r:
                return r.status
        except urllib.error.HTTPError as e:
            return e.code
        except OSError:
            return 0

    def url(self, path: str, nobody: bool = False) -> str:
        return f"http://127.0.0.1:{self.nobody_port if nobody else self.port}{path}"

    def stop(self) -> None:
        try:
            self.driver.quit()
        except Exception:
            pass
        for p in reversed(self.procs):
            p.send_signal(signal.SIGTERM)
        for p in self.procs:
            try:
                p.wait(timeout=10)
            except subprocess.TimeoutExpired:
                p.kill()
        for log in ("loopd.log", "web.log", "web-nobody.log"):
            path = os.path.join(self.dir, log)
            if failed and os.path.exists(path):
                print(f"--- {log}\n{open(path).read()[-2000:]}")
        shutil.rmtree(self.dir, ignore_errors=True)


def click(driver, selector: str) -> None:
    """Clicks the element, found again if a live update replaced it meanwhile."""
    def attempt() -> bool:
        driver.find_element(By.CSS_SELECTOR, selector).click()
        return True
    wait_until(f"a click on {selector}", attempt)


def type_into(driver, selector: str, text: str) -> None:
    """Types `text` and Enter into a field of the live part: found again if a
    live update replaced it before it had the focus (once it has it, updates
    wait for it to lose it)."""
    def attempt() -> bool:
        field = driver.find_element(By.CSS_SELECTOR, selector)
        field.click()
        field.clear()
        field.send_keys(text, Keys.ENTER)
        return True
    wait_until(f"typing into {selector}", attempt)


def post_status(driver, path: str, fields: dict) -> int:
    """A form POST from the page's own origin, as a script of another page
    could not make it: the answer's status."""
    return driver.execute_async_script(
        """const [path, fields, done] = arguments;
        fetch(path, {method: "POST", body: new URLSearchParams(fields), redirect: "manual"})
            .then(r => done(r.status), e => done(String(e)));""", path, fields)


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--loopd", required=True)
    ap.add_argument("--loopctl", required=True)
    ap.add_argument("--web", required=True)
    ap.add_argument("--screenshots", required=True)
    args = ap.parse_args()
    os.makedirs(args.screenshots, exist_ok=True)
    s = Stack(args)
    d = s.driver
    try:
        # The overview.
        d.get(s.url("/"))
        check("the overview loads with its workers and charts",
              d.find_element(By.TAG_NAME, "h1").text == "Overview"
              and "w1" in d.find_element(By.ID, "live").text
              and len(d.find_elements(By.CSS_SELECTOR, "figure.chart svg[role=img]")) == 3)
        wait_until("the live stream", lambda: d.find_element(By.ID, "live-status").text == "live")

        # A job submitted through loopctl appears without a reload.
        d.execute_script("window.notReloaded = true")
        running = s.loopctl("submit", "--no-wait", "sleep", "600000").stdout.strip().splitlines()[-1]
        try:
            wait_until("the job on the overview", lambda: d.find_elements(By.CSS_SELECTOR, f"#live a[href='/jobs/{running}']"))
            check("a job submitted through loopctl appears live", d.execute_script("return window.notReloaded === true"))
        except TimeoutError as e:
            check("a job submitted through loopctl appears live", False, str(e))
        # The latest jobs are the newest, newest first, however many there are.
        burst = [s.loopctl("submit", "--no-wait", "printf", f"burst {i}").stdout.strip().splitlines()[-1]
                 for i in range(15)]
        try:
            rows = wait_until("the burst on the overview", lambda: (lambda r: r if r and burst[-1] in r[0] else None)(
                [row.text for row in d.find_elements(By.XPATH, "//section[h2='Latest jobs']//tbody/tr")]))
            check("the overview lists the newest jobs, newest first",
                  len(rows) == 12 and all(burst[-1 - i] in rows[i] for i in range(12)), str(rows[:3]))
        except TimeoutError as e:
            check("the overview lists the newest jobs, newest first", False, str(e))
        d.save_screenshot(os.path.join(args.screenshots, "overview-1280.png"))

        # A job's page: arguments and output.
        done = s.loopctl("submit", "--json", "printf", "hello from the browser test", "<b>not markup</b>")
        job = json.loads(done.stdout)["job"]
        d.get(s.url(f"/jobs/{job}"))
        outputs = " ".join(e.text for e in d.find_elements(By.CSS_SELECTOR, "pre.output"))
        args_text = d.find_element(By.CSS_SELECTOR, "ol.args").text
        check("a job's page shows its arguments and output",
              "hello from the browser test" in outputs and "<b>not markup</b>" in outputs
              and "<b>not markup</b>" in args_text and not d.find_elements(By.CSS_SELECTOR, "pre.output b"))
        t = d.find_element(By.CSS_SELECTOR, "time[datetime]")
        check("times are in the viewer's zone, UTC on hover",
              t.get_attribute("title").endswith(" UTC") and not t.text.endswith("UTC") and t.text != "",
              f"text {t.text!r}, title {t.get_attribute('title')!r}")
        d.save_screenshot(os.path.join(args.screenshots, "job-1280.png"))

        # Not logged in: no buttons, and a POST is refused.
        d.get(s.url(f"/jobs/{running}"))
        check("no action buttons without a login", not d.find_elements(By.CSS_SELECTOR, "form[action$='/cancel']"))
        check("cancel is refused without a login", post_status(d, f"/jobs/{running}/cancel", {"csrf": "x"}) == 403)
        failing = s.loopctl("submit", "--no-wait", "exit3").stdout.strip().splitlines()[-1]
        wait_until("the failure", lambda: json.loads(s.loopctl("status", "--json", failing).stdout)["state"] == "failed")
        check("retry is refused without a login", post_status(d, f"/jobs/{failing}/retry", {"csrf": "x"}) == 403)

        # Log in (by keyboard: the skip link comes first, the form takes Enter).
        d.get(s.url("/"))
        d.find_element(By.TAG_NAME, "body").send_keys(Keys.TAB)
        check("the first Tab reaches the skip link", d.switch_to.active_element.text == "Skip to content")
        d.find_element(By.LINK_TEXT, "Log in").click()
        field = d.find_element(By.ID, "password")
        field.send_keys(PASSWORD, Keys.ENTER)
        wait_until("the login", lambda: d.find_elements(By.CSS_SELECTOR, "form[action='/logout']"))
        check("an operator logs in", True)
        check("cancel is refused without the CSRF token",
              post_status(d, f"/jobs/{running}/cancel", {"return": "/"}) == 403
              and json.loads(s.loopctl("status", "--json", running).stdout)["state"] == "running")

        # Cancel the running job with its button.
        d.get(s.url(f"/jobs/{running}"))
        click(d, "form[action$='/cancel'] button")
        wait_until("the notice", lambda: "Cancelled" in d.find_element(By.CSS_SELECTOR, ".notice").text)
        check("cancel works for an operator",
              json.loads(s.loopctl("status", "--json", running).stdout)["state"] == "cancelled")

        # Retry the failure from the failed jobs' page.
        d.get(s.url("/failed"))
        click(d, f"form[action='/jobs/{failing}/retry'] button")
        notice = wait_until("the notice", lambda: d.find_element(By.CSS_SELECTOR, ".notice").text)
        new_job = notice.rstrip(".").split()[-1]
        status = json.loads(s.loopctl("status", "--json", new_job, check=False).stdout or "{}")
        check("retry works for an operator", status.get("retry_of") == failing, notice)

        # Switch a worker's mode from the overview, and pause a schedule.
        d.get(s.url("/"))
        type_into(d, "#mode-w2", "maintenance")
        wait_until("the notice", lambda: "maintenance" in d.find_element(By.CSS_SELECTOR, ".notice").text)
        modes = {w["name"]: w["mode"] for w in json.loads(s.loopctl("workers", "--json").stdout)["workers"]}
        check("a worker's mode switch works for an operator", modes.get("w2") == "maintenance", str(modes))
        d.get(s.url("/schedules"))
        click(d, "form[action='/schedules/nightly/pause'] button")
        wait_until("the notice", lambda: "paused" in d.find_element(By.CSS_SELECTOR, ".notice").text)
        listed = json.loads(s.loopctl("schedules", "--json").stdout)["schedules"]
        check("pausing a schedule works for an operator", any(x["name"] == "nightly" and x["paused"] for x in listed),
              str(listed))

        # The phone-sized viewport.
        d.set_window_size(390, 844)
        d.get(s.url("/"))
        wait_until("the live stream", lambda: d.find_element(By.ID, "live-status").text == "live")
        overflow = d.execute_script("return document.documentElement.scrollWidth - window.innerWidth")
        check("the overview fits a phone's width", overflow <= 0, f"{overflow}px too wide")
        d.save_screenshot(os.path.join(args.screenshots, "overview-390.png"))
        d.get(s.url(f"/jobs/{job}"))
        d.save_screenshot(os.path.join(args.screenshots, "job-390.png"))
        d.set_window_size(1280, 800)

        # Another identity sees what loopd shows it: none of root's jobs.
        d.get(s.url("/jobs", nobody=True))
        page = d.page_source
        check("a dashboard connected as another uid lists none of root's jobs",
              job not in page and running not in page and "No job matches." in page)
        d.get(s.url("/", nobody=True))
        check("... and cannot open one", s.http_status(s.url(f"/jobs/{job}", nobody=True)) == 404)

        # Everything the browser asked for went to loopback.
        urls = []
        for entry in d.get_log("performance"):
            message = json.loads(entry["message"])["message"]
            if message.get("method") == "Network.requestWillBeSent":
                urls.append(message["params"]["request"]["url"])
        outside = [u for u in urls if not u.startswith("http://127.0.0.1:") and not u.startswith("data:")]
        check("no request leaves loopback", bool(urls) and not outside, f"{len(urls)} requests; outside: {outside[:5]}")
    except Exception as e:
        check("the browser session", False, f"{type(e).__name__}: {e}")
    finally:
        s.stop()
    print(f"{passed} passed, {failed} failed; screenshots in {args.screenshots}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
