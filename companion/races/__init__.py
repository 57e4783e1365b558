"""The race core: from presses to verdicts, pure.

A press is an :class:`~companion.races.edges.Edge` stamped in integer
nanoseconds; a race is judged from its edges alone, so a recorded race is
judged again the same way later. Nothing in this package reads a clock,
starts a thread or touches a file (tests/test_layers.py holds it to that):

* :mod:`~companion.races.edges`: the values a buzzer source emits and a
  referee judges (a buzzer's :class:`ButtonEdge`, a player's :class:`Edge`);
* :mod:`~companion.races.referee`: debounce, stuck buttons and the verdict
  of each race kind;
* :mod:`~companion.races.attribution`: which card a press was for, when the
  table cannot see the flip (the race judge);
* :mod:`~companion.races.arming`: when a race starts, which presses belong
  to it, when it ends;
* :mod:`~companion.races.desk`: the live race, written once, for the table
  session and the bare referee alike.
"""
