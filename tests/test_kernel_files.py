"""A notebook's file for its kernel (07's memories.sqlite, 10's desk_memories.sqlite): another running kernel that made
it, and still has it, keeps it; a kernel that ended, or deleted it, leaves it free (memory_cookbook/kernel_files.py)."""

import getpass
import os
import subprocess
import sys
import tempfile

import pytest

from memory_cookbook import kernel_files
from memory_cookbook.kernel_files import FileInUse, MarkerFolderNotOwn, new_file_for_this_kernel


@pytest.fixture(autouse=True)
def temporary_folder(tmp_path, monkeypatch):
    """The markers in this test's folder, for this process and the other kernels it starts, not in the machine's."""
    folder = tmp_path / "temporary"
    folder.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(folder))
    monkeypatch.setenv("TMPDIR", str(folder))
    return folder

OTHER_KERNEL = """import sys
from memory_cookbook.kernel_files import new_file_for_this_kernel
path = new_file_for_this_kernel(sys.argv[1])
path.write_text("the other kernel's memories")
print("made", flush=True)
sys.stdin.readline()  # until the test says: delete it, or end
if sys.argv[2] == "delete":
    path.unlink()
    print("deleted", flush=True)
    sys.stdin.readline()
"""


def other_kernel(path, then="end"):
    kernel = subprocess.Popen([sys.executable, "-c", OTHER_KERNEL, str(path), then], stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, text=True)
    assert kernel.stdout.readline() == "made\n"
    return kernel


def test_a_file_another_running_kernel_made_is_refused_naming_it_and_left_as_it_is_until_that_kernel_ends(tmp_path):
    path = tmp_path / "desk_memories.sqlite"
    kernel = other_kernel(path)
    try:
        with pytest.raises(FileInUse, match=rf"desk_memories\.sqlite is in use by another kernel \(pid {kernel.pid}\)"
                                            r".*Shut that kernel down.*run its last cell"):
            new_file_for_this_kernel(path)
        assert path.read_text() == "the other kernel's memories"
    finally:
        kernel.communicate("\n", timeout=30)
    assert new_file_for_this_kernel(path) == path and path.read_bytes() == b""  # that kernel ended: a new file
    path.write_text("this kernel's memories")
    assert new_file_for_this_kernel(path) == path and path.read_bytes() == b""  # Run All again: a new file


def test_a_file_its_kernel_deleted_is_free_while_that_kernel_still_runs(tmp_path):
    path = tmp_path / "memories.sqlite"
    kernel = other_kernel(path, then="delete")
    try:
        kernel.stdin.write("\n")
        kernel.stdin.flush()
        assert kernel.stdout.readline() == "deleted\n"
        assert new_file_for_this_kernel(path) == path  # its last cell ran: nothing of it is left to refuse
    finally:
        kernel.communicate("\n", timeout=30)


@pytest.mark.parametrize("marker", ["", "{\"pid\": 1", "[1, 2]", "{\"pid\": \"x\", \"started\": 0}"])
def test_a_damaged_marker_names_no_kernel_and_the_file_is_taken(tmp_path, marker):
    path = tmp_path / "memories.sqlite"
    path.write_text("an earlier run's memories")
    kernel_files.marker_of(path).write_text(marker)
    assert new_file_for_this_kernel(path) == path and path.read_bytes() == b""


def test_what_sqlite_left_beside_an_earlier_file_is_deleted_with_it(tmp_path):
    path = tmp_path / "memories.sqlite"
    for name in ("memories.sqlite", "memories.sqlite-journal", "memories.sqlite-wal", "memories.sqlite-shm"):
        (tmp_path / name).write_text("an earlier run's")
    new_file_for_this_kernel(path)
    assert sorted(file.name for file in tmp_path.iterdir() if file.name.startswith("memories")) == ["memories.sqlite"]


def test_a_marker_folder_another_user_made_is_refused_and_one_of_this_users_others_may_enter_is_closed(tmp_path,
                                                                                                      monkeypatch):
    folder = kernel_files.marker_folder()
    folder.chmod(0o777)
    new_file_for_this_kernel(tmp_path / "memories.sqlite")
    assert folder.stat().st_mode & 0o777 == 0o700
    monkeypatch.setenv("LOGNAME", getpass.getuser())  # the folder's name, whatever the user id below
    monkeypatch.setattr(os, "getuid", lambda: os.stat(folder).st_uid + 1)  # as if someone else had made it first
    with pytest.raises(MarkerFolderNotOwn, match="is not a folder of this user's own: delete it"):
        new_file_for_this_kernel(tmp_path / "desk_memories.sqlite")
    assert not (tmp_path / "desk_memories.sqlite").exists()


def test_a_marker_folder_that_is_a_link_is_refused(tmp_path, temporary_folder):
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir(mode=0o700)
    (temporary_folder / kernel_files.marker_folder().name).rmdir()
    (temporary_folder / f"memory_cookbook-kernel-files-{kernel_files.user_name()}").symlink_to(elsewhere)
    with pytest.raises(MarkerFolderNotOwn):
        new_file_for_this_kernel(tmp_path / "memories.sqlite")
    assert list(elsewhere.iterdir()) == []


def test_a_user_the_system_names_not_has_a_marker_folder_named_by_their_id(tmp_path, monkeypatch):
    def nameless():
        raise KeyError("getpwuid(): uid not found")  # as in a container whose user has no /etc/passwd entry
    monkeypatch.setattr(getpass, "getuser", nameless)
    new_file_for_this_kernel(tmp_path / "memories.sqlite")
    assert kernel_files.marker_folder().name == f"memory_cookbook-kernel-files-{os.getuid()}"
