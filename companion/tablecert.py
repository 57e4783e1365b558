"""The table's own certificate authority and its server certificate (HTTPS on
the LAN, ``companion serve --https``; docs/web.md, "HTTPS on the LAN").

A phone opening the table at ``http://<LAN address>/`` is not in a secure
context, so it has no Screen Wake Lock, no service worker and no camera.
No public authority will sign a certificate for a LAN address, so the table
is its own: at first start :class:`TableCA` makes a certificate authority
(an ECDSA P-256 key, ten years) and keeps it in the folder beside the store
(``<db>-tls/``: ``ca.crt`` public, ``ca.key`` mode 0600, never served), and
signs a server certificate for the machine's names: every LAN address as an
IP SubjectAltName, the hostname and ``<hostname>.local`` as DNS names. A
phone trusts the CA once (its certificate is served on plain HTTP at
``/ca``); every server certificate the table makes later is then trusted
too, so a new address needs no new step on the phones.

The server certificate is made again when it no longer covers the names the
table is reached at (a new DHCP lease), when it has less than
:data:`RENEW_BEFORE_DAYS` left, or when it was not signed by this CA. It is
valid :data:`SERVER_DAYS` days: under the 825 days iOS accepts from a CA a
user installed, and under the 398 of the public web.

>>> ca = TableCA.at(Path(tempfile.mkdtemp()))
>>> issued = ca.server_cert(["192.168.1.20"], ["pi", "pi.local"])
>>> sorted(ca.names_of(issued.cert))
['192.168.1.20', 'pi', 'pi.local']
"""

from __future__ import annotations

import datetime
import hashlib
import ipaddress
import os
import socket
import tempfile  # noqa: F401 - the doctest's
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable

#: The CA's lifetime: phones trust it once for years.
CA_DAYS = 3650
#: A server certificate's lifetime (iOS accepts at most 825 days from a
#: user-installed CA; 397 stays under the public web's 398 as well).
SERVER_DAYS = 397
#: A server certificate with less than this left is made again at start.
RENEW_BEFORE_DAYS = 30
#: Backdating, so a phone whose clock is a little behind accepts a new one.
BACKDATE = datetime.timedelta(hours=1)


class CertError(ValueError):
    """The table's certificate files cannot be made or read (says why)."""


@dataclass(frozen=True)
class Issued:
    """A server certificate on disk: its files, and whether it was just made."""

    cert_file: Path
    key_file: Path
    cert: object          # cryptography's x509.Certificate
    made: bool


def tls_dir_for(db_path) -> Path:
    """The folder of the table's certificates: ``<db>-tls`` beside the store."""
    return Path(f"{db_path}-tls")


def machine_names(bind_host: str = "0.0.0.0", lan: str | None = None) -> tuple[list, list]:
    """The (IP addresses, DNS names) this machine is reached at on the LAN:
    the address it listens on (or, listening on every address, its LAN
    address ``lan`` and the others its hostname resolves to), 127.0.0.1,
    and the hostname with ``<hostname>.local``."""
    ips: list[str] = []
    if bind_host not in ("0.0.0.0", "", "::"):
        ips.append(bind_host)
    else:
        if lan:
            ips.append(lan)
        try:
            ips += socket.gethostbyname_ex(socket.gethostname())[2]
        except OSError:
            pass
    ips.append("127.0.0.1")
    name = socket.gethostname().split(".")[0]
    dns = [name, f"{name}.local"] if name and name != "localhost" else []
    dns.append("localhost")
    return list(dict.fromkeys(ips)), list(dict.fromkeys(dns))


def spki_sha256(cert) -> str:
    """base64 SHA-256 of the certificate's public key (chromium's
    ``--ignore-certificate-errors-spki-list``, HPKP's pin)."""
    import base64

    from cryptography.hazmat.primitives import serialization

    der = cert.public_key().public_bytes(serialization.Encoding.DER,
                                         serialization.PublicFormat.SubjectPublicKeyInfo)
    return base64.b64encode(hashlib.sha256(der).digest()).decode()


def fingerprint(cert) -> str:
    """The certificate's SHA-256 fingerprint as phones show it (AB:CD:...)."""
    from cryptography.hazmat.primitives import hashes

    return ":".join(f"{b:02X}" for b in cert.fingerprint(hashes.SHA256()))


class TableCA:
    """The table's certificate authority in ``folder`` (made at first use)."""

    def __init__(self, folder: Path, key, cert):
        self.folder, self.key, self.cert = folder, key, cert

    @property
    def cert_file(self) -> Path:
        return self.folder / "ca.crt"

    @classmethod
    def at(cls, folder, now: datetime.datetime | None = None) -> "TableCA":
        """The CA kept in ``folder``, made there (mode 0700, the key 0600) if
        it has none. CertError if its files cannot be read or written."""
        folder = Path(folder)
        key_file, cert_file = folder / "ca.key", folder / "ca.crt"
        try:
            folder.mkdir(mode=0o700, parents=True, exist_ok=True)
            if key_file.exists() and cert_file.exists():
                _private(key_file)
                return cls(folder, _load_key(key_file), _load_cert(cert_file))
        except OSError as exc:
            raise CertError(f"cannot read the table's CA in {folder}: "
                            f"{exc.strerror or exc}") from None
        key, cert = _make_ca(now or _now())
        _write_pair(key_file, cert_file, key, cert, f"the table's CA in {folder}")
        return cls(folder, key, cert)

    def pem(self) -> bytes:
        """The CA's certificate (public: what a phone installs)."""
        return _cert_pem(self.cert)

    @staticmethod
    def names_of(cert) -> set[str]:
        """The IP addresses and DNS names a certificate is for."""
        from cryptography import x509

        try:
            san = cert.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
        except x509.ExtensionNotFound:
            return set()
        return ({str(ip) for ip in san.get_values_for_type(x509.IPAddress)}
                | set(san.get_values_for_type(x509.DNSName)))

    def covers(self, cert, ips: Iterable[str], dns: Iterable[str],
               now: datetime.datetime | None = None) -> bool:
        """``cert`` was signed by this CA, is for every one of ``ips`` and
        ``dns``, and has more than :data:`RENEW_BEFORE_DAYS` left."""
        now = now or _now()
        if cert.issuer != self.cert.subject or not self._signed(cert):
            return False
        if cert.not_valid_after_utc - now < datetime.timedelta(days=RENEW_BEFORE_DAYS):
            return False
        return set(ips) | set(dns) <= self.names_of(cert)

    def _signed(self, cert) -> bool:
        from cryptography.exceptions import InvalidSignature

        try:
            cert.verify_directly_issued_by(self.cert)
        except (InvalidSignature, ValueError, TypeError):
            return False
        return True

    def server_cert(self, ips: Iterable[str], dns: Iterable[str],
                    now: datetime.datetime | None = None) -> Issued:
        """The server certificate for ``ips`` and ``dns`` (``server.crt``,
        ``server.key`` mode 0600): the one on disk if it :meth:`covers`
        them, else a new one written over it."""
        ips, dns = list(ips), list(dns)
        for ip in ips:
            ipaddress.ip_address(ip)            # ValueError on a name that is not an address
        now = now or _now()
        cert_file, key_file = self.folder / "server.crt", self.folder / "server.key"
        try:
            if cert_file.exists() and key_file.exists():
                old = _load_cert(cert_file)
                if self.covers(old, ips, dns, now):
                    _private(key_file)
                    return Issued(cert_file, key_file, old, made=False)
        except (OSError, ValueError):
            pass                                # unreadable: made again below
        key, cert = self._issue(ips, dns, now)
        _write_pair(key_file, cert_file, key, cert, f"the table's certificate in {self.folder}")
        return Issued(cert_file, key_file, cert, made=True)

    def _issue(self, ips: list[str], dns: list[str], now: datetime.datetime):
        from cryptography import x509
        from cryptography.hazmat.primitives import hashes
        from cryptography.hazmat.primitives.asymmetric import ec
        from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

        key = ec.generate_private_key(ec.SECP256R1())
        names = [x509.IPAddress(ipaddress.ip_address(ip)) for ip in ips]
        names += [x509.DNSName(d) for d in dns]
        common = (dns or ips or ["table"])[0]
        cert = (x509.CertificateBuilder()
                .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, common)]))
                .issuer_name(self.cert.subject)
                .public_key(key.public_key())
                .serial_number(x509.random_serial_number())
                .not_valid_before(now - BACKDATE)
                .not_valid_after(now + datetime.timedelta(days=SERVER_DAYS))
                .add_extension(x509.SubjectAlternativeName(names), critical=False)
                .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
                .add_extension(_key_usage(signing=True), critical=True)
                .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH]),
                               critical=False)
                .add_extension(x509.SubjectKeyIdentifier.from_public_key(key.public_key()),
                               critical=False)
                .add_extension(x509.AuthorityKeyIdentifier.from_issuer_public_key(
                    self.key.public_key()), critical=False)
                .sign(self.key, hashes.SHA256()))
        return key, cert


def _make_ca(now: datetime.datetime):
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    key = ec.generate_private_key(ec.SECP256R1())
    host = socket.gethostname().split(".")[0] or "table"
    name = x509.Name([
        x509.NameAttribute(NameOID.ORGANIZATION_NAME, "Tabletop Companion"),
        x509.NameAttribute(NameOID.COMMON_NAME, f"Tabletop Companion table CA ({host})")])
    cert = (x509.CertificateBuilder()
            .subject_name(name).issuer_name(name)
            .public_key(key.public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(now - BACKDATE)
            .not_valid_after(now + datetime.timedelta(days=CA_DAYS))
            .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
            .add_extension(_key_usage(signing=False), critical=True)
            .add_extension(x509.SubjectKeyIdentifier.from_public_key(key.public_key()),
                           critical=False)
            .sign(key, hashes.SHA256()))
    return key, cert


def _key_usage(signing: bool):
    """A server's (a signature in the handshake) or the CA's (signing certificates)."""
    from cryptography import x509

    return x509.KeyUsage(digital_signature=signing, content_commitment=False,
                         key_encipherment=False, data_encipherment=False,
                         key_agreement=False, key_cert_sign=not signing, crl_sign=not signing,
                         encipher_only=False, decipher_only=False)


def _now() -> datetime.datetime:
    return datetime.datetime.now(datetime.timezone.utc)


def _key_pem(key) -> bytes:
    from cryptography.hazmat.primitives import serialization

    return key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                             serialization.NoEncryption())


def _cert_pem(cert) -> bytes:
    from cryptography.hazmat.primitives import serialization

    return cert.public_bytes(serialization.Encoding.PEM)


def _load_key(path: Path):
    from cryptography.hazmat.primitives import serialization

    try:
        return serialization.load_pem_private_key(path.read_bytes(), password=None)
    except (ValueError, TypeError) as exc:
        raise CertError(f"{path} is not a key the table can use ({exc}); move the "
                        f"folder aside to make a new CA (phones then trust it again)") from None


def _load_cert(path: Path):
    from cryptography import x509

    try:
        return x509.load_pem_x509_certificate(path.read_bytes())
    except ValueError as exc:
        raise CertError(f"{path} is not a certificate ({exc})") from None


def _private(path: Path) -> None:
    """A key file readable by its owner only, whatever made it."""
    if path.stat().st_mode & 0o077:
        os.chmod(path, 0o600)


def _write_pair(key_file: Path, cert_file: Path, key, cert, what: str) -> None:
    """A key (0600) and its certificate (0644) written; CertError naming
    ``what`` if the disk refuses."""
    try:
        _write(key_file, _key_pem(key), 0o600)
        _write(cert_file, _cert_pem(cert), 0o644)
    except OSError as exc:
        raise CertError(f"cannot write {what}: {exc.strerror or exc}") from None


def _write(path: Path, data: bytes, mode: int) -> None:
    """Write ``data`` to ``path`` whole (a temporary file renamed over it),
    with ``mode`` from its creation: a key is never readable by others."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, mode)
    with os.fdopen(fd, "wb") as fh:
        fh.write(data)
        fh.flush()
        os.fsync(fh.fileno())
    os.chmod(tmp, mode)
    os.replace(tmp, path)


__all__ = ["CA_DAYS", "CertError", "Issued", "RENEW_BEFORE_DAYS", "SERVER_DAYS", "TableCA",
           "fingerprint", "machine_names", "spki_sha256", "tls_dir_for"]
