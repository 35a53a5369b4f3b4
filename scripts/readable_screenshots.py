"""Before/after screenshots of issue 24 for docs/: the terminal at 80 columns and the Markdown summary at 1,000 px.

    python scripts/readable_screenshots.py BEFORE_TREE [SAMPLE_FOLDER]

BEFORE_TREE is a checkout of the code before the change (its `ncu_roofline` is imported for the "before" images);
the "after" images use this checkout. The terminal capture is the CLI's own output at COLUMNS=80, laid out as
monospace text in headless Chromium (/usr/bin/chromium, driven by Playwright) and cut at 80 columns as a terminal
would; the Markdown is rendered by markdown-it-py (GFM tables) with GitHub-like CSS in a 1,000 px wide page.
"""

from __future__ import annotations

import html
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PYTHON = sys.executable
CSS = """body { width: 1000px; margin: 0; box-sizing: border-box; padding: 0 16px; background: #fff;
  font: 14px/1.5 -apple-system, 'Segoe UI', 'Noto Sans', Helvetica, Arial, sans-serif; }
code { font: 85% ui-monospace, 'DejaVu Sans Mono', monospace; } pre { padding: 8px; background: #f6f8fa; }
table { border-collapse: collapse; } td, th { padding: 6px 13px; border: 1px solid #d0d7de; white-space: nowrap; }"""


def cli(tree: Path, *args: str) -> str:
    env = {**os.environ, "COLUMNS": "80", "PYTHONPATH": str(tree)}
    done = subprocess.run([PYTHON, "-m", "ncu_roofline.cli", *args], env=env, capture_output=True, text=True, check=False,
                          cwd=tree)
    return done.stdout


def terminal_page(text: str) -> str:
    lines = "\n".join(html.escape(line) for line in text.splitlines())
    return ("<!doctype html><meta charset='utf-8'><style>body{margin:0;background:#1e1e1e}"
            "pre{margin:0;padding:8px;color:#ddd;font:13px/1.3 'DejaVu Sans Mono',monospace;"
            "width:80ch;overflow:hidden;white-space:pre}</style>" f"<pre>{lines}</pre>")


def markdown_page(text: str) -> str:
    from markdown_it import MarkdownIt

    body = MarkdownIt("commonmark", {"html": True}).enable("table").render(text)
    return f"<!doctype html><meta charset='utf-8'><style>{CSS}</style><body>{body}</body>"


def shoot(pages: dict[str, tuple[str, int, int]]) -> None:
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright, tempfile.TemporaryDirectory() as folder:
        browser = playwright.chromium.launch(executable_path="/usr/bin/chromium",
                                             args=["--headless", "--no-sandbox", "--disable-gpu"])
        for name, (page_html, width, height) in pages.items():
            path = Path(folder) / f"{name}.html"
            path.write_text(page_html, encoding="utf-8")
            tab = browser.new_page(viewport={"width": width, "height": height})
            tab.goto(path.as_uri())
            tab.screenshot(path=str(ROOT / "docs" / f"{name}.png"))
            tab.close()
        browser.close()


def main() -> None:
    before = Path(sys.argv[1]).resolve()
    sample = Path(sys.argv[2] if len(sys.argv) > 2 else ROOT.parent / "shared" / "ncu-samples" /
                  "DeepLearningProfiling" / "climate-seg-TF-fp16-batch2-fw-amp")
    args = ["analyze", str(sample), "--gpu", "Tesla V100-SXM2-16GB"]
    pages = {}
    with tempfile.TemporaryDirectory() as folder:
        for label, tree in (("before", before), ("after", ROOT)):
            terminal = cli(tree, *args)
            pages[f"terminal-80-{label}"] = (terminal_page(terminal), 700, 760)
            summary = Path(folder) / f"{label}.md"
            cli(tree, *args, "--summary-md", str(summary), "--rows", "10")
            pages[f"markdown-1000px-{label}"] = (markdown_page(summary.read_text(encoding="utf-8")), 1000, 900)
    shoot(pages)


if __name__ == "__main__":
    main()
