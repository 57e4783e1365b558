"""The tests' shared harness, one copy of each: imported as ``tests.kit``
by the tests and by bench/, which never import one another."""
