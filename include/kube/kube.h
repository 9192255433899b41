/* kube.h - umbrella header: the whole mpi-k8s Kubernetes client library
 * (except the exec/WebSocket/SSH headers, which are included separately). */
#ifndef KUBE_KUBE_H
#define KUBE_KUBE_H

#include "kube/log.h"
#include "kube/util.h"
#include "kube/config.h"
#include "kube/url.h"
#include "kube/error.h"
#include "kube/resource.h"
#include "kube/json.h"
#include "kube/selector.h"
#include "kube/backoff.h"
#include "kube/cancel.h"
#include "kube/client.h"
#include "kube/watch.h"
#include "kube/informer.h"
#include "kube/podstuck.h"

#endif
