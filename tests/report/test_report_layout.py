"""The HTML report's layout at Adult scale, in a real browser (issue 22, item 9).

Du et al.'s Adult release (Anatomy l = 5) has eight QI columns: the people table cut
off its ``lower``/``upper`` columns at the right edge. Headless Chromium renders the page
at 1,000 px; a script measures that the page does not scroll sideways (its scroll width
equals its client width) and that no table is wider than its box. Skipped without
Chromium (``.ci/run`` installs it where it can), like the browser test of
``test_report.py``.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from browser import CHROMIUM, chromium

from maxent_privacy import MaxEntModel, anonymize, datasets

MEASURE = """<script>
window.addEventListener("load", function () {
  var d = document.documentElement, out = [];
  out.push("page " + d.scrollWidth + " " + d.clientWidth);
  document.querySelectorAll("table").forEach(function (t) {
    var box = t.parentElement;
    out.push("table " + Math.ceil(t.getBoundingClientRect().right) + " "
             + Math.ceil(box.getBoundingClientRect().right) + " "
             + box.scrollWidth + " " + box.clientWidth);
  });
  var mark = document.createElement("div");
  mark.id = "layout-check";
  mark.textContent = out.join("; ");
  document.body.appendChild(mark);
});
</script>"""


def layout(page: Path, tmp_path: Path, width: int = 1000) -> tuple[tuple, list]:
    """((page scroll width, client width), [(table right, box right, box scroll width,
    box client width), ...]) of ``page`` rendered ``width`` px wide."""
    probe = tmp_path / f"probe-{page.name}"
    probe.write_text(page.read_text(encoding="utf-8").replace("</body>", MEASURE + "</body>"))
    dom = chromium(probe, tmp_path, f"--window-size={width},1400", "--dump-dom")
    mark = re.search(r'<div id="layout-check">(.*?)</div>', dom)
    assert mark, "the layout script did not run"
    parts = mark.group(1).split("; ")
    whole = tuple(int(v) for v in parts[0].split()[1:])
    tables = [tuple(int(v) for v in p.split()[1:]) for p in parts[1:]]
    return whole, tables


@pytest.fixture(scope="module")
def adult_result():
    frame = datasets.du2008_adult()
    release = anonymize.anatomize(
        frame,
        list(datasets.ADULT_QI),
        datasets.ADULT_SA,
        l=5,
        seed=0,
        nonsensitive=["HS-grad", "Some-college"],
    )
    return MaxEntModel(release).solve()


@pytest.mark.skipif(CHROMIUM is None, reason="Chromium is not installed")
def test_no_table_of_the_adult_report_overflows(adult_result, tmp_path):
    page = tmp_path / "adult.html"
    adult_result.report(page, threshold=0.5)
    (scroll, client), tables = layout(page, tmp_path)
    assert scroll == client, f"the page scrolls sideways: {scroll} > {client}"
    assert len(tables) >= 2
    for right, box_right, box_scroll, box_client in tables:
        assert right <= box_right and box_scroll <= box_client, tables
    shot = tmp_path / "shot.png"
    chromium(page, tmp_path, f"--screenshot={shot}", "--window-size=1000,2400", "--hide-scrollbars")
    assert shot.stat().st_size > 10_000


@pytest.mark.skipif(CHROMIUM is None, reason="Chromium is not installed")
def test_the_layout_check_sees_an_overflowing_table(tmp_path):
    page = tmp_path / "wide.html"
    cells = "".join(f"<td>{'x' * 30}{k}</td>" for k in range(20))
    page.write_text(
        '<!DOCTYPE html><html><body style="max-width: 40rem"><div><table><tr>'
        f"{cells}</tr></table></div></body></html>"
    )
    (scroll, client), tables = layout(page, tmp_path)
    right, box_right, box_scroll, box_client = tables[0]
    assert scroll > client or right > box_right or box_scroll > box_client
