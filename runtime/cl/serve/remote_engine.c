/* SPDX-License-Identifier: MIT */
/* The command engine of a rank: turns rank 0's commands (CMD_* requests) into real OpenCL
 * enqueues at once, without waiting for anything, and reports each command's end. One per
 * process: serving ranks run it from their serving loop, rank 0 from its scheduler thread for its
 * own devices.
 *
 * What a command waits for, as real event wait lists:
 * - earlier commands of this rank it depends on: their real events;
 * - commands of other ranks and user events: a real user event, set when rank 0 NOTIFYs;
 * - buffer transfers: a command that uses a buffer waits for the coherence transfers of that
 *   buffer still in flight here (inbound always, outbound when it writes), and a transfer waits
 *   for every earlier use that writes (outbound) or for every earlier use (inbound), so data
 *   leaves after its last writer and is never overwritten while it is still being read out.
 * Bulk data arrives and leaves in pieces (sluice_remote_chunk): a piece is written to the device
 * as soon as it arrived (its write waits on a user event set when its Irecv completed), and sent
 * as soon as it was read. Real-event callbacks only queue a note and wake the loop; the loop
 * thread makes every MPI call.
 *
 * This file is the engine's loop: callback notes, progress (completions, DONE records with
 * profiling times) and the serving loop of a serving rank. Its parts: remote_engine.h. */
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <time.h>

#include "cl/serve/remote_engine.h"
#include "threads/helper_threads.h"
#include "trace/trace.h"

struct note {
    struct eng_cmd *c;
    long piece; /* SLUICE_ENG_FINAL, SLUICE_ENG_MAP or a piece */
    cl_int status;
    struct note *next;
};

pthread_mutex_t sluice_eng_lock = PTHREAD_MUTEX_INITIALIZER;
static int data_active; /* see sluice_engine_data_active */

/* Callback notes and the loop's wake-up (callbacks run on the implementation's threads). */
static pthread_mutex_t note_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t note_cond;
static pthread_once_t note_once = PTHREAD_ONCE_INIT;
static struct note *notes, **notes_tail = &notes;
static int woken;

static void note_init(void)
{
    pthread_condattr_t a;
    pthread_condattr_init(&a);
    pthread_condattr_setclock(&a, CLOCK_MONOTONIC);
    pthread_cond_init(&note_cond, &a);
    pthread_condattr_destroy(&a);
}

void sluice_engine_wake(void)
{
    pthread_once(&note_once, note_init);
    pthread_mutex_lock(&note_lock);
    woken = 1;
    pthread_cond_signal(&note_cond);
    pthread_mutex_unlock(&note_lock);
}

int sluice_engine_wait(uint64_t ns)
{
    pthread_once(&note_once, note_init);
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    ns += (uint64_t)ts.tv_nsec;
    ts.tv_sec += (time_t)(ns / 1000000000u);
    ts.tv_nsec = (long)(ns % 1000000000u);
    sluice_time_state prev = sluice_time_enter(SLUICE_TIME_SLEEP);
    pthread_mutex_lock(&note_lock);
    if (!woken && notes == NULL)
        pthread_cond_timedwait(&note_cond, &note_lock, &ts);
    int was = woken || notes != NULL;
    woken = 0;
    pthread_mutex_unlock(&note_lock);
    sluice_time_leave(prev);
    return was;
}

static void CL_CALLBACK on_event(cl_event ev, cl_int status, void *arg);

struct cb_arg {
    struct eng_cmd *c;
    long piece;
};

static void CL_CALLBACK on_event(cl_event ev, cl_int status, void *arg)
{
    (void)ev;
    struct cb_arg *a = arg;
    struct note *n = malloc(sizeof *n);
    pthread_once(&note_once, note_init);
    pthread_mutex_lock(&note_lock);
    if (n != NULL) {
        *n = (struct note){a->c, a->piece, status, NULL};
        *notes_tail = n;
        notes_tail = &n->next;
    }
    woken = 1;
    pthread_cond_signal(&note_cond);
    pthread_mutex_unlock(&note_lock);
    free(a);
}

int sluice_eng_watch(struct eng_cmd *c, cl_event ev, long piece)
{
    struct cb_arg *a = malloc(sizeof *a);
    if (a == NULL)
        return 0;
    *a = (struct cb_arg){c, piece};
    if (api()->clSetEventCallback(ev, CL_COMPLETE, on_event, a) != CL_SUCCESS) {
        free(a);
        return 0;
    }
    c->cbs++;
    return 1;
}

int sluice_engine_data_active(void)
{
    return __atomic_load_n(&data_active, __ATOMIC_RELAXED);
}

/* A device's profiling clock minus this process's CLOCK_MONOTONIC. From clGetDeviceAndHostTimer
 * (the device's time at a moment whose monotonic time is taken around the call) where the driver
 * has it, measured once per device. PoCL 3.1 has not, and profiles on CLOCK_MONOTONIC_RAW (313 ms
 * apart from CLOCK_MONOTONIC on the test VM after an hour): then the offset is the least
 * difference seen between a command's QUEUED stamp and the moment it came here (the driver stamps
 * it inside the enqueue, so never earlier), an estimate that only gets closer (Cristian's). */
static int64_t device_offset(cl_command_queue q, uint64_t queued_dev, uint64_t came)
{
    static struct {
        cl_device_id dev;
        int64_t off;
        int timer; /* from clGetDeviceAndHostTimer */
    } known[16];
    static int nknown;
    cl_device_id dev = NULL;
    if (api()->clGetCommandQueueInfo(q, CL_QUEUE_DEVICE, sizeof dev, &dev, NULL) != CL_SUCCESS)
        return 0;
    int64_t seen = (int64_t)queued_dev - (int64_t)came;
    for (int i = 0; i < nknown; i++)
        if (known[i].dev == dev) {
            if (!known[i].timer && seen < known[i].off)
                known[i].off = seen;
            return known[i].off;
        }
    int64_t off = seen;
    cl_ulong dts = 0, hts = 0;
    uint64_t t0 = sluice_now_ns();
    int timer = api()->clGetDeviceAndHostTimer != NULL &&
                api()->clGetDeviceAndHostTimer(dev, &dts, &hts) == CL_SUCCESS && dts != 0;
    if (timer)
        off = (int64_t)dts - (int64_t)(t0 + (sluice_now_ns() - t0) / 2);
    if (nknown < 16) {
        known[nknown].dev = dev;
        known[nknown].timer = timer;
        known[nknown++].off = off;
    }
    return off;
}

static void times_of(struct eng_cmd *c, struct sluice_remote_done *d)
{
    static const cl_profiling_info params[4] = {CL_PROFILING_COMMAND_QUEUED, CL_PROFILING_COMMAND_SUBMIT,
                                                CL_PROFILING_COMMAND_START, CL_PROFILING_COMMAND_END};
    if (!(c->flags & SLUICE_CMD_PROFILE) || c->ev == NULL || c->status < 0)
        return;
    for (int i = 0; i < 4; i++) {
        /* Several pieces: the first one's start, the command event's end. */
        cl_event e = (i < 3 && c->piece_ev != NULL && c->piece_ev[0] != NULL) ? c->piece_ev[0] : c->ev;
        cl_ulong t = 0;
        if (api()->clGetEventProfilingInfo(e, params[i], sizeof t, &t, NULL) != CL_SUCCESS) {
            memset(d->t, 0, sizeof d->t);
            return;
        }
        d->t[i] = t;
    }
    int64_t off = device_offset(c->q, d->t[0], c->t_enq);
    for (int i = 0; i < 4; i++)
        d->t[i] = (uint64_t)((int64_t)d->t[i] - off);
}

static void free_cmd(struct eng_cmd *c)
{
    sluice_cma_end(c->cma); /* its copies into staging or the mapped buffer end first */
    c->cma = NULL;
    if (c->status < 0) /* its events may still be on notify lists (remote_tracking.c) */
        sluice_eng_hold_failed(c);
    if (c->ev != NULL)
        api()->clReleaseEvent(c->ev);
    if (c->map_ev != NULL)
        api()->clReleaseEvent(c->map_ev);
    for (size_t i = 0; i < c->npieces; i++) {
        if (c->piece_ev != NULL && c->piece_ev[i] != NULL)
            api()->clReleaseEvent(c->piece_ev[i]);
    }
    for (size_t i = 0; i < c->nwait; i++)
        api()->clReleaseEvent(c->wait[i]);
    free(c->wait);
    free(c->piece_ev);
    free(c->reqs);
    sluice_eng_staging_release(c->staging, c->staging_cap);
    sluice_eng_allgather_free(c);
    sluice_eng_chain_free(c);
    if (c->zombie) { /* a late callback may still name it: keep the small struct */
        memset(c, 0, sizeof *c);
        c->zombie = 1;
        return;
    }
    free(c);
}

/* Takes the notes the callbacks queued (note_lock), oldest first. */
static struct note *take_notes(void)
{
    pthread_mutex_lock(&note_lock);
    struct note *n = notes;
    notes = NULL;
    notes_tail = &notes;
    pthread_mutex_unlock(&note_lock);
    return n;
}

/* Applies and frees the callback notes `n`; under sluice_eng_lock. */
static void apply_notes(struct note *n, int *progress)
{
    while (n != NULL) {
        struct note *next = n->next;
        struct eng_cmd *c = n->c;
        c->cbs--;
        *progress = 1;
        if (n->piece == SLUICE_ENG_MAP) { /* the map of a write from a peer completed */
            if (n->status < 0) {
                c->status = n->status;
                c->mapped = NULL; /* nothing was mapped */
            }
            if (!c->posted && c->op == SLUICE_REMOTE_CMD_READ)
                sluice_eng_post_sends(c);
            else if (!c->posted)
                sluice_eng_post_receives(c);
        } else if (n->piece < 0) {
            c->dev_done = 1;
            if (n->status < 0 && c->status >= 0)
                c->status = n->status;
        } else if (c->op == SLUICE_REMOTE_CMD_READ) {
            sluice_eng_send_read_pieces(c, n->piece);
        }
        free(n);
        n = next;
    }
}

/* True when this round asks commands' statuses: PoCL calls no callback for a command failed by
 * its wait list, so such commands are found by asking, at most every millisecond. Every 100 ms it
 * also prunes the tracking tables. */
static int periodic_work(uint64_t now)
{
    static uint64_t last_poll;
    int poll = now - last_poll > 1000000;
    if (poll)
        last_poll = now;
    static uint64_t last_prune;
    if (now - last_prune > 100000000) { /* every 100 ms */
        last_prune = now;
        sluice_eng_track_prune();
        sluice_eng_held_sweep();
    }
    return poll;
}

/* The blocked command's map: when its wait list failed, PoCL calls no callback, so the command
 * fails here and its pieces are posted (to be drained). */
static void check_blocked_map(struct eng_cmd *c)
{
    cl_int st = CL_COMPLETE;
    if (api()->clGetEventInfo(c->map_ev, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof st, &st, NULL) !=
            CL_SUCCESS ||
        st >= 0)
        return;
    c->status = st;
    c->mapped = NULL;
    c->zombie = 1;
    c->cbs = 0;
    if (c->op == SLUICE_REMOTE_CMD_READ)
        sluice_eng_post_sends(c);
    else
        sluice_eng_post_receives(c);
}

/* Callbacks may come late (NVIDIA's for a write from host memory: about 20 ms after it
 * completed), so the loop also asks: the next pieces of a read to a peer, and the final
 * event; a late callback then only frees the command. A command is asked at intervals of
 * an eighth of the time since its last device work was enqueued, from 2 us to 50 us: a
 * late callback costs a short command at most that, and a long transfer at most 50 us
 * (asking in every round of a polling loop seemed to slow NVIDIA's copies; every 50 us did
 * not). A write from a peer counts from its last piece's device copy, which takes 20 us
 * for 1 MiB on the GPU machine: counted from its arrival, a 16 MiB write's end was asked
 * about every 50 us. At most 64 commands are asked per round (`asked`). */
static void ask_device(struct eng_cmd *c, uint64_t now, size_t *asked, int *progress)
{
    int want_send = c->op == SLUICE_REMOTE_CMD_READ && c->reqs != NULL && c->sent < c->npieces &&
                    c->staging != NULL && (c->rect ? c->ev != NULL : c->piece_ev != NULL);
    int want_status = !c->dev_done && c->ev != NULL && c->cbs > 0;
    if (!(want_send || want_status) || now < c->next_ask || *asked >= 64)
        return;
    (*asked)++;
    uint64_t gap = (now - c->t_ready) / 8;
    c->next_ask = now + (gap < 2000 ? 2000 : gap > 50000 ? 50000 : gap);
    size_t sent = c->sent;
    if (want_send)
        sluice_eng_send_read_pieces(c, SLUICE_ENG_FINAL);
    *progress |= c->sent != sent;
    cl_int st = CL_QUEUED;
    if (want_status &&
        api()->clGetEventInfo(c->ev, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof st, &st, NULL) == CL_SUCCESS &&
        st == CL_COMPLETE) {
        c->dev_done = 1;
        *progress = 1;
    }
}

/* Reports the end of command `c` (device and MPI done) once: its DONE record into `d` unless it
 * is silent (returns whether it wrote one), its failure, its trace records. */
static int report_end(struct eng_cmd *c, struct sluice_remote_done *d)
{
    c->reported = 1;
    int wrote = !(c->flags & SLUICE_CMD_SILENT);
    if (wrote) {
        memset(d, 0, sizeof *d);
        d->id = c->id;
        d->status = c->status;
        times_of(c, d);
    }
    if (c->status < 0)
        sluice_eng_failed_add(c->id, c->status);
    if (sluice_trace_active() && c->op == SLUICE_REMOTE_CMD_WRITE &&
        ((c->flags & (SLUICE_CMD_TRANSFER | SLUICE_CMD_BCAST | SLUICE_CMD_SCATTER | SLUICE_CMD_ALLGATHER)) ||
         c->peer != 0))
        sluice_eng_trace_inbound(c); /* a move, a broadcast, or a write whose data came from a peer */
    else if (sluice_trace_active() && c->op == SLUICE_REMOTE_CMD_WRITE && c->reqs != NULL)
        sluice_trace_instant(SLUICE_EV_MSG_RECV, 0, c->size, (uint64_t)SLUICE_REMOTE_DATA_TAG(c->id));
    return wrote;
}

size_t sluice_engine_progress(struct sluice_remote_done *out, size_t max, int *progress)
{
    *progress = 0;
    struct note *n = take_notes();
    pthread_mutex_lock(&sluice_eng_lock);
    apply_notes(n, progress);
    sluice_eng_shields_sweep();
    size_t k = 0;
    uint64_t now = sluice_now_ns();
    int poll = periodic_work(now);
    int active = 0;
    size_t asked = 0;
    for (struct eng_cmd *c = sluice_eng_all, *next; c != NULL && k < max; c = next) {
        next = c->next;
        if (poll && !c->dev_done && c->ev != NULL)
            sluice_eng_failed_silently(c);
        if (poll && c == sluice_eng_blocked && c->map_ev != NULL && !c->posted)
            check_blocked_map(c);
        ask_device(c, now, &asked, progress);
        int md = sluice_eng_mpi_done(c, progress);
        active |= !md && c->size >= SLUICE_REMOTE_DATA_HOT_MIN && sluice_eng_reqs_pending(c);
        if (!c->dev_done || !md)
            continue;
        if (!c->reported) {
            if (report_end(c, &out[k]))
                k++;
            *progress = 1;
        }
        if (c->cbs == 0) { /* its last callback came */
            sluice_eng_unlink(c);
            free_cmd(c);
        }
    }
    __atomic_store_n(&data_active, active, __ATOMIC_RELAXED);
    pthread_mutex_unlock(&sluice_eng_lock);
    return k;
}

/* A serving rank's ping thread: answers rank 0's liveness pings (dist_alive.c) at once, even
 * while the serving loop is busy in a long build or command, so that only a stopped or wedged
 * rank stays silent. It naps 20 ms between probes (a ping is due after 2 s of waiting). The
 * counts make the end clean (end_job). */
static int pong_stop;
static uint64_t pings_got, pongs_sent;

static void *pong_main(void *arg)
{
    MPI_Comm comm = *(MPI_Comm *)arg;
    sluice_helper_thread_enter("sluice-pong");
    while (!__atomic_load_n(&pong_stop, __ATOMIC_ACQUIRE)) {
        int flag = 0;
        if (MPI_Iprobe(0, SLUICE_REMOTE_TAG_PING, comm, &flag, MPI_STATUS_IGNORE) != MPI_SUCCESS)
            break;
        if (flag) {
            uint64_t t = 0;
            if (PMPI_Recv(&t, sizeof t, MPI_BYTE, 0, SLUICE_REMOTE_TAG_PING, comm, MPI_STATUS_IGNORE) !=
                MPI_SUCCESS)
                break;
            pings_got++;
            if (MPI_Send(&t, sizeof t, MPI_BYTE, 0, SLUICE_REMOTE_TAG_PONG, comm) != MPI_SUCCESS)
                break;
            pongs_sent++;
            continue;
        }
        struct timespec nap = {0, 20000000};
        nanosleep(&nap, NULL);
    }
    sluice_helper_thread_leave();
    return NULL;
}

/* After END, the ping thread joined: receives the pings of the `pings` rank 0 sent (END says how
 * many; none follow) that the thread had not, then answers END last with the pongs sent
 * (dist_role.c receives them). Bounded: the pings were sent before END. */
static void end_job(MPI_Comm comm, uint64_t pings)
{
    uint64_t t0 = sluice_now_ns();
    while (pings_got < pings && sluice_now_ns() - t0 < 5000000000ull) {
        int flag = 0;
        if (checked(MPI_Iprobe(0, SLUICE_REMOTE_TAG_PING, comm, &flag, MPI_STATUS_IGNORE), 0,
                    "ending the job") != MPI_SUCCESS)
            return;
        uint64_t t = 0;
        if (flag &&
            checked(PMPI_Recv(&t, sizeof t, MPI_BYTE, 0, SLUICE_REMOTE_TAG_PING, comm, MPI_STATUS_IGNORE), 0,
                    "ending the job") == MPI_SUCCESS)
            pings_got++;
        else if (!flag)
            sluice_remote_nap(1000000);
    }
    struct sluice_remote_rep rep = {.v = {pongs_sent, pings_got}};
    checked(sluice_remote_send(comm, 0, SLUICE_REMOTE_TAG_REP, &rep, sizeof rep, NULL, 0), 0,
            "ending the job");
}

static bool serve_loop(MPI_Comm comm, uint64_t *pings);

void sluice_remote_serve(MPI_Comm comm)
{
    static MPI_Comm pong_comm;
    pong_comm = comm;
    pthread_t pong;
    int have_pong = pthread_create(&pong, NULL, pong_main, &pong_comm) == 0;
    uint64_t pings = 0;
    bool ended = serve_loop(comm, &pings);
    __atomic_store_n(&pong_stop, 1, __ATOMIC_RELEASE);
    if (have_pong)
        pthread_join(pong, NULL);
    if (ended)
        end_job(comm, pings);
}

/* Serving ranks: requests from rank 0 in order; object calls answered at once, commands handed
 * to the engine; finished commands reported in batches. After END, what is in flight finishes
 * first (commands waiting for a NOTIFY that cannot come any more fail). */
static bool serve_loop(MPI_Comm comm, uint64_t *pings)
{
    prctl(PR_SET_TIMERSLACK, 1000UL); /* 1 us: the default 50 us would be most of a round trip */
    uint64_t last = sluice_now_ns();
    int ending = 0;
    struct sluice_remote_done done[64];
    for (;;) {
        int progress = 0, flag = 0;
        MPI_Status st;
        while (checked(MPI_Iprobe(0, SLUICE_REMOTE_TAG_REQ, comm, &flag, &st), 0, "waiting for requests") ==
                   MPI_SUCCESS &&
               flag) {
            unsigned char *buf = NULL;
            size_t len = 0;
            if (checked(sluice_remote_recv(comm, 0, SLUICE_REMOTE_TAG_REQ, &buf, &len), 0,
                        "receiving a request") != MPI_SUCCESS)
                return false;
            progress = 1;
            struct sluice_remote_req req;
            if (len < sizeof req) {
                free(buf);
                continue;
            }
            memcpy(&req, buf, sizeof req);
            if (req.nbytes > len - sizeof req)
                req.nbytes = len - sizeof req;
            if (req.op == SLUICE_REMOTE_END) {
                ending = 1;
                *pings = req.end.pings;
                sluice_engine_abandon();
            } else if (req.op == SLUICE_REMOTE_PING) {
                sluice_remote_set_chunk((size_t)req.ping.chunk); /* before any command: pieces cut alike */
                uint64_t clock[2] = {
                    0, req.ping.probe_addr != 0 &&
                           sluice_cma_probe((int)req.ping.pid, req.ping.probe_addr, req.ping.probe_word)};
                clock[0] = sluice_now_ns();
                checked(MPI_Send(clock, sizeof clock, MPI_BYTE, 0, SLUICE_REMOTE_TAG_CLOCK, comm), 0,
                        "answering a ping");
                sluice_trace_record(SLUICE_EV_MSG_SEND, 0, clock[0], 0, 0, sizeof clock,
                                    SLUICE_REMOTE_TAG_CLOCK);
            } else if (req.op == SLUICE_REMOTE_NOTIFY) {
                sluice_engine_notify(req.notify.id, req.notify.status);
            } else if (req.op == SLUICE_REMOTE_GROUP) {
                sluice_remote_group_comm(req.group.mask); /* rank 0 is in the same call now */
            } else if (sluice_remote_is_call(req.op)) {
                struct sluice_remote_msg out;
                if (sluice_engine_defer_release(&req, buf + sizeof req))
                    memset(&out, 0, sizeof out); /* CL_SUCCESS now, done after the deferred commands */
                else
                    sluice_remote_handle(&req, buf + sizeof req, &out);
                bool reply = sluice_remote_wants_reply(&req);
                int rc = !reply
                             ? MPI_SUCCESS
                             : checked(sluice_remote_send(comm, 0, SLUICE_REMOTE_TAG_REP, &out.rep,
                                                          sizeof out.rep, out.bytes, (size_t)out.rep.nbytes),
                                       0, "sending a reply");
                free(out.bytes);
                if (rc != MPI_SUCCESS) {
                    free(buf);
                    return false;
                }
            } else {
                sluice_engine_command(&req, buf + sizeof req);
            }
            free(buf);
        }
        int moved = 0;
        size_t n = sluice_engine_progress(done, 64, &moved);
        uint64_t t_send = sluice_now_ns(); /* (as in sluice_remote_send) */
        if (n > 0 &&
            checked(MPI_Send(done, (int)(n * sizeof done[0]), MPI_BYTE, 0, SLUICE_REMOTE_TAG_DONE, comm), 0,
                    "sending completions") != MPI_SUCCESS)
            return false;
        if (n > 0)
            sluice_trace_record(SLUICE_EV_MSG_SEND, 0, t_send, 0, 0, n * sizeof done[0],
                                SLUICE_REMOTE_TAG_DONE);
        if (ending && sluice_engine_inflight() == 0)
            return true;
        uint64_t waited = sluice_now_ns() - last;
        int data = sluice_engine_data_active();
        if (progress || moved) {
            last = sluice_now_ns();
        } else if (waited < SLUICE_REMOTE_HOT_NS || (data && waited < SLUICE_REMOTE_DATA_HOT_NS)) {
            sched_yield(); /* a request, or the rest of a transfer, is due: keep MPI moving */
        } else {
            /* Sleeps grow with the wait (transport): up to 100 us while data is moving, 250 us
             * with commands in flight, 2 ms after 50 ms idle with nothing in flight (an idle rank
             * costs well under 1 % of a core). */
            uint64_t ns = sluice_remote_idle_ns(waited, data ? 100000 : 250000);
            if (waited > 50000000 && sluice_engine_inflight() == 0)
                ns = 2000000;
            if (sluice_engine_wait(ns))
                last = sluice_now_ns(); /* a callback: a DONE is due */
        }
    }
}
