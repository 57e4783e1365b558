"""The broker's configuration for a league night: ``python -m companion.league config``.

Writes, into one directory, everything Mosquitto needs so that each table
has its own credentials and may publish only under its own topic:

* ``mosquitto.conf``: one listener (TLS with ``--tls-cert``/``--tls-key``),
  no anonymous clients, the password and ACL files below, client ids bound
  to user names (``use_username_as_clientid``: a table's password cannot
  take over the league's session), a message size limit, and a persistent
  queue (``persistence true`` in ``data/``, saved every few seconds and at
  shutdown; queued messages for the league kept for two weeks and up to
  100 000 of them); on a café broker (``--bridge``), Mosquitto's bridge to
  the central broker;
* ``passwd``: one user per table (the user name is the table id) and one
  for the league screen, hashed as ``mosquitto_passwd`` does (PBKDF2-SHA512,
  ``$7$``), so the passwords themselves are not in the broker's files;
* ``acl``: a table writes its own ``event``, ``state``, ``status`` and
  ``game/+`` topics and reads its own ``mark`` and its convention
  ``pairing`` (``<prefix>/_league/<table>/pairing``); the league reads
  ``<prefix>/#`` and writes only ``<prefix>/+/mark`` and the pairings; a
  café's bridge user has its tables' rights; nobody else anything;
* ``secrets/<user>.password``: each password, mode 0600, for
  ``--league-password-file`` on that table's Pi.

Running it again with more tables keeps the passwords already made (a table
that is already set up keeps working); a table no longer listed loses its
user. The hashing is a pure function of the password and a salt.

>>> line = passwd_line("t1", "secret", salt=bytes(12))
>>> line.startswith("t1:$7$101$AAAAAAAAAAAAAAAA$")
True
>>> check_password(line, "secret"), check_password(line, "guess")
(True, False)
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import os
import secrets
from pathlib import Path

from .topics import (DEFAULT_PREFIX, MAX_MESSAGE_BYTES, BrokerURL, Credentials, LeagueError,
                     Topics,
                     check_table_id)

#: Mosquitto 2's password hash: PBKDF2-HMAC-SHA512, 101 rounds, 12-byte salt.
ITERATIONS = 101
SALT_BYTES = 12
LEAGUE_USER = "league"


def passwd_line(user: str, password: str, salt: bytes | None = None,
                iterations: int = ITERATIONS) -> str:
    """One line of a Mosquitto password file (the ``$7$`` form)."""
    salt = os.urandom(SALT_BYTES) if salt is None else salt
    digest = hashlib.pbkdf2_hmac("sha512", password.encode(), salt, iterations, 64)
    return (f"{user}:$7${iterations}${base64.b64encode(salt).decode()}$"
            f"{base64.b64encode(digest).decode()}")


def check_password(line: str, password: str) -> bool:
    """True if ``password`` matches the ``$7$`` hash of a password-file line."""
    try:
        _, hashed = line.strip().split(":", 1)
        _, alg, rounds, salt, digest = hashed.split("$")
        if alg != "7":
            return False
        want = base64.b64decode(digest)
        got = hashlib.pbkdf2_hmac("sha512", password.encode(), base64.b64decode(salt),
                                  int(rounds), len(want))
    except (ValueError, TypeError):
        return False
    return hmac.compare_digest(want, got)


def _table_lines(topics: Topics, table: str) -> list[str]:
    return [f"topic write {t}" for t in topics.table_writes(table)] + \
        [f"topic read {topics.mark(table)}", f"topic read {topics.pairing(table)}"]


def acl_text(tables: list[str], league_user: str = LEAGUE_USER,
             prefix: str = DEFAULT_PREFIX, cafes: dict[str, list[str]] | None = None) -> str:
    """The ACL: each table writes its own event, state, status and game
    topics and reads only its own mark and pairing; the league reads
    everything and writes only marks and pairings; a café broker's bridge user (``cafes``: user ->
    its tables) has the rights of its tables. ``league_user`` None: no
    league on this broker (a café's)."""
    topics = Topics(prefix)
    lines = ["# Tabletop Companion league ACL (python -m companion.league config).",
             "# A table writes only its own topics and reads only its own mark;",
             "# the league screen reads everything and writes only the marks."]
    if league_user:
        lines += ["", f"user {league_user}", f"topic read {topics.everything}",
                  f"topic write {topics.marks}",
                  f"topic write {topics.pairing('+')}"]     # convention rounds' seatings
    for t in tables:
        lines += ["", f"user {t}", *_table_lines(topics, t)]
    for cafe, its in (cafes or {}).items():
        lines += ["", f"# the bridge from café broker {cafe}", f"user {cafe}"]
        for t in its:
            lines += _table_lines(topics, t)
    return "\n".join(lines) + "\n"


def _limits() -> list[str]:
    return [
        "# A client id is its user name: nobody can take over another's session",
        "# (with a table's password one can only knock that table itself off).",
        "use_username_as_clientid true",
        "# Nothing a table sends is larger than this; bigger is refused.",
        f"message_size_limit {MAX_MESSAGE_BYTES}",
        f"max_packet_size {4 * MAX_MESSAGE_BYTES}",
    ]


def _listener(port: int, bind: str, tls: dict | None) -> list[str]:
    lines = [f"listener {int(port)} {bind}"]
    if tls:
        lines += [f"certfile {Path(tls['cert']).resolve()}",
                  f"keyfile {Path(tls['key']).resolve()}", "tls_version tlsv1.2"]
    return lines


def mosquitto_conf(out: Path, port: int = 1883, bind: str = "0.0.0.0",
                   run_as: str | None = None, log_file: str | None = None,
                   tls: dict | None = None, bridge: dict | None = None,
                   prefix: str = DEFAULT_PREFIX) -> str:
    """A ``mosquitto.conf`` for the league (absolute paths into ``out``);
    ``tls`` = {"cert", "key"}: the listener speaks TLS; ``bridge``: this is
    a café broker bridged to the central one (:func:`bridge_lines`)."""
    out = out.resolve()
    lines = [
        "# Tabletop Companion league broker (python -m companion.league config).",
        "# Start it with: mosquitto -c " + str(out / "mosquitto.conf"),
        "per_listener_settings false",
        *_listener(port, bind, tls),
        "allow_anonymous false",
        f"password_file {out / 'passwd'}",
        f"acl_file {out / 'acl'}",
        *_limits(),
        "",
        "# The queue survives a broker restart: messages for the league (and",
        "# retained table states and results) are kept on disk in data/.",
        "persistence true",
        f"persistence_location {out / 'data'}/",
        "autosave_interval 5",
        "# A league screen that is away keeps its queue for two weeks.",
        "persistent_client_expiration 14d",
        "max_queued_messages 100000",
        "max_inflight_messages 100",
    ]
    if run_as:
        lines.append(f"user {run_as}")
    if log_file:
        lines += [f"log_dest file {log_file}", "log_type error", "log_type warning",
                  "log_type notice", "log_type information"]
    if bridge:
        lines += ["", *bridge_lines(prefix=prefix, **bridge)]
    return "\n".join(lines) + "\n"


def bridge_lines(central: str, user: str, password: str, prefix: str = DEFAULT_PREFIX,
                 ca_file: str | None = None) -> list[str]:
    """Mosquitto's bridge from a café broker to the central one: the
    tables' topics out, their marks in, QoS 1, a persistent session at the
    central broker (``cleansession false``), as the central broker's user
    ``user`` (made there with ``--cafe USER=t1,t2``)."""
    url = BrokerURL.parse(central)
    topics = Topics(prefix)
    lines = ["# The bridge to the central broker (python -m companion.league config --bridge).",
             f"connection {user}", f"address {url.host}:{url.port}",
             "bridge_protocol_version mqttv311", f"remote_username {user}",
             f"remote_password {password}", f"remote_clientid {user}",
             f"local_clientid bridge-{user}", "cleansession false", "try_private true",
             "notifications false", "keepalive_interval 15", "restart_timeout 1 10",
             "bridge_attempt_unsubscribe false"]
    if url.tls:
        lines += [f"bridge_cafile {Path(ca_file).resolve()}" if ca_file else
                  "bridge_capath /etc/ssl/certs", "bridge_insecure false"]
    for kind in ("event", "state", "status", "game/+"):
        lines.append(f"topic {topics.prefix}/+/{kind} out 1")
    lines.append(f"topic {topics.marks} in 1")
    lines.append(f"topic {topics.pairing('+')} in 1")      # convention rounds' seatings
    return lines


def _secret(path: Path) -> str | None:
    try:
        text = path.read_text(encoding="utf-8").strip()
    except OSError:
        return None
    return text.splitlines()[0] if text else None


def _write_private(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as f:
        f.write(text)
    os.chmod(path, 0o600)


def _check(tables, league_user, port, cafes) -> list[str]:
    tables = [check_table_id(t) for t in tables]
    behind = [check_table_id(t) for its in (cafes or {}).values() for t in its]
    if not tables and not behind:
        raise LeagueError("give at least one table id")
    if league_user is not None:
        check_table_id(league_user)
    if len(set(tables)) != len(tables):
        raise LeagueError("a table id is listed twice")
    users = [league_user, *tables, *(cafes or {})]
    if len(set(users)) != len(users):
        raise LeagueError(f"a user name is given twice (the league's is {league_user!r}; "
                          f"a café's bridge user cannot be a table id)")
    for cafe in cafes or {}:
        check_table_id(cafe)
    if not isinstance(port, int) or not 0 < port < 65536:
        raise LeagueError("the port must be 1-65535")
    return tables


def _passwords(out: Path, users: list[str]) -> tuple[dict, dict]:
    """Each user's password (kept from ``secrets/`` if made before) and the
    password file's lines."""
    passwords, paths, lines = {}, {}, []
    for user in users:
        path = out / "secrets" / f"{user}.password"
        password = _secret(path)
        if password is None:
            password = secrets.token_urlsafe(18)
            _write_private(path, password + "\n")
        passwords[user], paths[user] = password, path
        lines.append(passwd_line(user, password))
    _write_private(out / "passwd", "\n".join(lines) + "\n")
    return passwords, paths


def generate(out, tables, league_user: str | None = LEAGUE_USER, port: int = 1883,
             bind: str = "0.0.0.0", prefix: str = DEFAULT_PREFIX, run_as: str | None = None,
             log_file: str | None = None, *, cafes: dict[str, list[str]] | None = None,
             tls: dict | None = None, bridge: dict | None = None) -> dict:
    """Write the broker's files into ``out``; returns ``{"conf", "passwd",
    "acl", "secrets": {user: path}, "passwords": {user: password}, "run_as",
    "warnings"}``.

    ``run_as``: the user mosquitto drops to when started as root (its
    ``user`` line; the files are given to it); None: :func:`default_run_as`.
    ``warnings``: that user cannot reach ``out`` (a directory above it is
    closed to it).
    ``cafes``: on the central broker, a user per café broker's bridge and
    the tables behind it. ``tls``: ``{"cert", "key"}``, the listener speaks
    TLS (``mqtts://``). ``bridge``: this is a café broker, bridged to the
    central one: ``{"central": URL, "user": its bridge user there,
    "password_file": that user's password file, "ca_file": for mqtts}``;
    a café broker has no league user."""
    if bridge is not None:
        league_user = None
    tables = _check(tables, league_user, port, cafes)
    run_as = run_as or default_run_as()
    out = Path(out)
    try:
        out.mkdir(parents=True, exist_ok=True)
        (out / "data").mkdir(exist_ok=True)
        users = [u for u in [league_user, *tables, *(cafes or {})] if u]
        passwords, paths = _passwords(out, users)
        (out / "acl").write_text(acl_text(tables, league_user, prefix, cafes),
                                 encoding="utf-8")
        bridged = None
        if bridge is not None:
            remote = Credentials.from_file(bridge["user"], bridge["password_file"])
            bridged = {"central": bridge["central"], "user": check_table_id(bridge["user"]),
                       "password": remote.password, "ca_file": bridge.get("ca_file")}
        _write_private(out / "mosquitto.conf", mosquitto_conf(
            out, port, bind, run_as, log_file, tls=tls, bridge=bridged, prefix=prefix))
        if run_as:
            _chown([out, out / "data", out / "secrets", out / "passwd", out / "acl",
                    out / "mosquitto.conf", *paths.values()], run_as)
    except OSError as exc:
        raise LeagueError(f"cannot write the broker files in {out}: "
                          f"{exc.strerror or exc}") from None
    closed = _unreachable(out, run_as)
    warnings = [f"mosquitto runs as {run_as!r}, which cannot enter {closed}: started as root "
                f"it will not open its files there (put them where {run_as!r} can reach, "
                f"e.g. /etc/mosquitto/league, or give --run-as)"] if closed else []
    return {"conf": out / "mosquitto.conf", "passwd": out / "passwd", "acl": out / "acl",
            "secrets": paths, "passwords": passwords, "run_as": run_as, "warnings": warnings}


def default_run_as() -> str:
    """The user mosquitto runs as when ``--run-as`` is not given: the one
    these files are written for. Mosquitto started as root drops to its
    ``user`` (``mosquitto`` when the file names none), which could not read
    the 0600 files a root or a login user wrote ("Unable to open pwfile").
    Written by root: Debian's ``mosquitto`` account if the machine has one
    (the files are given to it), else ``root`` (mosquitto then keeps root);
    written by a login user: that user, who owns them already."""
    import pwd

    uid = os.geteuid()
    if uid != 0:
        try:
            return pwd.getpwuid(uid).pw_name
        except KeyError:
            raise LeagueError(f"this user (uid {uid}) has no name: give --run-as") from None
    try:
        pwd.getpwnam("mosquitto")
    except KeyError:
        return "root"
    return "mosquitto"


def _unreachable(out: Path, user: str) -> str | None:
    """The first directory above ``out`` that ``user`` may not pass through
    (mosquitto, dropped to ``user``, could not open its files), or None."""
    import grp
    import pwd

    try:
        who = pwd.getpwnam(user)
    except KeyError:
        return None
    groups = {who.pw_gid} | {g.gr_gid for g in grp.getgrall() if user in g.gr_mem}
    for d in [out.resolve(), *out.resolve().parents]:
        st = d.stat()
        if who.pw_uid == 0 or st.st_uid == who.pw_uid:
            continue
        if not st.st_mode & (0o010 if st.st_gid in groups else 0o001):
            return str(d)
    return None


def _chown(paths, user: str) -> None:
    import shutil
    for p in paths:
        try:
            shutil.chown(p, user=user)
        except (LookupError, PermissionError, OSError):
            pass


__all__ = ["ITERATIONS", "LEAGUE_USER", "acl_text", "bridge_lines", "check_password",
           "default_run_as",
           "generate", "mosquitto_conf", "passwd_line"]
