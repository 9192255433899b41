/* ssh_fixture.h - shared by the SSH unit tests: a real OpenSSH sshd on 127.0.0.1 at a
 * free high port, in a private temp dir, whose host key and authorized key are one
 * Ed25519 key made by kube_sshkey_generate_ed25519 (as the job's Secret is), plus
 * small file helpers. Never touches port 22 or the system sshd; killed by PID. */
#ifndef SSH_FIXTURE_H
#define SSH_FIXTURE_H

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "kube/sshkey.h"

#define FX_FN static __attribute__((unused))

struct sshd_fixture {
    char dir[64];     /* temp dir */
    char keydir[128]; /* the "Secret" dir: ssh-privatekey, ssh-publickey, authorized_keys */
    char *priv, *pub; /* the key pair */
    int port;
    pid_t pid;
};

FX_FN void fx_die(const char *what)
{
    fprintf(stderr, "ssh fixture: %s: %s\n", what, strerror(errno));
    exit(1);
}

FX_FN void fx_write(const char *path, const char *text, mode_t mode)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode);
    size_t n = strlen(text);
    if (fd < 0 || write(fd, text, n) != (ssize_t)n || close(fd) != 0)
        fx_die(path);
}

/* Reads a whole (small or large) file; caller frees; *len gets its size. */
FX_FN char *fx_read(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    char *buf = NULL;
    size_t cap = 0, n = 0, r;
    if (!f)
        fx_die(path);
    do {
        if (n + 65536 + 1 > cap) {
            cap = (n + 65536 + 1) * 2;
            buf = realloc(buf, cap);
            if (!buf)
                fx_die("realloc");
        }
        r = fread(buf + n, 1, cap - n - 1, f);
        n += r;
    } while (r > 0);
    fclose(f);
    buf[n] = '\0';
    if (len)
        *len = n;
    return buf;
}

FX_FN int fx_free_port(void)
{
    struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
    socklen_t al = sizeof(a);
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    if (fd < 0 || bind(fd, (struct sockaddr *)&a, sizeof(a)) < 0 || getsockname(fd, (struct sockaddr *)&a, &al) < 0)
        fx_die("free port");
    close(fd);
    return ntohs(a.sin_port);
}

FX_FN int fx_port_open(int port)
{
    struct sockaddr_in a = { .sin_family = AF_INET,
                             .sin_addr.s_addr = htonl(INADDR_LOOPBACK),
                             .sin_port = htons((uint16_t)port) };
    int fd = socket(AF_INET, SOCK_STREAM, 0), ok;
    if (fd < 0)
        fx_die("socket");
    ok = connect(fd, (struct sockaddr *)&a, sizeof(a)) == 0;
    close(fd);
    return ok;
}

/* Writes a key dir holding the pair priv/pub (pinned key and authorized key = pub). */
FX_FN void fx_keydir(const char *dir, const char *priv, const char *pin, const char *authorized)
{
    char p[256];
    if (mkdir(dir, 0700) < 0 && errno != EEXIST)
        fx_die(dir);
    snprintf(p, sizeof(p), "%s/ssh-privatekey", dir);
    fx_write(p, priv, 0600);
    snprintf(p, sizeof(p), "%s/ssh-publickey", dir);
    fx_write(p, pin, 0644);
    snprintf(p, sizeof(p), "%s/authorized_keys", dir);
    fx_write(p, authorized, 0644);
}

/* Starts sshd; returns 0, or -1 when OpenSSH's sshd is not installed (tests skip). */
FX_FN int fx_start(struct sshd_fixture *fx)
{
    char cfg[128], log[128], text[1024], *err = NULL;
    memset(fx, 0, sizeof(*fx));
    if (access("/usr/sbin/sshd", X_OK) != 0)
        return -1;
    strcpy(fx->dir, "/tmp/ssh-unit-XXXXXX");
    if (!mkdtemp(fx->dir))
        fx_die("mkdtemp");
    if (kube_sshkey_generate_ed25519(&fx->priv, &fx->pub, "unit@test", &err) != 0)
        fx_die(err);
    snprintf(fx->keydir, sizeof(fx->keydir), "%s/keys", fx->dir);
    fx_keydir(fx->keydir, fx->priv, fx->pub, fx->pub);
    if (geteuid() == 0 && mkdir("/run/sshd", 0755) < 0 && errno != EEXIST)
        fx_die("/run/sshd");
    fx->port = fx_free_port();
    snprintf(cfg, sizeof(cfg), "%s/sshd_config", fx->dir);
    snprintf(log, sizeof(log), "%s/sshd.log", fx->dir);
    snprintf(text, sizeof(text),
             "Port %d\nListenAddress 127.0.0.1\nHostKey %s/ssh-privatekey\nPidFile %s/sshd.pid\n"
             "AuthorizedKeysFile %s/authorized_keys\nPermitRootLogin prohibit-password\n"
             "PasswordAuthentication no\nKbdInteractiveAuthentication no\nUsePAM no\n"
             "StrictModes no\nMaxStartups 100\nLogLevel VERBOSE\n",
             fx->port, fx->keydir, fx->dir, fx->keydir);
    fx_write(cfg, text, 0644);
    fx->pid = fork();
    if (fx->pid < 0)
        fx_die("fork");
    if (fx->pid == 0) {
        prctl(PR_SET_PDEATHSIG, SIGTERM); /* never outlive a crashed or killed test */
        execl("/usr/sbin/sshd", "/usr/sbin/sshd", "-D", "-f", cfg, "-E", log, (char *)NULL);
        _exit(127);
    }
    for (int i = 0; i < 100 && !fx_port_open(fx->port); i++) {
        struct timespec ts = { 0, 50 * 1000 * 1000 };
        if (waitpid(fx->pid, NULL, WNOHANG) == fx->pid) {
            fprintf(stderr, "sshd exited at start; see %s\n", log);
            exit(1);
        }
        nanosleep(&ts, NULL);
    }
    return 0;
}

FX_FN void fx_stop(struct sshd_fixture *fx)
{
    char cmd[128];
    if (fx->pid > 0) {
        kill(fx->pid, SIGTERM);
        waitpid(fx->pid, NULL, 0);
    }
    if (getenv("SSH_TEST_KEEP"))
        fprintf(stderr, "keeping %s\n", fx->dir);
    else if (fx->dir[0] && strncmp(fx->dir, "/tmp/ssh-unit-", 14) == 0) {
        snprintf(cmd, sizeof(cmd), "rm -rf '%s'", fx->dir);
        if (system(cmd) != 0)
            fprintf(stderr, "could not remove %s\n", fx->dir);
    }
    free(fx->priv);
    free(fx->pub);
}

#endif
