"""Generated from the notebooks' `#| export published_run` cells by scripts/export_module.py: do not edit."""

from basic_memory import (CALLS, CUSTOMERS, EARLIER, EXPECTED, LATER, ROUTE, as_memory, ask, ask_with_memory,
                          later_state, probe, remember_probability, routed, start_from,
                          ticket_state)


# 07_memories_that_last.ipynb
def route_later_messages():
    """Each later message through ask_with_memory: lines of 'customer · message → team P ✓/✗', then the count."""
    right = 0
    for customer in CUSTOMERS:
        for message in LATER:
            response = ask_with_memory(later_state(customer, message["subject"]), ROUTE)
            ok = response.choices["team"].choice == EXPECTED[customer][message["subject"]]
            right += ok
            print(f"{customer} · {message['subject']:<16} → {routed(response)} {'✓' if ok else '✗'}")
    print(f"{right}/{len(CUSTOMERS) * len(LATER)} later messages reached the expected team")


# 08_cost_and_threshold.ipynb
def replay_published_run():
    """The published run, in its order, from no memories: the calls ask() made (62, of them 32 distinct)."""
    start_from()
    first = len(CALLS)
    ask(later_state("C-1042", "Slow dashboards"), ROUTE)  # 1. plain routing
    for customer in CUSTOMERS:  # 2. the probes, before any memory
        probe(customer)
    for ticket in EARLIER:  # 3. each earlier ticket, its P(remember) re-read, its customer's probes again
        response = ask_with_memory(ticket_state(ticket), ROUTE)
        remember_probability(as_memory(ticket_state(ticket), ROUTE, response))
        probe(ticket["customer_id"])
    for customer in CUSTOMERS:  # 4. the final comparison: each later message, plain and with memory
        for message in LATER:
            state = later_state(customer, message["subject"])
            ask(state, ROUTE), ask_with_memory(state, ROUTE)
    return CALLS[first:]
