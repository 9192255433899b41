/* tls_ctx.c - an OpenSSL client context for the exec connection from a kube_config, with the
 * same trust rules as the libcurl client (curl_setup.c): TLS 1.2 or 1.3; only the configured CA
 * (certificate-authority file or -data; the system store only when none is configured, as
 * kubectl does), or no verification with insecure-skip-tls-verify; the client certificate
 * and key from file or -data, or an exec plugin's. Both are read during the handshake, when
 * it needs them: the trust anchors when the server presents its certificate, the client
 * certificate and key when the server asks for one. A resumed session needs neither, and
 * skips their 8.4 M instructions of OpenSSL's decoding (docs/rsh.md). Every failure is one
 * line naming the file or field and OpenSSL's reason. */
#include "tls_conn.h"

#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "kube/util.h"

/* OpenSSL's oldest queued error as text (or fallback), and the queue cleared. */
const char *Kube_tls_errstr(char *buf, size_t n, const char *fallback)
{
    unsigned long e = ERR_peek_last_error();
    if (e)
        ERR_error_string_n(e, buf, n);
    else
        snprintf(buf, n, "%s", fallback);
    ERR_clear_error();
    return buf;
}

/* Names the trust anchor, for messages. */
const char *Kube_tls_ca_desc(const struct kube_config *cfg, char *buf, size_t n)
{
    if (!cfg)
        snprintf(buf, n, "the configured CA");
    else if (cfg->ca_file)
        snprintf(buf, n, "CA file %s", cfg->ca_file);
    else if (cfg->ca_data)
        snprintf(buf, n, "certificate-authority-data");
    else
        snprintf(buf, n, "the system trust store (no CA configured)");
    return buf;
}

/* Adds every PEM certificate in data to the trust store; -1 when none. */
static int add_ca_data(X509_STORE *st, const char *data, size_t len)
{
    BIO *b = BIO_new_mem_buf(data, (int)len);
    STACK_OF(X509_INFO) *infos = b ? PEM_X509_INFO_read_bio(b, NULL, NULL, NULL) : NULL;
    int n = 0;
    for (int i = 0; infos && i < sk_X509_INFO_num(infos); i++) {
        X509_INFO *xi = sk_X509_INFO_value(infos, i);
        if (xi->x509 && X509_STORE_add_cert(st, xi->x509) == 1)
            n++;
    }
    sk_X509_INFO_pop_free(infos, X509_INFO_free);
    BIO_free(b);
    return n > 0 ? 0 : -1;
}

static int load_trust(X509_STORE *st, const struct kube_config *cfg, char **errmsg)
{
    char e[256], ca[512];
    int ok = cfg->ca_file   ? X509_STORE_load_locations(st, cfg->ca_file, NULL) == 1
             : cfg->ca_data ? add_ca_data(st, cfg->ca_data, cfg->ca_data_len) == 0
                            : X509_STORE_set_default_paths(st) == 1;
    if (!ok)
        return kube_set_err(errmsg, "TLS: cannot load %s (%s): %s", Kube_tls_ca_desc(cfg, ca, sizeof ca), cfg->origin,
                            Kube_tls_errstr(e, sizeof e, "no PEM certificate found"));
    return 0;
}

/* OpenSSL's verification of the server's certificate chain, the trust anchors loaded first
 * (once per context). A resumed session presents no certificate, so this never runs then. */
static int verify_lazy(X509_STORE_CTX *x, void *arg)
{
    struct kube_tls_lazy *z = arg;
    if (!z->trust_loaded) {
        if (!z->cfg || load_trust(X509_STORE_CTX_get0_store(x), z->cfg, &z->err) < 0) {
            X509_STORE_CTX_set_error(x, X509_V_ERR_UNABLE_TO_GET_ISSUER_CERT_LOCALLY);
            return 0;
        }
        z->trust_loaded = 1;
    }
    return X509_verify_cert(x);
}

/* The client certificate chain from PEM bytes: the first is the leaf, the rest its chain. */
static int use_cert_data(SSL *ssl, const char *data, size_t len)
{
    BIO *b = BIO_new_mem_buf(data, (int)len);
    X509 *leaf = b ? PEM_read_bio_X509(b, NULL, NULL, NULL) : NULL;
    int ok = leaf && SSL_use_certificate(ssl, leaf) == 1;
    X509_free(leaf);
    for (X509 *x; ok && (x = PEM_read_bio_X509(b, NULL, NULL, NULL)) != NULL;)
        if (SSL_add0_chain_cert(ssl, x) != 1) {
            X509_free(x);
            ok = 0;
        }
    ERR_clear_error(); /* the loop ends on "no start line" */
    BIO_free(b);
    return ok ? 0 : -1;
}

static int use_key_data(SSL *ssl, const char *data, size_t len)
{
    BIO *b = BIO_new_mem_buf(data, (int)len);
    EVP_PKEY *k = b ? PEM_read_bio_PrivateKey(b, NULL, NULL, NULL) : NULL;
    int ok = k && SSL_use_PrivateKey(ssl, k) == 1;
    EVP_PKEY_free(k);
    BIO_free(b);
    return ok ? 0 : -1;
}

static int load_identity(SSL *ssl, const struct kube_config *cfg, const struct kube_credential *cred, char **errmsg)
{
    char e[256];
    const char *what = NULL;
    if (cred && cred->cert && cred->key) { /* the exec plugin's certificate */
        if (use_cert_data(ssl, cred->cert, cred->cert_len) < 0)
            what = "the exec plugin's clientCertificateData";
        else if (use_key_data(ssl, cred->key, cred->key_len) < 0)
            what = "the exec plugin's clientKeyData";
        else if (SSL_check_private_key(ssl) != 1)
            what = "the exec plugin's client key (it does not match the certificate)";
    } else if (cfg->cert_file && SSL_use_certificate_chain_file(ssl, cfg->cert_file) != 1)
        what = cfg->cert_file;
    else if (!cfg->cert_file && cfg->cert_data && use_cert_data(ssl, cfg->cert_data, cfg->cert_data_len) < 0)
        what = "client-certificate-data";
    else if (cfg->key_file && SSL_use_PrivateKey_file(ssl, cfg->key_file, SSL_FILETYPE_PEM) != 1)
        what = cfg->key_file;
    else if (!cfg->key_file && cfg->key_data && use_key_data(ssl, cfg->key_data, cfg->key_data_len) < 0)
        what = "client-key-data";
    else if ((cfg->cert_file || cfg->cert_data) && (cfg->key_file || cfg->key_data) && SSL_check_private_key(ssl) != 1)
        what = "the client key (it does not match the certificate)";
    if (what)
        return kube_set_err(errmsg, "TLS: cannot use the client certificate/key (%s): %s: %s", cfg->origin, what,
                            Kube_tls_errstr(e, sizeof e, "not a PEM certificate or key"));
    return 0;
}

/* The server asked for a client certificate (a full handshake; a resumed one never asks):
 * the configured certificate and key, read now. 0 aborts the handshake (z->err says why). */
static int identity_lazy(SSL *ssl, void *arg)
{
    struct kube_tls_lazy *z = arg;
    if (!z->cfg) {
        kube_set_err(&z->err, "TLS: the server asked for a client certificate after the handshake");
        return 0;
    }
    return load_identity(ssl, z->cfg, z->cred, &z->err) == 0;
}

/* The exec connection ignores the system's openssl.cnf, as Go's crypto/tls (kubectl) does:
 * mpi-rsh's bundled libssl runs in users' images, whose OpenSSL configuration may name
 * providers or policies that do not match it; and reading it cost 1.7 M of mpi-rsh's 23 M
 * instructions per call (callgrind). No atexit cleanup either: freeing OpenSSL's tables as
 * the process ends cost 1.4 M of a resumed call's 22.2 M, and the kernel frees them anyway
 * (they stay reachable: valgrind reports no leak). */
static void init_once(void) { OPENSSL_init_ssl(OPENSSL_INIT_NO_LOAD_CONFIG | OPENSSL_INIT_NO_ATEXIT, NULL); }

void Kube_openssl_init(void)
{
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    pthread_once(&once, init_once);
}

SSL_CTX *Kube_tls_ctx_new(struct kube_tls_lazy *z, char **errmsg)
{
    Kube_openssl_init();
    SSL_CTX *ctx = SSL_CTX_new(TLS_client_method());
    if (!ctx) {
        char e[256];
        kube_set_err(errmsg, "TLS: cannot create a context: %s", Kube_tls_errstr(e, sizeof e, "unknown error"));
        return NULL;
    }
    SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION);
    /* exec_loop retries a partial send with the queue's current head, which may have grown */
    SSL_CTX_set_mode(ctx, SSL_MODE_ENABLE_PARTIAL_WRITE | SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER);
    Kube_tls_session_setup(ctx);
    const struct kube_config *cfg = z->cfg;
    if (cfg->insecure) {
        SSL_CTX_set_verify(ctx, SSL_VERIFY_NONE, NULL);
    } else {
        SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER, NULL);
        SSL_CTX_set_cert_verify_callback(ctx, verify_lazy, z);
    }
    if ((z->cred && z->cred->cert && z->cred->key) || cfg->cert_file || cfg->cert_data || cfg->key_file || cfg->key_data)
        SSL_CTX_set_cert_cb(ctx, identity_lazy, z);
    return ctx;
}
