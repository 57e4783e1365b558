"""The broker's configuration for a league night: ``python -m companion.league config``.

Writes, into one directory, everything Mosquitto needs so that each table
has its own credentials and may publish only under its own topic:

* ``mosquitto.conf``: one listener, no anonymous clients, the password and
  ACL files below, and a persistent queue (``persistence true`` in
  ``data/``, saved every few seconds and at shutdown; queued messages for
  the league kept for two weeks and up to 100 000 of them);
* ``passwd``: one user per table (the user name is the table id) and one
  for the league screen, hashed as ``mosquitto_passwd`` does (PBKDF2-SHA512,
  ``$7$``), so the passwords themselves are not in the broker's files;
* ``acl``: a table writes ``<prefix>/<table>/#`` only, the league reads
  ``<prefix>/#`` and writes only the tables' pairings
  (``<prefix>/_league/<table>/pairing``, convention rounds), which each
  table reads; nobody else anything;
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

from .topics import DEFAULT_PREFIX, LeagueError, Topics, check_table_id

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


def acl_text(tables: list[str], league_user: str = LEAGUE_USER,
             prefix: str = DEFAULT_PREFIX) -> str:
    """The ACL: each table writes its own tree; the league reads everything."""
    topics = Topics(prefix)
    lines = ["# Tabletop Companion league ACL (python -m companion.league config).",
             "# A table writes only under its own topic; the league screen only reads.",
             "", f"user {league_user}", f"topic read {topics.everything}",
             f"topic write {topics.pairing('+')}"]        # convention rounds' seatings
    for t in tables:
        lines += ["", f"user {t}", f"topic write {topics.table_tree(t)}",
                  f"topic read {topics.pairing(t)}"]
    return "\n".join(lines) + "\n"


def mosquitto_conf(out: Path, port: int = 1883, bind: str = "0.0.0.0",
                   run_as: str | None = None, log_file: str | None = None) -> str:
    """A ``mosquitto.conf`` for the league (absolute paths into ``out``)."""
    out = out.resolve()
    lines = [
        "# Tabletop Companion league broker (python -m companion.league config).",
        "# Start it with: mosquitto -c " + str(out / "mosquitto.conf"),
        "per_listener_settings false",
        f"listener {int(port)} {bind}",
        "allow_anonymous false",
        f"password_file {out / 'passwd'}",
        f"acl_file {out / 'acl'}",
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
    return "\n".join(lines) + "\n"


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


def generate(out, tables, league_user: str = LEAGUE_USER, port: int = 1883,
             bind: str = "0.0.0.0", prefix: str = DEFAULT_PREFIX, run_as: str | None = None,
             log_file: str | None = None) -> dict:
    """Write the broker's files into ``out``; returns ``{"conf", "passwd",
    "acl", "secrets": {user: path}, "passwords": {user: password}}``."""
    tables = [check_table_id(t) for t in tables]
    if not tables:
        raise LeagueError("give at least one table id")
    check_table_id(league_user)
    if len(set(tables)) != len(tables):
        raise LeagueError("a table id is listed twice")
    if league_user in tables:
        raise LeagueError(f"{league_user!r} is the league's user; pick another table id")
    if not isinstance(port, int) or not 0 < port < 65536:
        raise LeagueError("the port must be 1-65535")
    out = Path(out)
    try:
        out.mkdir(parents=True, exist_ok=True)
        (out / "data").mkdir(exist_ok=True)
        passwords, paths, lines = {}, {}, []
        for user in [league_user, *tables]:
            path = out / "secrets" / f"{user}.password"
            password = _secret(path)
            if password is None:
                password = secrets.token_urlsafe(18)
                _write_private(path, password + "\n")
            passwords[user], paths[user] = password, path
            lines.append(passwd_line(user, password))
        _write_private(out / "passwd", "\n".join(lines) + "\n")
        (out / "acl").write_text(acl_text(tables, league_user, prefix), encoding="utf-8")
        (out / "mosquitto.conf").write_text(
            mosquitto_conf(out, port, bind, run_as, log_file), encoding="utf-8")
        if run_as:
            import shutil
            for p in [out, out / "data", out / "secrets", out / "passwd", out / "acl",
                      out / "mosquitto.conf", *paths.values()]:
                try:
                    shutil.chown(p, user=run_as)
                except (LookupError, PermissionError, OSError):
                    pass
    except OSError as exc:
        raise LeagueError(f"cannot write the broker files in {out}: "
                          f"{exc.strerror or exc}") from None
    return {"conf": out / "mosquitto.conf", "passwd": out / "passwd", "acl": out / "acl",
            "secrets": paths, "passwords": passwords}


__all__ = ["ITERATIONS", "LEAGUE_USER", "acl_text", "check_password", "generate",
           "mosquitto_conf", "passwd_line"]
