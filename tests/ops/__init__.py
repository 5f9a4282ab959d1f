"""Operator tests by family (see LAYOUT.md rule 2): tests/ops/test_<family>*.py."""
