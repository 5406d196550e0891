"""Durable state: the SQLite and PostgreSQL stores, claims, the push state, the private cache
files, the published state file. sqlite3, psycopg and filelock live here.

DESIGN.md, "Layout", gives the arrows between the subpackages.
"""
