"""A grammar-aware mutation fuzzer for irscan's error contract (see run.py for the long run and
tests/test_fuzz.py for the bounded one in the default suite)."""
