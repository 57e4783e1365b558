# The buzzer box's logic (MicroPython): sampled words in, frames out.
#
# Everything that touches the hardware is behind `hw` (boxhw.Hardware on the
# Pico, sim/ stand-ins in tests), so this file runs unchanged under the
# MicroPython unix port. What it does, each time the main loop calls poll():
#
# * drains the DMA ring of PIO words (two 16-bit halves each, copied out
#   one by one, so reading them never allocates), extends the 22-bit
#   counter, and turns each changed input into an edge with the sample's
#   tick: inputs that changed in one sample share one record, so they share
#   one timestamp;
# * debounces buzzers leading-edge, as the Pi's referee does: the first edge
#   of a burst keeps its own stamp, later ones within the window are
#   ignored, and if the level at the end of the window differs, the last
#   ignored edge is reported as it was stamped (raw mode reports all); and
#   an edge counts only if the input is still at its new level a minimum
#   hold (config.MIN_HOLD_US) after it: reported then, with the leading
#   edge's stamp, or dropped as a glitch (then no edge was reported at all);
# * toggles the sync mark (an output among the sampled inputs) to learn
#   "now" on the PIO's own clock: sync replies and heartbeats carry that
#   stamp;
# * answers the host's commands (LEDs, cue, config, pulses, hello), each
#   with an ACK; the cue's ACK carries the PIO's stamp of the cue edge;
# * reports overflows (the ring lapped, or the PIO's RXSTALL), stuck
#   buzzers and frames it had to drop because the host was not reading.
#
# The DMA writes the ring while the drain reads it (at the edge rate, however
# slow MicroPython is per word), so the drain copies a chunk of words out,
# then checks the DMA's count again: a chunk the DMA may have lapped while it
# was copied is never used (an overflow, never a word of another lap read as
# a +2**22 wrap of the clock). Frames go out as far as the host takes them:
# a frame the USB took in part is finished before the next one starts.
#
# Ticks and memory. MicroPython's small integers are 31-bit on a Pico: a
# 64-bit tick is a big integer (an allocation at every sum) after 2**30 us,
# 18 minutes. So the capture keeps *local* ticks, below 2**28 + 2**22: when
# the newest word's passes REBASE_AT, every tick the box keeps is moved down
# by SHIFT and `epoch` counts the moves (rebase()). A tick goes out as
# tick64(t) = epoch * SHIFT + t, only where a frame is built (which
# allocates anyway); plain differences of local ticks (the debounce, the
# stuck time) stay right for spans up to SHIFT (134 s). Edge records wait in
# preallocated arrays. From the ring to a record nothing allocates.

import array

import boxconfig as C
import boxproto as P

MASK22 = (1 << 22) - 1
WRAP_US = 1 << 22
MAX_PENDING = 64          # edge records waiting for the host at most
REBASE_AT = 1 << 28       # local ticks stay below this (and one word's 2**22)
SHIFT = 1 << 27           # how far a rebase moves them (134 s at 1 MHz)
CHUNK = 32                # words copied out of the ring before they are used
SLACK = 8                 # words left between the drain and the DMA after a lap
MAX_OUT = 32              # frames waiting for the host at most
LISTENING_US = 2_000_000  # the host spoke this recently: it is listening
NEVER = 1 << 62           # a tick no counter reaches
#: a candidate is read once its input has not changed for this long (us):
#: a press whose contact still bounces at the end of its minimum hold
QUIET_US = 1_000
CERT_GAP_US = 3_000       # between two trials of the fairness driver (plus the separation)


#: the host's commands, each a Box method taking (payload, seq) and giving
#: the ack's status (None: acked later)
COMMANDS = {P.SET_LEDS: "cmd_leds", P.SET_CUE: "cmd_cue", P.CONFIG: "cmd_config",
            P.CERTIFY: "cmd_certify", P.PULSE: "cmd_pulse"}


def record_arrays():
    """Room for MAX_PENDING edge records: local ticks, changed, levels."""
    return (array.array("i", bytes(4 * MAX_PENDING)), array.array("H", bytes(2 * MAX_PENDING)),
            array.array("H", bytes(2 * MAX_PENDING)))


class Box:
    def __init__(self, hw, config=C, boot_id=0):
        self.hw = hw
        self.c = config
        self.boot_id = boot_id
        self.framer = P.Framer()
        self.unframer = P.Unframer()
        n = len(config.INPUTS)
        self.n = n
        self.invert = config.ACTIVE_LOW
        self.flags = 0
        self.stuck_ticks = config.STUCK_MS * 1000
        # the counter
        # the local tick of the newest word, and rebases so far (tick64)
        self.tick = self.epoch = 0
        # words taken from the ring (mod 2**16): all but the newest, whose
        # sample gives the levels (the first word at power-up; the latest
        # after a restart of the loop)
        w = hw.written()
        self.read = (w - 1) & 0xFFFF if w else 0
        self.chunk = array.array("H", bytes(4 * CHUNK))   # words copied out of the ring
        self.ring_mv = memoryview(hw.ring)
        self.last_drain_us = hw.ticks_us()
        self.tick_us = self.last_drain_us     # when the newest word was read
        self.started = False
        self.resync = False
        # levels
        self.raw_levels = 0       # active bits as last sampled
        self.levels = 0           # active bits as reported (debounced)
        self.debounce_state(config)
        self.down_since = [-1] * n
        self.stuck = 0
        # outputs the host asked for, and what waits on a stamp
        self.mark, self.sync_tokens = 0, []
        self.held_tokens, self.mark_us = [], []   # held asks (token, us read); toggles' us
        self.heartbeat_due = False
        self.last_heartbeat_us = self.last_drain_us
        self.cue_ack = None       # (seq, on) waiting for the cue's own edge
        self.cue_at = None        # (tick, on, seq) a cue scheduled on the box clock
        self.pulses = self.pulse_width = self.pulse_gap = self.pulse_next_us = 0
        self.test_out = 0
        self.cert_seq = -1        # the CERTIFY being run (-1: none), acked when done
        self.cert_pairs = []      # the ordered pairs of input bits it drives, in turn
        self.cert_k = self.cert_total = self.cert_cycles = self.cert_ns = 0
        self.cert_next_us = 0
        # what goes out
        self.rec_tick, self.rec_changed, self.rec_levels = record_arrays()   # edges to frame
        self.n_recs = 0
        self.out = []             # frames waiting for the host
        self.tx = None            # the frame going out now, and how much of it went
        self.tx_off = 0
        self.listening = False    # the status LED: the host spoke lately
        self.rx_prev = 0          # the last byte the host sent (mpremote's CR, Ctrl-C)
        self.overflows = 0
        self.tx_dropped = 0
        self.tx_dropped_reported = 0
        self.edges_sent = 0
        self.last_host_us = self.last_drain_us - 10_000_000
        self.last_hello_us = self.last_drain_us
        self.escape = False       # mpremote knocked: leave the loop for the REPL

    def debounce_state(self, config):
        """The leading-edge debounce's window and minimum hold (clamped to
        1-5 ms), and its state per input."""
        n = self.n
        self.window = config.DEBOUNCE_US
        hold = getattr(config, "MIN_HOLD_US", 5_000)
        self.min_hold = 1_000 if hold < 1_000 else 5_000 if hold > 5_000 else hold
        self.d_start = [-1] * n   # tick of the accepted edge of a burst (-1: none)
        self.p_tick = [-1] * n    # the last ignored edge of the burst (-1: none)
        self.p_level = [0] * n
        self.c_tick = [-1] * n    # an edge waiting for its minimum hold (-1: none)
        self.c_level = [0] * n
        self.cand_min = NEVER     # the oldest candidate's tick

    # -- start --------------------------------------------------------------------

    def hello(self):
        c = self.c
        return self.framer.hello(c.FIRMWARE, self.hw.tick_hz, self.boot_id,
                                 self.tick64(self.tick),
                                 self.flags, self.window, self.stuck_ticks // 1000,
                                 c.INPUTS, c.LEDS, c.PIEZO)

    def start(self):
        """Say hello (after a lone delimiter that ends any partial frame the
        host holds)."""
        self.queue(b"\x00")
        self.send(self.hello)

    # -- the main loop's step ------------------------------------------------------

    def poll(self):
        now = self.hw.ticks_us()
        self.drain(now)
        for _ in range(4):              # a read stops after each 0x03
            data = self.hw.read()
            if not data:
                break
            prev = data[-2] if len(data) > 1 else self.rx_prev
            self.rx_prev = data[-1]
            if data[-1] == 3 and prev == 13:
                # mpremote's interrupt (CR, Ctrl-C), wherever it falls: the
                # Pi never sends those two bytes together. The read stopped
                # there, so mpremote's next bytes (CR, Ctrl-A) reach the REPL.
                self.escape = True
                return
            for cmd in self.unframer.feed(data):
                self.last_host_us = now
                self.command(cmd)
            if data[-1] != 3:
                break
        listening = self.hw.diff(now, self.last_host_us) < LISTENING_US
        if listening != self.listening:
            self.listening = listening
            self.hw.set_status(1 if listening else 0)
        if (self.hw.diff(now, self.last_host_us) > 2_000_000
                and self.hw.diff(now, self.last_hello_us) >= 1_000_000):
            # nobody is talking to the box: keep introducing it, so a host
            # that just opened the port learns who it is without asking
            self.last_hello_us = now
            self.send(self.hello)
        self.timers(now)
        self.flush()

    def drain(self, now):
        hw = self.hw
        if hw.rx_stalled():
            self.overflow(0)
        gap = hw.diff(now, self.last_drain_us)
        if gap >= WRAP_US:
            # a stall of a whole counter wrap: place the next word by the
            # coarse timer (same crystal) and say the stamps may be off
            self.fault(P.F_TIMEBASE, P.NO_INPUT, self.tick, gap // 1000)
            self.tick = self.rebase(self.tick + gap - (gap & MASK22))
        self.last_drain_us = now
        size = hw.ring_words
        ring = self.ring_mv
        base = hw.ring_base
        buf = self.chunk
        rounds = 2 * size // CHUNK          # bounded: the loop goes on regardless
        while rounds:
            rounds -= 1
            written = hw.written()
            avail = (written - self.read) & 0xFFFF
            if avail > size:
                self.lapped(written, avail - size)
                continue
            if not avail:
                break
            n = avail if avail < CHUNK else CHUNK
            # copy the words out first: the DMA goes on writing meanwhile
            # (half by half: a slice of the ring would be a new memoryview)
            a = base + 2 * (self.read % size)
            end = base + 2 * size
            for j in range(2 * n):
                if a == end:
                    a = base
                buf[j] = ring[a]
                a += 1
            over = ((hw.written() - self.read) & 0xFFFF) - size
            if over > 0:
                # lapped while copying: the oldest words may be of the next lap
                self.lapped((self.read + size + over) & 0xFFFF, over)
                continue
            self.tick_us = now
            for j in range(0, 2 * n, 2):
                self.word(buf[j + 1], buf[j])
            self.read = (self.read + n) & 0xFFFF

    def lapped(self, written, lost):
        """The DMA overtook the drain: skip to a few words behind it."""
        self.read = (written - self.hw.ring_words + SLACK) & 0xFFFF
        self.overflow(lost + SLACK)

    def overflow(self, lost):
        """Words were lost: the changes between the last word seen and the
        next are unknown. Say so; the next word sets the levels (see
        :meth:`resynced`)."""
        self.overflows += 1
        self.fault(P.F_OVERFLOW, P.NO_INPUT, self.tick, lost if lost else 1)
        self.resync = self.started

    def word(self, hi, lo):
        """One PIO word, as its high and low 16 bits."""
        sample = hi >> 6
        n22 = (-(((hi & 0x3F) << 16) | lo)) & MASK22
        tick = self.tick + ((n22 - self.tick) & MASK22)
        if tick >= REBASE_AT:
            tick = self.rebase(tick)
        self.tick = tick
        active = sample ^ self.invert
        if not self.started:
            self.started = True
            self.raw_levels = self.levels = active
            for b in range(self.n):
                self.down_since[b] = tick if active & (1 << b) else -1
            return
        if self.resync:
            self.resynced(tick, active)
            return
        changed = active ^ self.raw_levels
        if not changed:
            return
        if self.cand_min != NEVER and tick - self.cand_min >= self.min_hold:
            # (NEVER is a big int: arithmetic on it would allocate)
            self.due_all(tick, self.raw_levels)     # the levels held until this sample
        self.raw_levels = active
        c = self.c
        if changed & (1 << c.BIT_MARK):
            self.marked(tick)
            changed &= ~(1 << c.BIT_MARK)
        if changed & (1 << c.BIT_CUE) and self.cue_ack is not None:
            seq = self.cue_ack
            self.cue_ack = None
            self.send(self.framer.ack, seq, P.SET_CUE, P.ACK_OK, self.tick64(tick))
        debounced = c.DEBOUNCED_BITS if not self.flags & P.CONFIG_RAW else 0
        plain = changed & ~debounced & ~(1 << c.BIT_MARK)
        if plain:
            self.accept(tick, plain, active)
        b = 0
        rest = changed & debounced
        while rest:
            m = 1 << b
            if rest & m:
                rest &= ~m
                self.debounce(b, tick, 1 if active & m else 0)
            b += 1

    def rebase(self, tick):
        """Move every local tick the box keeps down by SHIFT (a tick long
        past stays in the past: 0), until ``tick`` is below REBASE_AT."""
        while tick >= REBASE_AT:
            tick -= SHIFT
            self.epoch += 1
            self.shift(self.d_start)
            self.shift(self.p_tick)
            self.shift(self.down_since)
            self.shift(self.c_tick)     # edges waiting for their minimum hold
            if self.cand_min != NEVER:
                self.cand_min = max(self.cand_min - SHIFT, 0)
            rt = self.rec_tick
            for k in range(self.n_recs):
                rt[k] -= SHIFT          # exact, even below 0: tick64 adds it back
        return tick

    def shift(self, ticks):
        """One list of per-input local ticks (-1: none) moved down by SHIFT."""
        for b in range(self.n):
            v = ticks[b]
            if v >= 0:
                ticks[b] = v - SHIFT if v >= SHIFT else 0

    def tick64(self, tick):
        """A local tick as the 64-bit tick the host knows."""
        return self.epoch * SHIFT + tick

    def resynced(self, tick, active):
        """The first word after an overflow: an input whose change was lost
        is reported in a fault with its new level (count 1: active), never
        as an edge with a stamp nobody knows."""
        self.resync = False
        lost = active ^ self.raw_levels
        self.raw_levels = active
        c = self.c
        for b in range(self.n):
            m = 1 << b
            if not lost & m:
                continue
            if b == c.BIT_MARK:
                self.sync_tokens = []        # its stamp is gone: the host retries
                self.held_tokens = []
                self.mark_us = []
                continue
            if b == c.BIT_CUE and self.cue_ack is not None:
                self.send(self.framer.ack, self.cue_ack, P.SET_CUE, P.ACK_OK, 0)
                self.cue_ack = None
            self.levels = (self.levels & ~m) | (active & m)
            self.d_start[b] = -1
            self.p_tick[b] = -1
            self.c_tick[b] = -1
            self.down_since[b] = tick if active & m else -1
            self.fault(P.F_OVERFLOW, b, tick, 1 if active & m else 0)

    # -- leading-edge debounce, per input (the referee's Debouncer) -------------------
    # with a minimum hold: an edge it would report is first a candidate, and
    # counts only if the input is at its level MIN_HOLD after it (whatever it
    # bounced through meanwhile); a glitch is dropped, its burst forgotten.

    def debounce(self, b, tick, level):
        self.due(b, tick, 1 - level)        # the level before this edge held to here
        start = self.d_start[b]
        if (start >= 0 and tick - start >= self.window and self.c_tick[b] < 0
                and self.settle(b, -1)):
            self.due(b, tick, 1 - level)
            start = self.d_start[b]
        if start >= 0 and (tick - start < self.window or self.c_tick[b] >= 0):
            self.p_tick[b] = tick
            self.p_level[b] = level
            return
        self.d_start[b] = tick
        self.p_tick[b] = -1
        self.propose(b, tick, level)

    def settle(self, b, now):
        """End a burst whose window has passed (now < 0: at once): the last
        ignored edge, if it left the input at another level, becomes a
        candidate (never while one waits for its hold)."""
        pt = self.p_tick[b]
        if (pt < 0 or self.c_tick[b] >= 0
                or (now >= 0 and now - self.d_start[b] < self.window)):
            return False
        self.p_tick[b] = -1
        if bool(self.levels & (1 << b)) == bool(self.p_level[b]):
            return False
        self.d_start[b] = pt
        self.propose(b, pt, self.p_level[b])
        return True

    def propose(self, b, tick, level):
        """An edge to report once the input has held ``level`` MIN_HOLD."""
        if bool(self.levels & (1 << b)) != bool(level):
            self.c_tick[b] = tick
            self.c_level[b] = level
            if tick < self.cand_min:
                self.cand_min = tick

    def due_all(self, tick, levels):
        """Decide, oldest first (the records stay in tick order), every
        candidate whose hold ended by ``tick``, the inputs at ``levels``."""
        while True:
            k = -1
            first = NEVER
            for b in range(self.n):
                c = self.c_tick[b]
                if 0 <= c < first:
                    first = c
                    k = b
            self.cand_min = first
            if k < 0 or tick - first < self.min_hold or not self.due(k, tick, levels >> k & 1):
                return              # (the rest wait behind it: records in tick order)

    def due(self, b, tick, level):
        """Decide ``b``'s candidate if its hold ended by ``tick`` and the
        input is quiet (no change for QUIET_US: a contact still bouncing at
        the end of the hold is read once it settles, at the latest a
        debounce window after the leading edge), the input at ``level``
        since its last edge before ``tick``. True if decided."""
        c = self.c_tick[b]
        if c < 0 or tick - c < self.min_hold:
            return False
        last = self.p_tick[b]
        if last >= 0 and tick - last < QUIET_US and tick - c < self.window:
            return False
        self.c_tick[b] = -1
        m = 1 << b
        if bool(level) == bool(self.c_level[b]):
            self.accept(c, m, (self.levels & ~m) | (m if level else 0))
        else:                               # a glitch: as if it never was
            self.d_start[b] = -1
            self.p_tick[b] = -1
        return True

    def accept(self, tick, mask, levels):
        """Report the inputs in ``mask`` at ``tick``, now at ``levels``."""
        self.levels = (self.levels & ~mask) | (levels & mask)
        for b in range(self.n):
            m = 1 << b
            if mask & m and self.c.BUZZER_BITS & m:
                if self.levels & m:
                    self.down_since[b] = tick
                else:
                    self.down_since[b] = -1
                    if self.stuck & m:
                        self.stuck &= ~m
                        self.fault(P.F_CLEARED, b, tick, 0)
        k = self.n_recs
        if k and self.rec_tick[k - 1] == tick:
            self.rec_changed[k - 1] |= mask
            self.rec_levels[k - 1] = self.levels
        elif k < MAX_PENDING:
            self.rec_tick[k] = tick
            self.rec_changed[k] = mask
            self.rec_levels[k] = self.levels
            self.n_recs = k + 1
        else:
            self.tx_dropped += 1

    # -- time-driven work --------------------------------------------------------------

    def now_tick(self, now):
        """The counter now (local), from the newest word and the coarse timer."""
        d = self.hw.diff(now, self.tick_us)
        return self.tick + (d if d > 0 else 0)

    def timers(self, now):
        c = self.c
        t = self.now_tick(now)
        if t - 2 - self.cand_min >= self.min_hold:
            # every word up to t is drained (t is no later than now)
            self.due_all(t - 2, self.raw_levels)
        for b in range(self.n):
            if self.p_tick[b] >= 0:
                self.settle(b, t)
            since = self.down_since[b]
            m = 1 << b
            if (since >= 0 and self.stuck_ticks and not self.stuck & m and c.BUZZER_BITS & m
                    and t - since >= self.stuck_ticks):
                self.stuck |= m
                self.fault(P.F_STUCK, b, t, self.stuck_ticks // 1000)
        if self.hw.diff(now, self.last_heartbeat_us) >= c.HEARTBEAT_US:
            self.last_heartbeat_us = now
            self.heartbeat_due = True
            self.toggle_mark()
        if self.cue_at is not None and self.tick64(t) >= self.cue_at[0]:
            _, on, seq = self.cue_at
            self.cue_at = None
            self.set_cue(on, seq)
        if self.pulses and self.hw.diff(now, self.pulse_next_us) >= 0:
            self.test_out ^= 1
            self.hw.set_test_out(self.test_out)
            if not self.test_out:
                self.pulses -= 1
                self.pulse_next_us = self.hw.add(now, self.pulse_gap)
            else:
                self.pulse_next_us = self.hw.add(now, self.pulse_width)
        if self.cert_seq >= 0 and self.hw.diff(now, self.cert_next_us) >= 0:
            self.cert_step(now, t)
        if (self.tx_dropped != self.tx_dropped_reported and len(self.out) < MAX_OUT
                and self.hw.writable()):
            n = self.tx_dropped - self.tx_dropped_reported
            self.tx_dropped_reported = self.tx_dropped
            self.fault(P.F_TX_DROPPED, P.NO_INPUT, t, n)

    def cert_step(self, now, t):
        """One trial of the fairness driver, CERT_GAP_US and its separation
        after the last (from now: the pins are released and settled, and
        this poll's drain has taken the last trial's stamps). Its marker goes
        out first, so the Pi frames the trial's stamps by the markers
        (companion/pico/certificate.py), never by time: every stamp before
        the marker is an earlier trial's, every one after it is this one's
        or later. ``t``: the counter now, before the pins are driven."""
        k = self.cert_k
        if k < self.cert_total:
            a, b = self.cert_pairs[k % len(self.cert_pairs)]
            self.send(self.framer.trial, k, a, b, self.cert_ns, self.tick64(t))
            self.hw.drive_pair(self.cert_cycles, a, b)
            self.cert_k = k + 1
        else:
            seq = self.cert_seq
            self.cert_seq = -1
            self.send(self.framer.ack, seq, P.CERTIFY, P.ACK_OK, self.tick64(t))
        self.cert_next_us = self.hw.add(now, CERT_GAP_US + self.cert_ns // 1000)

    def toggle_mark(self):
        self.mark ^= 1
        self.hw.set_mark(self.mark)
        if len(self.mark_us) < 8:
            self.mark_us.append(self.hw.ticks_us())
        else:
            self.mark_us = []

    def marked(self, tick):
        """The mark's edge came back through the PIO: ``tick`` is "now"."""
        made_us = self.mark_us.pop(0) if self.mark_us else None
        held = self.held_tokens
        if held and made_us is not None:
            # each request's receipt on the PIO clock: the mark's stamp moved
            # by the coarse timer (same crystal) from the toggle to the read;
            # its reply is built as it goes out, saying how long it was held
            r = self.hw.tick_hz // 1000
            for token, rx_us in held:
                rx = tick + self.hw.diff(rx_us, made_us) * r // 1000
                self.send(self.held_reply, token, self.tick64(rx), rx_us)
        self.held_tokens = []
        tick = self.tick64(tick)
        for token in self.sync_tokens:
            self.send(self.framer.sync_reply, token, tick)
        self.sync_tokens = []
        if self.heartbeat_due:
            self.heartbeat_due = False
            self.send(self.framer.heartbeat, tick, self.levels, self.overflows,
                      self.tx_dropped, self.unframer.corrupt)

    # -- commands ----------------------------------------------------------------------

    def command(self, cmd):
        ftype, seq, p = cmd
        if ftype == P.SYNC_REQUEST or ftype == P.SYNC_HELD_REQUEST:
            waiting = len(self.sync_tokens) + len(self.held_tokens)
            if waiting < 8:
                token = p[0] | p[1] << 8 | p[2] << 16 | p[3] << 24
                if ftype == P.SYNC_REQUEST:
                    self.sync_tokens.append(token)
                else:
                    self.held_tokens.append((token, self.hw.ticks_us()))
                if not waiting:
                    self.toggle_mark()
            return
        if ftype == P.HELLO_REQUEST:
            self.send(self.hello)
            return
        name = COMMANDS.get(ftype)
        status = P.ACK_UNKNOWN if name is None else getattr(self, name)(p, seq)
        if status is None:
            return                       # acked later (a cue when it fires, a certificate when done)
        if status != P.ACK_OK:
            self.fault(P.F_BAD_COMMAND, P.NO_INPUT, self.tick, ftype)
        self.send(self.framer.ack, seq, ftype, status, 0)

    def cmd_leds(self, p, seq):
        mask, on = p[0], p[1]
        if mask >> len(self.c.LEDS):
            return P.ACK_BAD_ARGS
        for i in range(len(self.c.LEDS)):
            if mask & (1 << i):
                self.hw.set_led(i, (on >> i) & 1)
        return P.ACK_OK

    def cmd_cue(self, p, seq):
        on = p[0]
        at = int.from_bytes(p[1:9], "little")
        if on > 1:
            return P.ACK_BAD_ARGS
        if at and at > self.tick64(self.now_tick(self.hw.ticks_us())):
            self.cue_at = (at, on, seq)  # acked when it fires, with its stamp
        else:
            self.set_cue(on, seq)
        return None

    def cmd_config(self, p, seq):
        flags = p[0]
        deb = int.from_bytes(p[1:5], "little")
        stuck = int.from_bytes(p[5:9], "little")
        if flags & ~P.CONFIG_RAW or deb > 1_000_000:
            return P.ACK_BAD_ARGS
        self.flags = flags
        self.window = deb
        self.c_tick = [-1] * self.n         # candidates of the old settings are dropped
        self.cand_min = NEVER
        self.stuck_ticks = stuck * 1000
        return P.ACK_OK

    def cmd_certify(self, p, seq):
        """The fairness driver: ``count`` trials of every ordered pair of
        the buzzer bits in ``mask``, in turn (pair k % pairs in trial k),
        the separation ``ns`` apart."""
        ns = int.from_bytes(p[0:4], "little")
        cycles = ns * self.hw.sysclk // 1_000_000_000
        count = p[4] | p[5] << 8
        mask = p[6]
        bits = [b for b in range(self.n) if mask >> b & 1]
        if (not (35 <= cycles <= 1_000_000 and 1 <= count <= 10_000) or len(bits) < 2
                or mask & ~self.c.BUZZER_BITS):
            return P.ACK_BAD_ARGS
        self.cert_pairs = [(a, b) for a in bits for b in bits if a != b]
        self.cert_total = count * len(self.cert_pairs)
        self.cert_k = 0
        self.cert_cycles = cycles
        self.cert_ns = ns
        self.cert_seq = seq
        self.cert_next_us = self.hw.ticks_us()
        return None                      # acked when the last trial is done

    def cmd_pulse(self, p, seq):
        width = int.from_bytes(p[0:4], "little")
        gap = int.from_bytes(p[4:8], "little")
        if not (10 <= width <= 1_000_000 and 10 <= gap <= 10_000_000):
            return P.ACK_BAD_ARGS
        self.pulse_width = width
        self.pulse_gap = gap
        self.pulses = p[8]
        self.pulse_next_us = self.hw.ticks_us()
        return P.ACK_OK

    def set_cue(self, on, seq):
        """Cue LED and piezo together; the ACK waits for the PIO to stamp the
        cue pin's edge (GO on the same clock as the presses)."""
        if bool(self.raw_levels & (1 << self.c.BIT_CUE)) == bool(on):
            self.send(self.framer.ack, seq, P.SET_CUE, P.ACK_OK, 0)
            return
        self.cue_ack = seq
        self.hw.set_cue(on)

    # -- out ---------------------------------------------------------------------------

    def fault(self, code, input_bit, tick, count):
        """A fault stamped at the local ``tick``."""
        self.send(self.framer.fault, code, input_bit, self.tick64(tick), count)

    def send(self, build, *args):
        """Queue the frame ``build(*args)`` makes, after any edges already
        found (a heartbeat or fault never overtakes them, and frames go out
        in the order of their sequence numbers)."""
        if self.n_recs:
            self.pack_records()
        self.queue(build(*args))

    def held_reply(self, token, tick, rx_us):
        """A SYNC_HELD reply to build when it goes out (flush), its number
        taken now so frames still go out in order."""
        return (self.framer.reserve(), token, tick, rx_us)

    def queue(self, frame):
        if len(self.out) < MAX_OUT:
            self.out.append(frame)
        else:
            self.tx_dropped += 1

    def pack_records(self):
        n = self.n_recs
        self.n_recs = 0
        for a in range(0, n, P.MAX_RECORDS):
            b = min(a + P.MAX_RECORDS, n)
            chunk = [(self.tick64(self.rec_tick[k]), self.rec_changed[k], self.rec_levels[k])
                     for k in range(a, b)]
            self.edges_sent += len(chunk)
            self.queue(self.framer.edges(chunk))

    def flush(self):
        """Send what the host takes now, never waiting: a frame it took in
        part is finished first on a later call (a cut frame would be a
        corrupt one); frames beyond MAX_OUT are dropped and counted."""
        self.pack_records()
        out = self.out
        while True:
            if self.tx is None:
                if not out:
                    return
                self.tx = out.pop(0)
                if type(self.tx) is tuple:       # a sync reply: held until now
                    seq, token, tick, rx_us = self.tx
                    self.tx = self.framer.sync_held(seq, token, tick,
                                                    self.hw.diff(self.hw.ticks_us(), rx_us))
                self.tx_off = 0
            self.tx_off += self.hw.write(self.tx, self.tx_off)
            if self.tx_off < len(self.tx):
                return                  # the host is not reading: go on, try later
            self.tx = None
