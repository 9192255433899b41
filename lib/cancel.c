/* cancel.c - a cancellation token: an atomic flag plus an eventfd that waiters poll. */
#include "kube/cancel.h"

#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "kube/util.h"

struct kube_cancel {
    volatile int flag;
    int fd;
};

struct kube_cancel *kube_cancel_new(void)
{
    struct kube_cancel *c = calloc(1, sizeof *c);
    if (!c)
        return NULL;
    c->fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    if (c->fd < 0) {
        free(c);
        return NULL;
    }
    return c;
}

void kube_cancel_trigger(struct kube_cancel *c)
{
    if (!c)
        return;
    __atomic_store_n(&c->flag, 1, __ATOMIC_SEQ_CST);
    uint64_t one = 1;
    ssize_t w = write(c->fd, &one, sizeof one); /* stays readable: nobody reads it */
    (void)w;                                    /* EAGAIN only when the counter is saturated, i.e. already readable */
}

int kube_cancel_requested(const struct kube_cancel *c) { return c ? __atomic_load_n(&c->flag, __ATOMIC_SEQ_CST) : 0; }

int kube_cancel_sleep_any_ms(struct kube_cancel *a, struct kube_cancel *b, int64_t ms)
{
    int64_t end = kube_now_ms() + (ms > 0 ? ms : 0);
    for (;;) {
        if (kube_cancel_requested(a) || kube_cancel_requested(b))
            return 1;
        int64_t left = end - kube_now_ms();
        if (left <= 0)
            return 0;
        struct pollfd pfd[2];
        nfds_t n = 0;
        if (a)
            pfd[n++] = (struct pollfd){ a->fd, POLLIN, 0 };
        if (b)
            pfd[n++] = (struct pollfd){ b->fd, POLLIN, 0 };
        int r = poll(pfd, n, left > 1000 ? 1000 : (int)left);
        if (r < 0 && errno != EINTR)
            kube_sleep_ms(left > 10 ? 10 : left);
    }
}

int kube_cancel_sleep_ms(struct kube_cancel *c, int64_t ms) { return kube_cancel_sleep_any_ms(c, NULL, ms); }

int kube_cancel_fd(const struct kube_cancel *c) { return c ? c->fd : -1; }

void kube_cancel_free(struct kube_cancel *c)
{
    if (!c)
        return;
    close(c->fd);
    free(c);
}
