"""``python -m companion.league``: the league screen and its broker's files.

    python -m companion.league config --out broker --tables t1,t2,t3 [--port 1883] \\
        [--cafe cafe1=t4,t5] [--tls-cert server.crt --tls-key server.key]
    python -m companion.league config --out cafe1 --tables t4,t5 \\
        --bridge mqtt://central:1883 --bridge-user cafe1 \\
        --bridge-password-file broker/secrets/cafe1.password
    python -m companion.league serve --broker mqtt://HOST:1883 --db league.db \\
        --user league --password-file broker/secrets/league.password [--port 8090]

    python -m companion.league serve ... --players players.txt --game chope \
        --tables t1,t2,t3,t4 [--rounds 3] [--seed 1] [--pod-size 4] [--pairing auto]

``config`` writes mosquitto.conf, the password file, the ACL and one password
file per table (docs/league.md); with ``--bridge``, a café broker's files,
bridged to the central broker (whose ``--cafe`` made the bridge's user);
``serve`` runs the read-only league page and, given a player list, a
convention's rounds (docs/league.md, "Convention rounds").
Bad options exit 2 with a message.
"""

from __future__ import annotations

import argparse
import sys
from typing import Sequence


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="companion league",
                                description="A league across tables, over a Mosquitto broker.")
    sub = p.add_subparsers(dest="command", required=True)

    c = sub.add_parser("config", help="write the broker's config, passwords and ACL")
    c.add_argument("--out", required=True, help="directory for the broker's files")
    c.add_argument("--tables", required=True, metavar="T1,T2,... | N",
                   help="table ids, comma-separated (t1,t2,...); a number N alone: N tables, "
                        "t1 to tN (one table called '2': '2,')")
    c.add_argument("--league-user", default="league", help="the league screen's user")
    c.add_argument("--port", type=int, default=1883)
    c.add_argument("--bind", default="0.0.0.0", help="address the broker listens on")
    c.add_argument("--prefix", default="tabletop", help="topic prefix")
    c.add_argument("--run-as", default=None,
                   help="the user mosquitto runs as when started as root; the files are given "
                        "to it (default: this user; as root, 'mosquitto' if that account "
                        "exists, else root)")
    c.add_argument("--log-file", default=None, help="broker log file (default: syslog/stderr)")
    c.add_argument("--cafe", action="append", default=[], metavar="USER=T1,T2",
                   help="central broker: a café broker's bridge user and the tables behind it")
    c.add_argument("--tls-cert", default=None, help="the listener's TLS certificate (PEM)")
    c.add_argument("--tls-key", default=None, help="the listener's TLS private key (PEM)")
    c.add_argument("--bridge", default=None, metavar="URL",
                   help="this is a café broker: bridge it to the central one at URL")
    c.add_argument("--bridge-user", default=None, help="the café's user at the central broker")
    c.add_argument("--bridge-password-file", default=None,
                   help="that user's password file (from the central broker's secrets/)")
    c.add_argument("--bridge-ca-file", default=None, help="CA of an mqtts:// central broker")
    c.set_defaults(run=_config)

    s = sub.add_parser("serve", help="run the league page")
    s.add_argument("--broker", required=True, help="mqtt://host:port")
    s.add_argument("--db", required=True, help="the league's SQLite file")
    s.add_argument("--user", default="league", help="broker user (default: league)")
    s.add_argument("--password-file", default=None,
                   help="file whose first line is the user's password")
    s.add_argument("--host", default="0.0.0.0")
    s.add_argument("--port", type=int, default=8090)
    s.add_argument("--prefix", default="tabletop")
    s.add_argument("--name", default="league",
                   help="this screen's name (the broker binds the session to --user: one "
                        "league process per user)")
    s.add_argument("--ca-file", default=None,
                   help="the CA an mqtts:// broker's certificate is checked against")
    _convention_options(s)
    s.set_defaults(run=_serve)
    return p


def _convention_options(s: argparse.ArgumentParser) -> None:
    c = s.add_argument_group("convention rounds (docs/league.md)")
    c.add_argument("--players", metavar="FILE", default=None,
                   help="run rounds for the players in FILE (one name a line)")
    c.add_argument("--player-names", metavar="A,B,...", default=None,
                   help="... or named here, comma-separated")
    c.add_argument("--game", default=None, help="the night's game (chope, chomp, ...)")
    c.add_argument("--tables", default=None, metavar="T1,T2,... | N",
                   help="the tables to seat, top table first; a number N alone: t1 to tN, "
                        "as 'config --tables N' names them")
    c.add_argument("--rounds", type=int, default=3, help="rounds in the night (3)")
    c.add_argument("--seed", default="1", help="the seed the pairings are drawn from (1)")
    c.add_argument("--pod-size", type=int, default=None,
                   help="players per table (default: 4, or the game's most if fewer)")
    c.add_argument("--pairing", default="auto", choices=("auto", "rotation", "swiss"),
                   help="auto: a rotation if the rounds let everyone meet, else Swiss")


def table_ids(given: str) -> list[str]:
    """``--tables``: ids, comma-separated; a whole number N alone is N
    tables, t1 to tN (the ids ``config --tables N`` makes), as one would
    read ``--tables 2``. A table really called "2" is ``--tables 2,``.

    >>> table_ids("2"), table_ids("t1, t3"), table_ids("2,")
    (['t1', 't2'], ['t1', 't3'], ['2'])
    """
    from .topics import LeagueError

    text = given.strip()
    if text.isdigit():
        count = int(text)
        if not 1 <= count <= 1000:
            raise LeagueError(f"--tables {text}: give 1 to 1000 tables, or their ids")
        return [f"t{i}" for i in range(1, count + 1)]
    return [t.strip() for t in text.split(",") if t.strip()]


def _plan(args):
    """The convention asked for, or None; LeagueError for what is missing."""
    from .convention import Plan, read_players
    from .topics import LeagueError

    if args.players is None and args.player_names is None:
        if args.game or args.tables:
            raise LeagueError("--game and --tables run rounds for a player list: give "
                              "--players FILE or --player-names")
        return None
    if args.players is not None and args.player_names is not None:
        raise LeagueError("give --players FILE or --player-names, not both")
    if not args.game or not args.tables:
        raise LeagueError("a convention needs --game and --tables")
    names = read_players(args.players) if args.players is not None else \
        [n for n in args.player_names.split(",") if n.strip()]
    tables = table_ids(args.tables)
    return Plan.make(names, args.game, tables, args.rounds, args.seed, args.pod_size,
                     args.pairing)


def _config(args, out) -> int:
    from .config import generate

    tables = table_ids(args.tables)
    made = generate(args.out, tables, args.league_user, args.port, args.bind, args.prefix,
                    args.run_as, args.log_file, cafes=_cafes(args.cafe), tls=_tls(args),
                    bridge=_bridge(args))
    print(f"wrote {made['conf']}, {made['passwd']}, {made['acl']}", file=out)
    for user, path in made["secrets"].items():
        print(f"  {user:>12}: password in {path}", file=out)
    print(f"start the broker: mosquitto -c {made['conf']} (started as root it runs as "
          f"{made['run_as']!r}, who owns these files)", file=out)
    for warning in made["warnings"]:
        print(f"warning: {warning}", file=out)
    return 0


def _cafes(given: list[str]) -> dict[str, list[str]]:
    from .topics import LeagueError

    cafes = {}
    for item in given:
        user, _, tables = item.partition("=")
        names = [t.strip() for t in tables.split(",") if t.strip()]
        if not user.strip() or not names:
            raise LeagueError(f"--cafe {item!r}: give USER=t1,t2 (the café bridge's user and "
                              f"the tables behind it)")
        cafes[user.strip()] = names
    return cafes


def _tls(args) -> dict | None:
    from .topics import LeagueError

    if bool(args.tls_cert) != bool(args.tls_key):
        raise LeagueError("--tls-cert and --tls-key go together")
    return {"cert": args.tls_cert, "key": args.tls_key} if args.tls_cert else None


def _bridge(args) -> dict | None:
    from .topics import LeagueError

    if not args.bridge:
        return None
    if not args.bridge_user or not args.bridge_password_file:
        raise LeagueError("--bridge needs --bridge-user and --bridge-password-file")
    return {"central": args.bridge, "user": args.bridge_user,
            "password_file": args.bridge_password_file, "ca_file": args.bridge_ca_file}


def _serve(args, out) -> int:
    from .app import serve
    from .topics import Credentials

    creds = Credentials.from_file(args.user, args.password_file) if args.password_file else None
    plan = _plan(args)

    def say(text: str) -> None:
        print(text, file=out, flush=True)

    return serve(args.broker, args.db, creds, args.host, args.port, args.prefix, args.name,
                 print_fn=say, ca_file=args.ca_file, convention=plan)


def main(argv: Sequence[str] | None = None, stdout=None, stderr=None) -> int:
    from .topics import LeagueError

    stdout, stderr = stdout or sys.stdout, stderr or sys.stderr
    try:
        args = build_parser().parse_args(argv)
    except SystemExit as exc:
        return int(exc.code or 0)
    try:
        return args.run(args, stdout)
    except LeagueError as exc:
        print(f"companion league: {exc}", file=stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
