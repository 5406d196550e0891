"""The published site: select | render | swap (selection, templates, the atomic publish).

DESIGN.md, "Layout", gives the arrows between the subpackages.
"""
