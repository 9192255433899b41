/* selector.c - label selector parsing and local matching (informer lookups). */
#include "kube/selector.h"
#include "kube/util.h"

#include <stdlib.h>
#include <string.h>

enum op { OP_EQ, OP_NE, OP_IN, OP_NOTIN, OP_EXISTS, OP_NOT_EXISTS };

struct term {
    enum op op;
    char *key;
    char **values;
    size_t nvalues;
};

struct kube_selector {
    struct term *terms;
    size_t n;
};

static int keych(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' || c == '_' || c == '-' ||
           c == '/';
}

static void skip_ws(const char **p)
{
    while (**p == ' ' || **p == '\t')
        (*p)++;
}

/* Reads a run of key/value characters; returns a new string (maybe empty) or NULL on OOM. */
static char *word(const char **p)
{
    const char *s = *p;
    while (keych(**p))
        (*p)++;
    return strndup(s, (size_t)(*p - s));
}

static int push_value(struct term *t, char *v)
{
    char **nv = realloc(t->values, (t->nvalues + 1) * sizeof *nv);
    if (!nv) {
        free(v);
        return -1;
    }
    t->values = nv;
    t->values[t->nvalues++] = v;
    return 0;
}

static void term_free(struct term *t)
{
    free(t->key);
    for (size_t i = 0; i < t->nvalues; i++)
        free(t->values[i]);
    free(t->values);
}

void kube_selector_free(struct kube_selector *sel)
{
    if (!sel)
        return;
    for (size_t i = 0; i < sel->n; i++)
        term_free(&sel->terms[i]);
    free(sel->terms);
    free(sel);
}

/* Parses "(v1, v2)" into t. 0 ok, -1 with *why set. */
static int parse_set(const char **p, struct term *t, const char **why)
{
    skip_ws(p);
    if (**p != '(') {
        *why = "expected '(' after in/notin";
        return -1;
    }
    (*p)++;
    for (;;) {
        skip_ws(p);
        char *v = word(p);
        if (!v || push_value(t, v)) {
            *why = "out of memory";
            return -1;
        }
        skip_ws(p);
        if (**p == ',') {
            (*p)++;
            continue;
        }
        if (**p == ')') {
            (*p)++;
            return 0;
        }
        *why = "expected ',' or ')' in value set";
        return -1;
    }
}

/* Parses one term at *p into t. 0 ok, -1 with *why. */
static int parse_term(const char **p, struct term *t, const char **why)
{
    skip_ws(p);
    int neg = 0;
    if (**p == '!') {
        neg = 1;
        (*p)++;
        skip_ws(p);
    }
    t->key = word(p);
    if (!t->key || !*t->key) {
        *why = "expected a label key";
        return -1;
    }
    skip_ws(p);
    if (neg) {
        t->op = OP_NOT_EXISTS;
        return 0;
    }
    const char *s = *p;
    if (*s == ',' || *s == '\0') {
        t->op = OP_EXISTS;
        return 0;
    }
    if (s[0] == '!' && s[1] == '=') {
        t->op = OP_NE;
        *p += 2;
    } else if (s[0] == '=' && s[1] == '=') {
        t->op = OP_EQ;
        *p += 2;
    } else if (s[0] == '=') {
        t->op = OP_EQ;
        *p += 1;
    } else if (!strncmp(s, "notin", 5) && !keych(s[5])) {
        t->op = OP_NOTIN;
        *p += 5;
        return parse_set(p, t, why);
    } else if (!strncmp(s, "in", 2) && !keych(s[2])) {
        t->op = OP_IN;
        *p += 2;
        return parse_set(p, t, why);
    } else {
        *why = "expected =, ==, !=, in or notin after the key";
        return -1;
    }
    skip_ws(p);
    char *v = word(p);
    if (!v || push_value(t, v)) {
        *why = "out of memory";
        return -1;
    }
    return 0;
}

struct kube_selector *kube_selector_parse(const char *s, char **errmsg)
{
    struct kube_selector *sel = calloc(1, sizeof *sel);
    if (!sel) {
        kube_set_err(errmsg, "out of memory");
        return NULL;
    }
    if (!s)
        return sel;
    const char *p = s;
    skip_ws(&p);
    if (!*p)
        return sel;
    for (;;) {
        struct term *nt = realloc(sel->terms, (sel->n + 1) * sizeof *nt);
        if (!nt) {
            kube_set_err(errmsg, "out of memory");
            goto fail;
        }
        sel->terms = nt;
        memset(&sel->terms[sel->n], 0, sizeof *nt);
        sel->n++;
        const char *why = NULL;
        if (parse_term(&p, &sel->terms[sel->n - 1], &why)) {
            kube_set_err(errmsg, "label selector \"%s\": %s at offset %zu", s, why, (size_t)(p - s));
            goto fail;
        }
        skip_ws(&p);
        if (*p == '\0')
            return sel;
        if (*p != ',') {
            kube_set_err(errmsg, "label selector \"%s\": unexpected '%c' at offset %zu", s, *p, (size_t)(p - s));
            goto fail;
        }
        p++;
    }
fail:
    kube_selector_free(sel);
    return NULL;
}

static int in_set(const struct term *t, const char *v)
{
    for (size_t i = 0; i < t->nvalues; i++)
        if (!strcmp(t->values[i], v))
            return 1;
    return 0;
}

int kube_selector_matches(const struct kube_selector *sel, const json_t *labels)
{
    if (!sel)
        return 1;
    for (size_t i = 0; i < sel->n; i++) {
        const struct term *t = &sel->terms[i];
        const char *v = json_string_value(json_object_get(labels, t->key));
        int ok;
        switch (t->op) {
        case OP_EQ: ok = v && !strcmp(v, t->values[0]); break;
        case OP_NE: ok = !v || strcmp(v, t->values[0]); break;
        case OP_IN: ok = v && in_set(t, v); break;
        case OP_NOTIN: ok = !v || !in_set(t, v); break;
        case OP_EXISTS: ok = v != NULL; break;
        default: ok = v == NULL; break;
        }
        if (!ok)
            return 0;
    }
    return 1;
}

int kube_selector_matches_obj(const struct kube_selector *sel, const json_t *obj)
{
    return kube_selector_matches(sel, json_object_get(json_object_get(obj, "metadata"), "labels"));
}
