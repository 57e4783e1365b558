"""The Raspberry Pi Pico buzzer box, the Pi's side of its USB serial link.

* :mod:`~companion.pico.protocol`: the wire format, a pure codec (bytes in,
  frames and link faults out);
* :mod:`~companion.pico.clocksync`: the box's ticks on the Pi's monotonic
  clock, with an error bound;
* :mod:`~companion.pico.transport`: pyserial only: finding the Pico by USB
  VID, a reader thread, reconnecting after an unplug, the port named;
* :mod:`~companion.pico.lease`: lending the port of a running table (an
  update, the self-test) and taking it back;
* :mod:`~companion.pico.update`: ``companion pico flash|selftest``.

The edge source built on them is :class:`companion.buzzers.pico.PicoSource`.
The firmware on the other end is in ``firmware/`` (``docs/pico.md``).
"""
