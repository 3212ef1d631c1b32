"""The Chinese READMEs and guides kept in step with the English ones (scripts/sync_chinese.py --check and --translated
run this beside the notebooks' check: tools/cookbook_tools/chinese_edition.py).

An English document is a list of paragraphs: blocks of lines between blank lines, a fenced code block whole (a list
or a table without blank lines in it is one paragraph). Its Chinese twin is written by hand, in sections: each
section opens with a line

    <!-- en: 1f0e3a5b9c2d 7a6b5c4d3e2f -->

naming, by digest, the English paragraphs it translates (several when it translates several; a section may hold
more Chinese paragraphs than it translates, such as a gloss for Chinese readers). The digest is of the paragraph's
text with its runs of white space made one space, so rewrapping a paragraph changes nothing. When an English
paragraph changes, its digest is no longer in the Chinese document: the check names the English paragraph and the
Chinese section that translated it (the sections are in the English order, so the changed paragraph's twin is the
section that stands where it stood), and `--translated README.zh.md:LINE` records the section at that line as
translating the English paragraphs as they are now.
"""

import difflib
import hashlib
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cookbook_tools.paths import ROOT

COMMAND = "scripts/sync_chinese.py"
DOCUMENT_PAIRS = [(ROOT / "README.md", ROOT / "README.zh.md"),
                  (ROOT / "docs" / "teaching.md", ROOT / "docs" / "teaching.zh.md")]
MARKER = re.compile(r"^<!-- en: ((?:[0-9a-f]{12} ?)+) -->$")
FENCE = re.compile(r"^\s*(`{3,}|~{3,})")


@dataclass(frozen=True)
class Paragraph:
    """An English paragraph: its first line's number (from 1), its text and its digest."""

    line: int
    text: str

    @property
    def digest(self) -> str:
        return paragraph_digest(self.text)

    def opening(self, length: int = 50) -> str:
        words = " ".join(self.text.split())
        return words if len(words) <= length else words[:length].rsplit(" ", 1)[0] + " …"


@dataclass
class Section:
    """A marker of the Chinese document: its line (from 1) and the digests it records."""

    line: int
    digests: list


def paragraph_digest(text: str) -> str:
    return hashlib.sha256(" ".join(text.split()).encode()).hexdigest()[:12]


def marker_line(digests: Iterable[str]) -> str:
    return f"<!-- en: {' '.join(digests)} -->"


def paragraphs(text: str) -> list[Any]:
    """The English document's paragraphs, in order."""
    found, block, start, fence = [], [], 0, None
    for number, line in enumerate(text.splitlines(), start=1):
        opened = FENCE.match(line)
        if fence:
            block.append(line)
            if re.fullmatch(re.escape(fence[0]) + "{%d,}" % len(fence), line.strip()):
                fence = None
            continue
        if not line.strip():
            if block:
                found.append(Paragraph(start, "\n".join(block)))
            block = []
            continue
        if not block:
            start = number
        block.append(line)
        if opened:
            fence = opened.group(1)
    if block:
        found.append(Paragraph(start, "\n".join(block)))
    return found


def sections(text: str) -> tuple[list[Any], Any]:
    """The Chinese document's markers, in order, and the lines of text that stand before the first one."""
    found, before = [], []
    for number, line in enumerate(text.splitlines(), start=1):
        marker = MARKER.match(line.strip())
        if marker:
            found.append(Section(number, marker.group(1).split()))
        elif line.strip() and not found:
            before.append(number)
    return found, before


@dataclass(frozen=True)
class Gap:
    """Where the English and the Chinese record differ: the English paragraphs there, and the sections (of the
    Chinese document) holding digests that no English paragraph there has any more."""

    english: list
    stale: list  # [(section, digest)]
    after: object  # the section after which new paragraphs' translations go (None: at the start)


def gaps(english_text: str, chinese_text: str) -> Iterator[Any]:
    english = paragraphs(english_text)
    found, _ = sections(chinese_text)
    recorded = [(section, digest) for section in found for digest in section.digests]
    matcher = difflib.SequenceMatcher(None, [digest for _, digest in recorded],
                                      [paragraph.digest for paragraph in english], autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag != "equal":
            yield Gap(english[j1:j2], recorded[i1:i2], recorded[i1 - 1][0] if i1 else None)


@dataclass(frozen=True)
class DocumentProblem:
    """What --check reports for a document pair: the Chinese document, the line, and what to do."""

    document: str
    line: object
    what: str
    to_translate: bool = True

    def __str__(self) -> str:
        return f"{self.document} line {self.line}: {self.what}"


def relative(path: Path) -> str:
    try:
        return path.relative_to(ROOT).as_posix()
    except ValueError:
        return path.as_posix()


def check_pair(english_path: Path, chinese_path: Path) -> list[Any]:
    """Every English paragraph with no Chinese section recording it as it is now, named with its twin."""
    chinese_name, english_name = relative(chinese_path), relative(english_path)
    if not chinese_path.exists():
        return [DocumentProblem(chinese_name, "-", f"missing: the Chinese twin of {english_name}", False)]
    english_text, chinese_text = english_path.read_text(encoding="utf-8"), chinese_path.read_text(encoding="utf-8")
    _, before = sections(chinese_text)
    problems = [DocumentProblem(chinese_name, line, f"Chinese text before the first `<!-- en: ... -->` marker: every"
                                f" section opens with the marker naming the {english_name} paragraphs it translates",
                                False) for line in before[:1]]
    for gap in gaps(english_text, chinese_text):
        problems += gap_problems(gap, english_name, chinese_name)
    return problems


def gap_problems(gap: Any, english_name: str, chinese_name: str) -> list[Any]:
    record = f"then `{COMMAND} --translated {chinese_name}:{{line}}`"
    lines = sorted({section.line for section, _ in gap.stale})
    if gap.english and gap.stale:
        if len(gap.english) == len(gap.stale):  # one changed paragraph for each stale digest, in order
            twins = [(section.line, [paragraph]) for (section, _), paragraph in zip(gap.stale, gap.english,
                                                                                       strict=True)]
        else:
            twins = [(line, gap.english) for line in lines]
        return [DocumentProblem(chinese_name, line, "translates " + ", ".join(
            f"{english_name} line {paragraph.line} ({paragraph.opening()!r})" for paragraph in changed)
            + f" as it was before it changed: retranslate this section, {record.format(line=line)}")
            for line, changed in twins]
    if gap.english:
        where = f"after the section at line {gap.after.line}" if gap.after else "at the start"
        return [DocumentProblem(chinese_name, gap.after.line if gap.after else "-", f"{english_name} line"
                                f" {paragraph.line} ({paragraph.opening()!r}) has no translation: add it {where},"
                                f" opening with `{marker_line([paragraph.digest])}`") for paragraph in gap.english]
    return [DocumentProblem(chinese_name, line, f"records English text that {english_name} no longer has (removed or"
                            f" moved): remove its translation, or {record.format(line=line)} if it now translates"
                            " the paragraphs around it", True) for line in lines]


def check(pairs: Iterable[tuple[Path, Path]] | None = None) -> list[Any]:
    return [problem for english, chinese in (DOCUMENT_PAIRS if pairs is None else pairs)
            for problem in check_pair(english, chinese)]


def mark_translated(chinese_path: Path, english_path: Path, line: int | None = None) -> int:
    """Record the section at `line` (or every section with stale digests, when None) as translating the English
    paragraphs it stands for now: in each gap, one stale digest for one changed paragraph in order when their counts
    match, else all the gap's paragraphs go to its first section. Returns how many sections it changed."""
    chinese_text = chinese_path.read_text(encoding="utf-8")
    found, _ = sections(chinese_text)
    new_digests = {section.line: list(section.digests) for section in found}
    changed = set()
    for gap in gaps(english_path.read_text(encoding="utf-8"), chinese_text):
        lines = [section.line for section, _ in gap.stale]
        if not lines or (line is not None and line not in lines):
            continue
        stale = [digest for _, digest in gap.stale]
        wanted = [paragraph.digest for paragraph in gap.english]
        if len(stale) == len(wanted):
            replacements = list(zip(lines, stale, wanted, strict=True))
        else:
            replacements = [(lines[0], stale[0], " ".join(wanted))] + [(at, digest, "") for at, digest in
                                                                       zip(lines[1:], stale[1:], strict=True)]
        for at, old, new in replacements:
            digests = new_digests[at]
            digests[digests.index(old)] = new
            changed.add(at)
    if line is not None and line not in changed:
        raise ValueError(f"{relative(chinese_path)} line {line}: no section there records changed English text"
                         f" (`{COMMAND} --check` names the lines)")
    text_lines = chinese_text.splitlines(keepends=True)
    for at in sorted(changed, reverse=True):
        digests = " ".join(new_digests[at]).split()
        ending = "\n" if text_lines[at - 1].endswith("\n") else ""
        if digests:
            text_lines[at - 1] = marker_line(digests) + ending
        else:
            del text_lines[at - 1]  # its text now belongs to the section before it
    chinese_path.write_text("".join(text_lines), encoding="utf-8")
    return len(changed)


def pair_of(chinese_name: str, pairs: Iterable[tuple[Path, Path]] | None = None) -> tuple[Path, Path]:
    """(English path, Chinese path) for a Chinese document named by its path or file name."""
    for english, chinese in DOCUMENT_PAIRS if pairs is None else pairs:
        if Path(chinese_name).name == chinese.name:
            return english, chinese
    raise ValueError(f"{chinese_name}: not a Chinese document the check knows (" + ", ".join(
        relative(chinese) for _, chinese in (DOCUMENT_PAIRS if pairs is None else pairs)) + ")")
