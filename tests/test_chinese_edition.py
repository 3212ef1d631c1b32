"""The Chinese edition (NN_name.zh.ipynb beside every notebook) runs exactly the English code on the same recorded
answers: its code cells are the English ones word for word, its prose is Chinese, cell for cell."""

import re

import nbformat
from test_published_figures import totals_line
import pytest
from cookbook_tools.paths import CHINESE_NOTEBOOKS, ENGLISH_NOTEBOOKS

PAIRS = {path.name: (path.with_name(path.name.replace(".zh.ipynb", ".ipynb")), path) for path in CHINESE_NOTEBOOKS}
CJK = re.compile(r"[\u4e00-\u9fff]")
GLOSSARY_HEADING = "## 术语对照"


def cells(path):
    return nbformat.read(path, as_version=4).cells


def test_every_notebook_has_a_chinese_edition_beside_it():
    assert sorted(english.name for english, _ in PAIRS.values()) == [path.name for path in ENGLISH_NOTEBOOKS]


@pytest.mark.parametrize("name", PAIRS)
def test_code_cells_are_the_english_ones_word_for_word(name):
    english, chinese = PAIRS[name]
    assert [c.source for c in cells(chinese) if c.cell_type == "code"] == \
           [c.source for c in cells(english) if c.cell_type == "code"]


@pytest.mark.parametrize("name", PAIRS)
def test_each_markdown_cell_is_chinese_and_stands_where_the_english_one_does(name):
    english, chinese = PAIRS[name]
    translated = [c for c in cells(chinese) if not c.source.startswith(GLOSSARY_HEADING)]
    assert [c.cell_type for c in translated] == [c.cell_type for c in cells(english)]
    for original, translation in zip(cells(english), translated, strict=True):
        if original.cell_type == "markdown":
            assert CJK.search(translation.source), translation.source[:80]
            heading_levels = [re.findall(r"^(#+) ", c.source, re.M) for c in (original, translation)]
            assert heading_levels[0] == heading_levels[1], translation.source[:80]


@pytest.mark.parametrize("name", PAIRS)
def test_committed_outputs_are_the_english_ones(name):
    english, chinese = PAIRS[name]
    assert [c.outputs for c in cells(chinese) if c.cell_type == "code"] == \
           [c.outputs for c in cells(english) if c.cell_type == "code"]


def test_the_first_notebook_has_the_glossary():
    glossary = [c.source for c in cells(CHINESE_NOTEBOOKS[0]) if c.source.startswith(GLOSSARY_HEADING)]
    assert len(glossary) == 1
    for english, chinese in [("ticket", "工单"), ("routing", "路由"), ("gate", "门控"), ("memory", "记忆"),
                             ("threshold", "阈值"), ("wrapper", "包装函数"), ("state", "state"), ("cache", "缓存"),
                             ("customer", "客户")]:
        assert f"| {english} | {chinese} |" in glossary[0]


def test_chinese_06_shows_the_published_totals():
    outputs = [output.get("text", "") for c in cells(CHINESE_NOTEBOOKS[5]) for output in c.get("outputs", [])]
    assert totals_line() + "\n" in outputs
