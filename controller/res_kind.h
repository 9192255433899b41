/* res_kind.h - the resource kinds a sync reads and acts on (rows of kind.c's table). */
#ifndef CONTROLLER_RES_KIND_H
#define CONTROLLER_RES_KIND_H

enum res_kind {
    RK_CONFIGMAP,
    RK_SERVICEACCOUNT,
    RK_ROLE,
    RK_ROLEBINDING,
    RK_SECRET,
    RK_SERVICE,
    RK_POD,
    RK_JOB,
    RK_PODGROUP,
    RK_MPIJOB,
    RK_EVENT,
    RK__COUNT,
};

#endif
