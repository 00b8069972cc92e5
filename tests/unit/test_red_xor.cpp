/* SPDX-License-Identifier: MIT */
// Unit tests of XOR parity over a set of nodes (runtime/ckpt/redundancy/red_xor.h, red_stream.h;
// docs/FORMAT.md "XOR parity files"): members of uneven parts (a member of several chunks, one
// with an empty staging file, one with a single small file) are encoded as the engine does (each
// part's stream routed by sluice_red_xor_route and XORed into the other members' parity files,
// then sealed); every member position is rebuilt from the survivors' contributions and restored
// byte for byte; a flipped byte of a parity block, of its trailer or of a survivor's staging file
// is detected and never restored; the parity on disk is 1/(S-1) of the largest part; the sets;
// the encoders' messages (sluice_red_stream_fill) carry the stream's bytes, packed.
#include <gtest/gtest.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <dirent.h>
#include <fcntl.h>
#include <fstream>
#include <sstream>
#include <string>
#include <sys/stat.h>
#include <unistd.h>
#include <vector>

extern "C" {
#include "ckpt/redundancy/level_record.h"
#include "ckpt/redundancy/red_copy.h"
#include "ckpt/redundancy/red_stream.h"
#include "ckpt/redundancy/red_xor.h"
#include "ckpt/redundancy/red_xor_accum.h"
}

namespace
{

const char *kKey = "/run/ckpt.%r";
const uint64_t kVersion = 9;

std::string tmpdir()
{
    char t[] = "/dev/shm/sluice-redxor-XXXXXX";
    return mkdtemp(t);
}

std::string slurp(const std::string &path)
{
    std::ifstream in(path, std::ios::binary);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
}

void spit(const std::string &path, const std::string &data)
{
    std::ofstream(path, std::ios::binary) << data;
}

void flip(const std::string &path, size_t at)
{
    std::string b = slurp(path);
    b[at] = (char)(b[at] ^ 0x20);
    spit(path, b);
}

// One node of the set: its stage folder with its ranks' records and staging files.
struct Member {
    std::string dir;
    std::vector<int> ranks;
    std::vector<std::string> names; // records and staging files
    std::string stream;             // its part as the encoder reads it
};

sluice_red_header *header(const Member &m, int pos, int nprocs)
{
    sluice_red_header *h = static_cast<sluice_red_header *>(calloc(1, sizeof *h));
    h->version = kVersion;
    h->nprocs = nprocs;
    snprintf(h->host, sizeof h->host, "%016x", 0xa0 + pos);
    snprintf(h->key, sizeof h->key, "%s", kKey);
    h->nranks = (int)m.ranks.size();
    for (size_t i = 0; i < m.ranks.size(); i++)
        h->ranks[i] = m.ranks[i];
    return h;
}

// A set of S members; member i has ranks and staging file sizes from sizes[i] (per rank).
struct Set {
    int S, nprocs = 0;
    std::vector<Member> m;
    std::vector<std::string> parity; // per member, the parity file's name

    explicit Set(const std::vector<std::vector<std::vector<size_t>>> &sizes) : S((int)sizes.size())
    {
        for (const auto &r : sizes)
            nprocs += (int)r.size();
        int rank = 0;
        for (int i = 0; i < S; i++) {
            Member mb;
            mb.dir = tmpdir();
            for (const auto &files : sizes[i]) {
                sluice_level_record r;
                memset(&r, 0, sizeof r);
                snprintf(r.set_key, sizeof r.set_key, "%s", kKey);
                r.version = kVersion;
                r.nprocs = nprocs;
                r.rank = rank;
                r.pid = 1;
                r.level = SLUICE_LEVEL_STAGED;
                r.m = static_cast<sluice_level_member *>(calloc(files.size() + 1, sizeof *r.m));
                for (size_t f = 0; f < files.size(); f++) {
                    sluice_level_member &lm = r.m[r.n++];
                    lm.member_rank = rank;
                    lm.size = files[f];
                    snprintf(lm.data, sizeof lm.data, "stage-%d-%zu.data", rank, f);
                    snprintf(lm.path, sizeof lm.path, "/run/ckpt.%d.%zu", rank, f);
                    std::string content(files[f], '\0');
                    for (size_t k = 0; k < files[f]; k++)
                        content[k] = (char)(k * 131 + rank * 17 + f + (k >> 9));
                    spit(mb.dir + "/" + lm.data, content);
                    mb.names.push_back(lm.data);
                }
                EXPECT_EQ(0, sluice_level_record_write(mb.dir.c_str(), &r));
                char rp[PATH_MAX];
                sluice_level_record_path(mb.dir.c_str(), kKey, kVersion, rank, rp, sizeof rp);
                mb.names.push_back(strrchr(rp, '/') + 1);
                free(r.m);
                mb.ranks.push_back(rank++);
            }
            m.push_back(mb);
        }
        for (int i = 0; i < S; i++) { // each part read as the encoder reads it
            sluice_red_stream st;
            EXPECT_EQ(0, sluice_red_stream_open(&st, m[i].dir.c_str(), header(m[i], i, nprocs)));
            std::vector<unsigned char> buf(SLUICE_RED_STREAM_BUF);
            for (long l; (l = sluice_red_stream_next(&st, buf.data(), buf.size())) > 0;)
                m[i].stream.append((char *)buf.data(), (size_t)l);
            EXPECT_EQ(st.length, m[i].stream.size()) << "member " << i;
            sluice_red_stream_close(&st);
        }
        encode();
    }

    // As red_xor_encode.c: each member's stream routed to the parities of the others, sealed.
    void encode()
    {
        std::vector<int> fds;
        for (int j = 0; j < S; j++) {
            char p[PATH_MAX];
            EXPECT_EQ(0, sluice_red_xor_path(m[j].dir.c_str(), kKey, kVersion, p, sizeof p));
            parity.push_back(strrchr(p, '/') + 1);
            fds.push_back(open(p, O_RDWR | O_CREAT | O_TRUNC, 0600));
        }
        for (int i = 0; i < S; i++) {
            const std::string &s = m[i].stream;
            for (uint64_t off = 0; off < s.size();) {
                int j = -1;
                uint64_t at = 0, n = sluice_red_xor_route(s.size(), S, i, off, &j, &at);
                ASSERT_GT(n, 0u);
                ASSERT_NE(i, j); // a member never holds its own chunk
                ASSERT_EQ(0, sluice_red_xor_into(fds[j], at, s.data() + off, n));
                off += n;
            }
        }
        for (int j = 0; j < S; j++) {
            sluice_red_xor_meta *x = meta(j);
            EXPECT_EQ(0, sluice_red_xor_seal(fds[j], x));
            close(fds[j]);
            sluice_red_xor_meta_free(x);
            free(x);
        }
    }

    // The set layout of member j's parity, as the seal takes it.
    sluice_red_xor_meta *meta(int j) const
    {
        sluice_red_xor_meta *x = static_cast<sluice_red_xor_meta *>(calloc(1, sizeof *x));
        x->version = kVersion;
        x->nprocs = nprocs;
        snprintf(x->key, sizeof x->key, "%s", kKey);
        x->S = S;
        x->pos = j;
        for (int i = 0; i < S; i++) {
            snprintf(x->m[i].host, sizeof x->m[i].host, "%016x", 0xa0 + i);
            x->m[i].len = m[i].stream.size();
            x->m[i].nranks = (int)m[i].ranks.size();
            x->m[i].ranks = static_cast<int *>(calloc(m[i].ranks.size() + 1, sizeof(int)));
            for (size_t k = 0; k < m[i].ranks.size(); k++)
                x->m[i].ranks[k] = m[i].ranks[k];
            if (i != j && sluice_red_xor_chunk(x->m[i].len, S) > x->plen)
                x->plen = sluice_red_xor_chunk(x->m[i].len, S);
        }
        return x;
    }

    // Member j's parity as red_xor_encode.c receives it: the other members' pieces (at most
    // maxpiece bytes, cut where their chunks end) interleaved at random, each member's in its
    // order, each member's length told to the accumulator before its first piece (at a random
    // point before it), then sealed; member `late`'s only after all the others'. The sealed
    // file's bytes; *in_file: the blocks the accumulator XORed in the file.
    std::string encode_accum(int j, unsigned seed, size_t maxpiece, int late, uint64_t *in_file)
    {
        struct Piece {
            int member;
            uint64_t at, off, len; // len 0: the member's length is told
        };
        std::vector<std::vector<Piece>> q(S);
        srand(seed);
        for (int i = 0; i < S; i++) {
            if (i == j)
                continue;
            const std::string &st = m[i].stream;
            q[i].push_back({i, 0, 0, 0});
            for (uint64_t off = 0; off < st.size();) {
                int to = -1;
                uint64_t at = 0, n = sluice_red_xor_route(st.size(), S, i, off, &to, &at);
                n = std::min<uint64_t>(n, 1 + (uint64_t)rand() % maxpiece);
                if (to == j)
                    q[i].push_back({i, at, off, n});
                off += n;
            }
        }
        std::string file = m[j].dir + "/accum.xor";
        int fd = open(file.c_str(), O_RDWR | O_CREAT | O_TRUNC, 0600);
        sluice_red_xor_accum *a = sluice_red_xor_accum_new(fd, S, j);
        EXPECT_NE(nullptr, a);
        std::vector<size_t> next(S, 0);
        for (;;) {
            std::vector<int> ready;
            for (int i = 0; i < S; i++)
                if (next[i] < q[i].size() && i != late)
                    ready.push_back(i);
            if (ready.empty() && late >= 0 && next[late] < q[late].size())
                ready.push_back(late);
            if (ready.empty())
                break;
            int i = ready[(size_t)rand() % ready.size()];
            const Piece &k = q[i][next[i]++];
            if (k.len == 0)
                EXPECT_EQ(0, sluice_red_xor_accum_member(a, k.member, m[k.member].stream.size()));
            else
                EXPECT_EQ(0, sluice_red_xor_accum_add(a, k.at, m[i].stream.data() + k.off, k.len));
        }
        *in_file = sluice_red_xor_accum_in_file(a);
        sluice_red_xor_meta *x = meta(j);
        EXPECT_EQ(0, sluice_red_xor_seal_accum(fd, x, a));
        sluice_red_xor_accum_free(a);
        close(fd);
        sluice_red_xor_meta_free(x);
        free(x);
        std::string got = slurp(file);
        unlink(file.c_str());
        return got;
    }

    // Member x rebuilt from the survivors into out (its stream), as red_xor_rebuild.c does.
    int rebuild(int x, std::string &out, std::string &err)
    {
        std::string file = m[(x + 1) % S].dir + "/rebuilt.tmp";
        int fd = open(file.c_str(), O_RDWR | O_CREAT | O_TRUNC, 0600);
        char text[PATH_MAX + 200] = "";
        int rc = 0;
        for (int p = 0; p < S && rc == 0; p++) {
            if (p == x)
                continue;
            rc = sluice_red_xor_contribute(
                m[p].dir.c_str(), parity[p].c_str(), x,
                [](void *ctx, uint64_t off, const unsigned char *b, size_t len) {
                    ASSERT_EQ(0, sluice_red_xor_into(*(int *)ctx, off, b, len));
                },
                &fd, text, sizeof text);
        }
        err = text;
        EXPECT_EQ(0, ftruncate(fd, (off_t)m[x].stream.size()));
        close(fd);
        out = slurp(file);
        unlink(file.c_str());
        return rc;
    }

    ~Set()
    {
        for (auto &mb : m)
            std::system(("rm -rf '" + mb.dir + "'").c_str());
    }
};

// Uneven parts: member 0 two ranks (600001 bytes = 3 chunks, and 7 bytes), member 1 one rank with
// an empty staging file, member 2 one rank of 100 bytes, member 3 one rank of 262144 bytes.
const std::vector<std::vector<std::vector<size_t>>> kUneven = {
    {{600001}, {7}}, {{0, 3000}}, {{100}}, {{262144}}};

TEST(RedXor, EveryMemberPositionRebuiltByteForByte)
{
    for (int S : {2, 3, 4}) {
        Set set(std::vector<std::vector<std::vector<size_t>>>(kUneven.begin(), kUneven.begin() + S));
        for (int x = 0; x < S; x++) {
            std::string got, err;
            ASSERT_EQ(0, set.rebuild(x, got, err)) << "S " << S << " x " << x << ": " << err;
            ASSERT_EQ(set.m[x].stream, got) << "S " << S << " member " << x;
            // The rebuilt stream is a copy: its ranks restored byte for byte, every checksum checked.
            std::string copy = set.m[(x + 1) % S].dir + "/rebuilt.red", dst = tmpdir();
            spit(copy, got);
            char e[512];
            ASSERT_GE(sluice_red_copy_restore(copy.c_str(), dst.c_str(), nullptr, 0, e, sizeof e), 0) << e;
            for (const std::string &name : set.m[x].names)
                EXPECT_EQ(slurp(set.m[x].dir + "/" + name), slurp(dst + "/" + name)) << name;
            unlink(copy.c_str());
            std::system(("rm -rf '" + dst + "'").c_str());
        }
    }
}

// The accumulator (red_xor_accum.h) gives the same sealed parity file, byte for byte (parity
// and trailer with its block checksums), as XORing every piece into the file: pieces of any
// size in any interleaving, members' lengths told late, parts of many blocks, and more blocks
// than it holds at once (the rest XORed in the file, their checksums read back). Where every
// member's pieces come interleaved, the blocks are XORed in memory only (none in the file); a
// member that starts after the others have sent more than the bound pushes blocks to the file.
TEST(RedXor, AccumulatorSealsTheSameFileAsXorInTheFile)
{
    const size_t big = (SLUICE_RED_XOR_ACCUM_BLOCKS + 9) * (size_t)SLUICE_RED_CHUNK + 123;
    const std::vector<std::vector<std::vector<std::vector<size_t>>>> sets = {
        kUneven,
        {{{3u << 20}, {5000}}, {{(2u << 20) + 17}}, {{1}}, {{4u << 20}}},
        {{{big}}, {{9u << 20}}},
        {{{3 * big}}, {{3 * big + 5}}, {{3 * big}}},
    };
    for (const auto &sizes : sets) {
        Set set(sizes);
        for (int j = 0; j < set.S; j++) {
            std::string want = slurp(set.m[j].dir + "/" + set.parity[j]);
            ASSERT_FALSE(want.empty());
            for (unsigned seed : {1u, 2u, 3u})
                for (size_t maxpiece : {(size_t)4096, (size_t)SLUICE_RED_FILL_BUF, (size_t)3 << 20}) {
                    uint64_t in_file = 0;
                    ASSERT_EQ(want, set.encode_accum(j, seed, maxpiece, -1, &in_file))
                        << "S " << set.S << " parity " << j << " seed " << seed << " pieces " << maxpiece;
                    if (set.S <= 2 || maxpiece == 4096) {
                        EXPECT_EQ(0u, in_file) << "S " << set.S << " parity " << j;
                    }
                }
            if (set.S == 3) { // member (j + 1) % 3 starts after the other sent its chunk whole
                uint64_t in_file = 0;
                ASSERT_EQ(want, set.encode_accum(j, 4, SLUICE_RED_FILL_BUF, (j + 1) % 3, &in_file));
                EXPECT_GT(in_file, 0u) << "parity " << j;
            }
        }
    }
}

// A reader cloned from another's listing and sought to any offset gives the stream's bytes from
// there, through next and through fill: in the header, an entry's head, a chunk's head or data,
// the end, and the very end (nothing).
TEST(RedXor, StreamSoughtToAnyOffsetGivesTheBytesFromThere)
{
    Set set({{{600001}, {7}}, {{0, 3000}}});
    for (int i = 0; i < set.S; i++) {
        const std::string &want = set.m[i].stream;
        sluice_red_stream st;
        ASSERT_EQ(0, sluice_red_stream_open(&st, set.m[i].dir.c_str(), header(set.m[i], i, set.nprocs)));
        std::vector<uint64_t> offs = {0,        1, st.hl - 1, st.hl, st.hl + 5, st.length - 12, st.length - 1,
                                      st.length};
        for (uint64_t k = 0; k < 40; k++)
            offs.push_back(k * 15013 % st.length);
        for (uint64_t c = SLUICE_RED_CHUNK; c < st.length; c += SLUICE_RED_CHUNK)
            for (int d = -9; d <= 9; d += 3)
                offs.push_back(c + d < st.length ? c + d : st.length);
        for (uint64_t off : offs) {
            for (bool fill : {false, true}) {
                sluice_red_stream r;
                ASSERT_EQ(0, sluice_red_stream_clone(&r, &st));
                ASSERT_EQ(0, sluice_red_stream_seek(&r, off)) << off;
                std::string got;
                std::vector<unsigned char> buf(SLUICE_RED_FILL_BUF);
                for (long l; (l = fill ? sluice_red_stream_fill(&r, buf.data(), buf.size())
                                       : sluice_red_stream_next(&r, buf.data(), SLUICE_RED_STREAM_BUF)) > 0;)
                    got.append((char *)buf.data(), (size_t)l);
                EXPECT_EQ(want.substr(off), got)
                    << "member " << i << " offset " << off << (fill ? " fill" : "");
                sluice_red_stream_close(&r);
            }
        }
        sluice_red_stream_close(&st);
    }
}

TEST(RedXor, ParityOnDiskIsOneOverSMinusOneOfTheLargestPart)
{
    // Four members of equal parts (3 ranks of 1 MiB + 1 each): each keeps a third.
    Set set({{{1048577}}, {{1048577}}, {{1048577}}, {{1048577}}});
    for (int j = 0; j < 4; j++) {
        struct stat st;
        uint64_t data = 0;
        for (const std::string &name : set.m[j].names) {
            ASSERT_EQ(0, stat((set.m[j].dir + "/" + name).c_str(), &st));
            data += (uint64_t)st.st_size;
        }
        ASSERT_EQ(0, stat((set.m[j].dir + "/" + set.parity[j]).c_str(), &st));
        double ratio = (double)st.st_size / (double)data;
        EXPECT_GT(ratio, 1.0 / 3) << "parity " << st.st_size << " of " << data;
        EXPECT_LT(ratio, 1.0 / 3 + 0.002)
            << "parity " << st.st_size << " of " << data; // trailer, chunk heads
    }
}

TEST(RedXor, StreamFillPacksThePiecesOfNextIntoFewerMessages)
{
    // A part of a 6-chunk staging file and small ones: the encoders' fill gives the bytes that
    // next gives piece by piece, in fewer messages each filled to within one piece of its room.
    Set set({{{5 * 262144 + 3, 7}, {100}}, {{1}}});
    const Member &mb = set.m[0];
    sluice_red_stream st;
    ASSERT_EQ(0, sluice_red_stream_open(&st, mb.dir.c_str(), header(mb, 0, set.nprocs)));
    std::vector<unsigned char> buf(SLUICE_RED_FILL_BUF);
    std::string got;
    int fills = 0;
    long l;
    while ((l = sluice_red_stream_fill(&st, buf.data(), buf.size())) > 0) {
        got.append((char *)buf.data(), (size_t)l);
        fills++;
        if (st.phase != 4) { // every message but the last is full
            EXPECT_GT((size_t)l, buf.size() - SLUICE_RED_STREAM_BUF) << "message " << fills;
        }
    }
    EXPECT_EQ(0, l);
    EXPECT_EQ(mb.stream, got);
    sluice_red_stream_close(&st);
    int pieces = 0; // the same part read piece by piece
    ASSERT_EQ(0, sluice_red_stream_open(&st, mb.dir.c_str(), header(mb, 0, set.nprocs)));
    while (sluice_red_stream_next(&st, buf.data(), SLUICE_RED_STREAM_BUF) > 0)
        pieces++;
    sluice_red_stream_close(&st);
    EXPECT_EQ(2, fills);
    EXPECT_GT(pieces, 3 * fills);

    // A staging file cut short after the part was listed: an error, never a short message.
    ASSERT_EQ(0, sluice_red_stream_open(&st, mb.dir.c_str(), header(mb, 0, set.nprocs)));
    ASSERT_EQ(0, truncate((mb.dir + "/stage-0-0.data").c_str(), 1000));
    while ((l = sluice_red_stream_fill(&st, buf.data(), buf.size())) > 0) {
    }
    EXPECT_EQ(-ENODATA, l);
    sluice_red_stream_close(&st);
}

TEST(RedXor, FlippedBytesAreDetectedNeverRestored)
{
    Set set(kUneven);
    std::string got, err;
    // A byte of member 2's parity: its block checksum names it.
    std::string p2 = set.m[2].dir + "/" + set.parity[2];
    flip(p2, 5);
    EXPECT_NE(0, set.rebuild(0, got, err));
    EXPECT_NE(std::string::npos, err.find("crc32c mismatch in block 0 of " + set.parity[2])) << err;
    flip(p2, 5);
    ASSERT_EQ(0, set.rebuild(0, got, err)) << err;
    // A byte of its trailer (the set's layout): the parity file is refused.
    struct stat st;
    ASSERT_EQ(0, stat(p2.c_str(), &st));
    flip(p2, (size_t)st.st_size - 20);
    EXPECT_NE(0, set.rebuild(0, got, err));
    EXPECT_NE(std::string::npos, err.find("unreadable")) << err;
    flip(p2, (size_t)st.st_size - 20);
    // A byte of a survivor's staging file: the rebuilt part fails its own checksums.
    std::string f = set.m[3].dir + "/stage-4-0.data";
    flip(f, 200000); // in its third chunk, which member 2's parity took
    ASSERT_EQ(0, set.rebuild(0, got, err)) << err;
    EXPECT_NE(set.m[0].stream, got);
    std::string copy = set.m[1].dir + "/rebuilt.red", dst = tmpdir();
    spit(copy, got);
    char e[512];
    EXPECT_LT(sluice_red_copy_restore(copy.c_str(), dst.c_str(), nullptr, 0, e, sizeof e), 0);
    EXPECT_NE(nullptr, strstr(e, "crc32c mismatch")) << e;
    DIR *d = opendir(dst.c_str());
    int n = 0;
    for (struct dirent *de; (de = readdir(d)) != nullptr;)
        n += de->d_name[0] != '.';
    closedir(d);
    EXPECT_EQ(0, n); // nothing restored
    std::system(("rm -rf '" + dst + "'").c_str());
}

TEST(RedXor, SetsOfConsecutiveNodes)
{
    int first = -1, size = -1;
    EXPECT_EQ(2, sluice_red_xor_set(3, 8, 2, &first, &size)); // fewer nodes than S: one set
    EXPECT_EQ(0, first);
    EXPECT_EQ(3, size);
    EXPECT_EQ(8, sluice_red_xor_set(9, 8, 8, &first, &size)); // a last set of one joins the one before
    EXPECT_EQ(9, size);
    EXPECT_EQ(1, sluice_red_xor_set(10, 8, 9, &first, &size)); // 8 + 2
    EXPECT_EQ(8, first);
    EXPECT_EQ(2, size);
    EXPECT_EQ(0, sluice_red_xor_set(5, 2, 0, &first, &size)); // 2 + 3
    EXPECT_EQ(2, size);
    EXPECT_EQ(2, sluice_red_xor_set(5, 2, 4, &first, &size));
    EXPECT_EQ(2, first);
    EXPECT_EQ(3, size);
}

} // namespace
