"""The buzzer box: its pin map (``pinmap.toml``) and test harness (``harness.py``)."""
