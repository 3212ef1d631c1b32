"""What a support desk asks of its memory, beside the wrapper: the customer's memory card (`card`), a customer's data
out and back in as one JSON document (`export`), and a whole store moved into another (`move`). None of it depends on
which store keeps the memories: every store gives its rows as `MemoryRecord`s (memory_cookbook.records) and takes them
back (`restore`), as the store contract says (memory_cookbook.contract)."""

__all__: list[str] = []  # each module says what it offers (its own __all__)
