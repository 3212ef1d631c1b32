"""Generated from the notebooks' `#| export ledger` cells by scripts/export_module.py: do not edit."""

from memory_cookbook.jev_request import ticket_id
from typesafe_sdk import ChoiceAnswer, NoulAnswer


# %% ../notebooks/04_wrapper.ipynb 1e71201c
LEDGER = []


def answer_summary(answer):
    """An answer in a ledger: {"choice", "probability"} for a Choice, {"noul"} for a Noul, {"score"} for a Score."""
    if isinstance(answer, ChoiceAnswer):
        return {"choice": answer.choice, "probability": answer.probabilities[answer.choice]}
    return {"noul": answer.noul} if isinstance(answer, NoulAnswer) else {"score": answer.score}


def ledger_entry(sent, memories, response, p_remember, saved, source):
    """One wrapper call: who, which ticket, which memories were sent, what Jev answered, what the gate said, whether
    it saved, what it cost."""
    return {"customer": sent["customer"]["id"], "ticket": ticket_id(sent), "questions": list(response.answers),
            "memories_sent": [ticket_id(memory) for memory in memories],
            "answer": {question_id: answer_summary(answer) for question_id, answer in response.answers.items()},
            "p_remember": p_remember, "saved": saved,
            "input_tokens": response.usage.input_tokens, "source": source}


def forget_entries(customer):
    """Remove a customer's entries from LEDGER: forgetting a customer forgets what their calls sent and got."""
    LEDGER[:] = [entry for entry in LEDGER if entry["customer"] != customer]
