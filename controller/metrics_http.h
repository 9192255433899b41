/* metrics_http.h - the monitoring HTTP endpoint (metrics_http.c). */
#ifndef CONTROLLER_METRICS_HTTP_H
#define CONTROLLER_METRICS_HTTP_H

#include "metrics.h"

/* The HTTP endpoint serving one registry (controller/metrics_http.c). */
struct metrics_server;
/* Serves m (borrowed; it must outlive the server) on port (1-65535) from a background
 * thread. The server, or NULL with *errmsg. */
struct metrics_server *metrics_http_serve(struct metrics *m, int port, char **errmsg);
/* Stops the server and frees it (NULL is fine). */
void metrics_http_stop(struct metrics_server *s);

#endif
