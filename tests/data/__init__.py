"""utils.data tests (datasets, samplers, collation, DataLoader) and test data files."""
