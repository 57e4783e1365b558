"""The MQTT connection both ends of the league open the same way.

A table's :class:`~companion.league.publisher.LeaguePublisher` and the
league's :class:`~companion.league.app.LeagueSubscriber` talk to the same
broker with the same protocol (MQTT 5, paho's version-2 callbacks), log in
the same way (a broker user and password, or anonymous) and reconnect with
the same backoff; only what each does once connected differs. This is the
one place that client is made, so the two cannot drift apart (a table on
MQTT 3.1.1 and a league on 5 would lose the league's session expiry).
"""

from __future__ import annotations

from .topics import BrokerURL, Credentials, LeagueError


def mqtt_client(broker: BrokerURL, credentials: Credentials | None, client_id: str,
                reconnect_s: tuple[int, int], ca_file=None):
    """A paho MQTT 5 client for ``broker``: logged in with ``credentials``
    (None: anonymous), TLS for ``mqtts://`` (the broker's certificate checked
    against ``ca_file``, or the system's CAs without one; its host name
    checked too), reconnecting after ``reconnect_s`` = (first, longest)
    seconds. Not connected yet: the caller sets its will and callbacks,
    then connects. The broker binds client ids to users
    (``use_username_as_clientid``), so ``client_id`` is only a hint."""
    import paho.mqtt.client as mqtt
    from paho.mqtt.enums import CallbackAPIVersion

    client = mqtt.Client(CallbackAPIVersion.VERSION2, client_id=client_id,
                         protocol=mqtt.MQTTv5)
    if credentials is not None:
        client.username_pw_set(credentials.username, credentials.password)
    if broker.tls:
        try:
            client.tls_set(ca_certs=None if ca_file is None else str(ca_file))
        except (OSError, ValueError) as exc:
            raise LeagueError(f"cannot use the CA file {ca_file}: {exc}") from None
    elif ca_file is not None:
        raise LeagueError("a CA file is for mqtts:// (TLS) brokers only")
    client.reconnect_delay_set(*reconnect_s)
    return client


__all__ = ["mqtt_client"]
