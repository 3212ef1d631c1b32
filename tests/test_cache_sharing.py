"""Two recorders of one cache file (memory_cookbook/cache_file.SharedJsonCache): what one wrote is, after the other's
next write merges it in, a hit for the other too: it is replayed, not asked again."""

from memory_cookbook.replay.cache_file import SharedJsonCache


def test_answers_another_recorder_merged_in_are_hits_here_too(tmp_path):
    path = tmp_path / "json_cache.json"
    first, second = SharedJsonCache(path), SharedJsonCache(path)  # both opened before either recorded
    asked = []

    def recorder(cache):
        @cache
        def _system_one(model, state_json, questions_json):
            asked.append(model)
            return {"answered": model}
        return _system_one

    recorder(first)("jev-a", "{}", "{}")
    recorder(second)("jev-b", "{}", "{}")  # its write merges the first recorder's answer into the file and into it
    assert recorder(second)("jev-a", "{}", "{}") == {"answered": "jev-a"}
    assert asked == ["jev-a", "jev-b"]
