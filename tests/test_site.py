"""The course as a website (README, "The course as a website"): `python tools/build_site.py` builds
site/_build/html from the stored notebooks, and every page of it works offline.

What the built site is checked for:
- a page per lesson and per exercise, plus the front page (site/front.md, with a table of the
  lessons made from their first cells), the README, the notation page and the exercises' README,
  in course order in the navigation, and a search index;
- every image a lesson stores in its outputs is an image file shown on that lesson's page;
- no resource from another host. A *resource* is what a browser loads by itself when it shows a
  page: `<script src>`, `<img src>`/`srcset`, `<source>`, `<video>`, `<audio>`, `<iframe>`,
  `<embed>`, `<object data>`, every `<link href>` but the navigational ones (rel next, prev,
  index, search, canonical, alternate, ...), `url(...)` and `@import` in `<style>`, in `style=""`
  and in the site's .css files, and any URL an inline `<script>` names (such a script may load
  it: sphinx-thebe's named a CDN). *Links* a reader clicks, `<a href>` (to a paper, say), may point
  anywhere. A URL is on another host when it starts with a scheme and `//` (https://...) or with
  `//`: the site has no host of its own, so every such URL counts;
- every internal reference (`<a href>`, `<link href>`, `src`, CSS `url()`) resolves to a built
  file, and a link's `#fragment` to an id on its page; none starts with `/`, which would break a
  site served from a subfolder (GitHub Pages);
- MathJax is served from the site, outside _static/; no `$` of unrendered math is left in prose;
- the answers are folded: under "Check your understanding" each question has a closed
  `<details>` with the summary "Answer", as many as the notebook has, and every `<details>` of a
  lesson's prose (the checks, "How we check it") is on its page, closed.
- in a real browser (headless Chromium): a lesson with math and plots loads only from the site,
  MathJax typesets every formula without an error, every request succeeds; driven by Playwright,
  the sidebar button opens the list of lessons at phone, tablet and desktop widths, and no page
  is wider than a 390 px phone.

The site tools are not the student's (requirements-site.txt, npm for MathJax, Debian's chromium):
without them these tests skip, saying so, unless SITE_TEST_REQUIRED=1 (what .ci/run sets), where
they fail. The
checkers' own controls (a page with a CDN script, a broken link, ...) run everywhere.
"""

from __future__ import annotations

import base64
import hashlib
import http.server
import importlib.util
import json
import os
import re
import shutil
import subprocess
import tempfile
import threading
from functools import partial
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urlsplit

import build_site
import pytest

ROOT = build_site.ROOT
HTML = build_site.HTML
LESSONS = sorted((ROOT / "lessons").glob("[0-9]*.ipynb"))
EXERCISES = sorted((ROOT / "exercises").glob("[0-9]*.ipynb"))
VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "track",
        "wbr"}
NAVIGATIONAL_RELS = {"next", "prev", "previous", "index", "search", "canonical", "alternate", "author",
                     "license", "help", "bookmark", "contents", "start", "first", "last", "up"}
SOURCE_ATTRIBUTES = {"script": ["src"], "img": ["src", "srcset"], "source": ["src", "srcset"],
                     "video": ["src", "poster"], "audio": ["src"], "iframe": ["src"], "embed": ["src"],
                     "track": ["src"], "input": ["src"], "object": ["data"]}
CSS_URL = re.compile(r"""url\(\s*['"]?([^'")]+)['"]?\s*\)|@import\s+['"]([^'"]+)['"]""")
URL_IN_SCRIPT = re.compile(r"""(?:[a-zA-Z][a-zA-Z0-9+.-]*:)?//[A-Za-z0-9.-]+\.[A-Za-z]{2,}[^\s'"`<>]*""")


# ------------------------------------------------------------------------------------------------
# A small HTML tree (the standard library's parser; the site's pages are Sphinx's, well formed)

class Node:
    def __init__(self, tag: str, attrs: dict[str, str], parent: Node | None = None):
        self.tag, self.attrs, self.parent, self.children = tag, attrs, parent, []

    def iter(self):
        yield self
        for child in self.children:
            if isinstance(child, Node):
                yield from child.iter()

    def find_all(self, tag: str, cls: str | None = None) -> list[Node]:
        return [node for node in self.iter() if node.tag == tag
                and (cls is None or cls in node.attrs.get("class", "").split())]

    def text(self, skip: frozenset = frozenset()) -> str:
        return "".join(child if isinstance(child, str) else
                       ("" if child.tag in skip else child.text(skip)) for child in self.children)


class TreeBuilder(HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.root = self.current = Node("#document", {})

    def handle_starttag(self, tag, attrs):
        node = Node(tag, {name: value or "" for name, value in attrs}, self.current)
        self.current.children.append(node)
        if tag not in VOID:
            self.current = node

    def handle_startendtag(self, tag, attrs):
        attributes = {name: value or "" for name, value in attrs}
        self.current.children.append(Node(tag, attributes, self.current))

    def handle_endtag(self, tag):
        node = self.current
        while node is not None and node.tag != tag:
            node = node.parent
        if node is not None and node.parent is not None:   # a stray end tag is ignored
            self.current = node.parent

    def handle_data(self, data):
        self.current.children.append(data)


def parse(html: str) -> Node:
    builder = TreeBuilder()
    builder.feed(html)
    builder.close()
    return builder.root


# ------------------------------------------------------------------------------------------------
# The checkers

def on_another_host(url: str) -> bool:
    return bool(re.match(r"^\s*([a-zA-Z][a-zA-Z0-9+.-]*:)?//", url))


def srcset_urls(value: str) -> list[str]:
    return [part.split()[0] for part in value.split(",") if part.strip()]


def resources(html: str) -> list[tuple[str, str]]:
    """(what, URL) of everything a browser loads by itself to show the page (module docstring)."""
    found = []
    for node in parse(html).iter():
        for attribute in SOURCE_ATTRIBUTES.get(node.tag, []):
            value = node.attrs.get(attribute)
            if value:
                urls = srcset_urls(value) if attribute == "srcset" else [value]
                found += [(f"<{node.tag} {attribute}>", url) for url in urls]
        if node.tag == "link" and node.attrs.get("href"):
            rels = set(node.attrs.get("rel", "").lower().split())
            if not rels or not rels <= NAVIGATIONAL_RELS:
                found.append((f"<link rel={' '.join(sorted(rels))}>", node.attrs["href"]))
        if "style" in node.attrs:
            found += [("style=", a or b) for a, b in CSS_URL.findall(node.attrs["style"])]
        if node.tag == "style":
            found += [("<style>", a or b) for a, b in CSS_URL.findall(node.text())]
        if node.tag == "script" and not node.attrs.get("src"):
            found += [("inline <script>", url) for url in URL_IN_SCRIPT.findall(node.text())]
    return found


def external_resources(html: str) -> list[tuple[str, str]]:
    return [(what, url) for what, url in resources(html) if on_another_host(url)]


def external_css_urls(css: str) -> list[str]:
    return [url for url in (a or b for a, b in CSS_URL.findall(css)) if on_another_host(url)]


def is_internal(url: str) -> bool:
    return not (on_another_host(url) or re.match(r"^[a-zA-Z][a-zA-Z0-9+.-]*:", url))


def ids(path: Path) -> set[str]:
    tree = parse(path.read_text(encoding="utf-8"))
    return {node.attrs["id"] for node in tree.iter() if "id" in node.attrs}


def broken_references(page: Path, root: Path, ids_of=ids) -> list[str]:
    """Every internal href/src of `page` (under `root`) that names no built file, or a #fragment
    that is no id of its page, or that starts with "/"."""
    broken = []
    for node in parse(page.read_text(encoding="utf-8")).iter():
        urls = [node.attrs[a] for a in ("href", "src") if node.attrs.get(a)]
        urls += srcset_urls(node.attrs["srcset"]) if node.attrs.get("srcset") else []
        for url in urls:
            if not is_internal(url):
                continue
            parts = urlsplit(url)
            if url.startswith("/"):
                broken.append(f"{url} (from the host's root: breaks in a subfolder)")
                continue
            target = (page.parent / unquote(parts.path)).resolve() if parts.path else page
            if target.is_dir():
                target = target / "index.html"
            if not target.is_file() or root.resolve() not in target.parents:
                broken.append(f"{url} (no file {target})")
            elif parts.fragment and node.tag == "a" and target.suffix == ".html" \
                    and unquote(parts.fragment) not in ids_of(target):
                broken.append(f"{url} (no id {parts.fragment!r} in {target.name})")
    return broken


def stored_images(notebook: Path) -> list[bytes]:
    """The images a notebook's code cells stored in their outputs, as files would hold them."""
    images = []
    for cell in json.loads(notebook.read_text(encoding="utf-8"))["cells"]:
        for output in cell.get("outputs", []):
            for mime, data in output.get("data", {}).items():
                data = "".join(data) if isinstance(data, list) else data
                if mime == "image/svg+xml":
                    images.append(data.encode())
                elif mime.startswith("image/"):
                    images.append(base64.b64decode(data))
    return images


def markdown_of(notebook: Path) -> str:
    cells = json.loads(notebook.read_text(encoding="utf-8"))["cells"]
    return "\n".join("".join(cell["source"]) for cell in cells if cell["cell_type"] == "markdown")


def summaries(node: Node) -> list[tuple[str, bool]]:
    """(summary text, open?) of every <details> under node."""
    return [(" ".join(" ".join(s.text() for s in d.find_all("summary")).split()), "open" in d.attrs)
            for d in node.find_all("details")]


# ------------------------------------------------------------------------------------------------
# The checkers' controls: they need no site tools and run everywhere

def test_the_resource_checker_tells_resources_from_links():
    page = """<html><head>
      <script src="https://cdn.example.org/mathjax.js"></script>
      <link rel="stylesheet" href="//fonts.example.com/css?family=Lato">
      <link rel="preload" as="font" href="https://fonts.example.com/lato.woff2">
      <link rel="icon" href="http://example.org/favicon.ico">
      <link rel="next" href="https://example.org/next.html">
      <script>const URL = "https://unpkg.example.com/thebe/index.js";</script>
      <style>@font-face { src: url('https://fonts.example.com/a.woff2'); }</style>
      <link rel="stylesheet" href="_static/theme.css"><script src="../_static/local.js"></script>
      </head><body><img src="../_images/plot.png" srcset="a.png 1x, https://img.example.org/b.png 2x">
      <div style="background: url(https://img.example.org/bg.png)"></div>
      <a href="https://arxiv.org/abs/2510.05554">the paper</a></body></html>"""
    found = sorted(url for _, url in external_resources(page))
    assert found == sorted(["https://cdn.example.org/mathjax.js", "//fonts.example.com/css?family=Lato",
                            "https://fonts.example.com/lato.woff2", "http://example.org/favicon.ico",
                            "https://unpkg.example.com/thebe/index.js", "https://fonts.example.com/a.woff2",
                            "https://img.example.org/b.png", "https://img.example.org/bg.png"]), found
    assert ("<img src>", "../_images/plot.png") in resources(page)
    assert external_css_urls("a{src:url(https://x.example.org/f.woff)} b{src:url(../fonts/f.woff2)}") \
        == ["https://x.example.org/f.woff"]


def test_the_link_checker_finds_a_missing_file_and_a_missing_id(tmp_path):
    (tmp_path / "lessons").mkdir()
    (tmp_path / "_static").mkdir()
    (tmp_path / "_static" / "a.css").write_text("")
    (tmp_path / "README.html").write_text('<h1 id="top">x</h1>')
    page = tmp_path / "lessons" / "01.html"
    page.write_text('<link rel="stylesheet" href="../_static/a.css"><a href="../README.html#top">ok</a>'
                    '<a href="#here" id="here">ok</a><a href="https://example.org/x">away</a>'
                    '<a href="../README.html#nowhere">no id</a><img src="../_images/gone.png">'
                    '<a href="/README.html">rooted</a><a href="mailto:a@example.org">mail</a>')
    broken = broken_references(page, tmp_path)
    assert [b.split()[0] for b in broken] == ["../README.html#nowhere", "../_images/gone.png",
                                              "/README.html"]


def test_the_notation_page_is_the_notation_section():
    text = "# Lessons\n\n| a | b |\n\n## Notation\n\nOne notation:\n\n| $L$ | length |\n\n## Later\n\nno"
    assert build_site.notation(text) == "# Notation\n\nOne notation:\n\n| $L$ | length |\n"


# ------------------------------------------------------------------------------------------------
# The built site

def missing_site_tools() -> str | None:
    if importlib.util.find_spec("jupyter_book") is None:
        return "the site tools are not installed: pip install -r requirements-site.txt"
    if not (build_site.MATHJAX / "tex-mml-chtml.js").exists() and shutil.which("npm") is None:
        return "MathJax is not installed (npm ci in site/) and there is no npm to install it"
    return None


@pytest.fixture(scope="module")
def site() -> Path:
    reason = missing_site_tools()
    if reason:
        if os.environ.get("SITE_TEST_REQUIRED") == "1":
            pytest.fail(f"SITE_TEST_REQUIRED=1, but {reason}")
        pytest.skip(reason + " (README, 'The course as a website')")
    return build_site.build(quiet=True)


@pytest.fixture(scope="module")
def pages(site) -> dict[Path, str]:
    """Every built page (not the theme's template macros that land in _static/)."""
    return {path: path.read_text(encoding="utf-8") for path in sorted(site.rglob("*.html"))
            if "_static" not in path.relative_to(site).parts}


def str_of(path: Path) -> str:
    return path.read_text(encoding="utf-8")


def page_of(site: Path, notebook: Path) -> Path:
    return site / notebook.parent.name / (notebook.stem + ".html")


def article(html: str) -> Node:
    found = parse(html).find_all("article", "bd-article")
    assert len(found) == 1
    return found[0]


def test_a_page_per_lesson_and_exercise_in_course_order(site):
    assert len(LESSONS) >= 13 and len(EXERCISES) >= 12
    expected = [site / "README.html", site / "notation.html", *(page_of(site, nb) for nb in LESSONS),
                site / "exercises" / "README.html", *(page_of(site, nb) for nb in EXERCISES)]
    missing = [str(p.relative_to(site)) for p in expected if not p.is_file()]
    assert not missing, f"no page for {missing}: is each notebook in site/_toc.yml?"
    # every page in the side navigation, lessons in file-name order before the exercises
    # (read on the search page: no page of the course, so every one is a link there)
    nav = parse((site / "search.html").read_text(encoding="utf-8"))
    links = [a.attrs["href"] for a in nav.find_all("nav", "bd-docs-nav")[0].find_all("a")]
    order = [(site / urlsplit(href).path).resolve() for href in links]
    order = [p for p in order if p in expected and p != site / "README.html"]
    assert order == [p for p in expected if p != site / "README.html"], order
    # the front page (site/front.md): the course's title, and every lesson linked with its times
    front = parse((site / "index.html").read_text(encoding="utf-8"))
    assert front.find_all("h1")[0].text().startswith("Why attention fails"), "no front page"
    hrefs = {a.attrs.get("href", "") for a in article(str_of(site / "index.html")).find_all("a")}
    assert {f"lessons/{nb.stem}.html" for nb in LESSONS} <= hrefs, sorted(hrefs)
    assert "README.html" in hrefs, "the front page does not lead to running the course"
    assert "the logit multiplier" in (site / "notation.html").read_text(encoding="utf-8")


def test_search_and_highlighted_code(site):
    index = (site / "searchindex.js").read_text(encoding="utf-8")
    for word in ("entropi", "temperatur", "distract"):   # the index holds word stems
        assert word in index, word
    assert (site / "search.html").is_file()
    lesson = parse(page_of(site, LESSONS[0]).read_text(encoding="utf-8"))
    assert lesson.find_all("div", "highlight-ipython3"), "no highlighted code cell"
    assert any(span.attrs.get("class") == "kn" for span in lesson.find_all("span")), \
        "no keyword highlighted"


@pytest.mark.parametrize("lesson", LESSONS, ids=[nb.stem for nb in LESSONS])
def test_every_stored_image_is_on_its_page(site, lesson):
    stored = stored_images(lesson)
    assert stored, f"{lesson.name} stores no image"
    page = page_of(site, lesson)
    shown = [(page.parent / unquote(img.attrs["src"])).resolve()
             for img in article(page.read_text(encoding="utf-8")).find_all("img")]
    assert all(path.is_file() for path in shown), shown
    shown_digests = [hashlib.sha256(path.read_bytes()).hexdigest() for path in shown]
    for number, image in enumerate(stored):
        assert hashlib.sha256(image).hexdigest() in shown_digests, \
            f"{lesson.name}: stored image {number + 1} of {len(stored)} is not on {page.name}"
    # a screen reader reads the alt text: a sentence on what the plot shows (the plot cell's
    # `mystnb={"image": {"alt": ...}}` header in lessons/src), not a file name
    for img in article(page.read_text(encoding="utf-8")).find_all("img"):
        alt = img.attrs.get("alt", "")
        assert len(alt.split()) >= 8 and not re.search(r"\.(png|svg)|[0-9a-f]{16}", alt), \
            f"{page.name}: {img.attrs['src']} has alt text {alt!r}, not a sentence on what it shows"


def test_no_page_loads_anything_from_another_host(site, pages):
    found = [f"{page.relative_to(site)}: {what} {url}"
             for page, html in pages.items() for what, url in external_resources(html)]
    for css in sorted(site.rglob("*.css")):
        found += [f"{css.relative_to(site)}: url() {url}"
                  for url in external_css_urls(css.read_text(encoding="utf-8"))]
    assert not found, "resources from another host:\n" + "\n".join(found)
    # the control: the pages do hold resources, and some of them are MathJax and its fonts
    assert sum(len(resources(html)) for html in pages.values()) > 20 * len(pages)


def test_mathjax_is_served_from_the_site_outside_static(site, pages):
    assert (site / "mathjax" / "tex-mml-chtml.js").is_file()
    assert list((site / "mathjax" / "output" / "chtml" / "fonts" / "woff-v2").glob("*.woff"))
    assert not list((site / "_static").rglob("tex-mml-chtml.js")), "MathJax in _static/: loaded twice"
    for notebook in LESSONS:
        page = page_of(site, notebook)
        scripts = [(page.parent / urlsplit(s.attrs["src"]).path).resolve()
                   for s in parse(pages[page]).find_all("script") if "mathjax" in s.attrs.get("src", "")]
        assert scripts == [(site / "mathjax" / "tex-mml-chtml.js").resolve()], (page.name, scripts)


def test_every_internal_link_resolves(site, pages):
    cache: dict[Path, set[str]] = {}

    def cached_ids(path: Path) -> set[str]:
        if path not in cache:
            cache[path] = ids(path)
        return cache[path]

    broken = [f"{page.relative_to(site)}: {b}"
              for page in pages for b in broken_references(page, site, cached_ids)]
    for css in sorted(site.rglob("*.css")):
        for url in (a or b for a, b in CSS_URL.findall(css.read_text(encoding="utf-8"))):
            if is_internal(url) and not (css.parent / urlsplit(url).path).is_file():
                broken.append(f"{css.relative_to(site)}: url({url})")
    assert not broken, "internal references to nothing:\n" + "\n".join(broken)
    # the control: the README's links to the lesson notebooks became links to their pages
    hrefs = {a.attrs.get("href", "") for a in article(pages[site / "README.html"]).find_all("a")}
    assert {f"lessons/{nb.stem}.html" for nb in LESSONS} <= hrefs, sorted(hrefs)


@pytest.mark.parametrize("lesson", LESSONS, ids=[nb.stem for nb in LESSONS])
def test_answers_are_folded_under_their_questions(site, lesson):
    markdown = markdown_of(lesson)
    body = article(page_of(site, lesson).read_text(encoding="utf-8"))
    # every <details> of the prose is on the page, closed
    stored = [" ".join(s.split()) for s in re.findall(r"<summary>(.*?)</summary>", markdown, re.DOTALL)]
    shown = summaries(body)
    assert sorted(s for s, _ in shown) == sorted(stored), (shown, stored)
    assert not [s for s, is_open in shown if is_open], "a <details> renders open"
    # under "Check your understanding": one question per item, each with its folded answer
    section = [s for s in body.find_all("section") if s.attrs.get("id") == "check-your-understanding"]
    assert len(section) == 1, "no 'Check your understanding' section"
    questions = [li for ol in section[0].find_all("ol")[:1] for li in ol.children
                 if isinstance(li, Node) and li.tag == "li"]
    assert questions and len(questions) == markdown.count("<summary>Answer</summary>")
    for number, question in enumerate(questions, 1):
        assert [s for s, _ in summaries(question)] == ["Answer"], \
            f"question {number}: {summaries(question)}"
    # the markdown inside is rendered: paragraphs, and math as math, no $ left in the prose
    for details in body.find_all("details"):
        assert details.find_all("p"), "a <details> whose markdown was not rendered"
    prose = body.text(skip=frozenset({"pre", "code", "script", "style"}))
    assert "$" not in prose, prose[max(0, prose.index("$") - 80):prose.index("$") + 80]
    if "$" in markdown:
        assert body.find_all("span", "math") or body.find_all("div", "math")


# ------------------------------------------------------------------------------------------------
# In a real browser

CHROMIUM = next((shutil.which(name) for name in ("chromium", "chromium-browser", "google-chrome")
                 if shutil.which(name)), None)


class RecordingHandler(http.server.SimpleHTTPRequestHandler):
    requests: list[tuple[str, int]]

    def log_request(self, code="-", size="-"):
        self.requests.append((self.path, int(code) if str(code).isdigit() else 0))

    def log_message(self, *args):
        pass


def requests_by_pages(netlog: Path) -> set[tuple[str, str]]:
    """(URL, initiator) of every request Chromium's net log shows a page (an origin) making."""
    raw = netlog.read_text(encoding="utf-8", errors="replace")
    try:
        events = json.loads(raw)["events"]
    except json.JSONDecodeError:   # a log cut short: close its list of events
        events = json.loads(raw.rstrip().rstrip(",") + "]}")["events"]
    found = set()
    for event in events:
        params = event.get("params", {})
        initiator = params.get("initiator")
        if "url" in params and initiator and "://" in initiator:
            found.add((params["url"], initiator))
    return found


def need_browser(driven: bool = False) -> None:
    """Skip (fail under SITE_TEST_REQUIRED=1, as in CI) without Chromium, or without Playwright
    for a test that clicks."""
    reason = ("no Chromium on PATH (Debian: apt-get install chromium)" if CHROMIUM is None else
              "Playwright is not installed: pip install -r requirements-site.txt"
              if driven and importlib.util.find_spec("playwright") is None else None)
    if reason and os.environ.get("SITE_TEST_REQUIRED") == "1":
        pytest.fail(f"SITE_TEST_REQUIRED=1, but {reason}")
    if reason:
        pytest.skip(reason)


@pytest.fixture
def served(site):
    """The built site on a local server: its base URL."""
    handler = partial(QuietHandler, directory=str(site))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_port}"
    server.shutdown()
    server.server_close()


class QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


def test_a_lesson_in_a_browser_loads_only_from_the_site_and_typesets_its_math(site):
    """Headless Chromium opens lesson 5 (formulas in prose and answers, three plots) from a local
    server, with every other host unresolvable, and logs its network requests."""
    need_browser()
    lesson = next(nb for nb in LESSONS if nb.stem.startswith("05"))
    handler = type("Handler", (RecordingHandler,), {"requests": []})
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), partial(handler, directory=str(site)))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        with tempfile.TemporaryDirectory() as profile:
            netlog = Path(profile) / "netlog.json"
            url = f"http://127.0.0.1:{server.server_port}/lessons/{lesson.stem}.html"
            run = subprocess.run(
                [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync",
                 "--disable-default-apps", "--disable-extensions", f"--user-data-dir={profile}",
                 "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1",
                 f"--log-net-log={netlog}", "--virtual-time-budget=15000", "--dump-dom", url],
                check=False, capture_output=True, text=True, timeout=120)
            assert run.returncode == 0, run.stderr[-2000:]
            dom = run.stdout
            requested = requests_by_pages(netlog)
    finally:
        server.shutdown()
        server.server_close()
    # the browser's own traffic (its updater, ...) has no page as initiator, and finds no host
    elsewhere = sorted(url for url, _ in requested if urlsplit(url).hostname != "127.0.0.1")
    assert not elsewhere, f"the page asked another host for: {elsewhere}"
    assert len(requested) > 20, requested
    failed = [(path, code) for path, code in handler.requests if code != 200 and path != "/favicon.ico"]
    assert not failed, failed
    paths = [path for path, _ in handler.requests]
    assert any(p.startswith("/mathjax/tex-mml-chtml.js") for p in paths), paths
    assert any(p.startswith("/mathjax/output/chtml/fonts/") for p in paths), "MathJax loaded no font"
    assert sum(p.startswith("/_images/") for p in paths) >= len(stored_images(lesson)), paths
    # every formula typeset, none in error, answers closed
    built = page_of(site, lesson).read_text(encoding="utf-8")
    formulas = built.count('class="math notranslate nohighlight"')
    typeset = dom.count("<mjx-container")
    assert formulas > 50 and typeset >= formulas, (formulas, typeset)
    assert "<mjx-merror" not in dom and "data-mjx-error" not in dom
    assert not [s for s, is_open in summaries(article(dom)) if is_open]


def test_the_menu_opens_at_every_width_and_no_page_is_wider_than_a_phone(site, served):
    """Playwright drives the system's Chromium. At phone, tablet and desktop widths the visible
    sidebar button of a lesson opens the list of lessons (a dialog below 992 px) or, on a desktop,
    folds the sidebar away. Then every page, at 390 px wide, is no wider than the screen."""
    need_browser(driven=True)
    # Playwright is one of the site's tools (requirements-site.txt), not the student's: loaded
    # only here, after need_browser() has skipped (or, in CI, failed) without it.
    sync_playwright = importlib.import_module("playwright.sync_api").sync_playwright
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        try:
            for width, height in [(390, 844), (800, 1000), (1400, 900)]:
                page = browser.new_page(viewport={"width": width, "height": height})
                page.goto(f"{served}/lessons/09_fix_isolated.html")
                lesson_13 = page.get_by_role("link", name=re.compile("^Lesson 13"))
                shown_before = lesson_13.first.is_visible()
                toggle = next(t for t in page.locator(".primary-toggle").all() if t.is_visible())
                toggle.click()
                page.wait_for_timeout(300)
                shown_after = any(link.is_visible() for link in lesson_13.all())
                if width < 992:   # the list of lessons is hidden until the button opens it
                    assert (shown_before, shown_after) == (False, True), (width, "menu stays shut")
                else:             # the sidebar shows it, and the button folds it away
                    assert (shown_before, shown_after) == (True, False), (width, "no toggle")
                page.close()
            page = browser.new_page(viewport={"width": 390, "height": 844})
            wide, squashed = [], []
            for path in sorted(site.rglob("*.html")):
                relative = path.relative_to(site)
                if "_static" in relative.parts or relative.name in ("genindex.html", "search.html"):
                    continue
                page.goto(f"{served}/{relative.as_posix()}")
                page.wait_for_load_state("load")
                scroll_width = page.evaluate("document.documentElement.scrollWidth")
                if scroll_width > 390:
                    wide.append(f"{relative}: {scroll_width} px")
                # a plot shrunk to the phone keeps its shape: shown height / width as stored
                squashed += page.evaluate("""() => [...document.querySelectorAll('article img')]
                    .filter(i => i.complete && i.naturalWidth && i.clientWidth)
                    .filter(i => Math.abs(i.clientHeight / i.clientWidth
                                          - i.naturalHeight / i.naturalWidth) > 0.02)
                    .map(i => i.src.split('/').pop())""")
            assert not wide, "pages wider than a 390 px phone: " + ", ".join(wide)
            assert not squashed, "plots squashed at 390 px: " + ", ".join(squashed[:5])
        finally:
            browser.close()
