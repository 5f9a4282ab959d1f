"""The generator under fuzzing (see tests/fuzz/test_codegen_fuzz.py)."""
