# The worst slam the box is budgeted for, on the real firmware and the
# simulated board (tests only):
#
#     micropython -X heapsize=32M firmware/sim/slam.py SECONDS SEED OUTDIR [REBASE_BITS]
#
# Twice a second all six buzzers are pressed within 1 ms, each bouncing 20
# times (41 changes, ending pressed), held 80-250 ms and released the same
# way. The main loop pays WORD_US of the board's clock for each word it
# drains (a Pico's cost, pessimistic), so the DMA goes on writing the ring
# while the loop reads it; one slam in four meets a garbage collection pause
# (the loop stops for 5-400 ms) that starts inside its press burst, and
# others fall at random, as in soak.py. The host reads all the time.
# REBASE_BITS (a test's option) moves the firmware's local ticks down every
# 2**(REBASE_BITS - 1) us instead of every 134 s, so a short run crosses
# rebases too.
#
# It writes what soak.py writes (tests/kit/pico.py reads both), and:
#
#   OUTDIR/expect     lines "t_us gpio level": the edges the debounce must
#                     report (each burst's leading edge)
#   log.json also:    "slams", "words" (the PIO's), "max_local" (the largest
#                     local tick the box kept: a Pico small integer is
#                     < 2**30), "rebases"

import json
import random
import sys

sys.path.insert(0, sys.argv[0].rsplit("/", 1)[0])
sys.path.insert(1, sys.argv[0].rsplit("/", 2)[0])

from simboard import board  # noqa: E402

SECONDS = int(sys.argv[1])
random.seed(int(sys.argv[2]))
OUT = sys.argv[3]
WORD_US = 40
BOUNCES = 20

import boxconfig as C  # noqa: E402
import boxcore  # noqa: E402

from fixedbox import fixed_time_box  # noqa: E402

if len(sys.argv) > 4:
    boxcore.REBASE_AT = 1 << int(sys.argv[4])
    boxcore.SHIFT = 1 << (int(sys.argv[4]) - 1)
cdc, hw, box = fixed_time_box(4321)
word = box.word


def costly_word(hi, lo):
    board.fixed_now += WORD_US
    word(hi, lo)


box.word = costly_word
GPIO = [g for role, n, g in C.INPUTS if role == 1]
truth = open(OUT + "/truth", "w")
expect = open(OUT + "/expect", "w")
stats = {"pauses": 0, "stalls": 0, "unplugs": 0, "storms": 0, "slams": 0}


def burst(t, b, level):
    """A change to ``level`` at ``t`` with 20 bounces after it (ends at ``level``)."""
    changes = [(t, GPIO[b], level)]
    expect.write("%d %d %d\n" % (t, GPIO[b], level))
    for _ in range(BOUNCES):
        t += random.randint(20, 300)
        changes.append((t, GPIO[b], level ^ 1))
        t += random.randint(20, 300)
        changes.append((t, GPIO[b], level))
    for c in changes:
        truth.write("%d %d %d\n" % c)
    return changes


def slam(start):
    """Six presses within 1 ms and their releases: the board's changes."""
    stats["slams"] += 1
    changes = []
    for b in range(6):
        t = start + random.randint(0, 1_000)
        changes += burst(t, b, 0)
        changes += burst(t + random.randint(80_000, 250_000), b, 1)
    board.schedule_many(changes)


def local_ticks():
    vals = [box.tick, box.now_tick(hw.ticks_us())]
    for lst in (box.d_start, box.p_tick, box.down_since):
        vals += lst
    vals += [box.rec_tick[k] for k in range(box.n_recs)]
    return max(abs(v) for v in vals)


wire = open(OUT + "/wire", "wb")
reads = open(OUT + "/reads", "w")
wire_n = 0
max_local = 0
t = board.fixed_now
end = t + SECONDS * 1_000_000
next_slam = t + 200_000
pause_at = None
while t < end:
    if t >= next_slam - 100_000 and next_slam < end - 400_000:   # all over before the end
        # scheduled ahead (a pause may have carried the loop past the plan:
        # a pin's past is fixed, so the slam comes a little later)
        next_slam = max(next_slam, t + 1_000)
        slam(next_slam)
        if random.random() < 0.25:
            pause_at = next_slam + random.randint(0, 5_000)
        next_slam += 500_000
    if pause_at is not None and t >= pause_at:
        stats["pauses"] += 1
        t += random.randint(5_000, 400_000)
        pause_at = None
    elif random.random() < 0.0004:
        stats["pauses"] += 1
        t += random.randint(5_000, 400_000)
    t += random.randint(200, 2_000)
    board.fixed_now = t
    box.poll()
    t = board.fixed_now
    max_local = max(max_local, local_ticks())
    got = cdc.host_take()
    if got:
        wire.write(got)
        wire_n += len(got)
        reads.write("%d %d\n" % (wire_n, board.counter(t)))

for f in (wire, reads, truth, expect):
    f.close()
log = {"t0": board.t0, "opens": [], "rate": list(board.rate), "words": board.words,
       "max_local": max_local,
       "rebases": box.epoch}
log.update(stats)
with open(OUT + "/log.json", "w") as f:
    json.dump(log, f)
print("ok", wire_n)
