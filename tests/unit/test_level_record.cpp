/* SPDX-License-Identifier: MIT */
// Unit tests of the node-local version records (runtime/ckpt/redundancy/level_record.h,
// docs/FORMAT.md "Node-local version records"): round trips, which version a restart serves
// (the newest complete one; an incomplete one or a missing staging file is skipped; a member
// not rewritten comes from an older kept version), removal, and truncated or damaged records,
// which must be refused, never misread.
#include <gtest/gtest.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <sys/stat.h>
#include <unistd.h>

extern "C" {
#include "ckpt/redundancy/level_record.h"
}

namespace
{

const char *kKey = "/run/ckpt.%r";

struct Folder {
    std::string dir;
    Folder()
    {
        char t[] = "/tmp/sluice-level-XXXXXX";
        dir = mkdtemp(t);
    }
    ~Folder() { std::system(("rm -rf '" + dir + "'").c_str()); }
    void file(const std::string &name, size_t size)
    {
        FILE *f = fopen((dir + "/" + name).c_str(), "w");
        for (size_t i = 0; i < size; i++)
            fputc('x', f);
        fclose(f);
    }
};

// Writes rank's record of `version`: members (member rank = rank + 100 * i) of the given
// paths, each with a staging file of `size` bytes named after version, rank and i.
void record(Folder &f, uint64_t version, int rank, int nprocs, std::initializer_list<const char *> paths,
            size_t size = 5)
{
    sluice_level_record r;
    memset(&r, 0, sizeof r);
    snprintf(r.set_key, sizeof r.set_key, "%s", kKey);
    r.version = version;
    r.nprocs = nprocs;
    r.rank = rank;
    r.pid = 1; // init: always running, so never taken for a dead job's record
    r.level = SLUICE_LEVEL_STAGED;
    r.m = static_cast<sluice_level_member *>(calloc(paths.size() + 1, sizeof *r.m));
    for (const char *p : paths) {
        sluice_level_member &m = r.m[r.n];
        m.member_rank = rank + 100 * (int)r.n;
        m.size = size;
        m.mtime_ns = 1000 + (int64_t)version;
        m.mode = 0640;
        snprintf(m.data, sizeof m.data, "m-%d-%llu-%u.data", rank, (unsigned long long)version, r.n);
        snprintf(m.path, sizeof m.path, "%s", p);
        f.file(m.data, size);
        r.n++;
    }
    ASSERT_EQ(0, sluice_level_record_write(f.dir.c_str(), &r));
    free(r.m);
}

std::string record_path(Folder &f, uint64_t version, int rank)
{
    char p[PATH_MAX];
    EXPECT_EQ(0, sluice_level_record_path(f.dir.c_str(), kKey, version, rank, p, sizeof p));
    return p;
}

std::string slurp(const std::string &path)
{
    std::string s;
    FILE *f = fopen(path.c_str(), "r");
    int c;
    while ((c = fgetc(f)) != EOF)
        s.push_back((char)c);
    fclose(f);
    return s;
}

void spill(const std::string &path, const std::string &s)
{
    FILE *f = fopen(path.c_str(), "w");
    fwrite(s.data(), 1, s.size(), f);
    fclose(f);
}

} // namespace

TEST(LevelRecord, RoundTripKeepsEveryField)
{
    Folder f;
    record(f, 7, 1, 3, {"/run/ckpt.1", "/run/odd path\nwith newline\\.1"});
    sluice_level_record r;
    ASSERT_EQ(0, sluice_level_record_read(record_path(f, 7, 1).c_str(), &r));
    EXPECT_STREQ(kKey, r.set_key);
    EXPECT_EQ(7u, r.version);
    EXPECT_EQ(3, r.nprocs);
    EXPECT_EQ(1, r.rank);
    EXPECT_EQ(SLUICE_LEVEL_STAGED, r.level);
    ASSERT_EQ(2u, r.n);
    EXPECT_STREQ("/run/odd path\nwith newline\\.1", r.m[1].path);
    EXPECT_EQ(101, r.m[1].member_rank);
    EXPECT_EQ(0640u, r.m[1].mode);
    EXPECT_EQ(1007, r.m[1].mtime_ns);
    sluice_level_record_free(&r);
}

TEST(LevelRecord, NewestCompleteVersionIsServed)
{
    Folder f;
    for (int rank = 0; rank < 2; rank++)
        record(f, 5, rank, 2, {rank ? "/run/ckpt.1" : "/run/ckpt.0", rank ? "/run/extra.1" : "/run/extra.0"});
    for (int rank = 0; rank < 2; rank++)
        record(f, 6, rank, 2, {rank ? "/run/ckpt.1" : "/run/ckpt.0"});
    record(f, 7, 0, 2, {"/run/ckpt.0"}); // rank 1 never recorded 7: incomplete
    sluice_level_version v[8];
    ASSERT_EQ(3, sluice_level_versions(f.dir.c_str(), kKey, v, 8));
    EXPECT_EQ(7u, v[0].version);
    EXPECT_EQ(1, v[0].nrecords);
    EXPECT_EQ(2, v[1].nrecords);
    EXPECT_EQ(7u, sluice_level_max_version(f.dir.c_str(), kKey));

    sluice_level_hit hit;
    ASSERT_EQ(1, sluice_level_find(f.dir.c_str(), kKey, "/run/ckpt.0", 4, &hit));
    EXPECT_EQ(6u, hit.version) << "version 7 is incomplete: 6 is served";
    EXPECT_EQ(f.dir + "/m-0-6-0.data", hit.data);
    ASSERT_EQ(1, sluice_level_find(f.dir.c_str(), kKey, "/run/extra.1", 4, &hit));
    EXPECT_EQ(5u, hit.version) << "a member not rewritten in 6 comes from 5";
    EXPECT_EQ(0, sluice_level_find(f.dir.c_str(), kKey, "/run/ckpt.0", 6, &hit)) << "the container has 6";
    EXPECT_EQ(0, sluice_level_find(f.dir.c_str(), kKey, "/run/none.0", 4, &hit));
    EXPECT_EQ(0, sluice_level_find(f.dir.c_str(), "/other/ckpt.%r", "/run/ckpt.0", 0, &hit));

    // A staging file that is gone, or not of its recorded size, is never served.
    unlink((f.dir + "/m-0-6-0.data").c_str());
    ASSERT_EQ(1, sluice_level_find(f.dir.c_str(), kKey, "/run/ckpt.0", 4, &hit));
    EXPECT_EQ(5u, hit.version);
    f.file("m-0-5-0.data", 4);
    EXPECT_EQ(0, sluice_level_find(f.dir.c_str(), kKey, "/run/ckpt.0", 4, &hit));
}

TEST(LevelRecord, RemoveTakesOwnRecordsUpToAVersion)
{
    Folder f;
    record(f, 3, 0, 2, {"/run/ckpt.0"});
    record(f, 4, 0, 2, {"/run/ckpt.0"});
    record(f, 3, 1, 2, {"/run/ckpt.1"});
    // Records say pid 1: "own" only for pid 1, and never dead.
    EXPECT_EQ(0, sluice_level_remove(f.dir.c_str(), kKey, 4, 0, 2, 1));
    EXPECT_EQ(1, sluice_level_remove(f.dir.c_str(), kKey, 3, 0, 1, 1));
    sluice_level_version v[8];
    ASSERT_EQ(2, sluice_level_versions(f.dir.c_str(), kKey, v, 8));
    EXPECT_EQ(4u, v[0].version);
    EXPECT_EQ(1, v[1].nrecords) << "rank 1's record of 3 stays";
}

TEST(LevelRecord, TruncatedOrDamagedRecordsAreRefused)
{
    Folder f;
    record(f, 9, 0, 1, {"/run/ckpt.0", "/run/b.0"});
    std::string path = record_path(f, 9, 0), good = slurp(path);
    sluice_level_record r;
    for (size_t len = 0; len < good.size(); len++) {
        spill(path, good.substr(0, len));
        EXPECT_NE(0, sluice_level_record_read(path.c_str(), &r)) << "cut at " << len;
    }
    // Every single-byte change either is refused or still reads as a well-formed record.
    for (size_t i = 0; i < good.size(); i++) {
        std::string bad = good;
        bad[i] = (char)(bad[i] ^ 0x5a);
        spill(path, bad);
        if (sluice_level_record_read(path.c_str(), &r) == 0) {
            EXPECT_LE(r.n, 2u);
            for (uint32_t k = 0; k < r.n; k++)
                EXPECT_EQ(nullptr, strchr(r.m[k].data, '/'));
            sluice_level_record_free(&r);
        }
    }
    // A huge member count is bounded by the record's size before anything is allocated.
    std::string huge = good;
    huge.replace(huge.find("members 2"), 9, "members 999999999");
    spill(path, huge);
    EXPECT_NE(0, sluice_level_record_read(path.c_str(), &r));
    // A staging file name with a slash would leave the stage folder: refused.
    std::string escape = good;
    escape.replace(escape.find("m-0-9-0.data"), 12, "../../etc/pw");
    spill(path, escape);
    EXPECT_NE(0, sluice_level_record_read(path.c_str(), &r));
    spill(path, good);
    ASSERT_EQ(0, sluice_level_record_read(path.c_str(), &r));
    sluice_level_record_free(&r);
}

// Another rank may remove a record between a directory scan and its read: the read is a clean
// miss whatever the caller's struct held before (the failure path once freed a stack pointer).
TEST(LevelRecord, ARecordRemovedBeforeItsReadIsACleanMiss)
{
    Folder f;
    sluice_level_record r;
    memset(&r, 0xab, sizeof r);
    std::string gone = f.dir + "/lv-0000000000000000-00000000000000000009-0.rec";
    EXPECT_EQ(-ENOENT, sluice_level_record_read(gone.c_str(), &r));
    EXPECT_EQ(nullptr, r.m);
    EXPECT_EQ(0u, r.n);
}

