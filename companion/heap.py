"""How the process's C heap keeps memory it freed (glibc's ``mallopt``).

The race judge works on grids of a card's possible flip times: each
judgement and order check makes and frees numpy arrays of 100 kB to a few
MB, many times on every change of state. glibc's default gives such blocks
back to the kernel as soon as they are freed (a block over 128 kB is its own
``mmap``; the top of the heap is trimmed past 128 kB free), so the next
judgement faults the same pages in again: a simulated Chope! game
(tests/kit/pacesim.py) took a million minor page faults for 300 race cards,
a third of its CPU time. Kept instead, the heap is reused: the same game
takes 11,000 faults and its peak memory is the same (65 MB).

:func:`keep_freed_memory` is called once by each process that judges races
(``python -m companion``, the benchmarks, every test worker). Where the C
library is not glibc (no ``mallopt``) it does nothing.

>>> keep_freed_memory()         # glibc, as on Raspberry Pi OS
True
"""

from __future__ import annotations

import ctypes

#: glibc's mallopt parameters (malloc.h)
M_TRIM_THRESHOLD, M_TOP_PAD, M_MMAP_THRESHOLD = -1, -2, -3
#: blocks up to this size come from the heap, not their own mmap ...
MMAP_THRESHOLD = 4 << 20
#: ... the heap's top is given back only when this much of it is free ...
TRIM_THRESHOLD = 32 << 20
#: ... and it grows by this much more than it needs at once
TOP_PAD = 1 << 20


def keep_freed_memory() -> bool:
    """Keep freed blocks in the heap for reuse (see the module's text);
    True when the C library took the settings."""
    try:
        mallopt = ctypes.CDLL(None).mallopt
    except (OSError, AttributeError):
        return False            # not glibc: its own allocator's defaults stand
    mallopt.argtypes, mallopt.restype = [ctypes.c_int, ctypes.c_int], ctypes.c_int
    return all(mallopt(k, v) == 1 for k, v in ((M_MMAP_THRESHOLD, MMAP_THRESHOLD),
                                                (M_TRIM_THRESHOLD, TRIM_THRESHOLD),
                                                (M_TOP_PAD, TOP_PAD)))
