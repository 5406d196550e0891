"""The ways to run the one per-source path: ``build`` (pipeline), ``serve``, ``worker``, ``status``
and ``import``. They schedule and report; they never fetch, parse or decide themselves.

DESIGN.md, "Layout", gives the arrows between the subpackages.
"""
