"""TLS for SSL and SASL_SSL listeners: SSL contexts from PEM files (Kafka's ``ssl.keystore.type=PEM``)
or from a throw-away CA and broker certificate generated at start with ``cryptography``; the
principal Kafka's DefaultKafkaPrincipalBuilder gives a client certificate ("User:" + its subject's
distinguished name, RFC 2253)."""

from __future__ import annotations

import datetime
import ipaddress
import os
import ssl
import tempfile
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True, slots=True)
class TlsMaterial:
    """Paths of PEM files: the broker's certificate chain and key, and the CA clients should trust."""

    certfile: str
    keyfile: str
    cafile: str | None  # the CA that signed the broker (generated), or the truststore given
    generated: bool = False


def generate(hosts: list[str], directory: str | None = None) -> TlsMaterial:
    """A throw-away CA and a broker certificate for ``hosts`` (DNS names or IP addresses), written
    to ``directory`` (a new temporary one by default); also a client certificate signed by the
    same CA (``client.pem``, ``client.key``, CN=client) for ``ssl.client.auth`` tests."""
    try:
        from cryptography import x509
    except ModuleNotFoundError:
        raise RuntimeError(
            "an SSL or SASL_SSL listener without ssl.keystore.location generates its certificates with "
            "the cryptography package: pip install 'mockbroker[tls]'"
        ) from None
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

    directory = directory or tempfile.mkdtemp(prefix="mockbroker-tls-")
    now = datetime.datetime.now(datetime.UTC)
    start, end = now - datetime.timedelta(days=1), now + datetime.timedelta(days=365)

    def key() -> ec.EllipticCurvePrivateKey:
        return ec.generate_private_key(ec.SECP256R1())

    def name(cn: str) -> x509.Name:
        return x509.Name([x509.NameAttribute(NameOID.ORGANIZATION_NAME, "mockbroker"), x509.NameAttribute(NameOID.COMMON_NAME, cn)])

    ca_key = key()
    ca_name = name("mockbroker test CA")
    ca = (
        x509.CertificateBuilder()
        .subject_name(ca_name)
        .issuer_name(ca_name)
        .public_key(ca_key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(start)
        .not_valid_after(end)
        .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
        .add_extension(x509.KeyUsage(False, False, False, False, False, True, True, False, False), critical=True)
        .sign(ca_key, hashes.SHA256())
    )

    def leaf(cn: str, sans: list[x509.GeneralName], usage: x509.ObjectIdentifier) -> tuple[Any, Any]:
        leaf_key = key()
        builder = (
            x509.CertificateBuilder()
            .subject_name(name(cn))
            .issuer_name(ca_name)
            .public_key(leaf_key.public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(start)
            .not_valid_after(end)
            .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
            .add_extension(x509.ExtendedKeyUsage([usage]), critical=False)
        )
        if sans:
            builder = builder.add_extension(x509.SubjectAlternativeName(sans), critical=False)
        return builder.sign(ca_key, hashes.SHA256()), leaf_key

    sans: list[x509.GeneralName] = []
    for host in dict.fromkeys([*hosts, "localhost", "127.0.0.1"]):
        try:
            sans.append(x509.IPAddress(ipaddress.ip_address(host)))
        except ValueError:
            sans.append(x509.DNSName(host))
    broker, broker_key = leaf("mockbroker", sans, ExtendedKeyUsageOID.SERVER_AUTH)
    client, client_key = leaf("client", [], ExtendedKeyUsageOID.CLIENT_AUTH)

    def write(filename: str, data: bytes) -> str:
        path = os.path.join(directory, filename)
        with open(path, "wb") as f:
            f.write(data)
        return path

    def pem_key(k: Any) -> bytes:
        return bytes(k.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()))

    cafile = write("ca.pem", ca.public_bytes(serialization.Encoding.PEM))
    certfile = write("broker.pem", broker.public_bytes(serialization.Encoding.PEM))
    keyfile = write("broker.key", pem_key(broker_key))
    write("client.pem", client.public_bytes(serialization.Encoding.PEM))
    write("client.key", pem_key(client_key))
    return TlsMaterial(certfile, keyfile, cafile, generated=True)


CLIENT_AUTH = {"none": ssl.CERT_NONE, "requested": ssl.CERT_OPTIONAL, "required": ssl.CERT_REQUIRED}


def server_context(material: TlsMaterial, client_auth: str, truststore: str | None, key_password: str | None) -> ssl.SSLContext:
    """The listener's SSLContext: the broker's chain and key; with ``ssl.client.auth`` requested
    or required, client certificates checked against the truststore (else the generated CA)."""
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.minimum_version = ssl.TLSVersion.TLSv1_2
    context.load_cert_chain(material.certfile, material.keyfile, password=key_password)
    context.verify_mode = CLIENT_AUTH[client_auth]
    if client_auth != "none":
        cafile = truststore or material.cafile
        if cafile is None:
            raise ValueError("ssl.client.auth needs ssl.truststore.location (the CA of the client certificates)")
        context.load_verify_locations(cafile)
    return context


_RFC2253_NAMES = {"commonName": "CN", "organizationName": "O", "organizationalUnitName": "OU", "countryName": "C",
                  "localityName": "L", "stateOrProvinceName": "ST", "streetAddress": "STREET", "domainComponent": "DC",
                  "userId": "UID"}


def certificate_principal(peercert: dict[str, Any] | None) -> str:
    """DefaultKafkaPrincipalBuilder for SSL: "User:" + the subject's distinguished name (RFC 2253:
    last RDN first), or User:ANONYMOUS without a client certificate."""
    if not peercert or not peercert.get("subject"):
        return "User:ANONYMOUS"
    rdns = []
    for rdn in reversed(peercert["subject"]):
        rdns.append("+".join(f"{_RFC2253_NAMES.get(k, k)}={v}" for k, v in rdn))
    return "User:" + ",".join(rdns)
