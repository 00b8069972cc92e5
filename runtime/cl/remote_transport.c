/* Message transport of distributed OpenCL over sluice's communicator. Every wait probes and
 * micro-sleeps (1 us doubling to 1 ms): a blocking MPI_Recv in MPICH polls and would keep a
 * core busy on an idle serving rank, which halves rank 0's memory bandwidth on small nodes. */
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cl/remote_proto.h"
#include "progress/backoff.h"
#include "trace/trace.h"

#define WAIT_MIN_NS 1000u
#define WAIT_MAX_NS 250000u
#define PIECE ((size_t)1 << 30) /* MPI counts are int: large data goes in 1 GiB pieces */

int sluice_remote_wait_probe(MPI_Comm comm, int src, int tag, MPI_Status *st)
{
    struct sluice_backoff b;
    sluice_backoff_init(&b, WAIT_MIN_NS, WAIT_MAX_NS);
    for (;;) {
        int flag = 0;
        int rc = MPI_Iprobe(src, tag, comm, &flag, st);
        if (rc != MPI_SUCCESS)
            return rc;
        if (flag)
            return MPI_SUCCESS;
        uint64_t ns = sluice_backoff_next(&b);
        struct timespec ts = {(time_t)(ns / 1000000000u), (long)(ns % 1000000000u)};
        sluice_time_state prev = sluice_time_enter(SLUICE_TIME_SLEEP);
        nanosleep(&ts, NULL);
        sluice_time_leave(prev);
    }
}

int sluice_remote_send(MPI_Comm comm, int dst, int tag, const void *head, size_t head_len,
                       const void *payload, size_t payload_len)
{
    size_t len = head_len + payload_len;
    if (len > INT_MAX)
        return MPI_ERR_COUNT;
    unsigned char *buf = malloc(len ? len : 1);
    if (buf == NULL)
        return MPI_ERR_NO_MEM;
    memcpy(buf, head, head_len);
    if (payload_len)
        memcpy(buf + head_len, payload, payload_len);
    int rc = MPI_Send(buf, (int)len, MPI_BYTE, dst, tag, comm);
    free(buf);
    return rc;
}

int sluice_remote_recv(MPI_Comm comm, int src, int tag, unsigned char **out, size_t *out_len)
{
    MPI_Status st;
    int rc = sluice_remote_wait_probe(comm, src, tag, &st);
    if (rc != MPI_SUCCESS)
        return rc;
    int count = 0;
    MPI_Get_count(&st, MPI_BYTE, &count);
    unsigned char *buf = malloc(count ? (size_t)count : 1);
    if (buf == NULL)
        return MPI_ERR_NO_MEM;
    rc = MPI_Recv(buf, count, MPI_BYTE, st.MPI_SOURCE, tag, comm, MPI_STATUS_IGNORE);
    if (rc != MPI_SUCCESS) {
        free(buf);
        return rc;
    }
    *out = buf;
    *out_len = (size_t)count;
    return MPI_SUCCESS;
}

int sluice_remote_data_send(MPI_Comm comm, int dst, const void *data, size_t len)
{
    uint64_t t0 = sluice_trace_active() ? sluice_now_ns() : 0;
    for (size_t off = 0; off < len || off == 0; off += PIECE) {
        size_t n = len - off < PIECE ? len - off : PIECE;
        int rc = MPI_Send((const char *)data + off, (int)n, MPI_BYTE, dst, SLUICE_REMOTE_TAG_DATA, comm);
        if (rc != MPI_SUCCESS)
            return rc;
        if (len == 0)
            break;
    }
    if (sluice_trace_active())
        sluice_trace_record(SLUICE_EV_MPI_SEND, 0, t0, sluice_now_ns() - t0, (uint64_t)dst, len,
                            SLUICE_REMOTE_TAG_DATA);
    return MPI_SUCCESS;
}

int sluice_remote_data_recv(MPI_Comm comm, int src, void *data, size_t len)
{
    uint64_t t0 = sluice_trace_active() ? sluice_now_ns() : 0;
    for (size_t off = 0; off < len || off == 0; off += PIECE) {
        size_t n = len - off < PIECE ? len - off : PIECE;
        MPI_Status st;
        int rc = sluice_remote_wait_probe(comm, src, SLUICE_REMOTE_TAG_DATA, &st);
        if (rc == MPI_SUCCESS)
            rc = MPI_Recv((char *)data + off, (int)n, MPI_BYTE, src, SLUICE_REMOTE_TAG_DATA, comm,
                          MPI_STATUS_IGNORE);
        if (rc != MPI_SUCCESS)
            return rc;
        if (len == 0)
            break;
    }
    if (sluice_trace_active())
        sluice_trace_record(SLUICE_EV_MPI_RECV, 0, t0, sluice_now_ns() - t0, (uint64_t)src, len,
                            SLUICE_REMOTE_TAG_DATA);
    return MPI_SUCCESS;
}
