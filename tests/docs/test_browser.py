"""The site as a reader sees it: Chromium opens the index, an API page and a tutorial.

The built site is served on 127.0.0.1; for each page the server adds a small script that,
once the page has loaded, records in the page what a reader would notice: the theme's
style applied, every figure of the article loaded and drawn, and the status of every
internal link; Chromium's ``--dump-dom`` returns the page with that record. One screenshot
per page is kept under build/test-artifacts/docs/. Chromium is a system package: without
it these tests skip, naming the command that installs it.
"""

from __future__ import annotations

import functools
import http.server
import json
import re
import shutil
import subprocess
import threading
from pathlib import Path

import numpy as np
import pytest

from conftest import ROOT

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
pytestmark = pytest.mark.skipif(CHROMIUM is None,
                                reason="needs Chromium: apt-get install -y chromium")

#: what a reader opens first, one API page and one tutorial (with a figure of its run)
PAGES = {"index": "index.html", "api": "reference/counters.html",
         "tutorial": "tutorials/getting_started.html"}
ARTIFACTS = ROOT / "build" / "test-artifacts" / "docs"

CHECK = """<script>
window.addEventListener("load", async () => {
  const here = new URL(location.href);
  const paths = [...new Set([...document.querySelectorAll("a[href]")]
    .map(a => new URL(a.getAttribute("href"), here))
    .filter(u => u.origin === here.origin).map(u => u.pathname))];
  const links = await Promise.all(paths.map(async p => [p, (await fetch(p)).status]));
  const figures = [...document.querySelectorAll("article img")].map(img => ({
    src: img.getAttribute("src").slice(0, 40),
    loaded: img.complete && img.naturalWidth > 0,
    shown: img.getBoundingClientRect().width}));
  const record = document.createElement("pre");
  record.id = "dpol-check";
  record.textContent = JSON.stringify({
    title: document.title, h1: document.querySelector("article h1")?.textContent,
    header: getComputedStyle(document.querySelector(".md-header")).position,
    links, figures});
  document.body.appendChild(record);
});
</script>"""


class _Handler(http.server.SimpleHTTPRequestHandler):
    def do_GET(self):  # the stdlib names it
        path, _, query = self.path.partition("?")
        if query != "check":
            return super().do_GET()
        page = Path(self.directory, path.lstrip("/")).read_text()
        data = page.replace("</body>", CHECK + "</body>").encode()
        self.send_response(200)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args):  # quiet
        pass


@pytest.fixture(scope="module")
def served(built_site):
    assert built_site.returncode == 0, built_site.output[-3000:]
    handler = functools.partial(_Handler, directory=str(built_site.path))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}/"
    server.shutdown()
    server.server_close()
    thread.join()


def _chromium(tmp_path, *args: str) -> str:
    """Headless Chromium with the flags this closed network needs, a fresh profile."""
    profile = tmp_path / f"profile-{len(list(tmp_path.iterdir()))}"
    proc = subprocess.run(
        [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
         "--no-first-run", "--disable-background-networking", "--disable-component-update",
         "--disable-sync", f"--user-data-dir={profile}", "--window-size=1280,1600", *args],
        capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr[-2000:]
    return proc.stdout


@pytest.mark.parametrize("kind", sorted(PAGES))
def test_a_page_renders_with_its_figures_and_working_links(served, tmp_path, kind):
    page = PAGES[kind]
    dom = _chromium(tmp_path, "--virtual-time-budget=20000", "--dump-dom",
                    f"{served}{page}?check")
    found = re.search(r'<pre id="dpol-check">(.*?)</pre>', dom, re.S)
    assert found, f"the page's script did not run: {dom[-1500:]}"
    record = json.loads(found.group(1).replace("&quot;", '"').replace("&amp;", "&"))
    assert record["title"].endswith("dpol") and record["h1"], record
    assert record["header"] == "sticky", record  # the theme's stylesheet applied
    broken = [(path, status) for path, status in record["links"] if status != 200]
    assert len(record["links"]) > 10 and broken == [], broken
    if kind == "tutorial":  # the figure its code drew at build time, loaded and shown
        assert record["figures"] and all(f["loaded"] and f["shown"] > 200
                                         for f in record["figures"]), record["figures"]
    assert all(f["loaded"] for f in record["figures"]), record["figures"]

    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    shot = ARTIFACTS / f"{kind}.png"
    _chromium(tmp_path, f"--screenshot={shot}", f"{served}{page}")
    import matplotlib.image as mpimg

    pixels = mpimg.imread(shot)
    colours = np.unique(pixels.reshape(-1, pixels.shape[-1]), axis=0)
    assert pixels.shape[:2] == (1600, 1280) and len(colours) > 50  # a page, not a blank
