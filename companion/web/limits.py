"""Connection and request caps: no phone can take the table down.

The table serves its app through a :class:`Gate` (:mod:`companion.serving`,
where the league's screen finds the same gate); what each cap means to a
phone (the values: :class:`Limits`, docs/web.md "Limits"):

* **open connections**: a guest address may hold :attr:`Limits.per_address`
  connections, and all guests together :attr:`Limits.guests`. Past either,
  a new connection is answered ``503`` and closed at once (waitress itself
  never reaches its own limit, so it never stops accepting: the host's
  connection is always taken). The Pi's own address (``127.0.0.1``, ``::1``)
  is never counted against a guest cap; :attr:`Limits.reserve` connections
  beyond the guests' share are kept for it and for a logged-in host on a
  phone (a request on such a *reserve* connection is served only to the
  host and to the routes whose policy says ``reserve``:
  :mod:`companion.web.policy`). When the guests' share is full, a new
  connection first cuts an *idle* guest connection (nothing being answered:
  from the address holding the most, the longest idle), so idle guest
  sockets never fill the reserve; a reserve connection is opened only when
  every guest connection is busy, and when the reserve is full an idle one
  there is cut too (issue 20, 2).
* **requests in flight**: a guest address may have
  :attr:`Limits.in_flight_per_address` requests being answered at once
  (live pages included); more get ``503`` with ``Retry-After`` before the
  app runs. A browser opens at most 6 connections to a site; a phone may
  hold two (the http and https ports) and a reloaded tab's live page until
  it is noticed gone, so the cap is one request per open connection.
* **slow requests**: a request must arrive whole (headers within
  :attr:`Limits.header_timeout_s` of its first byte, the body within
  :attr:`Limits.request_timeout_s`), else the connection is closed; a
  keep-alive connection with nothing to do is closed after
  :attr:`Limits.idle_timeout_s` (waitress's ``channel_timeout``).
* **slow readers** (issue 31, 1): output the phone does not take never
  holds a worker thread. A connection with :attr:`Limits.outbuf_cap` bytes
  of answers waiting is cut at its next write, one whose waiting output has
  not moved for :attr:`Limits.drain_timeout_s` is cut, and one with more
  than :attr:`Limits.pipelined` requests waiting (browsers never pipeline)
  is cut as soon as they are read; the kernel keeps at most
  :attr:`Limits.send_buffer` (twice that, on Linux) for each.
* **the worker threads' queue**: the Pi's own requests and those on reserve
  connections go first; the guests' are taken one address at a time in
  turn, so a host on a phone waits for one request of each busy address,
  not for a flood's hundreds.

waitress is driven through its own extension points: the channel class
(its :class:`~waitress.channel.HTTPChannel`, subclassed), the server's
``channel_class`` attribute and its dispatcher's ``queue``.
"""

from __future__ import annotations

from ..serving import BAND_KEY, TRUSTED, FairQueue, Gate, Limits, trusted

__all__ = ["BAND_KEY", "FairQueue", "Gate", "Limits", "TRUSTED", "trusted"]
