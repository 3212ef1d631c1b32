"""The cache lock: a second writer waits while another holds the lock, then adds its answers to theirs.
Each was seen failing with a one-line bug planted in the code it guards."""

import json
import threading

import pytest
from filelock import FileLock, Timeout

from memory_cookbook.replay import cache_file


def lock_file(cache):
    """The lock every writer of `cache` must take: named here, not read from cache_file, so both sides are checked."""
    return FileLock(cache.with_name(f".{cache.name}.lock"))


class Recorder:
    """What MergingWrite writes for: a SharedJsonCache's entries and indent."""

    def __init__(self):
        self._data, self.indent = {}, 2


def test_a_writer_cannot_write_while_another_holds_the_lock(tmp_path, monkeypatch):
    cache = tmp_path / "json_cache.json"
    cache.write_text("{}")
    lock_for = cache_file.lock_for

    def impatient(path):  # the writer's own lock, told to give up at once instead of waiting 60 s
        lock = lock_for(path)
        lock.timeout = 0
        return lock

    monkeypatch.setattr(cache_file, "lock_for", impatient)
    with lock_file(cache):
        with pytest.raises(Timeout):
            cache_file.MergingWrite(Recorder(), cache).write_text('{"k": 1}')
        assert cache.read_text() == "{}"
    cache_file.MergingWrite(Recorder(), cache).write_text('{"k": 1}')
    assert json.loads(cache.read_text()) == {"k": 1}


def test_a_waiting_writer_proceeds_once_the_lock_is_released_and_keeps_what_was_written_meanwhile(tmp_path):
    cache = tmp_path / "json_cache.json"
    cache.write_text("{}")
    writer = threading.Thread(target=cache_file.MergingWrite(Recorder(), cache).write_text, args=('{"b": 2}',))
    with lock_file(cache):
        writer.start()
        writer.join(timeout=0.1)  # with the lock held it can never finish: no timing decides a pass
        assert writer.is_alive() and cache.read_text() == "{}"
        cache.write_text('{"a": 1}')  # what the lock's holder recorded
    writer.join(timeout=60)
    assert not writer.is_alive()
    assert json.loads(cache.read_text()) == {"a": 1, "b": 2}
