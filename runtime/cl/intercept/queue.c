/* SPDX-License-Identifier: MIT */
/* Command queues: while the trace is on, sluice needs device start/end times of every command,
 * so it creates queues with CL_QUEUE_PROFILING_ENABLE even when the program did not ask; the
 * program still sees its own properties (clGetCommandQueueInfo) and no profiling data
 * (clGetEventProfilingInfo answers CL_PROFILING_INFO_NOT_AVAILABLE, translate.c). */
#include <string.h>

#include "cl/intercept/wrap.h"

const cl_queue_properties *sluice_cl_queue_props_for_backend(const cl_queue_properties *app,
                                                             cl_queue_properties *buf, size_t cap,
                                                             bool *forced)
{
    *forced = false;
    if (!sluice_trace_active())
        return app;
    size_t n = 0;
    bool has_props = false;
    if (app != NULL)
        for (; app[n] != 0; n += 2)
            if (app[n] == CL_QUEUE_PROPERTIES) {
                has_props = true;
                if (app[n + 1] & CL_QUEUE_PROFILING_ENABLE)
                    return app;
            }
    if (n + 3 > cap)
        return app; /* an absurdly long list: leave it, the trace just lacks device times */
    for (size_t i = 0; i < n; i += 2) {
        buf[i] = app[i];
        buf[i + 1] = app[i] == CL_QUEUE_PROPERTIES ? (app[i + 1] | CL_QUEUE_PROFILING_ENABLE) : app[i + 1];
    }
    if (!has_props) {
        buf[n++] = CL_QUEUE_PROPERTIES;
        buf[n++] = CL_QUEUE_PROFILING_ENABLE;
    }
    buf[n] = 0;
    *forced = true;
    return buf;
}

struct sluice_cl_obj *sluice_cl_queue_wrap(cl_command_queue real, struct sluice_cl_obj *context,
                                           struct sluice_cl_obj *device, const cl_queue_properties *app_props,
                                           bool forced)
{
    const struct sluice_cl_backend *be = sluice_cl_backend_of(context);
    struct sluice_cl_obj *q = sluice_cl_wrap_new(SLUICE_CL_QUEUE, real, context, be);
    if (q == NULL)
        return NULL;
    struct sluice_cl_queue_data *d = &q->u.queue;
    d->device = device; /* root devices are persistent; a sub-device outlives its contexts' queues */
    d->forced_profiling = forced;
    size_t n = 0;
    if (app_props != NULL) {
        while (app_props[n] != 0)
            n += 2;
        for (size_t i = 0; i < n; i += 2)
            if (app_props[i] == CL_QUEUE_PROPERTIES)
                d->app_props = (cl_command_queue_properties)app_props[i + 1];
        d->app_props_array = malloc((n + 1) * sizeof *app_props);
        if (d->app_props_array != NULL) {
            memcpy(d->app_props_array, app_props, (n + 1) * sizeof *app_props);
            d->app_props_array_bytes = (n + 1) * sizeof *app_props;
        }
    }
    return q;
}
