"""Generated from the notebooks' `#| export ledger` cells by scripts/export_module.py: do not edit."""

from memory_cookbook.jev_request import carried_memory_ids, ticket_id
from memory_cookbook.replay.answer_sources import source_of_last
from typesafe_sdk import ChoiceAnswer, NoulAnswer


# %% ../../notebooks/07_memories_that_last.ipynb ledger-code
LEDGER = []  # one entry per wrapper call, in order


def answer_summary(answer):
    """An answer in a ledger: {"choice", "probability"} for a Choice, {"noul"} for a Noul, {"score"} for a Score."""
    if isinstance(answer, ChoiceAnswer):
        return {"choice": answer.choice, "probability": answer.probabilities[answer.choice]}
    return {"noul": answer.noul} if isinstance(answer, NoulAnswer) else {"score": answer.score}


def log_call(store, sent, response, p_remember, saved, remember_at):
    """Add one wrapper call's entry to LEDGER and to the store's ledger, right after the call's two requests (the
    question, then the gate): "source" is "live" if either was asked live."""
    entry = {"customer": sent["customer"]["id"], "ticket": ticket_id(sent), "questions": list(response.answers),
             "memories_sent": list(carried_memory_ids(sent)),
             "answer": {question_id: answer_summary(answer) for question_id, answer in response.answers.items()},
             "p_remember": p_remember, "remember_at": remember_at, "saved": saved,
             "input_tokens": response.usage.input_tokens, "source": source_of_last(2)}
    LEDGER.append(entry)
    store.log(entry)


def forget_entries(customer):
    """Remove a customer's entries from LEDGER: forgetting a customer forgets what their calls sent and got."""
    LEDGER[:] = [entry for entry in LEDGER if entry["customer"] != customer]
