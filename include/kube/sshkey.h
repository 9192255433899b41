/* sshkey.h - Ed25519 SSH key pairs in OpenSSH's own formats: generation for the
 * per-job Secret <job>-ssh (one key pair serves as the users' identity and as the
 * workers' sshd host key), parsing of public-key lines and fingerprints for host
 * key pinning. OpenSSL EVP underneath; libssh2 1.10 and OpenSSH 9.2 accept it. */
#ifndef KUBE_SSHKEY_H
#define KUBE_SSHKEY_H

#include <stddef.h>

/* Generates an Ed25519 key pair: *private_openssh gets an unencrypted
 * "-----BEGIN OPENSSH PRIVATE KEY-----" file, *public_line gets
 * "ssh-ed25519 AAAA... comment\n" (comment may be NULL or ""; no newlines allowed).
 * Both newly allocated, caller frees. 0 ok, -1 with *errmsg. */
int kube_sshkey_generate_ed25519(char **private_openssh, char **public_line, const char *comment, char **errmsg);

/* Finds the first public key in one line of an authorized_keys, known_hosts or .pub
 * file (options or host patterns may precede "TYPE BASE64"); 1 found (*type and *blob
 * newly allocated), 0 no key on the line (blank, comment, @revoked...), -1 malformed. */
int kube_sshkey_parse_line(const char *line, size_t len, char **type, unsigned char **blob, size_t *blob_len);

/* OpenSSH-style fingerprint "SHA256:<base64 without padding>" of a key blob (newly
 * allocated, NULL on allocation failure). */
char *kube_sshkey_fingerprint(const unsigned char *blob, size_t blob_len);

#endif
