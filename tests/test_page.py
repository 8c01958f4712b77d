"""The page at `/` in a real headless Chromium (Debian's, driven by Playwright's Python API)
against the real `repomap serve` on a real indexed tree; and `repomap map --html`.

Each browser test saves a screenshot of its view under the pytest temp dir
(`<basetemp>/screenshots*/`). Without Chromium (or Playwright) the browser tests skip and say
why; the HTTP checks of the page's files run anyway.
"""

from __future__ import annotations

import http.client
import os
import shutil
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import indexed_tree, run_cli

CHROMIUM_ARGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
    "--disable-component-update", "--disable-sync", "--no-first-run",
]  # fmt: skip

FILLER = "\n".join(
    f"LIMIT_{n} = {n}  # a constant to push the next function down" for n in range(140)
)
FILES = {
    "pkg/__init__.py": "",
    "pkg/net.py": f'''
"""Network helpers."""
from pkg.config import timeout_seconds

{FILLER}


def retry_connection(host, attempts=3):
    """Open a socket to the host, retrying with backoff when the handshake times out."""
    for attempt in range(attempts):
        if attempt > timeout_seconds():
            break
    return host


class Client:
    """A client that keeps one connection."""

    def send(self, payload):
        return retry_connection(payload)
''',
    "pkg/config.py": '''
def timeout_seconds():
    """How long to wait for a handshake."""
    return 5
''',
    "lib/other.py": '''
from pkg.net import retry_connection


def reconnect_later():
    """Call retry_connection again after the handshake failed."""
    return retry_connection("example.org")
''',
    "README.md": "# Demo\n\n## Usage\n\nCall retry_connection.\n",
    "deploy/settings.yaml": "service:\n  retry_budget: 7\n  region: eu-west\n",
}
TARGET_LINE = 3 + 140 + 3  # the `def retry_connection` line of pkg/net.py


def _chromium() -> str | None:
    found = os.environ.get("REPOMAP_CHROMIUM") or shutil.which("chromium")
    return found or next(
        (
            path
            for path in ("/usr/bin/chromium", "/usr/bin/chromium-browser")
            if Path(path).exists()
        ),
        None,
    )


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def _get(port: int, path: str) -> tuple[int, dict[str, str], bytes]:
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    try:
        connection.request("GET", path)
        response = connection.getresponse()
        return response.status, {k.lower(): v for k, v in response.getheaders()}, response.read()
    finally:
        connection.close()


@pytest.fixture(scope="module")
def tree(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return indexed_tree(tmp_path_factory.mktemp("page") / "repo", FILES)


@pytest.fixture(scope="module")
def base_url(tree: Path) -> Iterator[str]:
    """The real `repomap serve` in a subprocess on a free port."""
    port = _free_port()
    process = subprocess.Popen(
        [sys.executable, "-m", "repomap.cli", "serve", str(tree), "--port", str(port),
         "--rate-limit", "0"],
        stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        env={**os.environ, "REPOMAP_WORKERS": "1"},
    )  # fmt: skip
    deadline = time.monotonic() + 60
    while True:
        if process.poll() is not None:
            raise AssertionError(f"repomap serve exited: {process.stderr.read().decode()}")
        try:
            if _get(port, "/healthz")[0] == 200:
                break
        except OSError:
            if time.monotonic() > deadline:
                process.kill()
                raise AssertionError("repomap serve did not answer /healthz") from None
            time.sleep(0.1)
    yield f"http://127.0.0.1:{port}"
    process.terminate()
    try:
        process.wait(timeout=15)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()
    err = process.stderr.read().decode()
    process.stdout.close()
    process.stderr.close()
    assert "Traceback" not in err, err


@pytest.fixture(scope="module")
def browser() -> Iterator[object]:
    executable = _chromium()
    if executable is None:
        pytest.skip("no Chromium found (apt-get install chromium, or set REPOMAP_CHROMIUM)")
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        pytest.skip("playwright is not installed (pip install -e '.[test]')")
    with sync_playwright() as driver:
        launched = driver.chromium.launch(executable_path=executable, args=CHROMIUM_ARGS)
        yield launched
        launched.close()


@pytest.fixture
def page(browser, tmp_path_factory: pytest.TempPathFactory):
    context = browser.new_context(viewport={"width": 1200, "height": 900})
    opened = context.new_page()
    errors: list[str] = []
    opened.on("pageerror", lambda error: errors.append(str(error)))
    opened.on("console", lambda message: message.type == "error" and errors.append(message.text))
    yield opened
    context.close()
    assert not errors, errors  # no script error, no request the CSP refused


@pytest.fixture(scope="module")
def shots(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("screenshots")
    print(f"screenshots: {folder}")  # noqa: T201 - where to look (pytest -s)
    return folder


# --- the page's files over HTTP ----------------------------------------------------------------


def test_the_page_is_served_at_the_root_with_its_files_and_a_strict_csp(base_url: str) -> None:
    port = int(base_url.rsplit(":", 1)[1])
    status, headers, body = _get(port, "/")
    assert status == 200 and headers["content-type"].startswith("text/html")
    assert b'<input id="q"' in body and b"/page/app.js" in body
    assert "default-src 'self'" in headers["content-security-policy"]
    for name, kind in (("app.js", "text/javascript"), ("app.css", "text/css")):
        status, headers, body = _get(port, f"/page/{name}")
        assert status == 200 and headers["content-type"].startswith(kind) and len(body) > 1000
    assert _get(port, "/page/secret.py")[0] == 404
    assert _get(port, "/page/..%2F..%2Fhttp_api.py")[0] == 404


# --- in the browser ---------------------------------------------------------------------------


def _shown(page, q: str, mode: str) -> None:
    """Wait until the hits of this query in this mode are on the page."""
    page.wait_for_function(
        "([q, mode]) => window.repomapTimings.q === q && window.repomapTimings.mode === mode",
        arg=[q, mode],
    )


def _search(page, base_url: str, text: str) -> None:
    page.goto(base_url + "/")
    page.locator("#q").press_sequentially(text, delay=15)
    page.wait_for_function("(q) => window.repomapTimings.q === q", arg=text)  # its hits are shown


def test_typing_shows_hits_grouped_by_file_and_enter_opens_the_line(
    page, base_url: str, shots: Path
) -> None:
    _search(page, base_url, "retry_connection")
    group = page.locator(".group", has=page.locator("h2", has_text="pkg/net.py"))
    group.wait_for()
    assert "q=retry_connection" in page.url  # the URL reflects the query
    hit = group.locator(".hit").first
    assert int(hit.get_attribute("data-line")) >= TARGET_LINE - 1
    assert page.locator("#results mark").count() > 0  # the query's words are highlighted
    page.screenshot(path=shots / "search.png", full_page=True)

    # arrows move through the hits; Enter opens the active one at its line
    page.locator("#q").press("ArrowDown")
    active = page.locator("#results .hit.active")
    assert active.count() == 1 and active.get_attribute("aria-selected") == "true"
    assert page.locator("#q").get_attribute("aria-activedescendant") == active.get_attribute("id")
    file_path, line = active.get_attribute("data-file"), int(active.get_attribute("data-line"))
    page.locator("#q").press("Enter")
    marked = page.locator(".source .line.marked")
    marked.wait_for()
    assert page.locator("#file-title").inner_text() == file_path
    assert marked.get_attribute("id") == f"L{line}"
    assert marked.is_visible() and _in_viewport(page, f"#L{line}")
    assert f"line={line}" in page.url and "view=file" in page.url
    page.screenshot(path=shots / "file.png")


def expect(locator):
    """Playwright's retrying assertions; imported here since the page fixture skips without it."""
    from playwright.sync_api import expect as playwright_expect

    return playwright_expect(locator)


def _in_viewport(page, selector: str) -> bool:
    return page.evaluate(
        """(s) => { const r = document.querySelector(s).getBoundingClientRect();
                    return r.top >= 0 && r.bottom <= window.innerHeight; }""",
        selector,
    )


def test_the_file_view_has_numbered_highlighted_lines_and_a_clickable_outline(
    page, base_url: str
) -> None:
    page.goto(f"{base_url}/?view=file&file=pkg/net.py&line={TARGET_LINE}")
    page.locator(f"#L{TARGET_LINE}.marked").wait_for()
    assert page.locator(f"#L{TARGET_LINE} .num").inner_text() == str(TARGET_LINE)
    assert "def" in page.locator(f"#L{TARGET_LINE} .tok-kw").all_inner_texts()
    assert page.locator("#L1 .tok-str").count() == 1  # the module docstring
    assert page.locator("#L4 .tok-com").count() == 1
    outline = page.locator("#outline a", has_text="send")
    outline.click()
    marked = page.locator(".source .line.marked")
    expect(marked).to_contain_text("def send")
    assert _in_viewport(page, "#" + marked.get_attribute("id"))
    # the back link returns to the search
    page.locator("#back").click()
    page.locator("#search-view").wait_for(state="visible")


def test_a_data_files_view_outlines_its_keys(page, base_url: str) -> None:
    page.goto(f"{base_url}/?view=file&file=deploy/settings.yaml")
    key = page.locator("#outline a", has_text="region")
    key.wait_for()
    assert page.locator("#outline a", has_text="service").count() == 1
    key.click()
    expect(page.locator(".source .line.marked")).to_contain_text("region: eu-west")


def test_switching_modes_changes_the_hits_and_the_url(page, base_url: str, shots: Path) -> None:
    _search(page, base_url, "handshake")
    page.locator("#results .hit").first.wait_for()
    page.get_by_label("Text", exact=True).check()
    _shown(page, "handshake", "text")
    assert "mode=text" in page.url
    label = page.locator("#results .hit .label").first
    label.wait_for()
    assert label.inner_text() in {"docstring", "comment", "string_literal"}
    assert page.locator("#results mark", has_text="handshake").count() > 0
    assert page.locator("#f-kind").is_disabled()  # text search has no kind filter

    page.get_by_label("Symbols", exact=True).check()
    page.locator("#q").fill("Client.send")
    _shown(page, "Client.send", "symbols")
    assert "mode=symbols" in page.url
    page.locator("#results .hit .label", has_text="method Client.send").wait_for()

    page.get_by_label("Literal", exact=True).check()
    page.locator("#q").fill("retry_connection again")
    _shown(page, "retry_connection again", "literal")
    assert "mode=literal" in page.url
    page.locator(".group h2", has_text="lib/other.py").wait_for()
    assert page.locator(".group h2").all_inner_texts() == ["lib/other.py"]
    page.screenshot(path=shots / "modes.png", full_page=True)


def test_the_data_mode_finds_a_record_by_its_exact_text(page, base_url: str, shots: Path) -> None:
    _search(page, base_url, "retry_budget")
    page.get_by_label("Data", exact=True).check()
    _shown(page, "retry_budget", "data")
    assert "mode=data" in page.url
    page.locator(".group h2", has_text="deploy/settings.yaml").wait_for()
    hit = page.locator("#results .hit").first
    assert "service.retry_budget = 7" in hit.inner_text()
    assert page.locator("#results mark", has_text="retry_budget").count() > 0
    assert page.locator("#f-lang").is_disabled()  # records have no language
    hit.click()  # a record opens its file at its line
    page.locator(".source .line.marked", has_text="retry_budget").wait_for()
    page.screenshot(path=shots / "data.png", full_page=True)


def test_a_path_filter_narrows_the_hits_and_the_url_restores_it(page, base_url: str) -> None:
    _search(page, base_url, "retry_connection")
    page.locator(".group h2", has_text="pkg/net.py").wait_for()
    page.locator("#f-path").fill("lib/")
    page.wait_for_url("**path=lib**")
    page.wait_for_function(
        "() => [...document.querySelectorAll('.group h2')].every(h => h.textContent.startsWith('lib/'))"
    )
    shared = page.url
    assert page.locator(".group h2").count() >= 1

    # a shared URL restores the query, the mode and the filters
    page.goto(base_url + "/")
    page.goto(shared)
    page.locator(".group h2").first.wait_for()
    assert page.locator("#q").input_value() == "retry_connection"
    assert page.locator("#f-path").input_value() == "lib/"
    assert all(h.startswith("lib/") for h in page.locator(".group h2").all_inner_texts())

    page.goto(f"{base_url}/?q=timeout&mode=symbols&kind=function")
    page.locator("#results .hit .label", has_text="function timeout_seconds").wait_for()
    assert page.locator("input[value=symbols]").is_checked()
    assert page.locator("#f-kind").input_value() == "function"


def test_a_stale_answer_never_replaces_a_newer_one(page, base_url: str) -> None:
    """The answer for an earlier query arrives last: the page keeps the later query's hits."""

    def slow_first(route) -> None:
        if '"q":"retry"' in (route.request.post_data or ""):
            time.sleep(0.6)
        route.continue_()

    page.route("**/api/search", slow_first)
    page.goto(base_url + "/")
    page.locator("#q").fill("retry")
    page.wait_for_timeout(250)  # past the debounce: "retry" is sent, and held back
    page.locator("#q").fill("timeout_seconds")
    page.locator(".group h2", has_text="pkg/config.py").wait_for()
    page.wait_for_timeout(900)  # the held answer for "retry" has arrived by now
    assert page.evaluate("window.repomapTimings.q") == "timeout_seconds"
    assert page.locator(".group h2", has_text="pkg/config.py").count() == 1
    assert page.locator(".group h2", has_text="lib/other.py").count() == 0


def test_the_map_draws_files_and_dependencies_and_a_click_opens_a_file(
    page, base_url: str, shots: Path
) -> None:
    page.goto(base_url + "/")
    page.locator("#nav-map").click()
    page.locator("#treemap a.file-link").first.wait_for()
    paths = set(
        page.locator("#treemap a.file-link").evaluate_all("ls => ls.map(l => l.dataset.path)")
    )
    assert {"pkg/net.py", "pkg/config.py", "lib/other.py"} <= paths
    sizes = {
        path: page.locator(f'#treemap a[data-path="{path}"] rect').evaluate(
            "r => r.width.baseVal.value * r.height.baseVal.value"
        )
        for path in ("pkg/net.py", "pkg/config.py")
    }
    assert sizes["pkg/net.py"] > 10 * sizes["pkg/config.py"]  # sized by lines
    assert page.locator("#graph a.node-link").count() >= 2
    assert page.locator("#graph line").count() >= 1
    assert "view=map" in page.url
    page.screenshot(path=shots / "map.png", full_page=True)

    page.locator('#treemap a[data-path="pkg/config.py"]').click()
    page.locator("#file-view").wait_for(state="visible")
    # the view shows before its source arrives: wait for the text, do not read it at once
    expect(page.locator("#file-title")).to_have_text("pkg/config.py")
    expect(page.locator("#source")).to_contain_text("def timeout_seconds")


def test_the_page_is_usable_at_phone_width(browser, base_url: str, shots: Path) -> None:
    context = browser.new_context(viewport={"width": 375, "height": 740})
    page = context.new_page()
    try:
        page.goto(f"{base_url}/?q=retry_connection")
        page.locator("#results .hit").first.wait_for()
        width = page.evaluate("document.documentElement.scrollWidth")
        assert width <= 375  # nothing wider than the screen
        page.screenshot(path=shots / "phone-search.png", full_page=True)
        page.locator("#results .hit").first.click()
        page.locator(".source .line.marked").wait_for()
        page.screenshot(path=shots / "phone-file.png")
    finally:
        context.close()


# --- repomap map --html ----------------------------------------------------------------------


def test_map_html_writes_one_self_contained_file(
    tree: Path, tmp_path: Path, browser, shots: Path
) -> None:
    out = tmp_path / "map.html"
    done = run_cli("map", "--html", out, "--root", tree)
    assert done.returncode == 0, done.stderr
    html = out.read_text(encoding="utf-8")
    assert 'src="/page' not in html and 'href="/page' not in html  # nothing to fetch
    assert "pkg/net.py" in html and 'id="repomap-map-data"' in html

    context = browser.new_context(viewport={"width": 1000, "height": 800})
    page = context.new_page()
    requests: list[str] = []
    page.on("request", lambda request: requests.append(request.url))
    try:
        page.goto(out.as_uri())
        page.locator("#treemap a.file-link").first.wait_for()
        assert page.locator("#treemap a.file-link").count() == 4  # the code files
        page.locator('#treemap a[data-path="pkg/config.py"]').click()
        expect(page.locator("#file-detail")).to_contain_text("pkg/config.py")
        page.screenshot(path=shots / "map-html.png", full_page=True)
    finally:
        context.close()
    assert requests == [out.as_uri()]  # the file alone: no script, style or data fetched


def test_map_html_errors_are_one_line_and_exit_2(tree: Path, tmp_path: Path) -> None:
    done = run_cli("map", "--html", tmp_path / "missing-dir" / "map.html", "--root", tree)
    assert done.returncode == 2
    assert done.stderr.count("\n") == 1 and "Traceback" not in done.stderr
    done = run_cli("map", "--html", tmp_path / "x.html", "--json", "--root", tree)
    assert done.returncode == 2 and "--html" in done.stderr
