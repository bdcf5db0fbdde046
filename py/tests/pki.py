"""Certificates for the TLS tests, generated per run with `cryptography`:
a CA, server certificates naming 127.0.0.1 (IP SAN), client certificates
(the common name is the etcd user when no password is given), a second CA
that signs nothing the servers trust, and an expired client certificate.
Private keys are written mode 600, as the clients require.

Run as a script (`python pki.py DIR`) it writes the files the C tests use."""

import datetime
import ipaddress
import os
import sys

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

DAY = datetime.timedelta(days=1)


def _name(common_name):
    if common_name is None:
        return x509.Name([x509.NameAttribute(NameOID.ORGANIZATION_NAME, "shardring tests")])
    return x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, common_name)])


def _write_key(path, key):
    with open(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600), "wb") as out:
        out.write(key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                    serialization.NoEncryption()))


class Authority:
    """A CA in `directory`: `cert` is its PEM file."""

    def __init__(self, directory, name):
        self.directory, self.name = directory, name
        self.key = ec.generate_private_key(ec.SECP256R1())
        now = datetime.datetime.now(datetime.timezone.utc)
        self.certificate = (
            x509.CertificateBuilder().subject_name(_name(name)).issuer_name(_name(name))
            .public_key(self.key.public_key()).serial_number(x509.random_serial_number())
            .not_valid_before(now - DAY).not_valid_after(now + DAY)
            .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
            .add_extension(x509.KeyUsage(digital_signature=True, key_cert_sign=True, crl_sign=True,
                                         content_commitment=False, key_encipherment=False, data_encipherment=False,
                                         key_agreement=False, encipher_only=False, decipher_only=False), critical=True)
            .sign(self.key, hashes.SHA256()))
        self.cert = os.path.join(directory, f"{name}.crt")
        with open(self.cert, "wb") as out:
            out.write(self.certificate.public_bytes(serialization.Encoding.PEM))

    def issue(self, name, common_name, server=False, expired=False):
        """Writes `name.crt` and `name.key` (mode 600) signed by this CA and
        returns their paths. A server certificate names 127.0.0.1 and
        localhost; every certificate may authenticate a client."""
        key = ec.generate_private_key(ec.SECP256R1())
        now = datetime.datetime.now(datetime.timezone.utc)
        start, end = (now - 3 * DAY, now - 2 * DAY) if expired else (now - DAY, now + DAY)
        usages = [ExtendedKeyUsageOID.CLIENT_AUTH] + ([ExtendedKeyUsageOID.SERVER_AUTH] if server else [])
        builder = (
            x509.CertificateBuilder().subject_name(_name(common_name)).issuer_name(self.certificate.subject)
            .public_key(key.public_key()).serial_number(x509.random_serial_number())
            .not_valid_before(start).not_valid_after(end)
            .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
            .add_extension(x509.ExtendedKeyUsage(usages), critical=False))
        if server:
            builder = builder.add_extension(x509.SubjectAlternativeName(
                [x509.IPAddress(ipaddress.ip_address("127.0.0.1")), x509.DNSName("localhost")]), critical=False)
        certificate = builder.sign(self.key, hashes.SHA256())
        cert, key_path = os.path.join(self.directory, f"{name}.crt"), os.path.join(self.directory, f"{name}.key")
        with open(cert, "wb") as out:
            out.write(certificate.public_bytes(serialization.Encoding.PEM))
        _write_key(key_path, key)
        return cert, key_path


class Pki:
    """Everything the TLS tests need, in `directory`: `ca` (trusted by the
    servers and clients), `server` (cert, key), `root` (a client certificate
    with CN root, for etcdctl), `client` (CN shardring-client), `other`
    (a client certificate from `other_ca`, which nobody trusts),
    `expired` (from `ca`, expired yesterday) and `anonymous` (no common
    name)."""

    def __init__(self, directory):
        self.directory = str(directory)
        os.makedirs(self.directory, exist_ok=True)
        self.ca = Authority(self.directory, "ca")
        self.other_ca = Authority(self.directory, "other-ca")
        self.server = self.ca.issue("server", "127.0.0.1", server=True)
        self.root = self.ca.issue("root", "root")
        self.client = self.ca.issue("client", "shardring-client")
        self.other = self.other_ca.issue("other", "shardring-client")
        self.expired = self.ca.issue("expired", "shardring-client", expired=True)
        # No common name: etcd's JSON gateway refuses a client certificate with one.
        self.anonymous = self.ca.issue("anonymous", None)


if __name__ == "__main__":
    Pki(sys.argv[1])
