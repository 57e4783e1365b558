"""Route policy: who may call a route, what its body may hold, and its limits,
declared at the route and enforced by one ``before_request`` hook.

Every view says who it serves with :func:`allow`, under its route::

    @bp.post("/api/host/event")
    @allow(HOST, body=schema.host_event)
    def log_event(): ...

:class:`Policy` fields:

``who``        :data:`PUBLIC` (anyone), :data:`HOST` (a logged-in host, else 401)
               or :data:`PLAYER` (a player link that opens a page now, read from
               the route's ``<secret>``, else 404 with nothing about why)
``body``       a check of the JSON body's content (:mod:`companion.web.schema`),
               run after the nesting check every JSON body gets
``limit``      the name of a :class:`~companion.web.auth.RateLimiter` on the
               app's ``Services`` (``"press_limiter"``): 429 past it, per address
``max_bytes``  the largest body the route reads (413 past it); None: the app's
               ``MAX_CONTENT_LENGTH``
``reserve``    served to anyone on a *reserve* connection (one opened when the
               guests' share of connections was full: :mod:`companion.web.limits`);
               any other route is served there only to a logged-in host

:func:`enforce` checks, in order: the CSRF token of every state-changing
request, the reserve, who, the size, the rate, the body. A route with no
declared policy is refused (500, ``rule: "policy"``), and :func:`install`
refuses to start an app with one (:class:`UndeclaredRoute`), so a new route
cannot forget its policy. A logout needs no hook of its own: its view
revokes the login (:func:`companion.web.auth.logout`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

from flask import current_app, g, jsonify, request

from . import auth, schema
from .limits import BAND_KEY
from .links import NoLink, check_link, link_key

PUBLIC, HOST, PLAYER = "public", "host", "player"
WHO = (PUBLIC, HOST, PLAYER)
#: Where an app keeps its routes' policies: endpoint -> :class:`Policy`.
EXTENSION = "companion_policy"
_ATTR = "route_policy"
#: The largest body a virtual buzzer sends (``{"player", "pressed", "seq"}``).
PRESS_MAX_BYTES = 1024


@dataclass(frozen=True)
class Policy:
    """What a route allows (see the module's doc)."""

    who: str
    body: Callable[[Any], None] | None = None
    limit: str | None = None
    max_bytes: int | None = None
    reserve: bool = False

    def __post_init__(self):
        if self.who not in WHO:
            raise ValueError(f"who={self.who!r}: one of {', '.join(WHO)}")


class UndeclaredRoute(RuntimeError):
    """An app has a route with no :func:`allow` policy."""


def allow(who: str, *, body: Callable[[Any], None] | None = None, limit: str | None = None,
          max_bytes: int | None = None, reserve: bool = False):
    """Decorator: declare the route's :class:`Policy`. The view itself is
    returned unchanged (under or over the route decorator alike)."""
    policy = Policy(who, body, limit, max_bytes, reserve)

    def declare(view):
        setattr(view, _ATTR, policy)
        return view

    return declare


#: Flask's own static files: the login page needs them on a reserve connection.
STATIC = Policy(PUBLIC, reserve=True)


def install(app) -> dict[str, Policy]:
    """Read every route's policy into ``app.extensions`` and run :func:`enforce`
    before each request; :class:`UndeclaredRoute` names the routes without one.
    Call it once every blueprint is registered."""
    policies, missing = {}, []
    for endpoint, view in app.view_functions.items():
        policy = STATIC if endpoint == "static" else getattr(view, _ATTR, None)
        if policy is None:
            missing.append(endpoint)
        else:
            policies[endpoint] = policy
    if missing:
        raise UndeclaredRoute(f"routes without a policy: {', '.join(sorted(missing))}; "
                              f"declare who may call each with @allow(...) "
                              f"(companion/web/policy.py)")
    app.extensions[EXTENSION] = policies
    app.before_request(enforce)
    return policies


def _refuse(message: str, status: int, rule: str, retry_after: str | None = None, **headers):
    resp = jsonify(error=message, rule=rule)
    resp.status_code = status
    if retry_after is not None:
        resp.headers["Retry-After"] = retry_after
    resp.headers.update(headers)
    return resp


def enforce():
    """Flask ``before_request``: the route's policy, before the view runs."""
    endpoint = request.endpoint
    if endpoint is None:
        return None                      # no such route: Flask answers 404/405
    policy = current_app.extensions[EXTENSION].get(endpoint)
    if policy is None:
        return _refuse(f"the route {endpoint} declares no policy: refused", 500, "policy")
    refused = auth.check_csrf()
    if refused is not None:
        return refused
    if request.environ.get(BAND_KEY) == "reserve" and not policy.reserve \
            and not auth.is_host():
        return _refuse("the table is full: retry shortly", 503, "capacity", "5",
                       Connection="close")
    if policy.who == HOST and not auth.is_host():
        return _refuse("log in to the host console first", 401, "login")
    if policy.who == PLAYER:
        _open_link()
    if policy.max_bytes is not None:
        request.max_content_length = policy.max_bytes
        if (request.content_length or 0) > policy.max_bytes:
            return _refuse(f"the request body is larger than {policy.max_bytes} bytes", 413,
                           "format")
    if policy.limit is not None:
        limiter = getattr(current_app.extensions["companion"], policy.limit)
        if not limiter.hit(auth.client_key()):
            return _refuse("too many requests: slow down", 429, "rate-limit", "1")
    return schema.check_request(policy.body)


def _open_link() -> None:
    """The player whose link is in the route (``g.player``), else NoLink (404)."""
    secret = (request.view_args or {}).get("secret")
    row = check_link(current_app.extensions["companion"], link_key(), secret)
    if row is None:
        raise NoLink()
    g.player = row["player"]


def policy_of(app, endpoint: str) -> Policy | None:
    """The declared policy of ``endpoint`` (None: undeclared, refused)."""
    return app.extensions.get(EXTENSION, {}).get(endpoint)


__all__ = ["Policy", "UndeclaredRoute", "allow", "install", "enforce", "policy_of",
           "PUBLIC", "HOST", "PLAYER", "PRESS_MAX_BYTES"]
