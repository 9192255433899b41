"""TLS material for one instance: a CA and a server certificate made with the openssl
CLI (EC P-256), and the server SSLContext (ALPN http/1.1 only, minimum TLS version as
kube-apiserver's --tls-min-version, client certificates verified against the CA when
given)."""
import os
import ssl
import subprocess

SANS = ["IP:10.250.0.1", "IP:127.0.0.1", "DNS:kubernetes", "DNS:kubernetes.default",
        "DNS:kubernetes.default.svc", "DNS:kubernetes.default.svc.cluster.local",
        "DNS:localhost"]


def _run(args, cwd):
    r = subprocess.run(args, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    if r.returncode != 0:
        raise RuntimeError("openssl failed (%s): %s" % (" ".join(args[:3]),
                                                        r.stdout.decode(errors="replace")))


def make_pki(pki_dir):
    """Creates ca.crt/ca.key/server.crt/server.key in pki_dir (once)."""
    os.makedirs(pki_dir, mode=0o700, exist_ok=True)
    if os.path.exists(os.path.join(pki_dir, "server.crt")):
        return
    _run(["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256",
          "-nodes", "-keyout", "ca.key", "-out", "ca.crt", "-days", "3650",
          "-subj", "/CN=kubesim-ca", "-addext", "basicConstraints=critical,CA:TRUE",
          "-addext", "keyUsage=critical,keyCertSign,cRLSign,digitalSignature"], pki_dir)
    # OpenSSL 3: req -x509 -CA signs the new server key with the CA in one step
    _run(["openssl", "req", "-x509", "-CA", "ca.crt", "-CAkey", "ca.key", "-newkey", "ec",
          "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-keyout", "server.key",
          "-out", "server.crt", "-days", "3650", "-subj", "/CN=kube-apiserver",
          "-addext", "subjectAltName=" + ",".join(SANS),
          "-addext", "extendedKeyUsage=serverAuth",
          "-addext", "keyUsage=critical,digitalSignature,keyEncipherment",
          "-addext", "basicConstraints=CA:FALSE"], pki_dir)


# config.TLS_MIN_VERSIONS (kube-apiserver's --tls-min-version names) -> ssl versions
TLS_VERSIONS = {"VersionTLS12": ssl.TLSVersion.TLSv1_2, "VersionTLS13": ssl.TLSVersion.TLSv1_3}


def server_context(pki_dir, min_version="VersionTLS12"):
    """min_version: a key of TLS_VERSIONS (checked by the command line)."""
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.minimum_version = TLS_VERSIONS[min_version]
    # like kube-apiserver's --client-ca-file: a client certificate is asked for, optional,
    # and verified against the CA when one is sent (a bad one fails the handshake)
    ctx.verify_mode = ssl.CERT_OPTIONAL
    ctx.load_verify_locations(os.path.join(pki_dir, "ca.crt"))
    ctx.load_cert_chain(os.path.join(pki_dir, "server.crt"), os.path.join(pki_dir, "server.key"))
    ctx.set_alpn_protocols(["http/1.1"])
    # like Go's crypto/tls (kube-apiserver): the client's cipher order decides, so a client
    # that puts ChaCha20-Poly1305 first (no AES hardware path, e.g. mbedTLS) gets it
    ctx.options &= ~ssl.OP_CIPHER_SERVER_PREFERENCE
    return ctx
