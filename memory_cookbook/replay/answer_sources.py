"""Whether each answer of the session was replayed from the recorded cache or asked live, in order: replay.py adds
one as each answer comes, and the ledger (generated from notebook 07) marks a wrapper call "live" when either of its
two answers was. Hand-written, tested in tests/test_store.py and tests/test_live_path.py."""

ANSWER_SOURCES = []  # "live" or "replay" for each answer of the session, in order


def source_of_last(count):
    """'live' if any of the session's last `count` answers was asked live, else 'replay'."""
    return "live" if "live" in ANSWER_SOURCES[-count:] else "replay"
