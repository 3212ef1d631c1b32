"""What a support desk asks of its memory, beside the wrapper: every memory of a customer with its provenance
(`records`), the customer's memory card (`card`), and a customer's data out and back in as one JSON document
(`export`). None of it depends on which store keeps the memories: a store gives its rows as `MemoryRecord`s."""

__all__: list[str] = []  # each module says what it offers (its own __all__)
