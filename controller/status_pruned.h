/* status_pruned.h - the status keys the CRD prunes (status_pruned.c). */
#ifndef CONTROLLER_STATUS_PRUNED_H
#define CONTROLLER_STATUS_PRUNED_H

#include <jansson.h>

/* Top-level status keys the API server dropped from a status update: a CRD whose status
 * schema lacks them (upstream's v2beta1 CRD has no launchPhases, launcherFailure, ...) prunes
 * them. status_pruned_note records the keys of sent (non-null) missing from stored (the
 * update's answer); status_pruned_strip is status without the recorded keys (a new
 * reference), what the stored status is compared with, so that a sync whose only change is
 * such a key writes nothing (it wrote a no-op PUT on every sync before). Process-wide (one
 * CRD a cluster), thread-safe; status_pruned_reset forgets them (tests). */
void status_pruned_note(const json_t *sent, const json_t *stored);
json_t *status_pruned_strip(json_t *status);
void status_pruned_reset(void);

#endif
