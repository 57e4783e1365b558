"""The Pico's clock on the Pi's: ticks to monotonic nanoseconds, with an error bound.

Pure (Klipper's ``klippy/clocksync.py`` is the model): the caller feeds
NTP-style exchanges, each the Pi's monotonic time a sync request was sent,
the box's 64-bit tick when it handled it, and the Pi's time the reply
arrived. The tick happened somewhere inside ``[sent, received]``, so an
exchange with a short round trip pins the clocks together tightly and a slow
one says little. The model keeps the last :attr:`ClockSync.window` exchanges,
fits the ones with the lowest round trips by least squares (offset and
drift), and reports an error bound that travels with the estimate: the worst
``|residual| + round_trip/2`` of the exchanges used, plus the drift that
could build up since the last one.

The mapping is held as integers (a base tick, a base nanosecond and a rate in
nanoseconds per tick scaled by 2**32), so :meth:`ClockSync.to_ns` is exact
integer arithmetic and strictly monotonic in the tick.

The link carries 32-bit tick fields where frames must be small; they are
extended to 64 bits against the latest full tick seen (:meth:`extend`),
which is right as long as the box speaks at least once per half wrap (35
minutes at 1 MHz; heartbeats come every half second).

>>> c = ClockSync(tick_hz=1_000_000)
>>> c.add_exchange(sent_ns=5_000_000_000, tick=2_000_000, received_ns=5_000_400_000)
True
>>> c.to_ns(2_000_000), c.error_bound_ns(2_000_000)
(5000200000, 200000)
>>> c.to_ns(2_001_000) - c.to_ns(2_000_000)          # nominal rate until a second exchange
1000000
"""

from __future__ import annotations

from collections import deque
from typing import NamedTuple

NS_PER_S = 1_000_000_000
Q = 32
#: Fitted rates further than this from the nominal one are not believed.
MAX_PPM = 1_000
#: How fast an oscillator's frequency may wander (ppm), for the bound on
#: the error that builds up after the last exchange.
WANDER_PPM = 10


class Exchange(NamedTuple):
    sent_ns: int
    tick: int
    received_ns: int

    @property
    def rtt(self) -> int:
        return self.received_ns - self.sent_ns

    @property
    def mid2(self) -> int:
        """Twice the midpoint (kept integral)."""
        return self.sent_ns + self.received_ns


class ClockSync:
    """The fitted map from a box's ticks to the Pi's monotonic nanoseconds.

    ``tick_hz``: the box's nominal counter rate. ``window``: exchanges
    remembered; ``keep``: how many of the lowest round trips among them are
    fitted. ``max_rtt_ns``: exchanges slower than this are not used at all.
    """

    def __init__(self, tick_hz: int, window: int = 512, keep: int = 8,
                 max_rtt_ns: int = 50_000_000, weight_floor_ns: int = 300_000):
        if not isinstance(tick_hz, int) or tick_hz <= 0:
            raise ValueError(f"tick_hz must be a positive integer, not {tick_hz!r}")
        if keep < 1 or window < keep:
            raise ValueError("need 1 <= keep <= window")
        self.tick_hz = tick_hz
        self.window = window
        self.keep = keep
        self.max_rtt_ns = max_rtt_ns
        self.weight_floor_ns = weight_floor_ns
        self.nominal_q = (NS_PER_S << Q) // tick_hz
        self._ex: deque[Exchange] = deque(maxlen=window)
        self._ref_tick: int | None = None      # the latest full tick seen
        self.base_tick = 0
        self.base_ns = 0
        self.rate_q = self.nominal_q
        self._bound_ns: int | None = None
        self._span = (0, 0)                    # ticks of the quick exchanges fitted
        self._last_tick = 0                    # the newest exchange's tick
        self.exchanges = 0
        self.rejected = 0

    # -- counters -----------------------------------------------------------------

    def note_tick(self, tick: int) -> None:
        """A full 64-bit tick the box reported (hello, heartbeat, sync reply)."""
        if self._ref_tick is None or tick > self._ref_tick:
            self._ref_tick = tick

    @property
    def ref_tick(self) -> int | None:
        """The latest full tick seen (:meth:`note_tick`), or None before any."""
        return self._ref_tick

    def extend(self, tick_lo: int) -> int:
        """A 32-bit tick as the 64-bit one nearest the latest full tick seen."""
        ref = self._ref_tick
        if ref is None:
            return tick_lo
        t = (ref & ~0xFFFF_FFFF) | tick_lo
        d = t - ref
        if d > 0x7FFF_FFFF:
            t -= 1 << 32
        elif d < -0x8000_0000:
            t += 1 << 32
        return t

    # -- exchanges ---------------------------------------------------------------

    @property
    def synced(self) -> bool:
        return self._bound_ns is not None

    def reset(self) -> None:
        """Forget everything (the box restarted: its counter began again)."""
        self._ex.clear()
        self._ref_tick = None
        self.base_tick = self.base_ns = 0
        self.rate_q = self.nominal_q
        self._bound_ns = None
        self.exchanges = 0

    def add_exchange(self, sent_ns: int, tick: int, received_ns: int) -> bool:
        """One sync exchange; False (and not used) if it cannot be right."""
        rtt = received_ns - sent_ns
        if rtt < 0 or rtt > self.max_rtt_ns or tick < 0:
            self.rejected += 1
            return False
        if self._ex and tick <= self._ex[-1].tick:
            self.rejected += 1          # an old reply, or the box restarted
            return False
        self.note_tick(tick)
        self._ex.append(Exchange(sent_ns, tick, received_ns))
        self.exchanges += 1
        self._last_tick = tick
        self._fit()
        return True

    def _fit(self) -> None:
        """Weighted least squares over the window: an exchange counts less the
        further its round trip is above the quickest one (weight
        ``1 / (rtt - best + floor)**2``), so quick exchanges pin the line
        and slow ones barely move it, while every exchange still helps the
        drift over the whole span. Exchanges over four times the quickest
        round trip (plus 2 ms) are left out altogether."""
        best_rtt = min(e.rtt for e in self._ex)
        # far slower than the quickest: a reply that sat in a queue, left out
        ex = [e for e in self._ex if e.rtt <= 4 * best_rtt + 2_000_000]
        floor = self.weight_floor_ns
        t0 = ex[-1].tick
        m0 = ex[-1].mid2
        rate = self.nominal_q / (1 << Q)
        ws = [1.0 / (e.rtt - best_rtt + floor) ** 2 for e in ex]
        xs = [e.tick - t0 for e in ex]
        ys = [(e.mid2 - m0) / 2 for e in ex]
        sw = sum(ws)
        mx = sum(w * x for w, x in zip(ws, xs)) / sw
        my = sum(w * y for w, y in zip(ws, ys)) / sw
        sxx = sum(w * (x - mx) ** 2 for w, x in zip(ws, xs))
        # the span must be long enough for the drift to mean anything
        if len(ex) >= 2 and sxx > 0 and max(xs) - min(xs) >= self.tick_hz // 10:
            b = sum(w * (x - mx) * (y - my) for w, x, y in zip(ws, xs, ys)) / sxx
            if abs(b / rate - 1) * 1e6 <= MAX_PPM:
                rate = b
        offset = my - rate * mx             # ns at t0, relative to m0/2
        self.base_tick = t0
        self.base_ns = (m0 >> 1) + round(offset)
        self.rate_q = round(rate * (1 << Q))
        # the truth at an exchange's tick lies inside [sent, received]: the
        # fit is within |residual| + rtt/2 of it there, and, both being
        # lines, within that bound scaled up away from the quick exchanges
        quick = sorted(ex, key=lambda e: e.rtt)[:self.keep]
        self._bound_ns = max(abs(self.to_ns(e.tick) * 2 - e.mid2) // 2 + (e.rtt + 1) // 2
                             for e in quick)
        self._span = (min(e.tick for e in quick), max(e.tick for e in quick))

    # -- the map ---------------------------------------------------------------

    def to_ns(self, tick: int) -> int:
        """The Pi monotonic time of box tick ``tick`` (64-bit)."""
        return self.base_ns + (((tick - self.base_tick) * self.rate_q) >> Q)

    def to_tick(self, t_ns: int) -> int:
        """The box tick at Pi monotonic time ``t_ns`` (the inverse map)."""
        return self.base_tick + (((t_ns - self.base_ns) << Q) // self.rate_q)

    def error_bound_ns(self, tick: int | None = None) -> int | None:
        """How far :meth:`to_ns` may be from the truth at ``tick`` (default:
        the newest exchange); None before the first exchange."""
        if self._bound_ns is None:
            return None
        t = self._last_tick if tick is None else tick
        lo, hi = self._span
        out = lo - t if t < lo else t - hi if t > hi else 0
        bound = self._bound_ns
        if out:
            if hi > lo:
                bound += 2 * bound * out // (hi - lo)
            else:
                bound += out * NS_PER_S // self.tick_hz * MAX_PPM // 1_000_000
        drift = abs(t - self._last_tick) * NS_PER_S // self.tick_hz * WANDER_PPM // 1_000_000
        return bound + drift

    @property
    def ppm(self) -> float:
        """How fast the box's counter runs against its nominal rate, in parts
        per million (positive: its crystal is fast)."""
        return (self.nominal_q / self.rate_q - 1) * 1e6

    @property
    def best_rtt_ns(self) -> int | None:
        return min((e.rtt for e in self._ex), default=None)


class SlewedClock:
    """The map edges are stamped with: piecewise linear, continuous and
    strictly increasing in the tick, following a :class:`ClockSync`.

    A new fit does not make the stamps jump: at each :meth:`update` a new
    segment starts where the old map is now and aims at the fitted map
    ``slew_ticks`` later (the rate changes by at most ``max_slew_ppm``), so
    the order of two ticks is always the order of their nanoseconds, and
    two edges of one box are never reordered by a clock correction. Only an
    offset larger than ``max_step_ns`` (the first sync, a restarted box) is
    stepped. The last ``history`` segments are kept, for a late stamp.

    The error bound is the fit's plus how far the slewed map still is from
    the fit.
    """

    def __init__(self, sync: ClockSync, slew_ticks: int | None = None,
                 max_step_ns: int = 5_000_000, max_slew_ppm: int = 500, history: int = 16):
        self.sync = sync
        self.slew_ticks = slew_ticks or sync.tick_hz       # a second
        self.max_step_ns = max_step_ns
        self.max_slew_ppm = max_slew_ppm
        self.history = history
        self.segments: list[tuple[int, int, int]] = []     # (start_tick, start_ns, rate_q)
        self.lag_ns = 0          # fitted minus slewed, at the last update
        self.steps = 0

    def reset(self) -> None:
        self.segments.clear()
        self.lag_ns = 0

    def update(self, now_tick: int) -> None:
        """Follow the fit from ``now_tick`` on (call after each exchange)."""
        s = self.sync
        if not s.synced:
            return
        fitted = s.to_ns(now_tick)
        if self.segments and now_tick <= self.segments[-1][0]:
            return
        here = self.to_ns(now_tick) if self.segments else fitted
        lag = fitted - here
        if not self.segments or abs(lag) > self.max_step_ns:
            if self.segments:
                self.steps += 1
            self.segments = [(now_tick, fitted, s.rate_q)]
            self.lag_ns = 0
            return
        L = self.slew_ticks
        rate_q = ((s.to_ns(now_tick + L) - here) << Q) // L
        lo = s.nominal_q * (1_000_000 - self.max_slew_ppm) // 1_000_000
        hi = s.nominal_q * (1_000_000 + self.max_slew_ppm) // 1_000_000
        rate_q = min(max(rate_q, lo, s.rate_q * 9 // 10), hi)
        self.segments.append((now_tick, here, rate_q))
        del self.segments[:-self.history]
        self.lag_ns = lag

    def to_ns(self, tick: int) -> int:
        segs = self.segments
        if not segs:
            return self.sync.to_ns(tick)
        t0, n0, r = segs[-1]
        if tick >= t0:
            return n0 + (((tick - t0) * r) >> Q)
        i = len(segs) - 1
        while i > 0 and segs[i][0] > tick:
            i -= 1
        t0, n0, r = segs[i]
        return n0 + (((tick - t0) * r) >> Q)

    def error_bound_ns(self, tick: int | None = None) -> int | None:
        b = self.sync.error_bound_ns(tick)
        return None if b is None else b + abs(self.lag_ns)
