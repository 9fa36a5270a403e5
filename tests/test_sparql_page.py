"""`finkg serve`'s SPARQL page in a real browser (headless Chromium, over the DevTools
protocol): the page loads from the server alone, a query typed into its editor returns
rows, and nothing is fetched from beyond loopback. A screenshot of the answered query is
saved under pytest's temporary folder. Skips where Chromium is not installed."""

from __future__ import annotations

from pathlib import Path

import pytest

from finkg.config import Settings
from tests.cdp import Browser, chromium
from tests.test_serve import _make_store, _start, _stop

# a prefixed name, where YASGUI's stock completers would ask LOV for terms
QUERY = "PREFIX e: <https://e.org/> SELECT ?s ?o WHERE { GRAPH ?g { ?s e:p ?o } } ORDER BY ?o"

pytestmark = pytest.mark.skipif(
    chromium() is None, reason="no Chromium (apt-get install chromium) for the browser test"
)


def test_the_sparql_page_answers_a_typed_query_from_loopback_alone(tmp_path: Path) -> None:
    _make_store(tmp_path / "store", Settings(home=tmp_path / "home"), triples=3)
    server, url = _start(tmp_path / "store")
    try:
        with Browser.start(tmp_path / "profile") as browser:
            page = browser.new_page()
            page.goto(url + "/")
            page.wait_for("document.querySelector('.yasqe .CodeMirror') !== null")
            assert page.evaluate("document.title") == "finkg SPARQL"  # finkg's page, not YASGUI's
            # empty the editor as a person would (select all, delete), then type the query
            page.click(".yasqe .CodeMirror-scroll")
            page.key("a", "KeyA", 65, modifiers=2)  # Ctrl+A
            page.key("Delete", "Delete", 46)
            page.type(QUERY)
            typed = page.evaluate(
                "document.querySelector('.yasqe .CodeMirror').CodeMirror.getValue()"
            )
            assert typed == QUERY
            page.click(".yasqe_queryButton")
            cells = page.wait_for(
                "(() => { const rows = [...document.querySelectorAll('.yasr tbody tr')];"
                " return rows.length ? rows.map(r => r.innerText) : null; })()"
            )
            shot = page.screenshot(tmp_path / "sparql-page.png")
            outside = page.requests(lambda u: not u.startswith((url, "data:", "blob:", "about:")))
    finally:
        _stop(server)
    assert len(cells) == 3, cells
    assert any("served" in c for c in cells), cells
    assert shot.stat().st_size > 10_000  # a rendered page, not an empty image
    assert outside == [], f"the page fetched from beyond loopback: {outside}"


def test_the_sparql_page_sends_the_token_a_user_gives_it(tmp_path: Path) -> None:
    """With `finkg serve --token-file`, the page opened as /#token=... sends the token
    with its queries (the fragment never reaches the server) and gets rows back."""
    from tests.test_serve_access import TOKEN
    from tests.test_serve_access import _start as start_with_token

    _make_store(tmp_path / "store", Settings(home=tmp_path / "home"), triples=3)
    (tmp_path / "token").write_text(TOKEN)
    server, url = start_with_token(tmp_path / "store", "--token-file", str(tmp_path / "token"))
    try:
        with Browser.start(tmp_path / "profile") as browser:
            page = browser.new_page()
            page.send("Page.navigate", {"url": url + "/#token=" + TOKEN})
            page.wait_for(
                "document.readyState === 'complete' && "
                "document.querySelector('.yasqe .CodeMirror') !== null"
            )
            assert page.evaluate("document.getElementById('token').value") == TOKEN
            assert TOKEN not in page.evaluate("location.href")  # taken off the address bar
            page.click(".yasqe .CodeMirror-scroll")
            page.key("a", "KeyA", 65, modifiers=2)
            page.key("Delete", "Delete", 46)
            page.type(QUERY)
            page.click(".yasqe_queryButton")
            cells = page.wait_for(
                "(() => { const rows = [...document.querySelectorAll('.yasr tbody tr')];"
                " return rows.length ? rows.map(r => r.innerText) : null; })()"
            )
            page.screenshot(tmp_path / "sparql-page-token.png")
    finally:
        _stop(server)
    assert len(cells) == 3, cells
