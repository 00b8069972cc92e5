/* SPDX-License-Identifier: MIT */
// The commit engine's sparse writer over an iovec list (runtime/ckpt/commit/commit_fs_sparse.c),
// as an aggregator uses it: its round buffer and the staging mappings of its own pieces in one
// request. The file must hold exactly the bytes of the list; 4 KiB-aligned blocks of zeros stay
// holes, also where a block of zeros spans two entries; runs of data are one write each.
#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include <fcntl.h>
#include <sys/uio.h>
#include <unistd.h>

extern "C" {
#include "ckpt/commit/commit_internal.h"
}

namespace
{

struct TempFile {
    std::string path;
    int fd = -1;
    TempFile()
    {
        char tmpl[] = "/var/tmp/sluice-sparse-XXXXXX";
        fd = mkstemp(tmpl);
        path = tmpl;
    }
    ~TempFile()
    {
        if (fd >= 0)
            close(fd);
        unlink(path.c_str());
    }
};

std::vector<unsigned char> ReadAll(int fd, size_t n)
{
    std::vector<unsigned char> b(n);
    EXPECT_EQ(static_cast<ssize_t>(n), pread(fd, b.data(), n, 0));
    return b;
}

// Is [off, off + n) a hole of the file (SEEK_DATA finds no data before its end)?
bool IsHole(int fd, off_t off, off_t n)
{
    off_t d = lseek(fd, off, SEEK_DATA);
    return d < 0 || d >= off + n;
}

} // namespace

TEST(CommitSparse, IovecListIsWrittenInPlaceWithZeroBlocksAcrossEntriesAsHoles)
{
    TempFile f;
    ASSERT_GE(f.fd, 0);
    const size_t K = 1024, BLK = 4096;
    // The list (offsets in it, K = 1 KiB): a [0, 22.5K) data in its first block only; b [22.5K, 26K) one
    // nonzero byte at 23.5K (the block [20K, 24K) is data only through its second entry); c
    // [26K, 30K+5) zeros then data from 28K (the block [24K, 28K) is zeros over b and c: a hole);
    // d [30K+5, 37K) zeros then data in its last 1K (a block that is not whole).
    std::vector<unsigned char> a(22 * K + K / 2, 0), b(K * 7 / 2, 0), c(4 * K + 5, 0), d(7 * K - 5, 0);
    for (size_t i = 0; i < BLK; i++)
        a[i] = static_cast<unsigned char>(i * 7 + 1);
    b[K] = 0x11;
    std::memset(c.data() + 2 * K, 0x5a, 5);
    std::memset(d.data() + d.size() - K, 0x77, K);
    struct iovec iov[] = {
        {a.data(), a.size()}, {b.data(), b.size()}, {c.data(), c.size()}, {d.data(), d.size()}};
    // Written at a file offset of one block: the list's blocks are the file's blocks.
    uint64_t off = BLK;
    long w = commit_fs_pwritev_sparse(f.fd, iov, 4, off, nullptr, 1 << 20);
    std::vector<unsigned char> want;
    for (auto &v : iov)
        want.insert(want.end(), static_cast<unsigned char *>(v.iov_base),
                    static_cast<unsigned char *>(v.iov_base) + v.iov_len);
    ASSERT_EQ(ftruncate(f.fd, static_cast<off_t>(off + want.size())), 0);
    std::vector<unsigned char> got = ReadAll(f.fd, off + want.size());
    EXPECT_EQ(0, std::memcmp(got.data() + off, want.data(), want.size()));
    // Bytes written: all but the whole blocks of zeros.
    size_t zero_blocks = 0;
    for (size_t blk = 0; blk + BLK <= want.size(); blk += BLK) {
        bool z = true;
        for (size_t i = blk; i < blk + BLK && z; i++)
            z = want[i] == 0;
        zero_blocks += z;
        EXPECT_EQ(z, IsHole(f.fd, static_cast<off_t>(off + blk), BLK)) << "block at " << blk;
    }
    EXPECT_EQ(zero_blocks, 6u); // [4K, 20K), [24K, 28K), [32K, 36K)
    EXPECT_EQ(static_cast<long>(want.size() - zero_blocks * BLK), w);
}

TEST(CommitSparse, ManyEntriesBeyondIovMaxAreWrittenWhole)
{
    TempFile f;
    ASSERT_GE(f.fd, 0);
    // 3000 entries of 3 bytes each, none zero: one run, more entries than one pwritev takes.
    std::vector<unsigned char> bytes(3 * 3000);
    for (size_t i = 0; i < bytes.size(); i++)
        bytes[i] = static_cast<unsigned char>(i % 251 + 1);
    std::vector<struct iovec> iov(3000);
    for (size_t i = 0; i < iov.size(); i++)
        iov[i] = {bytes.data() + 3 * i, 3};
    long w = commit_fs_pwritev_sparse(f.fd, iov.data(), static_cast<int>(iov.size()), 100, nullptr, 0);
    EXPECT_EQ(static_cast<long>(bytes.size()), w);
    std::vector<unsigned char> got = ReadAll(f.fd, 100 + bytes.size());
    EXPECT_EQ(0, std::memcmp(got.data() + 100, bytes.data(), bytes.size()));
}
