"""`shardring dashboard` in a real browser: Debian's chromium, headless,
driven by chromedriver, against a live fleet on loopback (etcd, memcached
members holding keys, a follower sending traffic and reporting). The page
shows three members with their shares and key counts; a fourth joins
warming and shows within 2 seconds; the rebalance's progress shows, then
the member active. The screenshot holds each member's colour, and no
request of the page leaves loopback."""

import json
import os
import shutil
import struct
import subprocess
import tempfile
import threading
import time
import urllib.error
import urllib.request
import zlib

import pytest
from pymemcache.client.base import Client
from selenium import webdriver
from selenium.webdriver.chrome.service import Service

import shardring
from servers import Memcached, free_port
from test_rebalance import CLI, words

PREFIX = "/shardring/dash"
WAIT = 30
# The page's palette (cli/src/dashboard/page.html), in the order members are first drawn.
PALETTE = [(0xE6, 0x9F, 0x00), (0x56, 0xB4, 0xE9), (0x00, 0x9E, 0x73), (0xF0, 0xE4, 0x42)]


def png_pixels(data):
    """(width, height, rows of RGB tuples) of an 8-bit RGB or RGBA PNG."""
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    at, idat, header = 8, b"", None
    while at < len(data):
        length, kind = struct.unpack(">I4s", data[at:at + 8])
        chunk = data[at + 8:at + 8 + length]
        if kind == b"IHDR":
            header = struct.unpack(">IIBBBBB", chunk)
        elif kind == b"IDAT":
            idat += chunk
        at += 12 + length
    width, height, depth, colour, _, _, interlace = header
    assert depth == 8 and colour in (2, 6) and interlace == 0, header
    channels = 3 if colour == 2 else 4
    raw, stride, rows, previous = zlib.decompress(idat), width * channels, [], bytearray(width * channels)
    for y in range(height):
        kind, line = raw[y * (stride + 1)], bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for i in range(stride):
            left = line[i - channels] if i >= channels else 0
            up, corner = previous[i], previous[i - channels] if i >= channels else 0
            if kind == 1:
                line[i] = (line[i] + left) & 255
            elif kind == 2:
                line[i] = (line[i] + up) & 255
            elif kind == 3:
                line[i] = (line[i] + (left + up) // 2) & 255
            elif kind == 4:
                p = left + up - corner
                pa, pb, pc = abs(p - left), abs(p - up), abs(p - corner)
                line[i] = (line[i] + (left if pa <= pb and pa <= pc else up if pb <= pc else corner)) & 255
        rows.append([tuple(line[x * channels:x * channels + 3]) for x in range(width)])
        previous = line
    return width, height, rows


@pytest.fixture
def fleet(etcd):
    servers = [Memcached() for _ in range(4)]
    processes = []
    try:
        ids = [s.address for s in servers]
        for id in ids[:3]:
            etcd.ctl("put", f"{PREFIX}/members/{id}", json.dumps({"weight": 1}))
        keys = words(20_000)
        ring = shardring.Ring(ids[:3])
        clients = {id: Client(("127.0.0.1", s.port)) for id, s in zip(ids, servers)}
        for key in keys:
            clients[ring.get(key)].set(key, b"v" * 20)
        follower = shardring.Follower.etcd(etcd.url, PREFIX, timeout=WAIT, report_as="traffic-1",
                                           report_interval=0.5)
        stop = threading.Event()

        def traffic():
            while not stop.is_set():
                follower.ring.get_many([f"req-{i}" for i in range(2000)])
                time.sleep(0.05)

        sender = threading.Thread(target=traffic)
        sender.start()
        port = free_port()
        dashboard = subprocess.Popen([str(CLI), "dashboard", "--etcd", etcd.url, "--prefix", PREFIX, "--listen",
                                      f"127.0.0.1:{port}", "--servers", "memcached"],
                                     stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        processes.append(dashboard)
        yield {"ids": ids, "url": f"http://127.0.0.1:{port}/", "processes": processes, "keys": keys}
        stop.set()
        sender.join()
        follower.close()
    finally:
        for process in processes:
            process.terminate()
            process.wait(timeout=WAIT)
        for server in servers:
            server.close()


@pytest.fixture
def browser():
    if shutil.which("chromium") is None or shutil.which("chromedriver") is None:
        raise RuntimeError("chromium and chromedriver are not installed (Debian packages chromium, chromium-driver)")
    profile = tempfile.mkdtemp(prefix="shardring-chromium-")
    options = webdriver.ChromeOptions()
    options.binary_location = shutil.which("chromium")
    for flag in ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--window-size=1280,800",
                 f"--user-data-dir={profile}"]:
        options.add_argument(flag)
    options.set_capability("goog:loggingPrefs", {"performance": "ALL"})
    driver = webdriver.Chrome(service=Service(shutil.which("chromedriver")), options=options)
    # The page at 1280x800 CSS pixels, whatever the headless window's frame takes.
    driver.execute_cdp_cmd("Emulation.setDeviceMetricsOverride",
                           {"width": 1280, "height": 800, "deviceScaleFactor": 1, "mobile": False})
    try:
        yield driver
    finally:
        driver.quit()
        shutil.rmtree(profile, ignore_errors=True)


def wait_for(predicate, what, timeout=WAIT):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(0.05)
    raise AssertionError(f"timed out after {timeout} s waiting for {what}")


# The page as one snapshot, read in one script: it re-renders every 500 ms,
# so elements found one call earlier may be gone.
SNAPSHOT = """
const rebalance = document.getElementById("rebalance");
return {
  members: [...document.querySelectorAll("#members tr")].map(
    (r) => [r.dataset.member, r.dataset.state, [...r.cells].map((c) => c.textContent)]),
  rebalance: {running: rebalance.dataset.running, handled: rebalance.dataset.handled || "0",
              text: rebalance.textContent},
  agreement: document.getElementById("agreement").textContent,
  clients: [...document.querySelectorAll("#clients tr")].map((r) => r.dataset.standing),
  hot: [...document.querySelectorAll("#hot tr")].map((r) => [...r.cells].map((c) => c.textContent)),
  hot_meta: document.getElementById("hot-meta").textContent,
  labels: [...document.querySelectorAll("#ring text")].map((t) => t.dataset.label),
};
"""


def page(driver):
    return driver.execute_script(SNAPSHOT)


def members(driver):
    return {id: (state, cells) for id, state, cells in page(driver)["members"]}


def test_the_dashboard_shows_the_fleet_live_in_a_real_browser(etcd, fleet, browser, tmp_path):
    ids = fleet["ids"]
    browser.get(fleet["url"])

    def three_with_keys():
        shown = members(browser)
        return shown if set(shown) == set(ids[:3]) and all(
            cells[6] not in ("", "0", "–") and cells[5] != "0.0" for _, cells in shown.values()) else None

    shown = wait_for(three_with_keys, "three members with key counts and request rates")
    for id in ids[:3]:
        state, cells = shown[id]
        assert state == "active" and cells[0] == id
        assert 25 < float(cells[3].rstrip(" %")) < 42, cells
    assert sum(int(shown[id][1][6].replace(",", "")) for id in ids[:3]) == len(fleet["keys"])
    assert page(browser)["agreement"] == "✓ all agree"
    assert page(browser)["clients"] == ["current"]

    # A hot set published at P/hot: each key with its phase, rate and the
    # members holding it, its preference list (owner first), busiest first.
    hot_set = {"epoch": 2, "keys": [
        {"key": "user:42", "replicas": 2, "phase": "spread", "generation": 1, "rate": 900.0},
        {"key": "cart:7", "replicas": 3, "phase": "writing", "generation": 2, "rate": 1500.0}]}
    etcd.ctl("put", f"{PREFIX}/hot", json.dumps(hot_set))
    hot = wait_for(lambda: page(browser)["hot"] if len(page(browser)["hot"]) == 2 else None, "the hot keys")
    with shardring.Follower.etcd(etcd.url, PREFIX) as follower:
        ring = follower.ring
    assert hot == [["cart:7", "writing", "1500", "3", ", ".join(ring.get_n("cart:7", 3))],
                   ["user:42", "spread", "900", "2", ", ".join(ring.get_n("user:42", 2))]], hot
    assert page(browser)["hot_meta"] == "epoch 2, 2 keys"

    joined = time.monotonic()
    etcd.ctl("put", f"{PREFIX}/members/{ids[3]}", json.dumps({"weight": 1, "state": "warming"}))
    wait_for(lambda: members(browser).get(ids[3], ("",))[0] == "warming", "the warming member", timeout=2)
    shown_after = time.monotonic() - joined
    assert shown_after < 2, shown_after

    rebalance = subprocess.Popen([str(CLI), "rebalance", "--etcd", etcd.url, "--prefix", PREFIX, "--backend",
                                  "memcached", "--once", "--grace", "0", "--rate", "2000"],
                                 stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    fleet["processes"].append(rebalance)
    running = wait_for(lambda: (lambda r: r if r["running"] == "running" and int(r["handled"]) > 0 else None)(
        page(browser)["rebalance"]), "the rebalance's progress")
    assert "keys/s" in running["text"] and " of " in running["text"], running
    wait_for(lambda: members(browser).get(ids[3], ("",))[0] == "active", "the new member active")
    wait_for(lambda: page(browser)["rebalance"]["running"] == "finished", "the finished rebalance")
    out, err = rebalance.communicate(timeout=WAIT)
    assert rebalance.returncode == 0, err

    shown = wait_for(lambda: (lambda m: m if len(m) == 4 and all(
        c[6] not in ("", "–", "0") for _, c in m.values()) else None)(members(browser)), "four members with keys")
    screenshot = tmp_path / "dashboard.png"
    browser.save_screenshot(str(screenshot))
    # The page for docs/operating.md, when asked for (make demo writes it).
    if os.environ.get("SHARDRING_SCREENSHOT"):
        shutil.copy(screenshot, os.environ["SHARDRING_SCREENSHOT"])
    labels = set(page(browser)["labels"])
    assert labels == set(ids), labels
    width, height, rows = png_pixels(screenshot.read_bytes())
    assert (width, height) == (1280, 800)
    counts = {colour: 0 for colour in PALETTE}
    for row in rows:
        for pixel in row:
            if pixel in counts:
                counts[pixel] += 1
    assert all(count > 500 for count in counts.values()), f"each member's colour is drawn: {counts}"

    requests = []
    for entry in browser.get_log("performance"):
        message = json.loads(entry["message"])["message"]
        if message["method"] == "Network.requestWillBeSent":
            requests.append(message["params"]["request"]["url"])
    # A name in Host (a page elsewhere whose name resolves here) is refused.
    request = urllib.request.Request(fleet["url"] + "api/state", headers={"Host": "rebound.example:80"})
    with pytest.raises(urllib.error.HTTPError) as refused:
        urllib.request.urlopen(request, timeout=5)
    assert refused.value.code == 421
    with urllib.request.urlopen(fleet["url"].replace("127.0.0.1", "localhost") + "api/state", timeout=5) as ok:
        assert json.loads(ok.read())["prefix"] == PREFIX
    # The browser's own pages (chrome://, data:) are not network requests.
    network = [url for url in requests if url.split(":", 1)[0] in ("http", "https", "ws", "wss", "ftp")]
    assert len(network) > 10 and all(url.startswith(fleet["url"]) for url in network), sorted(set(network))[:5]
