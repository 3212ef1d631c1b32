"""Notebook 09's PostgreSQL side, hand-written: where its server comes from (`server`), the schema it works in and what
it shows of it (`lesson_database`), the store's connections (`pool`) and errors (`errors`), and an app server's child
process (`child_process`). The store itself, PostgresStore, is generated from notebook 09:
memory_cookbook/from_notebooks/postgres_store.py."""
