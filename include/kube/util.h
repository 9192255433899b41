/* util.h - the small helpers shared by the library and the programs, one header (and one
 * lib/ file) a topic: strings and the error setter (str.h), the integer parser (parse_int.h),
 * clocks (clock.h), RFC 3339 times (rfc3339.h), whole-file reads and writes (fileio.h),
 * base64 (base64.h). Include the one you need; this header includes them all. */
#ifndef KUBE_UTIL_H
#define KUBE_UTIL_H

#include "kube/str.h"
#include "kube/parse_int.h"
#include "kube/clock.h"
#include "kube/rfc3339.h"
#include "kube/fileio.h"
#include "kube/base64.h"

#endif
