"""The published store, as notebook 04 installs it: memories in a dict of lists by customer id, gone when the kernel
stops. Its methods are every store's (notebook 07 shows them on SQLite): recall, save, forget_ticket, forget_customer
and log. Hand-written, tested in tests/test_store.py and tests/test_start_from_and_threshold.py."""

from collections import defaultdict

from memory_cookbook.jev_request import ticket_id
from memory_cookbook.from_notebooks.ledger import forget_entries


class DictStore:
    """Memories in a dict {customer id: [memory, ...]} (by default a new one), gone when the kernel stops."""

    def __init__(self, memories=None):
        self.memories = defaultdict(list) if memories is None else memories

    def recall(self, customer):
        return list(self.memories[customer])

    def save(self, customer, memory, p_remember, model):
        self.memories[customer].append(memory)

    def forget_ticket(self, ticket):
        for memories in self.memories.values():
            memories[:] = [memory for memory in memories if ticket_id(memory) != ticket]

    def forget_customer(self, customer):
        self.memories.pop(customer, None)
        forget_entries(customer)

    def log(self, entry):
        """Nothing to do: the ledger is LEDGER itself, and a dict keeps nothing across kernels."""
