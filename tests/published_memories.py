"""C-1042's memories as a store would give them after the published run: T-101 and T-105 through the wrapper from the
recorded answers (T-101 saved at P(remember) 0.91 with its answer chosen at 0.57, T-105 at 0.92 with 0.35), each
with its provenance, and the ledger of the run's calls. Only the times, the expiry and the invalidation are made up
here: they are what a desk adds, not what Jev answered."""

from datetime import UTC, datetime, timedelta

from memory_cookbook.records import MemoryRecord

SAVED = datetime(2026, 9, 28, 9, 0, tzinfo=UTC)
EXPIRES = datetime(2026, 12, 31, tzinfo=UTC)  # T-101's expiry
INVALIDATED = datetime(2026, 10, 2, 14, 30, tzinfo=UTC)  # T-105 marked no longer true
BEFORE_EXPIRY, AFTER_EXPIRY = datetime(2026, 10, 5, tzinfo=UTC), datetime(2027, 1, 5, tzinfo=UTC)
INVALIDATED_BY, REASON = "desk", "the Enterprise contract ended"


def chosen_at(answer):
    """The probability of the option a Choice chose, from its answer as the ledger keeps it."""
    return answer["probabilities"][answer["choice"]]


def published_run(lesson):
    """The published run's five earlier tickets and C-1042's three later messages through the wrapper (every call
    replayed): C-1042's MemoryRecords, T-101 expiring and T-105 invalidated, and the whole ledger."""
    lesson.start_from("T-101", "T-102", "T-103", "T-104", "T-105")
    for message in lesson.LATER:
        lesson.ask_with_memory(lesson.later_state("C-1042", message["subject"]), lesson.ROUTE)
    entries = lesson.MEMORY.store.ledger()
    saving = {entry["ticket"]: entry for entry in entries if entry["saved"]}
    records = []
    for order, memory in enumerate(lesson.MEMORY.store.recall("C-1042")):
        ticket = memory["request"]["ticket"]["id"]
        entry = saving[ticket]
        records.append(MemoryRecord(
            customer="C-1042", ticket=ticket, memory=memory,
            answer_probabilities={lesson.ROUTE["team"].instructions: chosen_at(entry["answer"]["team"])},
            p_remember=entry["p_remember"], remember_at=entry["remember_at"], model=lesson.TYPESAFE_MODEL,
            saved_at=SAVED + timedelta(minutes=order),
            **({"expires_at": EXPIRES} if ticket == "T-101" else
               {"invalidated_at": INVALIDATED, "invalidated_by": INVALIDATED_BY, "invalidation_reason": REASON})))
    return records, entries
