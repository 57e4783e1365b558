# A soak of the real firmware on the simulated board (tests only):
#
#     micropython -X heapsize=32M firmware/sim/soak.py SECONDS SEED OUTDIR
#
# Simulated play on six buzzers on the board's own clock (fixed time, a poll
# of the box's loop every millisecond or so): presses and releases, bounce
# storms on several buzzers at once, garbage collection pauses (the loop
# stops for 50-400 ms), a host that stops reading for seconds, and the cable
# pulled and put back (MicroPython's USB keeps the newest 256 bytes for the
# next host). It writes what the host received and the truth for
# tests/test_pico_soak.py (and `python -m bench pico`) to check: no clock
# jump, no invented edge, every lost change reported.
#
#   OUTDIR/wire       the bytes the host read, in order
#   OUTDIR/truth      lines "t_us gpio level": every change of a button
#   OUTDIR/reads      lines "wire_offset counter": the board's counter at each read
#   OUTDIR/log.json   {"t0": board start, "rate": [num, den],
#                      "opens": [wire offset of each reconnect],
#                      "pauses": n, "stalls": n, "unplugs": n, "storms": n}

import json
import random
import sys

sys.path.insert(0, sys.argv[0].rsplit("/", 1)[0])
sys.path.insert(1, sys.argv[0].rsplit("/", 2)[0])

from simboard import board  # noqa: E402

SECONDS = int(sys.argv[1])
random.seed(int(sys.argv[2]))
OUT = sys.argv[3]

import boxconfig as C  # noqa: E402

from fixedbox import fixed_time_box  # noqa: E402

cdc, hw, box = fixed_time_box(1234)
GPIO = [g for role, n, g in C.INPUTS if role == 1]
level = [1] * 6                 # pins: 1 released (pull-up), 0 pressed
truth = open(OUT + "/truth", "w")
stats = {"pauses": 0, "stalls": 0, "unplugs": 0, "storms": 0}


def change(t, b, lv):
    board.schedule(t, GPIO[b], lv)
    truth.write("%d %d %d\n" % (t, GPIO[b], lv))
    level[b] = lv


def plan_second(start):
    """Schedule one second of play from ``start`` (board us)."""
    busy_until = [start] * 6
    for b in range(6):
        if random.random() < 0.5:                       # a press and release
            t = start + random.randint(0, 700_000)
            change(t, b, 0)
            change(t + random.randint(30_000, 250_000), b, 1)
            busy_until[b] = t + 260_000
    if random.random() < 0.3:                           # a bounce storm
        stats["storms"] += 1
        who = [b for b in range(6) if random.random() < 0.5] or [0]
        t = start + random.randint(750_000, 850_000)
        for b in who:
            u = t
            for _ in range(random.randint(20, 200)):
                u += random.randint(2, 200)
                change(u, b, level[b] ^ 1)
            change(u + random.randint(2, 200), b, 1)    # it ends released


wire = open(OUT + "/wire", "wb")
reads = open(OUT + "/reads", "w")
wire_n = 0
opens = []
t = board.fixed_now
end = t + SECONDS * 1_000_000
next_plan = t + 100_000
stall_until = unplug_until = 0
next_stall = t + random.randint(5_000_000, 20_000_000)
next_unplug = t + random.randint(10_000_000, 30_000_000)
while t < end:
    if t >= next_plan:
        plan_second(t + 200_000)            # never in the past: a pin's past is fixed
        next_plan += 1_000_000
    r = random.random()
    if r < 0.0004:                                      # a GC pause: no poll
        stats["pauses"] += 1
        t += random.randint(50_000, 400_000)
    elif t >= next_stall and not unplug_until:          # the host stops reading
        stats["stalls"] += 1
        cdc.reading = False
        stall_until = t + random.randint(1_000_000, 5_000_000)
        next_stall += random.randint(10_000_000, 30_000_000)
    elif t >= next_unplug and not stall_until:          # the cable pulled
        stats["unplugs"] += 1
        cdc.host_close()
        unplug_until = t + random.randint(500_000, 3_000_000)
        next_unplug += random.randint(15_000_000, 45_000_000)
    t += random.randint(200, 2_000)
    board.fixed_now = t
    box.poll()
    if stall_until and t >= stall_until:
        cdc.reading = True
        stall_until = 0
    if unplug_until and t >= unplug_until:
        opens.append(wire_n)
        cdc.host_open()                                 # the stale bytes come first
        unplug_until = 0
    got = cdc.host_take() if cdc.connected else b""
    if got:
        wire.write(got)
        wire_n += len(got)
        reads.write("%d %d\n" % (wire_n, board.counter(t)))

for f in (wire, reads, truth):
    f.close()
log = {"t0": board.t0, "opens": opens, "rate": list(board.rate)}
log.update(stats)
with open(OUT + "/log.json", "w") as f:
    json.dump(log, f)
print("ok", wire_n)
