"""What the classroom uses beside the lesson: a Try it answer folded under "Show the answer" (`folded`), and notebook
05's memory explorer (`explorer`)."""
