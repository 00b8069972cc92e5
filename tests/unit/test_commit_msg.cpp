/* SPDX-License-Identifier: MIT */
// Commit engine protocol messages (runtime/ckpt/commit/commit_msg.c): round trips, and hostile or
// truncated input never reads past the end and is flagged as malformed.
#include <gtest/gtest.h>

#include <cstring>
#include <string>

extern "C" {
#include "ckpt/commit/commit_internal.h"
}

namespace {

struct Msg {
    cmsg m{};
    ~Msg() { cmsg_free(&m); }
};

// A received message: the bytes of `src` read from the start (as the transport hands them).
void AsReceived(const cmsg &src, cmsg *dst, size_t keep)
{
    std::memset(dst, 0, sizeof(*dst));
    dst->p = static_cast<unsigned char *>(malloc(keep ? keep : 1));
    std::memcpy(dst->p, src.p, keep);
    dst->len = dst->cap = keep;
}

} // namespace

TEST(CommitMsg, RoundTrip)
{
    Msg out;
    cmsg_init(&out.m, MSG_MEMBERS);
    cmsg_put_u32(&out.m, 7);
    cmsg_put_u64(&out.m, UINT64_C(0x0123456789abcdef));
    cmsg_put_str(&out.m, "/run/chk_10/rank_3.bin");
    cmsg_put_str(&out.m, "");
    ASSERT_FALSE(out.m.bad);

    Msg in;
    AsReceived(out.m, &in.m, out.m.len);
    EXPECT_EQ(cmsg_get_u32(&in.m), static_cast<uint32_t>(MSG_MEMBERS));
    EXPECT_EQ(cmsg_get_u32(&in.m), 7u);
    EXPECT_EQ(cmsg_get_u64(&in.m), UINT64_C(0x0123456789abcdef));
    EXPECT_STREQ(cmsg_get_str(&in.m), "/run/chk_10/rank_3.bin");
    EXPECT_STREQ(cmsg_get_str(&in.m), "");
    EXPECT_FALSE(in.m.bad);
    EXPECT_EQ(in.m.rd, in.m.len);
}

TEST(CommitMsg, LongStringsGrowTheBuffer)
{
    std::string big(100000, 'x');
    Msg out;
    cmsg_init(&out.m, MSG_WRITE);
    for (int i = 0; i < 10; i++)
        cmsg_put_str(&out.m, big.c_str());
    ASSERT_FALSE(out.m.bad);
    Msg in;
    AsReceived(out.m, &in.m, out.m.len);
    cmsg_get_u32(&in.m);
    for (int i = 0; i < 10; i++)
        EXPECT_EQ(std::string(cmsg_get_str(&in.m)), big);
    EXPECT_FALSE(in.m.bad);
}

TEST(CommitMsg, EveryTruncationIsFlagged)
{
    Msg out;
    cmsg_init(&out.m, MSG_WRITTEN);
    cmsg_put_u32(&out.m, 3);
    cmsg_put_str(&out.m, "/a/b");
    cmsg_put_u64(&out.m, 42);
    for (size_t keep = 0; keep < out.m.len; keep++) {
        Msg in;
        AsReceived(out.m, &in.m, keep);
        cmsg_get_u32(&in.m);
        cmsg_get_u32(&in.m);
        const char *s = cmsg_get_str(&in.m);
        uint64_t v = cmsg_get_u64(&in.m);
        EXPECT_TRUE(in.m.bad) << "kept " << keep << " bytes";
        EXPECT_LE(in.m.rd, in.m.len);
        // Whatever was cut, a string is either intact or empty, and numbers past the end are 0.
        EXPECT_TRUE(std::strcmp(s, "/a/b") == 0 || s[0] == '\0');
        EXPECT_EQ(v, 0u);
    }
}

TEST(CommitMsg, StringWithoutTerminatorOrHugeLengthIsRejected)
{
    // length 4 but no NUL inside
    unsigned char raw1[] = {4, 0, 0, 0, 'a', 'b', 'c', 'd'};
    Msg a;
    a.m.p = static_cast<unsigned char *>(malloc(sizeof raw1));
    std::memcpy(a.m.p, raw1, sizeof raw1);
    a.m.len = a.m.cap = sizeof raw1;
    EXPECT_STREQ(cmsg_get_str(&a.m), "");
    EXPECT_TRUE(a.m.bad);

    // length claims 4 GiB
    unsigned char raw2[] = {0xff, 0xff, 0xff, 0xff, 'a', 0};
    Msg b;
    b.m.p = static_cast<unsigned char *>(malloc(sizeof raw2));
    std::memcpy(b.m.p, raw2, sizeof raw2);
    b.m.len = b.m.cap = sizeof raw2;
    EXPECT_STREQ(cmsg_get_str(&b.m), "");
    EXPECT_TRUE(b.m.bad);

    // zero length
    unsigned char raw3[] = {0, 0, 0, 0};
    Msg c;
    c.m.p = static_cast<unsigned char *>(malloc(sizeof raw3));
    std::memcpy(c.m.p, raw3, sizeof raw3);
    c.m.len = c.m.cap = sizeof raw3;
    EXPECT_STREQ(cmsg_get_str(&c.m), "");
    EXPECT_TRUE(c.m.bad);
}
