/* credplugin.c - kubeconfig exec credential plugins (users[].user.exec, as client-go runs
 * them): the command runs with the kubeconfig's args and env plus KUBERNETES_EXEC_INFO,
 * bounded in time; its ExecCredential (client.authentication.k8s.io v1 or v1beta1) gives a
 * bearer token or a client certificate and key, cached until expirationTimestamp or until
 * the server answers 401. Failures become one line naming the plugin, its exit status and
 * the last line of its stderr (and installHint). */
#include "credplugin.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "config_check.h"
#include "kube/log.h"
#include "kube/util.h"

#define OUT_MAX (1u << 20)    /* the plugin's stdout (one ExecCredential) */
#define ERR_KEEP 4096         /* the tail of its stderr kept for messages */
#define RUN_TIMEOUT_MS 60000  /* a plugin that hangs longer is killed */
#define EXPIRY_SLACK_MS 10000 /* refresh a little before the credential expires */

struct kube_exec_plugin {
    pthread_mutex_t mu;
    char *tag; /* "file: users[0].user.exec" for messages */
    char *api_version;
    char *command;
    char **args; /* NULL-terminated */
    char **env;  /* "NAME=value", NULL-terminated */
    char *install_hint;
    char *mode;          /* interactiveMode: Never, IfAvailable, Always */
    int provide_cluster; /* provideClusterInfo */
    /* the cached credential */
    struct kube_credential cred;
    int have;
    int64_t expires_ms; /* realtime ms; 0 = until a 401 */
};

void kube_credential_free(struct kube_credential *c)
{
    if (!c)
        return;
    if (c->token)
        explicit_bzero(c->token, strlen(c->token));
    if (c->key)
        explicit_bzero(c->key, c->key_len);
    free(c->token);
    free(c->cert);
    free(c->key);
    memset(c, 0, sizeof *c);
}

void Kube_exec_plugin_free(struct kube_exec_plugin *p)
{
    if (!p)
        return;
    kube_credential_free(&p->cred);
    free(p->tag);
    free(p->api_version);
    free(p->command);
    kube_strv_free(p->args);
    kube_strv_free(p->env);
    free(p->install_hint);
    free(p->mode);
    pthread_mutex_destroy(&p->mu);
    free(p);
}

/* ---- parsing users[].user.exec ---- */

static int get_str(const json_t *in, const char *key, const char *tag, int required, char **out, char **errmsg)
{
    json_t *v = json_object_get(in, key);
    *out = NULL;
    if (!v || json_is_null(v)) {
        if (required)
            kube_set_err(errmsg, "%s.%s: missing", tag, key);
        return required ? -1 : 0;
    }
    if (!json_is_string(v))
        return kube_set_err(errmsg, "%s.%s: expected a string", tag, key);
    if (!(*out = strdup(json_string_value(v))))
        return kube_set_err(errmsg, "out of memory");
    return 0;
}

/* One entry of args: a copy of the string; NULL with *errmsg. */
static char *arg_item(const json_t *v, const char *tag, size_t i, char **errmsg)
{
    char *s;
    if (!json_is_string(v))
        kube_set_err(errmsg, "%s.args[%zu]: expected a string", tag, i);
    else if (!(s = strdup(json_string_value(v))))
        kube_set_err(errmsg, "out of memory");
    else
        return s;
    return NULL;
}

/* One entry of env, {name, value}: "NAME=VALUE"; NULL with *errmsg. */
static char *env_item(const json_t *v, const char *tag, size_t i, char **errmsg)
{
    const char *name = json_string_value(json_object_get(v, "name"));
    const char *val = json_string_value(json_object_get(v, "value"));
    char *s;
    if (!name || !*name || strchr(name, '=') || !val)
        kube_set_err(errmsg, "%s.env[%zu]: expected {name: NAME, value: STRING}", tag, i);
    else if (!(s = kube_strdup_printf("%s=%s", name, val)))
        kube_set_err(errmsg, "out of memory");
    else
        return s;
    return NULL;
}

/* in[key] (absent or null: empty) as a NULL-terminated vector, item making each entry's string;
 * what names the entries in the error for a non-list. 0, or -1 with *errmsg (*out freed by the
 * caller either way). */
static int parse_list(const json_t *in, const char *tag, const char *key, const char *what,
                      char *(*item)(const json_t *, const char *, size_t, char **), char ***out, char **errmsg)
{
    json_t *a = json_object_get(in, key);
    size_t n = json_is_array(a) ? json_array_size(a) : 0, i;
    json_t *v;
    if (a && !json_is_null(a) && !json_is_array(a))
        return kube_set_err(errmsg, "%s.%s: expected a list of %s", tag, key, what);
    if (!(*out = calloc(n + 1, sizeof **out)))
        return kube_set_err(errmsg, "out of memory");
    json_array_foreach(a, i, v) {
        if (!((*out)[i] = item(v, tag, i, errmsg)))
            return -1;
    }
    return 0;
}

int Kube_exec_plugin_parse(const json_t *in, const char *tag, struct kube_exec_plugin **out, char **errmsg)
{
    struct kube_exec_plugin *p = calloc(1, sizeof *p);
    *out = NULL;
    if (!p || pthread_mutex_init(&p->mu, NULL)) {
        free(p);
        return kube_set_err(errmsg, "out of memory");
    }
    static const char *const known[] = { "apiVersion",         "command", "args", "env", "installHint", "interactiveMode",
                                         "provideClusterInfo", NULL };
    json_t *pci = json_object_get(in, "provideClusterInfo");
    if (Kube_config_known_keys(in, tag, known, errmsg)) {
        Kube_exec_plugin_free(p);
        return -1;
    }
    if (!json_is_object(in) || !(p->tag = kube_strdup_printf("%s", tag)) ||
        get_str(in, "apiVersion", tag, 1, &p->api_version, errmsg) || get_str(in, "command", tag, 1, &p->command, errmsg) ||
        parse_list(in, tag, "args", "strings", arg_item, &p->args, errmsg) ||
        parse_list(in, tag, "env", "{name, value}", env_item, &p->env, errmsg) ||
        get_str(in, "installHint", tag, 0, &p->install_hint, errmsg) ||
        get_str(in, "interactiveMode", tag, 0, &p->mode, errmsg))
        goto fail;
    if (strcmp(p->api_version, "client.authentication.k8s.io/v1") &&
        strcmp(p->api_version, "client.authentication.k8s.io/v1beta1")) {
        kube_set_err(errmsg,
                     "%s.apiVersion: \"%s\": expected client.authentication.k8s.io/v1 or v1beta1 "
                     "(v1alpha1 is no longer served by kubectl either)",
                     tag, p->api_version);
        goto fail;
    }
    if (!p->mode && !strcmp(p->api_version, "client.authentication.k8s.io/v1")) {
        kube_set_err(errmsg, "%s.interactiveMode: must be specified for %s to use exec authentication plugin", tag,
                     p->command);
        goto fail;
    }
    if (p->mode && strcmp(p->mode, "Never") && strcmp(p->mode, "IfAvailable") && strcmp(p->mode, "Always")) {
        kube_set_err(errmsg, "%s.interactiveMode: \"%s\": expected Never, IfAvailable or Always", tag, p->mode);
        goto fail;
    }
    const char *pcs = json_string_value(pci); /* YAML scalars may arrive as strings */
    if (pci && !json_is_null(pci) && !json_is_boolean(pci) && !(pcs && (!strcmp(pcs, "true") || !strcmp(pcs, "false")))) {
        kube_set_err(errmsg, "%s.provideClusterInfo: expected true or false", tag);
        goto fail;
    }
    p->provide_cluster = json_is_true(pci) || (pcs && !strcmp(pcs, "true"));
    *out = p;
    return 0;
fail:
    if (errmsg && !*errmsg)
        kube_set_err(errmsg, "%s: out of memory", tag);
    Kube_exec_plugin_free(p);
    return -1;
}

/* ---- running it ---- */

/* Whether the plugin may talk to the user: Never -> no; Always -> needs a terminal. */
static int interactive(const struct kube_exec_plugin *p, char **errmsg)
{
    int tty = isatty(STDIN_FILENO);
    if (p->mode && !strcmp(p->mode, "Always") && !tty)
        return kube_set_err(errmsg, "exec plugin %s (%s): interactiveMode Always, but standard input is not a terminal",
                            p->command, p->tag);
    return (!p->mode || strcmp(p->mode, "Never")) && tty;
}

/* KUBERNETES_EXEC_INFO: the ExecCredential request, with spec.cluster when asked for. */
static char *exec_info(const struct kube_exec_plugin *p, const struct kube_config *cfg, int inter)
{
    json_t *spec = json_pack("{s:b}", "interactive", inter);
    if (spec && p->provide_cluster) {
        json_t *cl = json_pack("{s:s}", "server", cfg->server);
        char *ca = NULL;
        size_t calen = 0;
        if (cfg->ca_data) {
            ca = kube_base64_encode(cfg->ca_data, cfg->ca_data_len);
        } else if (cfg->ca_file && !kube_read_file(cfg->ca_file, 1u << 20, &ca, &calen, NULL)) {
            char *b = kube_base64_encode(ca, calen);
            free(ca);
            ca = b;
        }
        if (cl && ca)
            json_object_set_new(cl, "certificate-authority-data", json_string(ca));
        if (cl && cfg->tls_server_name)
            json_object_set_new(cl, "tls-server-name", json_string(cfg->tls_server_name));
        if (cl && cfg->insecure)
            json_object_set_new(cl, "insecure-skip-tls-verify", json_true());
        if (cl && cfg->proxy_url)
            json_object_set_new(cl, "proxy-url", json_string(cfg->proxy_url));
        json_t *x = cfg->exec_cluster_config ? json_loads(cfg->exec_cluster_config, JSON_DECODE_ANY, NULL) : NULL;
        if (cl && x)
            json_object_set_new(cl, "config", x);
        else
            json_decref(x);
        free(ca);
        json_object_set_new(spec, "cluster", cl);
    }
    json_t *req =
        spec ? json_pack("{s:s,s:s,s:o}", "apiVersion", p->api_version, "kind", "ExecCredential", "spec", spec) : NULL;
    char *s = req ? json_dumps(req, JSON_COMPACT) : NULL;
    json_decref(req);
    return s;
}

/* argv and envp for the plugin, built before fork (the parent may have threads: the child
 * only calls async-signal-safe functions). envp: ours, then exec.env, then KUBERNETES_EXEC_INFO. */
static int build_argv_envp(const struct kube_exec_plugin *p, const char *info, char ***argv, char ***envp)
{
    extern char **environ;
    size_t na = 0, ne = 0, nx = 0;
    while (p->args[na])
        na++;
    while (environ[ne])
        ne++;
    while (p->env[nx])
        nx++;
    *argv = calloc(na + 2, sizeof **argv);
    *envp = calloc(ne + nx + 2, sizeof **envp);
    char *infovar = kube_strdup_printf("KUBERNETES_EXEC_INFO=%s", info);
    if (!*argv || !*envp || !infovar) {
        free(*argv);
        free(*envp);
        free(infovar);
        return -1;
    }
    (*argv)[0] = p->command;
    memcpy(*argv + 1, p->args, na * sizeof **argv);
    size_t k = 0;
    for (size_t i = 0; i < ne; i++) { /* exec.env and the info override inherited names */
        size_t nl = strcspn(environ[i], "=");
        int over = !strncmp(environ[i], "KUBERNETES_EXEC_INFO=", 21);
        for (size_t j = 0; j < nx && !over; j++)
            over = !strncmp(environ[i], p->env[j], nl + 1);
        if (!over)
            (*envp)[k++] = environ[i];
    }
    memcpy(*envp + k, p->env, nx * sizeof **envp);
    (*envp)[k + nx] = infovar;
    return 0;
}

/* The child: stdio, exec. Never returns. */
static void child(char **argv, char **envp, int inter, int outw, int errw)
{
    if (!inter) {
        int nullfd = open("/dev/null", O_RDONLY);
        if (nullfd >= 0)
            dup2(nullfd, STDIN_FILENO);
    }
    dup2(outw, STDOUT_FILENO);
    dup2(errw, STDERR_FILENO);
    execvpe(argv[0], argv, envp);
    int e = errno;
    const char *m = e == ENOENT ? ": executable file not found\n" : ": cannot be executed\n";
    if (write(STDERR_FILENO, argv[0], strlen(argv[0])) < 0 || write(STDERR_FILENO, m, strlen(m)) < 0) {}
    _exit(e == ENOENT ? 127 : 126);
}

struct output {
    char *out;
    size_t out_len;
    char err[ERR_KEEP + 1];
    size_t err_len;
};

/* Appends to the stderr tail, keeping the last ERR_KEEP bytes. */
static void keep_tail(struct output *o, const char *b, size_t n)
{
    if (n >= ERR_KEEP) {
        memcpy(o->err, b + n - ERR_KEEP, ERR_KEEP);
        o->err_len = ERR_KEEP;
    } else {
        size_t drop = o->err_len + n > ERR_KEEP ? o->err_len + n - ERR_KEEP : 0;
        memmove(o->err, o->err + drop, o->err_len - drop);
        memcpy(o->err + o->err_len - drop, b, n);
        o->err_len = o->err_len - drop + n;
    }
    o->err[o->err_len] = '\0';
}

/* Reads both pipes until they close or the deadline passes: 0, or -1 on timeout/overflow. */
static int collect(int outr, int errr, struct output *o, int64_t deadline)
{
    struct pollfd pf[2] = { { outr, POLLIN, 0 }, { errr, POLLIN, 0 } };
    char buf[4096];
    while (pf[0].fd >= 0 || pf[1].fd >= 0) {
        int64_t left = deadline - kube_now_ms();
        if (left <= 0)
            return -1;
        int r = poll(pf, 2, (int)left);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0)
            return -1;
        for (int i = 0; i < 2; i++) {
            if (pf[i].fd < 0 || !pf[i].revents)
                continue;
            ssize_t n = read(pf[i].fd, buf, sizeof buf);
            if (n < 0 && errno == EINTR)
                continue;
            if (n <= 0) {
                pf[i].fd = -1;
                continue;
            }
            if (i == 1) {
                keep_tail(o, buf, (size_t)n);
                continue;
            }
            char *nb = o->out_len + (size_t)n <= OUT_MAX ? realloc(o->out, o->out_len + (size_t)n + 1) : NULL;
            if (!nb)
                return -1;
            o->out = nb;
            memcpy(o->out + o->out_len, buf, (size_t)n);
            o->out_len += (size_t)n;
            o->out[o->out_len] = '\0';
        }
    }
    return 0;
}

/* The last non-empty line of the plugin's stderr, or "". */
static const char *last_line(struct output *o)
{
    char *e = o->err + o->err_len;
    while (e > o->err && (e[-1] == '\n' || e[-1] == '\r' || e[-1] == ' '))
        *--e = '\0';
    char *s = e;
    while (s > o->err && s[-1] != '\n')
        s--;
    return s;
}

static void free_argv_envp(char **argv, char **envp)
{
    size_t n = 0;
    while (envp && envp[n])
        n++;
    if (n)
        free(envp[n - 1]); /* the KUBERNETES_EXEC_INFO string, the only one allocated here */
    free(envp);
    free(argv);
}

/* Runs the plugin; 0 with o->out, or -1 with *errmsg. */
static int run_plugin(const struct kube_exec_plugin *p, const struct kube_config *cfg, struct output *o, char **errmsg)
{
    int inter = interactive(p, errmsg);
    if (inter < 0)
        return -1;
    char *info = exec_info(p, cfg, inter), **argv = NULL, **envp = NULL;
    int po[2] = { -1, -1 }, pe[2] = { -1, -1 };
    if (!info || build_argv_envp(p, info, &argv, &envp) || pipe2(po, O_CLOEXEC) || pipe2(pe, O_CLOEXEC)) {
        kube_set_err(errmsg, "exec plugin %s (%s): cannot start: %m", p->command, p->tag);
        goto fail;
    }
    pid_t pid = fork();
    if (pid < 0) {
        kube_set_err(errmsg, "exec plugin %s (%s): fork: %m", p->command, p->tag);
        goto fail;
    }
    if (pid == 0)
        child(argv, envp, inter, po[1], pe[1]);
    close(po[1]);
    close(pe[1]);
    po[1] = pe[1] = -1;
    int timed_out = collect(po[0], pe[0], o, kube_now_ms() + RUN_TIMEOUT_MS) < 0;
    if (timed_out)
        kill(pid, SIGKILL);
    int st = 0;
    while (waitpid(pid, &st, 0) < 0 && errno == EINTR) {}
    const char *ll = last_line(o), *hint = p->install_hint;
    if (timed_out || !WIFEXITED(st) || WEXITSTATUS(st) != 0) {
        char how[64];
        if (timed_out)
            snprintf(how, sizeof how, "did not finish within %d s (killed)", RUN_TIMEOUT_MS / 1000);
        else if (WIFEXITED(st) && WEXITSTATUS(st) == 127 && strstr(ll, "executable file not found"))
            snprintf(how, sizeof how, "not found in PATH (exit status 127)");
        else if (WIFEXITED(st))
            snprintf(how, sizeof how, "failed with exit status %d", WEXITSTATUS(st));
        else
            snprintf(how, sizeof how, "killed by signal %d", WTERMSIG(st));
        kube_set_err(errmsg, "exec plugin %s (%s) %s%s%s%s%s", p->command, p->tag, how, *ll ? ": " : "", ll,
                     hint ? "; install hint: " : "", hint ? hint : "");
        Kube_config_one_line(-1, errmsg);
        goto fail;
    }
    if (o->err_len) /* what the plugin says on success (warnings) reaches the user */
        kube_log(KUBE_LOG_WARN, "exec plugin %s: %s", p->command, ll);
    free_argv_envp(argv, envp);
    free(info);
    close(po[0]);
    close(pe[0]);
    return 0;
fail:
    free_argv_envp(argv, envp);
    free(info);
    for (int i = 0; i < 2; i++) {
        if (po[i] >= 0)
            close(po[i]);
        if (pe[i] >= 0)
            close(pe[i]);
    }
    return -1;
}

int Kube_exec_credential_parse(const char *out, size_t len, const char *api_version, const char *who,
                               struct kube_credential *cred, int64_t *expires_ms, char **errmsg)
{
    json_error_t je;
    json_t *j = json_loadb(out, len, 0, &je);
    const char *av = json_string_value(json_object_get(j, "apiVersion"));
    const char *kind = json_string_value(json_object_get(j, "kind"));
    json_t *st = json_object_get(j, "status");
    const char *tok = json_string_value(json_object_get(st, "token"));
    const char *crt = json_string_value(json_object_get(st, "clientCertificateData"));
    const char *key = json_string_value(json_object_get(st, "clientKeyData"));
    const char *exp = json_string_value(json_object_get(st, "expirationTimestamp"));
    int64_t exp_ms = 0;
    int rc = -1;
    memset(cred, 0, sizeof *cred);
    *expires_ms = 0;
    if (!json_is_object(j))
        kube_set_err(errmsg, "%s: output is not an ExecCredential (JSON: %s at line %d)", who, j ? "not an object" : je.text,
                     je.line);
    else if (!kind || strcmp(kind, "ExecCredential"))
        kube_set_err(errmsg, "%s: output kind is \"%s\", expected ExecCredential", who, kind ? kind : "");
    else if (!av || strcmp(av, api_version))
        kube_set_err(errmsg, "%s is configured to use API version %s, plugin returned version %s", who, api_version,
                     av ? av : "(none)");
    else if (!json_is_object(st))
        kube_set_err(errmsg, "%s: ExecCredential has no status", who);
    else if (!(tok && *tok) && !(crt && *crt && key && *key))
        kube_set_err(errmsg, "%s: status has neither a token nor clientCertificateData and clientKeyData", who);
    else if ((crt && *crt) != (key && *key))
        kube_set_err(errmsg, "%s: status has %s without %s", who, crt && *crt ? "clientCertificateData" : "clientKeyData",
                     crt && *crt ? "clientKeyData" : "clientCertificateData");
    else if (exp && kube_time_parse_ms(exp, &exp_ms))
        kube_set_err(errmsg, "%s: status.expirationTimestamp \"%s\" is not an RFC 3339 time", who, exp);
    else
        rc = 0;
    if (rc == 0) {
        cred->token = tok && *tok ? strdup(tok) : NULL;
        if (crt && *crt) {
            cred->cert = strdup(crt), cred->cert_len = strlen(crt);
            cred->key = strdup(key), cred->key_len = strlen(key);
        }
        if ((tok && *tok && !cred->token) || (crt && *crt && (!cred->cert || !cred->key))) {
            kube_credential_free(cred);
            kube_set_err(errmsg, "out of memory");
            rc = -1;
        }
        *expires_ms = exp ? exp_ms : 0;
    }
    json_decref(j);
    return Kube_config_one_line(rc, errmsg);
}

/* Parses the plugin's ExecCredential into p->cred. 0, or -1 with *errmsg. */
static int take_output(struct kube_exec_plugin *p, const char *out, size_t len, char **errmsg)
{
    struct kube_credential c;
    int64_t exp = 0;
    char *who = kube_strdup_printf("exec plugin %s (%s)", p->command, p->tag);
    int rc = who ? Kube_exec_credential_parse(out, len, p->api_version, who, &c, &exp, errmsg) : -1;
    free(who);
    if (rc == 0) {
        kube_credential_free(&p->cred);
        p->cred = c;
        p->have = 1;
        p->expires_ms = exp;
    }
    return rc;
}

static int dup_cred(const struct kube_credential *in, struct kube_credential *out)
{
    memset(out, 0, sizeof *out);
    out->token = in->token ? strdup(in->token) : NULL;
    out->cert = in->cert ? strdup(in->cert) : NULL;
    out->key = in->key ? strdup(in->key) : NULL;
    out->cert_len = in->cert_len;
    out->key_len = in->key_len;
    if ((in->token && !out->token) || (in->cert && !out->cert) || (in->key && !out->key)) {
        kube_credential_free(out);
        return -1;
    }
    return 0;
}

int Kube_exec_plugin_credential(struct kube_exec_plugin *p, const struct kube_config *cfg, struct kube_credential *out,
                                char **errmsg)
{
    int rc = 0;
    pthread_mutex_lock(&p->mu); /* one run at a time: concurrent callers share its result */
    int fresh = p->have && (!p->expires_ms || kube_realtime_ms() + EXPIRY_SLACK_MS < p->expires_ms);
    if (!fresh) {
        struct output o = { 0 };
        rc = run_plugin(p, cfg, &o, errmsg) || take_output(p, o.out ? o.out : "", o.out_len, errmsg) ? -1 : 0;
        if (o.out)
            explicit_bzero(o.out, o.out_len);
        free(o.out);
    }
    if (rc == 0 && dup_cred(&p->cred, out)) {
        kube_set_err(errmsg, "out of memory");
        rc = -1;
    }
    pthread_mutex_unlock(&p->mu);
    return rc;
}

int Kube_exec_plugin_rejected(struct kube_exec_plugin *p, const struct kube_credential *used)
{
    pthread_mutex_lock(&p->mu);
    /* only forget the credential the server refused: another thread may have renewed it */
    int same = p->have && ((used->token && p->cred.token && !strcmp(used->token, p->cred.token)) ||
                           (used->cert && p->cred.cert && !strcmp(used->cert, p->cred.cert)));
    if (same || !p->have) {
        kube_credential_free(&p->cred);
        p->have = 0;
    }
    pthread_mutex_unlock(&p->mu);
    return 1;
}
