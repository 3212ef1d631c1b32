"""Generated from the `#| export` cells of notebooks/01_tickets.ipynb, 02_routing.ipynb, 03_gate.ipynb,
04_wrapper.ipynb, 05_probe_sequence.ipynb, 07_memories_that_last.ipynb and 08_cost_and_threshold.ipynb by
scripts/export_module.py. Edit those cells, then run scripts/run_notebooks.py (or export_module.py): never this file."""

from memory_cookbook.checked_files import read_tickets
from memory_cookbook.contract import MemoryItem
from memory_cookbook.dict_store import DictStore
from memory_cookbook.from_notebooks.ledger import log_call
from memory_cookbook.jev_request import answer_in_brief, request_text, ticket_id
from memory_cookbook.locations import TICKETS_FILE
from memory_cookbook.memory import Memory
from memory_cookbook.records import answer_probabilities
from memory_cookbook.replay.calls import CALLS, Call, call_jev
from memory_cookbook.wrapper_checks import check_earlier_ticket_ids, customer_id
from typesafe_sdk import Choice, ChoiceAnswer, Noul, NoulAnswer, NoulCriteria, ScoreAnswer, SystemOneResponse

__all__ = ["CUSTOMERS", "DATA", "EARLIER", "EXPECTED", "GATE", "LATER", "MEMORIES", "MEMORY", "MEMORY_KEY", "PROBES",
           "REMEMBER_AT", "ROUTE", "TYPESAFE_MODEL", "answer_text", "as_memory", "ask", "ask_with_memory",
           "later_state", "memory_ids", "probe", "remember_probability", "remembers", "replay_published_run",
           "route_later_messages", "routed", "start_from", "ticket_state", "verdict", "with_memories"]


# %% 01_tickets.ipynb c7585359
DATA = read_tickets(TICKETS_FILE)  # data/tickets.json, checked as it is read


# %% 01_tickets.ipynb a06995b1
CUSTOMERS = DATA["customers"]


# %% 01_tickets.ipynb cf9469bc
EARLIER = DATA["earlier_tickets"]


# %% 01_tickets.ipynb f27f8aad
LATER = DATA["later_messages"]
EXPECTED = DATA["expected_team"]


# %% 01_tickets.ipynb b1e1fe92
def ticket_state(ticket: dict) -> dict:
    """The state Jev is sent for a ticket: {"customer": {...}, "ticket": {...}}, keys in this order."""
    customer = CUSTOMERS[ticket["customer_id"]]
    return {
        "customer": {"id": customer["id"], "company": customer["company"]},
        "ticket": {"id": ticket["id"], "received_on": ticket["received_on"], "subject": ticket["subject"],
                   "messages": [{"from": "customer", "text": ticket["text"]}]},
    }


# %% 01_tickets.ipynb 6127976d
def later_state(customer_id: str, subject: str) -> dict:
    """The state of one later message from one customer, with its ticket id and the later date."""
    ticket_id = DATA["later_ticket_ids"][customer_id][subject]
    message = next(message for message in LATER if message["subject"] == subject)
    return ticket_state({"id": ticket_id, "customer_id": customer_id, "received_on": DATA["later_received_on"],
                         **message})


# %% 02_routing.ipynb 55e96279
TYPESAFE_MODEL = "jev-1.13.0"
ROUTE = {"team": Choice(
    instructions="Which support team should handle `ticket`?",
    criteria={
        "cloud_ops": "Cloud team: problems with the hosted cloud edition, run by us",
        "selfhosted_linux": "Self-hosted team, Linux: installs, upgrades and performance of the self-hosted edition"
                            " on Linux servers",
        "selfhosted_windows": "Self-hosted team, Windows: installs, upgrades and performance of the self-hosted"
                              " edition on Windows Server",
        "billing": "Billing: invoices, payments, seats and plan changes for self-serve plans",
        "enterprise_desk": "Enterprise desk: seats, contracts and account changes for customers on an Enterprise"
                           " contract (their technical problems go to the technical teams)",
        "general": "General product questions: features, how-to, settings",
        "none_suitable": "None of these teams fits the ticket",
    },
)}


# %% 02_routing.ipynb fa341f05
def ask(state: object, questions: dict) -> SystemOneResponse:
    """Ask Jev `questions` about `state`: replayed from the cache; what it lacks goes live with TYPESAFE_API_KEY."""
    return SystemOneResponse.model_validate(call_jev(TYPESAFE_MODEL, *request_text(state, questions)))


# %% 02_routing.ipynb 01b66aea
def routed(response: SystemOneResponse) -> str:
    """'cloud_ops 0.80': the chosen team and its probability."""
    return answer_in_brief(response.choices["team"])


# %% 03_gate.ipynb 9b792f7c
def answer_text(question: Choice | Noul | None, answer: object) -> object:
    """An answer as a memory stores it: a Choice's chosen description, a Noul's P(yes), a Score's score."""
    if isinstance(answer, ChoiceAnswer) and isinstance(question, Choice):
        return question.criteria[answer.choice]
    if isinstance(answer, NoulAnswer):
        return answer.noul
    if isinstance(answer, ScoreAnswer):
        return answer.score
    raise TypeError(f"no text form for a {type(answer).__name__}")


# %% 03_gate.ipynb 5c362d69
def as_memory(state: dict, questions: dict, response: SystemOneResponse) -> MemoryItem:
    """{"request": state, "jev_answered": {instructions: answer text}}: one ticket and what Jev answered."""
    return {
        "request": state,
        "jev_answered": {question.instructions: answer_text(question, response.answers[question_id])
                         for question_id, question in questions.items()},
    }


# %% 03_gate.ipynb ab77d15b
GATE = {"remember": Noul(
    instructions="In `request.ticket`, does the thread state a lasting fact about the customer that should change how"
                 " their future, unrelated tickets are handled? Count what the customer or our support staff wrote in"
                 " `request.ticket`. `jev_answered` shows how the ticket was routed, which may rely on things learned"
                 " earlier: do not count anything it says or implies.",
    criteria=NoulCriteria(
        true="Yes: in `request.ticket` the customer or our support staff state something about the customer that"
             " stays true after this ticket, such as the product edition or operating system they run, their plan or"
             " contract, or a standing preference.",
        false="No: `request.ticket` only contains things specific to this one ticket or moment, such as a one-off"
              " request, today's schedule, or the device they happen to be typing on; or the lasting fact appears"
              " only in `jev_answered`.",
    ),
)}


# %% 03_gate.ipynb ca292ba6
REMEMBER_AT = 0.5  # the published threshold: the wrapper's own starts here (notebook 04's MEMORY.remember_at)


def remember_probability(memory: MemoryItem) -> float:
    """P(yes) that this memory's request states a lasting fact about the customer."""
    return ask(memory, GATE).nouls["remember"].noul


def remembers(probability: float, remember_at: float = REMEMBER_AT) -> bool:
    """The gate's rule: remember at P(remember) >= remember_at."""
    return probability >= remember_at


def verdict(probability: float, remember_at: float = REMEMBER_AT) -> str:
    """'saved' or 'not saved', by the gate's rule."""
    return "saved" if remembers(probability, remember_at) else "not saved"


# %% 04_wrapper.ipynb a74a6a44
MEMORY_KEY = "earlier_tickets_from_this_customer"
MEMORY = Memory(DictStore(), remember_at=REMEMBER_AT)  # the wrapper's store and threshold: MEMORY.store keeps them
MEMORIES = MEMORY.memories  # customer id → that customer's memories, in the order saved (read from MEMORY.store)


def memory_ids(customer: str) -> list[str | None]:
    """The source ticket ids of a customer's memories, in the order they were saved."""
    return [ticket_id(memory) for memory in MEMORY.store.recall(customer)]


def with_memories(state: dict) -> dict:
    """The state as sent: the customer's memories added last under MEMORY_KEY, or unchanged if there are none."""
    memories = MEMORY.store.recall(customer_id(state))
    return {**state, MEMORY_KEY: memories} if memories else state


# %% 04_wrapper.ipynb 82d1aa00
def ask_with_memory(state: dict, questions: dict) -> SystemOneResponse:
    """ask(), with this customer's memories in the state; then the gate decides whether to remember the ticket."""
    threshold = MEMORY.remember_at  # read once: the call is judged, and logged, by the threshold set now
    sent = with_memories(state)
    response = ask(sent, questions)  # step 1: the question, about the state with memories
    memory = as_memory(state, questions, response)  # the ticket as it came, and Jev's answer
    p_remember = remember_probability(memory)  # step 2: the gate
    saved = remembers(p_remember, threshold)
    if saved:  # beside the memory, not in it: P(remember), the threshold, each answer's probability
        MEMORY.store.save(customer_id(state), memory, p_remember, response.model, threshold,
                          answer_probabilities(questions, response))
    log_call(MEMORY, sent, response, p_remember, saved, threshold)
    return response


# %% 04_wrapper.ipynb b038300e
def start_from(*earlier_ticket_ids: str) -> None:
    """Forget both customers' memories and ledger entries, then send these earlier tickets through the wrapper."""
    check_earlier_ticket_ids(earlier_ticket_ids, EARLIER)  # an unknown id stops it before anything is forgotten
    for customer in CUSTOMERS:
        MEMORY.forget_customer(customer)
    for ticket in EARLIER:
        if ticket["id"] in earlier_ticket_ids:
            ask_with_memory(ticket_state(ticket), ROUTE)


# %% 05_probe_sequence.ipynb 6105b8ce
PROBES = ("Slow dashboards", "More seats")


def probe(customer: str) -> dict[str, SystemOneResponse]:
    """This customer's probe messages through the wrapper: {subject: response}."""
    return {subject: ask_with_memory(later_state(customer, subject), ROUTE) for subject in PROBES}


# %% 07_memories_that_last.ipynb 9725ee2a
def route_later_messages() -> None:
    """Each later message through ask_with_memory: lines of 'customer · message → team P ✓/✗', then the count."""
    right = 0
    for customer in CUSTOMERS:
        for message in LATER:
            response = ask_with_memory(later_state(customer, message["subject"]), ROUTE)
            ok = response.choices["team"].choice == EXPECTED[customer][message["subject"]]
            right += ok
            print(f"{customer} · {message['subject']:<16} → {routed(response)} {'✓' if ok else '✗'}")
    print(f"{right}/{len(CUSTOMERS) * len(LATER)} later messages reached the expected team")


# %% 08_cost_and_threshold.ipynb 1596496e
def replay_published_run() -> list[Call]:
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
