"""Player links: the secret in a private page's URL, and whether it opens a page now.

The secret: 256 bits, ``HMAC-SHA256(server key, nonce)`` with a random
32-byte nonce from :mod:`secrets`. The store keeps the nonce and the SHA-256
digest of the secret, never the secret itself, so a copy of the database
alone opens no page, while the host console can show the link again (it has
the key). A link is found by its digest and the digests are compared with
:func:`hmac.compare_digest`. Who may use a link when: :mod:`companion.web.player`.
Both the route policy (``who=PLAYER``: :mod:`companion.web.policy`) and the
player pages read links through here.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import re
from typing import Any

from flask import current_app

from .api import BadRequest


def N_(text: str) -> str:
    """Marks a message for the catalog (pybabel extract); the page translates it."""
    return text


#: Domain separation for the HMAC that derives a link's secret from its nonce.
CONTEXT = b"tabletop-companion player link v1\x00"
#: A secret as it appears in a URL: 43 URL-safe base64 characters (256 bits).
SECRET_RE = re.compile(r"^[A-Za-z0-9_-]{43}$")
NO_LINK = N_("this player link is not valid (wrong, revoked, or for another game): ask the host")


class NoLink(BadRequest):
    """A link that opens nothing: 404 with no data about why."""

    def __init__(self):
        super().__init__(NO_LINK, rule="link", status=404)


def link_key(app=None) -> bytes:
    key = (app or current_app).config["SECRET_KEY"]
    return key if isinstance(key, bytes) else str(key).encode()


def secret_for(key: bytes, nonce: str) -> str:
    """The link's secret for ``nonce`` under the server's ``key``."""
    mac = hmac.new(key, CONTEXT + nonce.encode(), hashlib.sha256).digest()
    return base64.urlsafe_b64encode(mac).rstrip(b"=").decode()


def digest_of(secret: str) -> str:
    """What the store keeps of a secret: its SHA-256, hex."""
    return hashlib.sha256(secret.encode()).hexdigest()


def seated(session) -> list[str] | None:
    return list(session.names) if getattr(session, "game", None) is not None else None


def check_link(svc, key: bytes, secret: Any) -> dict | None:
    """The store's row for a link that opens a page now, else None: the
    secret well formed, its digest known (compared in constant time), made
    under this server's ``key`` (a table started from a copy of the store,
    with another key, shows the copied links as "stale": they open nothing,
    issue 20, 6), not revoked, and the running game seating exactly the
    link's players."""
    store = svc.store
    if store is None or not isinstance(secret, str) or not SECRET_RE.match(secret):
        return None
    digest = digest_of(secret)
    row = store.find_player_link(digest)
    if row is None or not hmac.compare_digest(row["digest"], digest) or row["revoked"]:
        return None
    if not hmac.compare_digest(secret_for(key, str(row["nonce"])), secret):
        return None
    names = seated(svc.session)
    if names is None or row["player"] not in names \
            or store.seats_key(names) != store.seats_key(row["seats"]):
        return None
    return row


__all__ = ["NoLink", "NO_LINK", "check_link", "digest_of", "link_key", "seated", "secret_for"]
