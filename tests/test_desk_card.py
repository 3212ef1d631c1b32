"""The memory card (memory_cookbook/desk/card.py), on C-1042's memories as the published run saved them: its text has
every field of every memory, its HTML shows the same fields and is safe to show, its status follows the moment, and
the Chinese edition labels it in Chinese."""

import json
import re
import xml.etree.ElementTree as ElementTree

import nbformat
import pytest
from published_memories import (AFTER_EXPIRY, BEFORE_EXPIRY, INVALIDATED, INVALIDATED_BY, REASON, SAVED,
                                published_run)

from cookbook_tools import chinese_edition
from memory_cookbook.desk.card import CARD_MIME, CHINESE, ENGLISH, MemoryCard, card_html, card_text

CJK = re.compile(r"[\u4e00-\u9fff]")


@pytest.fixture
def c1042(lesson):
    """C-1042's records (T-101 expiring at the end of the year, T-105 invalidated) and the run's ledger."""
    return published_run(lesson)


def unwrapped(text):
    return " ".join(text.split())


def section(text, ticket):
    """The text of one memory of a text card (from its heading to the next blank line), its wrapping undone."""
    return unwrapped(next(part for part in text.split("\n\n") if part.startswith(ticket)))


def test_the_text_card_shows_every_field_of_each_memory(c1042):
    records, ledger = c1042
    text = MemoryCard("C-1042", records, ledger, now=BEFORE_EXPIRY).text("en")
    assert text.startswith("Memory card · C-1042 · Harbor Logistics\n")
    # T-103's and T-105's calls, then 3 later messages: every call since the memory was saved
    carried = {"T-101": "5 calls since it was saved", "T-105": "3 calls since it was saved"}
    for record in records:
        shown = section(text, record.ticket)
        (question, answer), = record.memory["jev_answered"].items()
        said = record.memory["request"]["ticket"]["messages"][0]["text"]
        for value in (record.ticket, record.memory["request"]["ticket"]["subject"], said, question, answer,
                      f"chosen at {record.answer_probabilities[question]:.2f}",
                      f"P(remember) {record.p_remember:.2f} (threshold 0.50)", f"model {record.model}",
                      f"saved {record.saved_at:%Y-%m-%d %H:%M} UTC", f"carried by {carried[record.ticket]}"):
            assert unwrapped(value) in shown, (record.ticket, value)
    assert "[in force]" in section(text, "T-101") and "expires 2026-12-31 00:00 UTC" in section(text, "T-101")
    assert "[invalidated]" in section(text, "T-105") and "expires never" in section(text, "T-105")
    assert f"invalidated {INVALIDATED:%Y-%m-%d %H:%M} UTC by {INVALIDATED_BY}: {REASON}" in section(text, "T-105")


def test_the_published_figures_are_on_the_card_as_the_store_kept_them(c1042):
    text = MemoryCard("C-1042", *c1042, now=BEFORE_EXPIRY).text("en")
    assert "chosen at 0.57" in section(text, "T-101") and "P(remember) 0.91" in section(text, "T-101")
    assert "chosen at 0.35" in section(text, "T-105") and "P(remember) 0.92" in section(text, "T-105")


def test_the_status_is_the_one_at_the_cards_moment_and_an_invalidation_not_yet_made_is_not_shown(c1042):
    def statuses(moment):
        return {memory["ticket"]: memory["status"] for memory in MemoryCard("C-1042", *c1042, now=moment).data[
            "memories"]}

    assert statuses(SAVED) == {"T-101": "in force", "T-105": "in force"}
    assert statuses(BEFORE_EXPIRY) == {"T-101": "in force", "T-105": "invalidated"}
    assert statuses(AFTER_EXPIRY) == {"T-101": "expired", "T-105": "invalidated"}
    before = MemoryCard("C-1042", *c1042, now=SAVED).text("en")
    assert REASON not in before and f"by {INVALIDATED_BY}:" not in before
    assert "(0 in force, 1 invalidated, 1 expired)" in MemoryCard("C-1042", *c1042, now=AFTER_EXPIRY).text("en")


def test_a_card_shows_one_customer(c1042):
    records, ledger = c1042
    with pytest.raises(ValueError, match="the card of C-2210 was given records of C-1042"):
        MemoryCard("C-2210", records, ledger)
    assert "Nothing is remembered of this customer." in MemoryCard("C-2210", [], ledger).text("en")


def html_rows(html):
    """{ticket: [(label, value), ...]} of a card's HTML, parsed as XML (so it must be well-formed)."""
    root = ElementTree.fromstring(html)
    rows = {}
    for block in root.iter("div"):
        table = block.find("table")
        if table is not None:
            ticket = "".join(block.find("div/strong").itertext()).split(" · ")[0]
            rows[ticket] = [tuple(unwrapped("".join(row.find(cell).itertext())) for cell in ("th", "td"))
                            for row in table.iter("tr")]
    return rows


def text_rows(text, labels):
    """The same of a text card: each line's label (one of `labels`) and value, continuation lines joined on."""
    rows, ticket = {}, None
    for line in text.splitlines():
        if line and not line.startswith(" ") and "[" in line:
            ticket = line.split(" · ")[0]
            rows[ticket] = []
        elif line.startswith("  ") and ticket:
            label = next((label for label in labels if line[2:].startswith(label + " ")), None)
            if label and not line.startswith("   "):
                rows[ticket].append((label, unwrapped(line[2 + len(label):])))
            else:
                rows[ticket][-1] = (rows[ticket][-1][0], rows[ticket][-1][1] + " " + unwrapped(line))
    return rows


@pytest.mark.parametrize("said", [ENGLISH, CHINESE], ids=["en", "zh"])
def test_the_html_shows_the_same_fields_as_the_text(c1042, said):
    card = MemoryCard("C-1042", *c1042, now=BEFORE_EXPIRY)
    labels = sorted({label for ticket_rows in html_rows(card.html(said.language)).values()
                     for label, _ in ticket_rows}, key=len, reverse=True)
    assert html_rows(card.html(said.language)) == text_rows(card.text(said.language), labels)
    assert len(html_rows(card.html(said.language))["T-105"]) == 10


def test_the_html_is_well_formed_with_no_script_and_only_styles_jupyterlab_keeps(c1042):
    html = MemoryCard("C-1042", *c1042, now=AFTER_EXPIRY).html("en")
    root = ElementTree.fromstring(html)  # well-formed, one element
    elements = list(root.iter())
    assert {element.tag for element in elements} <= {"div", "span", "strong", "table", "tbody", "tr", "th", "td"}
    attributes = {name for element in elements for name in element.attrib}
    assert attributes <= {"style", "lang"}  # no on* handler, no class that needs a style sheet
    styles = " ".join(element.get("style", "") for element in elements)
    # JupyterLab's sanitiser keeps hex and rgba() colours in a notebook it does not trust, and drops var() and url()
    assert "var(" not in styles and "url(" not in styles and "javascript" not in html.lower()
    badges = [unwrapped("".join(span.itertext())) for span in root.iter("span") if "border-radius:10px" in
              span.get("style", "")]
    assert badges == ["expired", "invalidated"]


def test_a_chinese_notebooks_kernel_shows_the_card_in_chinese_from_the_same_data(c1042, monkeypatch):
    card = MemoryCard("C-1042", *c1042, now=BEFORE_EXPIRY)
    monkeypatch.delenv("JPY_SESSION_NAME", raising=False)
    english = card._repr_mimebundle_()
    monkeypatch.setenv("JPY_SESSION_NAME", "/home/student/cookbook/notebooks/10_a_desk_memory.zh.ipynb")
    chinese = card._repr_mimebundle_()
    assert english[CARD_MIME] == chinese[CARD_MIME] == json.loads(json.dumps(card.data))
    assert chinese["text/plain"] == card_text(card.data, "zh") == repr(card)
    assert chinese["text/html"] == card_html(card.data, "zh") == card._repr_html_()
    for text in (chinese["text/plain"], chinese["text/html"]):
        assert "记忆卡片" in text and "有效" in text and "已作废" in text and "保存的答案" in text
        assert "发送次数" in text and "保存以来 5 次" in text and "保存以来 3 次" in text
        assert re.search(rf"作废于(\s|<[^>]+>)+{INVALIDATED:%Y-%m-%d %H:%M} UTC，操作人 desk", text)  # "invalidated at"
        assert "工单内容" in text and "过期时间" in text and "原文" not in text  # 原文 is the published page
        assert "in force" not in text and "answer saved" not in text
    assert "in force" in english["text/plain"] and not CJK.search(english["text/plain"] + english["text/html"])


def test_the_chinese_sync_writes_a_cards_twin_with_chinese_labels(c1042, tmp_path):
    card = MemoryCard("C-1042", *c1042, now=AFTER_EXPIRY)
    bundle = card._repr_mimebundle_()
    notebook = nbformat.v4.new_notebook()
    cell = nbformat.v4.new_code_cell("card", id="card-cell")
    cell.outputs = [nbformat.v4.new_output("execute_result", data=bundle, execution_count=1)]
    notebook.cells = [cell]
    folder = tmp_path / "notebooks"
    folder.mkdir()
    nbformat.write(notebook, folder / "10_a_desk_memory.ipynb")

    chinese_edition.sync(folder, report=lambda line: None)
    twin = nbformat.read(folder / "10_a_desk_memory.zh.ipynb", as_version=4).cells[0].outputs[0]["data"]
    assert twin[CARD_MIME] == json.loads(json.dumps(card.data))
    assert (twin["text/plain"], twin["text/html"]) == (card_text(card.data, "zh"), card_html(card.data, "zh"))
    assert "已过期" in twin["text/plain"] and "已作废" in twin["text/html"]
    english = nbformat.read(folder / "10_a_desk_memory.ipynb", as_version=4).cells[0].outputs[0]["data"]
    assert english["text/plain"] == bundle["text/plain"]
    assert chinese_edition.check(folder) == []
