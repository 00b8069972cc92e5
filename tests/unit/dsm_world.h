/* SPDX-License-Identifier: MIT */
// The DSM of one process without MPI, for the test_dsm_*.cpp unit tests: D is set up as rank
// `rank` of `size` (every rank a server), messages to this rank go through the DSM's own queue
// (so a 1-rank world runs the whole protocol here), and messages to the other ranks are
// recorded in `sent` instead of going to MPI; a test plays those ranks by delivering their
// answers with deliver(). An optional responder answers a message as it is sent.
#ifndef SLUICE_TESTS_DSM_WORLD_H
#define SLUICE_TESTS_DSM_WORLD_H

#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

extern "C" {
#include "dsm/dsm.h"
}

struct DsmSent {
    int dst;
    dsm_msg m;
    std::string payload;
};

struct DsmWorld {
    static inline std::vector<DsmSent> sent;
    static inline std::function<void(const DsmSent &)> responder;

    DsmWorld(int size, int rank, size_t chunk = 256)
    {
        sent.clear();
        responder = nullptr;
        D.comm = MPI_COMM_NULL;
        D.rank = rank;
        D.size = size;
        D.servers = static_cast<int *>(calloc((size_t)size, sizeof(int)));
        for (int r = 0; r < size; r++)
            D.servers[r] = r;
        D.nservers = size;
        D.chunk_size = chunk;
        D.timeout_ns = 2000000000ull;
        D.cache_limit = 0;
        D.spin_ns = 0;
        D.peer_send = capture;
        D.up = true;
    }
    ~DsmWorld()
    {
        dsm_free_state();
        free(D.servers);
        D.servers = nullptr;
        D.peer_send = nullptr;
        D.up = false;
        D.footprint = 0;
        D.cache_limit = 0;
        responder = nullptr;
    }

    static int capture(int dst, const void *msg, size_t len)
    {
        DsmSent s{dst, {}, {}};
        memcpy(&s.m, msg, sizeof s.m);
        s.payload.assign(static_cast<const char *>(msg) + sizeof s.m, len - sizeof s.m);
        sent.push_back(s);
        if (responder)
            responder(sent.back());
        return 0;
    }

    // A message from rank src, handled as if it had just arrived.
    static void deliver(int src, dsm_msg m, const std::string &payload = "")
    {
        m.src = src;
        std::string b(reinterpret_cast<const char *>(&m), sizeof m);
        b += payload;
        dsm_deliver(b.data(), b.size(), src);
    }

    // Handles what this rank sent itself (its own home's answers, its barrier entries).
    static int poll() { return dsm_poll(); }

    // "TYPE>dst" for every message sent to another rank since the last call, then forgets them.
    static std::string take()
    {
        static const char *names[] = {"?",      "RD_REQ",  "WR_REQ", "RD_DATA", "WR_GRANT", "INV",
                                      "RECALL", "ACK",     "WB",     "ERROR",   "LOOKUP",   "LOOKUP_REPLY",
                                      "SUB",    "SUB_ACK", "UNSUB",  "PUBLISH", "SIGNAL",   "ARRIVE",
                                      "WAKE",   "DONE",    "INV_ACK"};
        std::string s;
        for (const DsmSent &x : sent) {
            if (!s.empty())
                s += " ";
            s += (x.m.type < sizeof names / sizeof *names ? names[x.m.type] : "?");
            s += ">" + std::to_string(x.dst);
        }
        sent.clear();
        return s;
    }
};

#endif
