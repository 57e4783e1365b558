"""The ``companion`` command.

``companion serve``   the table: buzzers, game tracker and the phone page
``companion buzz``    races in the terminal (no network needed)
``companion judge``   judge a recorded race from JSON lines (photo finish)
``companion replay``  replay a game file and print the final state
``companion pico``    flash the Pico buzzer box or run its self-test, even while
                      the table runs (it lends the box and takes it back)
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Sequence

from . import __version__
from .heap import keep_freed_memory


class _Parser(argparse.ArgumentParser):
    """argparse that exits 2 with one clear line on a bad option."""

    def error(self, message):  # noqa: D401 - argparse API
        self.exit(2, f"{self.prog}: error: {message}\n")


def _judge(args, stdin, stdout, stderr) -> int:
    from .races.edges import Edge
    from .races.referee import MS, US, RaceError, RaceSpec, judge
    from .record.gamefile import loads

    players = [p.strip() for p in args.players.split(",") if p.strip()]
    eligible = None
    if args.eligible is not None:
        eligible = [p.strip() for p in args.eligible.split(",") if p.strip()]
    try:
        spec = RaceSpec(
            args.kind, tuple(players), None if eligible is None else tuple(eligible),
            arm_ns=args.arm_ns, deadline_ns=args.deadline_ns,
            tie_window_ns=args.tie_window_us * US, debounce_ns=args.debounce_ms * MS,
            lockout_ns=None if args.lockout_ms is None else args.lockout_ms * MS)
    except (RaceError, TypeError) as exc:
        print(f"companion judge: {exc}", file=stderr)
        return 2
    edges = []
    for no, line in enumerate(_lines(stdin), start=1):
        if isinstance(line, bytes):
            try:
                line = line.decode("utf-8")
            except UnicodeDecodeError as exc:
                print(f"companion judge: line {no}: not UTF-8 text (byte "
                      f"{line[exc.start]:#04x} at column {exc.start + 1})", file=stderr)
                return 2
        if not line.strip():
            continue
        try:
            obj = loads(line)
        except ValueError as exc:
            print(f"companion judge: line {no}: {exc}", file=stderr)
            return 2
        try:
            edge = Edge.from_json(obj)
        except ValueError as exc:
            print(f"companion judge: line {no}: {exc}", file=stderr)
            return 2
        if edge.player not in spec.players:
            print(f"companion judge: line {no}: unknown player {edge.player!r} "
                  f"(players: {', '.join(spec.players)})", file=stderr)
            return 2
        edges.append(edge)
    verdict = judge(spec, edges).to_json()
    json.dump(verdict, stdout)
    stdout.write("\n")
    return 0


def _lines(stdin):
    """The lines of ``stdin`` as bytes when it has them (a real stdin: the
    locale never decodes them, so bad bytes are found and named the same
    way under every locale), else as the text it gives (tests' StringIO)."""
    raw = getattr(stdin, "buffer", None)
    return raw if raw is not None else stdin


def _replay(args, stdin, stdout, stderr) -> int:
    from .record.gamefile import GameFileError, replay_lines

    try:
        with open(args.file, encoding="utf-8") as fh:
            rep = replay_lines(fh)
    except OSError as exc:
        print(f"companion replay: {args.file}: {exc.strerror}", file=stderr)
        return 2
    except UnicodeDecodeError:
        print(f"companion replay: {args.file}: not a UTF-8 text file", file=stderr)
        return 2
    except GameFileError as exc:
        print(f"companion replay: {args.file}: {exc}", file=stderr)
        return 2
    json.dump(rep.summary(), stdout, indent=None if args.compact else 2)
    stdout.write("\n")
    return 0


def _serve(args, stdin, stdout, stderr) -> int:
    from .app import serve
    from .tableconfig import TableConfig

    try:
        table = TableConfig.from_args(args)
    except ValueError as exc:
        print(f"companion serve: {exc}", file=stderr)
        return 2
    return serve(table)


def _buzz(args, stdin, stdout, stderr) -> int:
    from .terminal import run_buzz

    players = [p.strip() for p in args.players.split(",") if p.strip()]
    return run_buzz(players, source=args.source, pinmap=args.pinmap,
                    debounce_ms=args.debounce_ms, tie_window_us=args.tie_window_us,
                    hold_ms=args.hold_ms, stuck_ms=args.stuck_ms, stdin=stdin, stdout=stdout,
                    stderr=stderr)


def _pico(args, stdin, stdout, stderr) -> int:
    from .pico import update
    from .pico.lease import LeaseError
    from .pico.transport import named_port

    def say(line: str) -> None:
        print(f"companion pico: {line}", file=stdout, flush=True)
    try:
        port = named_port(args.port)
        if args.pico_command == "selftest":
            return update.run_selftest(port, say, both=args.both, fairness=args.fairness,
                                       pulses=args.pulses)
        argv = update.flash_argv(port, update.firmware_files(args.firmware),
                                 update.mpremote(args.mpremote))
        rc = update.run_borrowed(port, "companion pico flash", argv, say)
    except (ValueError, LeaseError, OSError) as exc:
        print(f"companion pico: {exc}", file=stderr)
        return 2
    say("flashed; the box restarts with the new firmware" if rc == 0 else
        f"mpremote failed (exit status {rc}); the box keeps its old firmware or none: "
        f"run the command again (docs/pico.md)")
    return rc


def _add_pico(sub) -> None:
    p = sub.add_parser("pico", help="the Pico buzzer box: flash its firmware or run its "
                                    "self-test, even while the table runs (docs/pico.md)")
    jobs = p.add_subparsers(dest="pico_command", required=True, parser_class=_Parser)
    f = jobs.add_parser("flash", help="copy firmware/*.py to the box with mpremote and reset it")
    f.add_argument("--firmware", help="the firmware directory (default: this source tree's)")
    f.add_argument("--mpremote", help="the mpremote program (default: on PATH)")
    t = jobs.add_parser("selftest", help="python -m hardware.selftest --real --pico on the box")
    t.add_argument("--both", action="store_true", help="also one pulse seen by the Pi "
                                                      "(the clock check)")
    t.add_argument("--fairness", action="store_true", help="the fairness certificate instead")
    t.add_argument("--pulses", type=int)
    for job in (f, t):
        job.add_argument("--port", help="the box's port (default: $COMPANION_PICO_PORT, "
                                        "/dev/buzzerbox, or the one Pico plugged in)")
        job.set_defaults(run=_pico)


def build_parser() -> argparse.ArgumentParser:
    from .races.referee import KINDS
    from .tableconfig import add_arguments, source_help

    parser = _Parser(prog="companion", description=__doc__,
                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--version", action="version", version=f"companion {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)

    j = sub.add_parser("judge", help="judge a recorded race read as JSON lines on stdin")
    j.add_argument("kind", choices=KINDS)
    j.add_argument("--players", required=True, help="comma-separated player names")
    j.add_argument("--eligible", help="comma-separated eligible players (default: all)")
    j.add_argument("--arm-ns", type=int, default=0, help="arm time (presses before are false starts)")
    j.add_argument("--deadline-ns", type=int, default=None)
    j.add_argument("--tie-window-us", type=int, default=0)
    j.add_argument("--debounce-ms", type=int, default=20)
    j.add_argument("--lockout-ms", type=int, default=None,
                   help="let a false starter back in this long after their early press")
    j.set_defaults(run=_judge)

    r = sub.add_parser("replay", help="replay a game file and print the final state as JSON")
    r.add_argument("file")
    r.add_argument("--compact", action="store_true", help="one line of JSON")
    r.set_defaults(run=_replay)

    s = sub.add_parser("serve", help="run the table: buzzers, tracker and the phone page")
    add_arguments(s)
    s.set_defaults(run=_serve)

    sub.add_parser("league", add_help=False,
                   help="the league screen and its broker's files: companion league "
                        "{config,serve} ... (docs/league.md)")

    b = sub.add_parser("buzz", help="races in the terminal; mock buzzers on keys 1-6")
    b.add_argument("--players", default="A,B,C,D")
    b.add_argument("--source", default=None, metavar="NAME", help=source_help())
    b.add_argument("--pinmap")
    b.add_argument("--debounce-ms", type=int, default=20)
    b.add_argument("--tie-window-us", type=int, default=0)
    b.add_argument("--hold-ms", type=int, default=30)
    b.add_argument("--stuck-ms", type=int, default=10_000)
    b.set_defaults(run=_buzz)
    _add_pico(sub)
    return parser


def main(argv: Sequence[str] | None = None, stdin=None, stdout=None, stderr=None) -> int:
    stdin = stdin or sys.stdin
    stdout = stdout or sys.stdout
    stderr = stderr or sys.stderr
    argv = list(sys.argv[1:] if argv is None else argv)
    keep_freed_memory()         # the judge's grids reuse the heap (companion/heap.py)
    if argv[:1] == ["league"]:          # the league has its own commands and options
        from .league.__main__ import main as league_main
        return league_main(argv[1:], stdout=stdout, stderr=stderr)
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:
        return int(exc.code or 0)
    try:
        return args.run(args, stdin, stdout, stderr)
    except BrokenPipeError:
        # the reader went away (`companion replay game.jsonl | head`): end
        # quietly, and keep Python from complaining again at exit
        _quiet_stdout(stdout)
        return 0


def _quiet_stdout(stdout) -> None:
    """After a broken pipe: point stdout at /dev/null so the interpreter's
    final flush does not print a second BrokenPipeError."""
    import os

    if stdout is sys.stdout:
        try:
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, sys.stdout.fileno())
            os.close(devnull)
        except (OSError, ValueError):
            pass


if __name__ == "__main__":
    sys.exit(main())
