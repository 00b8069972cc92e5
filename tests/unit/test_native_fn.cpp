/* SPDX-License-Identifier: MIT */
// Native kernels' function names (cl/serve/remote_native.h): a function of this process named by its
// object and offset is found again at the same address; what is not code of a loaded object, an
// object not loaded, an offset outside its code and malformed commands are refused.
#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <dlfcn.h>
#include <sys/stat.h>

extern "C" {
#include "cl/serve/remote_native.h"
}

extern "C" void sluice_test_native_target(void *p)
{
    *(int *)p += 1;
}

namespace
{

TEST(NativeFn, AFunctionOfTheProgramIsFoundAgainByBuildId)
{
    sluice_native_fn fn;
    ASSERT_TRUE(sluice_native_identify((const void *)&sluice_test_native_target, &fn));
    EXPECT_GT(fn.id_len, 0u); // the build links with a GNU build-id
    EXPECT_NE(std::strstr(fn.name, "test_native_fn"), nullptr) << fn.name;
    EXPECT_EQ(sluice_native_resolve(&fn), (void *)&sluice_test_native_target);
}

TEST(NativeFn, AFunctionOfASharedLibraryIsFoundAgain)
{
    // libc's own qsort, not the first one in the search order: under ASan that is libasan's.
    void *libc = dlopen("libc.so.6", RTLD_NOLOAD | RTLD_LAZY);
    ASSERT_NE(libc, nullptr);
    void *q = dlsym(libc, "qsort");
    dlclose(libc);
    ASSERT_NE(q, nullptr);
    sluice_native_fn fn;
    ASSERT_TRUE(sluice_native_identify(q, &fn));
    EXPECT_NE(std::strstr(fn.name, "libc"), nullptr) << fn.name;
    EXPECT_EQ(sluice_native_resolve(&fn), q);
}

TEST(NativeFn, TheProgramIsTheObjectOfItsFunctions)
{
    sluice_native_fn prog, fn;
    ASSERT_TRUE(sluice_native_program(&prog));
    ASSERT_TRUE(sluice_native_identify((const void *)&sluice_test_native_target, &fn));
    EXPECT_EQ(prog.offset, 0u);
    EXPECT_EQ(prog.id_len, fn.id_len);
    EXPECT_EQ(std::memcmp(prog.build_id, fn.build_id, fn.id_len), 0);
    EXPECT_STREQ(prog.name, fn.name);
}

TEST(NativeFn, DataIsNoFunction)
{
    int on_stack = 0;
    void *on_heap = std::malloc(64);
    sluice_native_fn fn;
    EXPECT_FALSE(sluice_native_identify(&on_stack, &fn));
    EXPECT_FALSE(sluice_native_identify(on_heap, &fn));
    std::free(on_heap);
}

TEST(NativeFn, AnObjectNotLoadedOrAnOffsetOutsideItsCodeIsRefused)
{
    sluice_native_fn fn;
    ASSERT_TRUE(sluice_native_identify((const void *)&sluice_test_native_target, &fn));
    sluice_native_fn other = fn;
    other.build_id[0] ^= 0xff;
    EXPECT_EQ(sluice_native_resolve(&other), nullptr);
    sluice_native_fn header = fn;
    header.offset = 0; // the ELF header: not in an executable segment
    EXPECT_EQ(sluice_native_resolve(&header), nullptr);
    // The file's identity is for objects without a build-id: one with a build-id is named by it.
    struct stat st;
    ASSERT_EQ(stat("/proc/self/exe", &st), 0);
    sluice_native_fn by_file = fn;
    by_file.id_len = 0;
    by_file.dev = st.st_dev;
    by_file.ino = st.st_ino;
    by_file.size = (uint64_t)st.st_size;
    EXPECT_EQ(sluice_native_resolve(&by_file), nullptr);
}

TEST(NativeFn, FindAnswersWhetherTheObjectIsLoaded)
{
    sluice_native_fn fn;
    ASSERT_TRUE(sluice_native_identify((const void *)&sluice_test_native_target, &fn));
    fn.offset = 0; // rank 0 asks for the object, not the function
    sluice_remote_msg out;
    std::memset(&out, 0, sizeof out);
    sluice_remote_native_find((const unsigned char *)&fn, sizeof fn, &out);
    EXPECT_EQ(out.rep.ret, CL_SUCCESS);
    fn.build_id[3] ^= 1;
    sluice_remote_native_find((const unsigned char *)&fn, sizeof fn, &out);
    EXPECT_EQ(out.rep.ret, CL_INVALID_OPERATION);
    sluice_remote_native_find((const unsigned char *)&fn, sizeof fn - 1, &out);
    EXPECT_EQ(out.rep.ret, CL_INVALID_VALUE);
}

// Malformed commands are refused before the driver is called (no queue is needed).
TEST(NativeFn, MalformedCommandsAreRefused)
{
    struct {
        sluice_native_fn fn;
        sluice_native_mem mem;
        unsigned char args[16];
    } cmd;
    std::memset(&cmd, 0, sizeof cmd);
    ASSERT_TRUE(sluice_native_identify((const void *)&sluice_test_native_target, &cmd.fn));
    const unsigned char *p = (const unsigned char *)&cmd;
    cl_event ev = nullptr;
    sluice_req_native a = {sizeof cmd.args, 1};
    cmd.mem.loc = sizeof cmd.args - 4; // the slot would end past the arguments
    EXPECT_EQ(sluice_remote_native_cmd(nullptr, &a, p, sizeof cmd, 0, nullptr, &ev), CL_INVALID_VALUE);
    sluice_req_native too_many = {sizeof cmd.args, 1000};
    EXPECT_EQ(sluice_remote_native_cmd(nullptr, &too_many, p, sizeof cmd, 0, nullptr, &ev), CL_INVALID_VALUE);
    sluice_req_native wrong_size = {sizeof cmd.args + 1, 1};
    EXPECT_EQ(sluice_remote_native_cmd(nullptr, &wrong_size, p, sizeof cmd, 0, nullptr, &ev),
              CL_INVALID_VALUE);
    EXPECT_EQ(sluice_remote_native_cmd(nullptr, &a, p, sizeof cmd.fn - 1, 0, nullptr, &ev), CL_INVALID_VALUE);
    cmd.mem.loc = 0;
    cmd.fn.build_id[0] ^= 0xff;
    EXPECT_EQ(sluice_remote_native_cmd(nullptr, &a, p, sizeof cmd, 0, nullptr, &ev), CL_INVALID_OPERATION);
    EXPECT_EQ(ev, nullptr);
}

} // namespace
