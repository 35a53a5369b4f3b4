"""Screenshot chart HTML pages in headless Chromium with the network blocked (docs/chart-*.png).

Usage: python scripts/chart_screenshots.py OUT/roofline.html docs/shot.png [HTML PNG ...]
"""
import sys
from pathlib import Path
from playwright.sync_api import sync_playwright
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--no-first-run"]
pairs = sys.argv[1:]
with sync_playwright() as p:
    b = p.chromium.launch(executable_path="/usr/bin/chromium", args=ARGS)
    for html, png in zip(pairs[::2], pairs[1::2]):
        t = b.new_page(viewport={"width": 1400, "height": 900}, device_scale_factor=1)
        t.route("**/*", lambda r: r.continue_() if r.request.url.startswith("file:") else r.abort())
        t.goto(Path(html).resolve().as_uri())
        t.wait_for_selector("g.mark-symbol.role-mark path")
        t.wait_for_timeout(300)
        t.screenshot(path=png, full_page=True)
    b.close()
