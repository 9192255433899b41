/* tls_ctx.c - an mbedTLS client configuration from a kube_config, with the same trust rules
 * as kubectl: only the configured CA (certificate-authority file or -data; the system store
 * only when none is configured), or no verification with insecure-skip-tls-verify; the
 * client certificate and key from file or -data; TLS 1.2 (what mbedTLS 2.28 offers; every
 * Kubernetes API server accepts it). An IP address as server name is checked against the
 * certificate's IP SANs here (mbedTLS 2.28 matches DNS names only). Every failure is one line
 * naming the file or field and mbedTLS's reason. */
#include "tls_conn.h"

#include <mbedtls/asn1.h>
#include <mbedtls/error.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <unistd.h>

#include "kube/util.h"

#define SYSTEM_CA_FILE "/etc/ssl/certs/ca-certificates.crt"
#define SYSTEM_CA_DIR "/etc/ssl/certs"
#define SAN_IP_TAG (MBEDTLS_ASN1_CONTEXT_SPECIFIC | 7) /* GeneralName iPAddress [7] */

const char *kube_tls_errstr(int ret, char *buf, size_t n)
{
    mbedtls_strerror(ret, buf, n);
    return buf;
}

const char *kube_tls_verify_str(uint32_t flags, char *buf, size_t n)
{
    if (mbedtls_x509_crt_verify_info(buf, n, "", flags) <= 0) snprintf(buf, n, "verification failed");
    for (char *p = buf; *p; p++) /* one line: the info lists one reason per line */
        if (*p == '\n') *p = p[1] ? ';' : '\0';
    return buf;
}

const char *kube_tls_ca_desc(const struct kube_config *cfg, char *buf, size_t n)
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

/* PEM parsers want the terminating NUL counted in the length: a NUL-terminated copy. */
static unsigned char *nul_copy(const char *data, size_t len)
{
    unsigned char *p = malloc(len + 1);
    if (p) {
        memcpy(p, data, len);
        p[len] = 0;
    }
    return p;
}

static int parse_certs(mbedtls_x509_crt *chain, const char *data, size_t len)
{
    unsigned char *p = nul_copy(data, len);
    int r = p ? mbedtls_x509_crt_parse(chain, p, len + 1) : MBEDTLS_ERR_X509_ALLOC_FAILED;
    free(p);
    return r;
}

/* The system store: Debian's bundle file, else every file in the directory. */
static int load_system_cas(mbedtls_x509_crt *ca)
{
    int r = access(SYSTEM_CA_FILE, R_OK) == 0 ? mbedtls_x509_crt_parse_file(ca, SYSTEM_CA_FILE)
                                              : mbedtls_x509_crt_parse_path(ca, SYSTEM_CA_DIR);
    return r >= 0 || ca->version ? 0 : r; /* > 0: some entries skipped; fine when one parsed */
}

/* Checks the leaf certificate's IP SANs against the expected address. */
static int verify_ip(void *arg, mbedtls_x509_crt *crt, int depth, uint32_t *flags)
{
    const struct kube_tls *t = arg;
    if (depth != 0 || !t->ip_len) return 0;
    for (const mbedtls_x509_sequence *s = &crt->subject_alt_names; s && s->buf.p; s = s->next)
        if (s->buf.tag == SAN_IP_TAG && s->buf.len == t->ip_len && !memcmp(s->buf.p, t->ip, t->ip_len)) return 0;
    *flags |= MBEDTLS_X509_BADCERT_CN_MISMATCH;
    return 0;
}

static int load_trust(struct kube_tls *t, const struct kube_config *cfg, char **errmsg)
{
    char e[200], ca[512];
    if (cfg->insecure) {
        mbedtls_ssl_conf_authmode(&t->conf, MBEDTLS_SSL_VERIFY_NONE);
        return 0;
    }
    t->verify = 1;
    int r = cfg->ca_file   ? mbedtls_x509_crt_parse_file(&t->ca, cfg->ca_file)
            : cfg->ca_data ? parse_certs(&t->ca, cfg->ca_data, cfg->ca_data_len)
                           : load_system_cas(&t->ca);
    if (r != 0 || !t->ca.version) {
        kube_set_err(errmsg, "TLS: cannot load %s (%s): %s", kube_tls_ca_desc(cfg, ca, sizeof ca), cfg->origin,
                     r < 0 ? kube_tls_errstr(r, e, sizeof e) : "not PEM certificates");
        return -1;
    }
    mbedtls_ssl_conf_authmode(&t->conf, MBEDTLS_SSL_VERIFY_REQUIRED);
    mbedtls_ssl_conf_ca_chain(&t->conf, &t->ca, NULL);
    mbedtls_ssl_conf_verify(&t->conf, verify_ip, t);
    return 0;
}

static int parse_key(mbedtls_pk_context *k, const char *data, size_t len)
{
    unsigned char *p = nul_copy(data, len);
    int r = p ? mbedtls_pk_parse_key(k, p, len + 1, NULL, 0) : MBEDTLS_ERR_PK_ALLOC_FAILED;
    if (p) {
        mbedtls_platform_zeroize(p, len);
        free(p);
    }
    return r;
}

static int load_identity(struct kube_tls *t, const struct kube_config *cfg, char **errmsg)
{
    int has_cert = cfg->cert_file || cfg->cert_data, has_key = cfg->key_file || cfg->key_data, r = 0;
    const char *what = NULL;
    if (!has_cert && !has_key) return 0;
    if (cfg->cert_file && (r = mbedtls_x509_crt_parse_file(&t->cert, cfg->cert_file)) != 0)
        what = cfg->cert_file;
    else if (!cfg->cert_file && cfg->cert_data && (r = parse_certs(&t->cert, cfg->cert_data, cfg->cert_data_len)) != 0)
        what = "client-certificate-data";
    else if (cfg->key_file && (r = mbedtls_pk_parse_keyfile(&t->key, cfg->key_file, NULL)) != 0)
        what = cfg->key_file;
    else if (!cfg->key_file && cfg->key_data && (r = parse_key(&t->key, cfg->key_data, cfg->key_data_len)) != 0)
        what = "client-key-data";
    else if (!has_cert || !has_key)
        what = has_cert ? "a client certificate without a key" : "a client key without a certificate";
    else if (mbedtls_pk_check_pair(&t->cert.pk, &t->key) != 0)
        what = cfg->key_file ? cfg->key_file : "client-key-data", r = 0;
    else if ((r = mbedtls_ssl_conf_own_cert(&t->conf, &t->cert, &t->key)) != 0)
        what = "the client certificate";
    if (what) {
        char e[200];
        kube_set_err(errmsg, "TLS: cannot use the client certificate/key (%s): %s: %s", cfg->origin, what,
                     r < 0 ? kube_tls_errstr(r, e, sizeof e) : r > 0 ? "not a PEM certificate" : "the key does not match the certificate (key mismatch)");
        return -1;
    }
    return 0;
}

/* ChaCha20-Poly1305 first: mbedTLS's AES-GCM runs byte by byte (~50 instructions per byte
 * of stdout here, 5.9 CPU-s per GB), its ChaCha20 at 3.6 CPU-s per GB; servers that honour
 * the client's order (Go's crypto/tls, so kube-apiserver) pick it. Then mbedTLS's defaults. */
static const mbedtls_ecp_group_id curves[] = {MBEDTLS_ECP_DP_CURVE25519, MBEDTLS_ECP_DP_SECP256R1,
                                              MBEDTLS_ECP_DP_SECP384R1, MBEDTLS_ECP_DP_SECP521R1, MBEDTLS_ECP_DP_NONE};
static int suites[128];
static pthread_once_t suites_once = PTHREAD_ONCE_INIT;

static void build_suites(void)
{
    size_t n = 0;
    suites[n++] = MBEDTLS_TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256;
    suites[n++] = MBEDTLS_TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256;
    for (const int *d = mbedtls_ssl_list_ciphersuites(); *d && n + 1 < sizeof suites / sizeof *suites; d++)
        if (*d != suites[0] && *d != suites[1]) suites[n++] = *d;
    suites[n] = 0;
}

static const int *ciphersuites(void)
{
    pthread_once(&suites_once, build_suites);
    return suites;
}

/* The DRBG's entropy straight from the kernel: mbedtls_entropy_func would also poll HAVEGE
 * (Debian enables it), ~1 M instructions and a 16 KB table per connection for nothing. */
static int kernel_entropy(void *arg, unsigned char *out, size_t len)
{
    (void)arg;
    while (len > 0) {
        ssize_t n = getrandom(out, len, 0);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return MBEDTLS_ERR_CTR_DRBG_ENTROPY_SOURCE_FAILED;
        out += n;
        len -= (size_t)n;
    }
    return 0;
}

int kube_tls_init(struct kube_tls *t, const struct kube_config *cfg, char **errmsg)
{
    static const char pers[] = "mpi-k8s";
    char e[200];
    memset(t, 0, sizeof *t);
    mbedtls_ssl_config_init(&t->conf);
    mbedtls_x509_crt_init(&t->ca);
    mbedtls_x509_crt_init(&t->cert);
    mbedtls_pk_init(&t->key);
    mbedtls_ctr_drbg_init(&t->drbg);
    int r = mbedtls_ctr_drbg_seed(&t->drbg, kernel_entropy, NULL, (const unsigned char *)pers,
                                  sizeof pers - 1);
    if (!r)
        r = mbedtls_ssl_config_defaults(&t->conf, MBEDTLS_SSL_IS_CLIENT, MBEDTLS_SSL_TRANSPORT_STREAM,
                                        MBEDTLS_SSL_PRESET_DEFAULT);
    if (r) {
        kube_set_err(errmsg, "TLS: cannot set up a client: %s", kube_tls_errstr(r, e, sizeof e));
        kube_tls_free(t);
        return -1;
    }
    mbedtls_ssl_conf_rng(&t->conf, mbedtls_ctr_drbg_random, &t->drbg);
    mbedtls_ssl_conf_min_version(&t->conf, MBEDTLS_SSL_MAJOR_VERSION_3, MBEDTLS_SSL_MINOR_VERSION_3);
    mbedtls_ssl_conf_ciphersuites(&t->conf, ciphersuites());
    mbedtls_ssl_conf_curves(&t->conf, curves); /* mbedTLS 2.28 lists P-521 first: 30 M instructions more */
    if (load_trust(t, cfg, errmsg) < 0 || load_identity(t, cfg, errmsg) < 0) {
        kube_tls_free(t);
        return -1;
    }
    return 0;
}

void kube_tls_free(struct kube_tls *t)
{
    mbedtls_ssl_config_free(&t->conf);
    mbedtls_x509_crt_free(&t->ca);
    mbedtls_x509_crt_free(&t->cert);
    mbedtls_pk_free(&t->key);
    mbedtls_ctr_drbg_free(&t->drbg);
    memset(t, 0, sizeof *t);
}
