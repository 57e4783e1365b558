"""werkzeug's URL rule with its URL builders compiled once a process.

Flask compiles two URL builders for every route of every app it creates:
werkzeug writes each one as Python source (an AST) and compiles it. The
table's app has 64 routes, so creating it took 27 ms of CPU, nearly all
of it there; the tests create hundreds of apps, and a Pi running a league
hall beside a table creates more than one. The builder's code depends only
on the rule's parts (its ``_trace``: the static text and the names of its
variables, in order) and on whether it appends unknown arguments; the
converters it calls are the rule's own, looked up when it runs. So one
compiled builder serves every rule with the same parts, in every app.

A rule with defaults is compiled as werkzeug does (a default may be folded
into the builder through its converter), and so is every rule when
werkzeug's Rule no longer works this way (no ``_trace``).

>>> from flask import Flask, url_for
>>> apps = [Flask("a"), Flask("b")]
>>> for app in apps:
...     app.url_rule_class = Rule
...     app.add_url_rule("/p/<int:n>", "p", lambda n: str(n))
>>> for app in apps:
...     with app.test_request_context():
...         print(url_for("p", n=7))
/p/7
/p/7
"""

from __future__ import annotations

from typing import Any, Callable, ClassVar

from werkzeug.routing import Rule as _WerkzeugRule


class Rule(_WerkzeugRule):
    """:class:`werkzeug.routing.Rule` whose URL builders are shared (see
    the module docstring): set as a Flask app's ``url_rule_class``."""

    #: (the rule, its parts, append_unknown) -> the compiled builder
    builders: ClassVar[dict[tuple, Callable[..., Any]]] = {}

    def _compile_builder(self, append_unknown: bool = True) -> Callable[..., Any]:
        trace = getattr(self, "_trace", None)
        if self.defaults or trace is None:
            return super()._compile_builder(append_unknown)
        key = (self.rule, tuple(trace), append_unknown)
        got = self.builders.get(key)
        if got is None:
            got = self.builders[key] = super()._compile_builder(append_unknown)
        return got


__all__ = ["Rule"]
