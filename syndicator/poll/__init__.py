"""The per-source path shared by every driver: due | pool(observe) | decide | store, and its pure
rules (the schedule, a feed's habits, its hints).

DESIGN.md, "Layout", gives the arrows between the subpackages.
"""
