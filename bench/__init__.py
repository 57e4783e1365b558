"""Benchmarks: each module has ``run() -> [(name, value, unit)]``; ``python -m bench`` prints them."""
