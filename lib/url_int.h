/* url_int.h - url.c's functions that lib/'s files share and no program calls. */
#ifndef KUBE_URL_INT_H
#define KUBE_URL_INT_H

/* Splits "scheme://host[:port][/prefix]": host keeps IPv6 brackets, port defaults to 443
 * (80 for http), prefix has no trailing slash. 0 ok, -1 malformed. Strings are malloc'd. */
int Kube_url_split_server(const char *server, char **scheme, char **host, long *port, char **prefix);

#endif
