"""The cache key: the joined text up to 200 characters, its sha256 digest from 201 on (cooksafe's MAX_KEY_CHARS).
Each was seen failing with a one-line bug planted in the code it guards."""

import pytest
from conftest import cache_keys

from memory_cookbook import jev_request


def call_of_key_length(length):
    """A call (model, state_json, questions_json) whose joined key "_system_one|m|{...}|..." has `length` characters."""
    head = len("|".join(["_system_one", "m", "{}", ""]))
    return "m", "{}", "q" * (length - head)


@pytest.mark.parametrize("length, hashed", [(199, False), (200, False), (201, True), (202, True)])
def test_the_cache_key_is_the_text_up_to_200_characters_and_its_digest_beyond(length, hashed):
    call = call_of_key_length(length)
    assert len("|".join(["_system_one", *call])) == length
    key = jev_request.cache_key(*call)
    assert key == next(iter(cache_keys([call])))  # as cooksafe.JsonCache itself files it
    assert (len(key), key.startswith("_system_one|")) == ((64, False) if hashed else (length, True))


def test_the_cache_key_counts_characters_not_bytes():
    call = ("m", "{}", "é" * (200 - len("_system_one|m|{}|")))  # 200 characters, more bytes in UTF-8
    assert jev_request.cache_key(*call) == next(iter(cache_keys([call]))) == "|".join(["_system_one", *call])
