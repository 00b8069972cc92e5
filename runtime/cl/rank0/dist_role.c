/* SPDX-License-Identifier: MIT */
/* Roles of distributed OpenCL (SLUICE_OPENCL=distributed under a launcher, more than one rank).
 *
 * Ranks 1..N-1 never enter main: this constructor initializes MPI (sluice's communicator),
 * serves requests for the rank's OpenCL devices until rank 0 says its program ended, then
 * finalizes MPI and exits 0 through exit(), so that the trace is still written.
 * Rank 0 initializes MPI in the first of its processes that asks for OpenCL platforms, or at
 * the exit of the rank's own process if none did (MPI_Init is collective under MPICH's
 * launcher: the servers wait in it until rank 0 comes), and tells the servers to stop from a
 * finalize hook, which runs before MPI is finalized whether the program calls MPI_Finalize or
 * sluice finalizes at exit. */
#include <dlfcn.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cl/intercept/object.h"
#include "cl/intercept/wrap.h"
#include "cl/rank0/dist.h"
#include "cl/rank0/dist_fault.h"
#include "cl/rank0/dist_internal.h"
#include "cl/serve/remote_peer.h"
#include "common/init_order.h"
#include "common/log.h"
#include "common/real.h"
#include "config/config.h"
#include "mpi/helper_cpus.h"
#include "mpi/lifecycle.h"
#include "mpi/roles.h"
#include "trace/trace.h"

static bool active;
static int world;
/* How the transport and the engine end the job when a peer fails and check on a silent one. */
static const struct sluice_remote_peer_ops peer_ops = {.failed = dist_fault_peer, .silent = dist_alive_check};
static struct sluice_cl_backend dist_backend = {.name = "distributed"};

int dist_size(void)
{
    return world;
}

bool sluice_cl_dist_active(void)
{
    return active;
}

bool sluice_cl_dist_backend(const struct sluice_cl_backend *be)
{
    return be == &dist_backend;
}

/* The final handshake, before MPI is finalized: END tells each serving rank how many liveness
 * pings it was sent (none follow), the rank finishes what is in flight, receives them all and
 * answers last with the number of pongs it sent, which rank 0 then receives (dist_alive.c): no
 * message of distributed OpenCL is left unreceived when MPI_Finalize comes. */
static void end_servers(void)
{
    if (!active)
        return;
    MPI_Comm comm = sluice_comm();
    pthread_mutex_lock(&dist_lock);
    for (int r = 1; r < world && comm != MPI_COMM_NULL; r++) {
        struct sluice_remote_req req;
        memset(&req, 0, sizeof req);
        req.op = SLUICE_REMOTE_END;
        req.end.pings = dist_alive_stop(r);
        MPI_Send(&req, sizeof req, MPI_BYTE, r, SLUICE_REMOTE_TAG_REQ, comm);
        sluice_trace_instant(SLUICE_EV_MSG_SEND, (uint64_t)r, sizeof req, SLUICE_REMOTE_TAG_REQ);
    }
    active = false;
    pthread_mutex_unlock(&dist_lock);
    /* Not under dist_lock: the scheduler's callbacks may need it while the ranks finish. */
    for (int r = 1; r < world && comm != MPI_COMM_NULL; r++) {
        unsigned char *buf = NULL;
        size_t len = 0;
        int rc = sluice_remote_recv(comm, r, SLUICE_REMOTE_TAG_REP, &buf, &len);
        if (rc != MPI_SUCCESS)
            dist_fault_peer(r, rc, "ending the job");
        struct sluice_remote_rep rep;
        memset(&rep, 0, sizeof rep);
        if (len >= sizeof rep)
            memcpy(&rep, buf, sizeof rep);
        free(buf);
        dist_alive_drain(r, rep.v[0]);
    }
}

static bool distributed_mode(void)
{
    const char *m = sluice_config_early(SLUICE_CFG_OPENCL); /* also before the constructor */
    return m != NULL && strcmp(m, "distributed") == 0;
}

/* Rank 0's processes take the rank's MPI only when one of them first asks for OpenCL platforms
 * (sluice_cl_dist_begin), not at load: the first preloaded process of rank 0 is often a wrapper
 * (env, a shell, a Python driver) that execs or starts the program, and MPI initialized there
 * is lost at exec or belongs to the wrong process. Helpers that never call OpenCL (PoCL's
 * linker, a compressor) never touch MPI. */
static bool rank0_pending; /* rank 0 of a distributed job, not begun yet */
static pthread_mutex_t begin_lock = PTHREAD_MUTEX_INITIALIZER;
static bool begun;
/* MPI's start-up asks for OpenCL platforms itself (hwloc's OpenCL plugin, inside MPI_Init):
 * that nested query on the beginning thread gets the local platforms. */
static _Thread_local bool beginning;

/* The distributed backend's API table is built by layers, bottom first. A layer fills the slots
 * it implements; a layer that wraps slots of earlier ones (it keeps a copy of the table as it
 * found it, `below`, and calls that) stands after them. */
static const struct dist_layer {
    const char *name;
    void (*install)(struct sluice_cl_api *api);
} dist_layers[] = {
    {"devices", dist_devices_install},         /* platforms and devices (dist_devices.c) */
    {"objects", dist_objects_install},         /* contexts, queues, buffers (dist_objects.c) */
    {"programs", dist_program_install},        /* programs and kernels (dist_program.c) */
    {"commands", dist_exec_install},           /* every enqueue, events (dist_exec.c, dist_event.c) */
    {"native", dist_native_install},           /* clEnqueueNativeKernel (dist_native.c) */
    {"images", dist_image_install},            /* images, samplers; wraps the unmap slot (dist_image.c) */
    {"host_access", dist_host_access_install}, /* CL_MEM_HOST_*: wraps the command slots */
    {"legacy", dist_legacy_install},           /* OpenCL 1.0 commands over their 1.2 slots */
};

static void begin_rank0(bool asked)
{
    MPI_Comm comm = sluice_comm();
    if (comm == MPI_COMM_NULL) {
        if (!asked)
            return; /* leaving: another process of rank 0 has ended the servers */
        int owner = sluice_mpi_owner_pid();
        sluice_log_warn("opencl: SLUICE_OPENCL=distributed: rank 0's MPI %s process %d, and MPI starts once "
                        "per rank; this process (%d) sees only its own devices",
                        owner > 0 && kill(owner, 0) == 0 ? "belongs to" : "was used by the ended", owner,
                        (int)getpid());
        return;
    }
    sluice_helper_cpus_plan(comm, 0); /* collective, as the servers' in serve() */
    sluice_cl_init();
    for (size_t i = 0; i < sizeof dist_layers / sizeof dist_layers[0]; i++)
        dist_layers[i].install(&dist_backend.api);
    active = true;
    sluice_mpi_on_finalize(end_servers);
}

static void begin_once(bool asked)
{
    if (beginning)
        return;
    pthread_mutex_lock(&begin_lock);
    if (!begun) {
        beginning = true;
        begin_rank0(asked);
        beginning = false;
        begun = true;
    }
    pthread_mutex_unlock(&begin_lock);
}

bool sluice_cl_dist_begin(void)
{
    if (__atomic_load_n(&rank0_pending, __ATOMIC_ACQUIRE) && !__atomic_load_n(&begun, __ATOMIC_ACQUIRE))
        begin_once(true);
    return active && !beginning;
}

/* Rank 0 leaving without any of its processes having asked for OpenCL: the servers wait in
 * MPI's start-up for rank 0, so the rank's own process (the launcher's child) takes MPI now to
 * end them. So does any other process of rank 0 when that one has no sluice loaded (it would
 * never do it). Returns true if MPI was taken here and is to be finalized. */
bool dist_rank0_leaving(void)
{
    if (!__atomic_load_n(&rank0_pending, __ATOMIC_ACQUIRE) || __atomic_load_n(&begun, __ATOMIC_ACQUIRE))
        return false;
    if (!sluice_launcher_child()) {
        int root = sluice_rank_root_pid();
        if (root <= 0 || sluice_process_preloaded(root))
            return false;
    }
    begin_once(false);
    return active;
}

static bool serve_pending; /* a serving rank's shell: serve from a later process or at exit */

/* True if the program's own getenv/setenv replace libc's (bash does). */
static bool program_owns_environment(void)
{
    void *libc = dlopen("libc.so.6", RTLD_NOLOAD | RTLD_LAZY);
    void *mine = sluice_real_dlsym(RTLD_DEFAULT, "setenv");
    void *real = libc ? sluice_real_dlsym(libc, "setenv") : NULL;
    if (libc)
        dlclose(libc);
    return mine != NULL && real != NULL && mine != real;
}

/* Serves the rank's devices until rank 0 ends the job, then leaves through exit(0) (or, called
 * at exit, finalizes and returns to the exit under way). A process
 * of a serving rank whose MPI belongs to another process (the rank's server, or a server that
 * already ended) runs as a plain local OpenCL process. */
static void serve(int rank, bool at_exit)
{
    MPI_Comm comm = sluice_comm();
    if (comm == MPI_COMM_NULL) {
        if (sluice_mpi_owner_pid() > 0) {
            setenv("SLUICE_OPENCL", "on", 1);
            return;
        }
        sluice_fatal(1,
                     "opencl: SLUICE_OPENCL=distributed needs MPI, which cannot be used in this process "
                     "(rank %d); it cannot serve its devices",
                     rank);
    }
    /* Before OpenCL starts: the driver's threads inherit where the serving thread may run. */
    sluice_helper_cpus_plan(comm, 1);
    sluice_cl_init();
    /* Processes a serving rank starts (PoCL runs its linker to build kernels) inherit the
     * preload and the launcher's rank: they are helpers, not servers, so they get plain
     * pass-through OpenCL and never look for MPI. */
    setenv("SLUICE_OPENCL", "on", 1);
    dist_fault_serving(rank);
    sluice_remote_serve(comm);
    /* Library destructors do not run MPI's finalization for a process that leaves from
     * inside this constructor, and MPICH's launcher kills the job when a rank ends without
     * it: finalize here, through the same sequence as the program's MPI_Finalize. */
    sluice_mpi_app_finalize();
    if (!at_exit)
        exit(0);
}

__attribute__((constructor(SLUICE_PRIO_OPENCL))) static void dist_start(void)
{
    if (!distributed_mode() || !sluice_under_launcher() || sluice_launch_size() < 2)
        return;
    /* A bad SLUICE_DEVICES stops every rank before MPI (dql_check.c says the same, but its
     * constructor may come after this one, which never returns on a serving rank). */
    if (sluice_config.is_set[SLUICE_CFG_DEVICES] && !sluice_dql_blank(sluice_config.DEVICES)) {
        struct sluice_dql_query *q = NULL;
        char err[512];
        if (sluice_dql_parse(sluice_config.DEVICES, &q, err, sizeof err) != 0)
            sluice_fatal_config("SLUICE_DEVICES: %s", err);
        sluice_dql_free(q);
    }
    int rank = sluice_launch_rank();
    world = sluice_launch_size();
    if (world > DIST_MAX_RANKS) {
        sluice_fatal(2, "opencl: SLUICE_OPENCL=distributed supports at most %d ranks, the job has %d",
                     DIST_MAX_RANKS, world);
    }
    sluice_remote_peer_ops_set(&peer_ops); /* before the first message, on every rank */
    if (rank == 0) {
        __atomic_store_n(&rank0_pending, true, __ATOMIC_RELEASE);
        return;
    }
    if (program_owns_environment()) {
        /* bash replaces getenv/setenv with its own, which lose variables before its main has
         * run: MPI started here misses the launcher's PMI_FD and starts alone. Serve from the
         * next preloaded process of the rank (the program the shell runs), or from this one's
         * exit if it runs none. */
        serve_pending = true;
        return;
    }
    serve(rank, false);
}

/* Before the MPI part's exit hooks (SLUICE_PRIO_PROGRESS + 1): rank 0 ends the servers it never
 * began with; a serving rank whose shell ran no preloaded program serves now. */
__attribute__((destructor(SLUICE_PRIO_OPENCL))) static void dist_exit(void)
{
    if (serve_pending && sluice_launcher_child()) {
        serve_pending = false;
        serve(sluice_launch_rank(), true);
    }
    dist_rank0_leaving();
}

/* ---- platforms ---------------------------------------------------------------------------- */

static struct dist_platform *platforms[16];
static int nplatforms;
static bool enumerated;

static struct dist_platform *platform_named(const char *name, int rank, uint64_t rid)
{
    for (int i = 0; i < nplatforms; i++)
        if (strcmp(platforms[i]->name, name) == 0)
            return platforms[i];
    if (nplatforms == (int)(sizeof platforms / sizeof platforms[0]))
        return NULL;
    struct dist_platform *p = calloc(1, sizeof *p);
    if (p == NULL)
        return NULL;
    if ((p->name = strdup(name)) == NULL) {
        free(p);
        return NULL;
    }
    p->rank = rank;
    p->rid = rid;
    platforms[nplatforms++] = p;
    return p;
}

struct dist_platform *dist_platform_of_rank(int rank, uint64_t rid)
{
    for (int i = 0; i < nplatforms; i++)
        if (platforms[i]->rids[rank] == rid)
            return platforms[i];
    return NULL;
}

/* Takes the next `n` bytes of the reply `m` at *off; false if the reply ends before them. */
static bool take(const struct sluice_remote_msg *m, size_t *off, void *dst, size_t n)
{
    if (*off > m->rep.nbytes || n > m->rep.nbytes - *off)
        return false;
    memcpy(dst, m->bytes + *off, n);
    *off += n;
    return true;
}

/* The strings of a received descriptor end inside their arrays. */
static void terminate_strings(struct sluice_dql_device *d)
{
#define TERM_STR(id) d->id[sizeof d->id - 1] = '\0';
#define TERM_NUM(id)
#define TERM_SIZE(id)
#define TERM_BOOL(id)
#define TERM_TYPE(id)
#define TERM_COMPUTED(id)
#define SLUICE_DQL_ATTR(id, alias, kind, source, meaning) TERM_##kind(id)
#include "cl/dql/dql_attrs.def"
#undef SLUICE_DQL_ATTR
}

/* A rank's device list that ends inside a record (another sluice on that rank, a broken reply)
 * would give devices made of garbage: the job ends with one line naming the rank. */
__attribute__((noreturn)) static void cut_short(int rank, size_t nbytes, size_t off, const char *record)
{
    char why[256];
    snprintf(why, sizeof why,
             "listing its OpenCL devices (its reply of %zu bytes ends inside %s at byte %zu)", nbytes, record,
             off);
    dist_fault_peer(rank, MPI_ERR_TRUNCATE, why);
}

/* Asks every rank, in rank order, for its platforms and devices: rank order is device order
 * within a merged platform. The received size (MPI_Get_count, dist_call) bounds every record. */
static void enumerate(void)
{
    for (int r = 0; r < world; r++) {
        struct sluice_remote_msg m;
        cl_int ret = dist_call(r, SLUICE_REMOTE_ENUM, NULL, 0, NULL, 0, &m);
        size_t off = 0;
        while (ret == CL_SUCCESS && off < m.rep.nbytes) {
            struct sluice_remote_enum_platform rec;
            if (!take(&m, &off, &rec, sizeof rec))
                cut_short(r, (size_t)m.rep.nbytes, off, "a platform's record");
            char *name = rec.name_len < m.rep.nbytes ? calloc(1, (size_t)rec.name_len + 1) : NULL;
            if (name == NULL || !take(&m, &off, name, (size_t)rec.name_len))
                cut_short(r, (size_t)m.rep.nbytes, off, "a platform's name");
            struct dist_platform *p = platform_named(name, r, rec.rid);
            free(name);
            if (p != NULL)
                p->rids[r] = rec.rid;
            for (uint64_t d = 0; d < rec.ndev; d++) {
                struct sluice_remote_enum_device dr;
                struct sluice_dql_device *desc = malloc(sizeof *desc);
                if (!take(&m, &off, &dr, sizeof dr) || (desc != NULL && !take(&m, &off, desc, sizeof *desc)))
                    cut_short(r, (size_t)m.rep.nbytes, off, "a device's record");
                if (desc == NULL) {
                    off += sizeof *desc; /* out of memory: this device is left out */
                    continue;
                }
                terminate_strings(desc);
                struct dist_device *dev =
                    p != NULL && p->ndev < DIST_MAX_DEVICES ? calloc(1, sizeof *dev) : NULL;
                if (dev == NULL) {
                    free(desc);
                    continue;
                }
                dev->dql = desc;
                dev->rank = r;
                dev->rid = dr.rid;
                dev->type = (cl_device_type)dr.type;
                dev->platform = p;
                p->devs[p->ndev++] = dev;
                dist_fault_note_device(r, desc->name);
            }
        }
        if (ret != CL_SUCCESS)
            sluice_log_error("opencl: rank %d did not list its OpenCL devices (error %d)", r, ret);
        free(m.bytes);
    }
}

/* SLUICE_DEVICES: keeps the devices the query selects, in its order (within each platform),
 * and drops platforms left with none. The query was validated at load (dql_check.c). */
static void apply_device_query(void)
{
    const char *text = sluice_config.DEVICES;
    if (!sluice_config.is_set[SLUICE_CFG_DEVICES] || sluice_dql_blank(text))
        return;
    struct sluice_dql_query *q = NULL;
    char err[512];
    if (sluice_dql_parse(text, &q, err, sizeof err) != 0)
        sluice_fatal_config("SLUICE_DEVICES: %s", err);
    size_t n = 0;
    for (int i = 0; i < nplatforms; i++)
        n += (size_t)platforms[i]->ndev;
    struct sluice_dql_device *descs = calloc(n ? n : 1, sizeof *descs);
    struct dist_device **all = calloc(n ? n : 1, sizeof *all);
    size_t *out = calloc(n ? n : 1, sizeof *out);
    size_t count = 0;
    if (descs == NULL || all == NULL || out == NULL) {
        sluice_log_error("opencl: SLUICE_DEVICES: out of memory; every device is shown");
        goto done;
    }
    size_t k = 0;
    for (int i = 0; i < nplatforms; i++)
        for (int d = 0; d < platforms[i]->ndev; d++, k++) {
            all[k] = platforms[i]->devs[d];
            descs[k] = *all[k]->dql;
        }
    int attr = 0;
    size_t cut = sluice_dql_reads_cut(q, descs, n, &attr);
    if (cut < n)
        sluice_fatal_config(
            "SLUICE_DEVICES: the %s of device %llu of rank %llu is longer than the %d bytes a query "
            "compares, so the query's answer could be wrong: query other attributes",
            sluice_dql_attrs[attr].name, (unsigned long long)descs[cut].index,
            (unsigned long long)descs[cut].node, SLUICE_DQL_STR_MAX - 1);
    if (sluice_dql_select(q, descs, n, out, &count) != 0) {
        sluice_log_error("opencl: SLUICE_DEVICES: out of memory; every device is shown");
        goto done;
    }
    int kept = 0;
    for (int i = 0; i < nplatforms; i++) {
        struct dist_platform *p = platforms[i];
        p->ndev = 0;
        for (size_t j = 0; j < count; j++)
            if (all[out[j]]->platform == p)
                p->devs[p->ndev++] = all[out[j]];
        /* A query that selects nothing keeps the platforms, empty: device queries then say
         * CL_DEVICE_NOT_FOUND, as a local platform without matching devices does (DQL.md). */
        if (p->ndev > 0 || count == 0)
            platforms[kept++] = p;
    }
    nplatforms = kept;
    if (count == 0)
        sluice_log_error("opencl: SLUICE_DEVICES=\"%s\" selects none of the %zu devices of %d ranks: "
                         "the program sees no device",
                         text, n, dist_size());
done:
    free(descs);
    free(all);
    free(out);
    sluice_dql_free(q);
}

struct dist_platform *dist_default_platform(void)
{
    cl_platform_id h = NULL;
    if (sluice_cl_dist_platform_ids(1, &h, NULL) != CL_SUCCESS)
        return NULL;
    struct sluice_cl_obj *o = sluice_cl_valid(h, SLUICE_CL_PLATFORM);
    return o ? (struct dist_platform *)o->real : NULL;
}

cl_int sluice_cl_dist_platform_ids(cl_uint num_entries, cl_platform_id *platforms_out, cl_uint *num_platforms)
{
    SLUICE_RETURN_ERROR_ON(
        (platforms_out == NULL && num_platforms == NULL) || (platforms_out != NULL && num_entries == 0),
        CL_INVALID_VALUE,
        "(platforms_out == NULL && num_platforms == NULL) || (platforms_out != NULL && num_entries == 0)");
    pthread_mutex_lock(&dist_lock);
    if (!enumerated) {
        enumerate();
        apply_device_query();
        enumerated = true;
    }
    cl_uint n = (cl_uint)nplatforms;
    for (cl_uint i = 0; platforms_out != NULL && i < n && i < num_entries; i++)
        platforms_out[i] =
            (cl_platform_id)sluice_cl_wrap_persistent(SLUICE_CL_PLATFORM, platforms[i], NULL, &dist_backend);
    pthread_mutex_unlock(&dist_lock);
    if (num_platforms != NULL)
        *num_platforms = n;
    return n == 0 ? CL_PLATFORM_NOT_FOUND_KHR : CL_SUCCESS;
}
