"""Generated from the `#| export ledger` cells of notebooks/07_memories_that_last.ipynb by scripts/export_module.py.
Edit those cells, then run scripts/run_notebooks.py (or export_module.py): never this file."""

from memory_cookbook.jev_request import carried_memory_ids, ticket_id
from memory_cookbook.memory import Memory
from memory_cookbook.replay.calls import source_of_last
from typesafe_sdk import SystemOneResponse

__all__ = ["log_call"]


# %% ../../notebooks/07_memories_that_last.ipynb ledger-code
def log_call(memory: Memory, sent: dict, response: SystemOneResponse, p_remember: float, saved: bool,
             remember_at: float) -> None:
    """Log one wrapper call's entry in the ledger of `memory`'s store, right after the call's two requests (the
    question, then the gate): "source" is "live" if either was asked live."""
    answers = {question_id: answer.model_dump(mode="json") for question_id, answer in response.answers.items()}
    memory.log({"customer": sent["customer"]["id"], "ticket": ticket_id(sent), "questions": list(response.answers),
                "memories_sent": list(carried_memory_ids(sent)), "answer": answers, "p_remember": p_remember,
                "remember_at": remember_at, "saved": saved, "input_tokens": response.usage.input_tokens,
                "source": source_of_last(2)})
