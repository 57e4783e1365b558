"""How phones find the table: the page's URL (IP address and ``hostname.local``)
and a QR code of it, as inline SVG for the host console and as text for the
terminal at start-up; and the QR code of a player's own link. Everything is
computed locally (no internet)."""

from __future__ import annotations

import functools
import io
import socket

import segno


def lan_ip() -> str | None:
    """This machine's address on the local network, if it has one.

    A UDP socket "connected" to a private address makes the kernel pick the
    outgoing interface; nothing is sent."""
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    try:
        s.connect(("10.254.254.254", 1))
        ip = s.getsockname()[0]
    except OSError:
        ip = None
    finally:
        s.close()
    if ip and not ip.startswith("127."):
        return ip
    try:
        ip = socket.gethostbyname(socket.gethostname())
    except OSError:
        return None
    return None if ip.startswith("127.") else ip


def join_urls(host: str, port: int, scheme: str = "http") -> list[str]:
    """The URLs a phone can open, best first: the IP address, then
    ``hostname.local`` (mDNS: works where Avahi/Bonjour does); ``scheme``
    "https" for the table's HTTPS listener.

    >>> join_urls("192.168.1.20", 8443, "https")[0]
    'https://192.168.1.20:8443/'
    """
    suffix = "" if port == {"http": 80, "https": 443}[scheme] else f":{port}"
    if host in ("127.0.0.1", "localhost", "::1"):
        return [f"{scheme}://127.0.0.1{suffix}/"]
    urls = []
    ip = host if host not in ("0.0.0.0", "", "::") else lan_ip()
    if ip:
        urls.append(f"{scheme}://{ip}{suffix}/")
    name = socket.gethostname().split(".")[0]
    if name and name != "localhost":
        urls.append(f"{scheme}://{name}.local{suffix}/")
    return urls or [f"{scheme}://127.0.0.1{suffix}/"]


#: QR codes are kept per address: encoding one (segno trying its eight
#: masks) took 5-10 ms of CPU on a desktop core, and the console asked for
#: the join code and every player's code again at each load and each logged
#: event; drawing a kept code as SVG takes about 0.5 ms. The addresses are
#: few and change only when a link is made or the table moves, so a small
#: cache holds them all.
QR_CACHE = 64


@functools.lru_cache(maxsize=QR_CACHE)
def _code(url: str) -> segno.QRCode:
    """``url`` encoded (error correction M), once per address."""
    return segno.make(url, error="m")


def qr_svg(url: str, scale: int = 6) -> str:
    """The QR code of ``url`` as an inline ``<svg>`` element (dark on white,
    with the quiet zone, so a phone camera reads it in a dark theme too)."""
    return _code(url).svg_inline(scale=scale, dark="#000", light="#fff", svgclass="qr",
                                 omitsize=True)


def qr_uri(url: str) -> str:
    """The QR code of ``url`` as an SVG ``data:`` URI: a page shows it as an
    image, so no markup from the server goes into the page."""
    return _code(url).svg_data_uri(scale=5, dark="#000", light="#fff")


def qr_text(url: str) -> str:
    """The QR code of ``url`` for a terminal (compact, half-block characters)."""
    out = io.StringIO()
    _code(url).terminal(out=out, compact=True)
    return out.getvalue()
