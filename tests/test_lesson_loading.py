"""Loading the lesson by its path (memory_cookbook/locations.load_lesson), as app servers and tools do: another module
named jev_memory_lesson already imported is refused even when its file has the lesson's name, and a lesson that fails to
load is not left half-made in sys.modules."""

import sys
import types

import pytest

from memory_cookbook.locations import LESSON_FILE, load_lesson


def test_a_decoy_with_the_lessons_file_name_in_another_folder_is_refused(tmp_path, monkeypatch):
    decoy = types.ModuleType("jev_memory_lesson")
    decoy.__file__ = str(tmp_path / "notebooks" / LESSON_FILE.name)
    monkeypatch.setitem(sys.modules, "jev_memory_lesson", decoy)
    with pytest.raises(ImportError, match=f"another jev_memory_lesson is already imported in this process"
                                          f" \\({decoy.__file__}\\)"):
        load_lesson(LESSON_FILE)


def test_a_lesson_that_fails_to_load_is_not_left_in_sys_modules(tmp_path, monkeypatch):
    monkeypatch.delitem(sys.modules, "jev_memory_lesson", raising=False)
    broken = tmp_path / LESSON_FILE.name
    broken.write_text("raise RuntimeError('a lesson that cannot load')\n")
    with pytest.raises(RuntimeError, match="a lesson that cannot load"):
        load_lesson(broken)
    assert "jev_memory_lesson" not in sys.modules
