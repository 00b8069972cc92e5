/* SPDX-License-Identifier: MIT */
// Unit tests of the OpenCL object model: handle tables (real <-> handle, lifetimes, parents,
// provisional handles), translation of handles inside arrays, property lists, image
// descriptors and query results, and kernel-argument classification. A fake backend stands in
// for the ICD loader, so no OpenCL implementation is involved.
#include <gtest/gtest.h>

#include <cstring>
#include <vector>

extern "C" {
#include "cl/intercept/names.h"
#include "cl/intercept/wrap.h"
}

namespace
{

// Fake kernel: argument qualifiers the fake backend reports (empty: no arg info).
std::vector<cl_kernel_arg_address_qualifier> g_qualifiers;
std::vector<const char *> g_type_names;

cl_int CL_API_CALL fake_kernel_info(cl_kernel, cl_kernel_info name, size_t, void *value, size_t *)
{
    if (name != CL_KERNEL_NUM_ARGS)
        return CL_INVALID_VALUE;
    *static_cast<cl_uint *>(value) = static_cast<cl_uint>(g_qualifiers.empty() ? 4 : g_qualifiers.size());
    return CL_SUCCESS;
}

cl_int CL_API_CALL fake_arg_info(cl_kernel, cl_uint i, cl_kernel_arg_info name, size_t size, void *value,
                                 size_t *size_ret)
{
    if (g_qualifiers.empty())
        return CL_KERNEL_ARG_INFO_NOT_AVAILABLE; // built without -cl-kernel-arg-info
    if (name == CL_KERNEL_ARG_ADDRESS_QUALIFIER) {
        *static_cast<cl_kernel_arg_address_qualifier *>(value) = g_qualifiers[i];
        return CL_SUCCESS;
    }
    if (name == CL_KERNEL_ARG_TYPE_NAME) { // as a driver answers: the size, and the bytes if they fit
        size_t n = std::strlen(g_type_names[i]) + 1;
        if (size_ret != nullptr)
            *size_ret = n;
        if (value != nullptr && size < n)
            return CL_INVALID_VALUE;
        if (value != nullptr)
            std::memcpy(value, g_type_names[i], n);
        return CL_SUCCESS;
    }
    return CL_INVALID_VALUE;
}

sluice_cl_backend make_backend()
{
    sluice_cl_backend be{};
    be.name = "fake";
    be.api.clGetKernelInfo = fake_kernel_info;
    be.api.clGetKernelArgInfo = fake_arg_info;
    return be;
}

sluice_cl_backend g_be = make_backend();

void *fake_real(uintptr_t n)
{
    return reinterpret_cast<void *>(0x100000 + n * 64);
}

} // namespace

TEST(ClHandles, WrapTranslateAndLookUpBothWays)
{
    size_t before = sluice_cl_live_count();
    sluice_cl_obj *ctx = sluice_cl_wrap_new(SLUICE_CL_CONTEXT, fake_real(1), nullptr, &g_be);
    ASSERT_NE(ctx, nullptr);
    EXPECT_EQ(ctx->magic, SLUICE_CL_MAGIC(SLUICE_CL_CONTEXT));
    EXPECT_EQ(sluice_cl_in(ctx, SLUICE_CL_CONTEXT), fake_real(1));
    EXPECT_EQ(sluice_cl_valid(ctx, SLUICE_CL_QUEUE), nullptr) << "kind is checked";
    EXPECT_EQ(sluice_cl_in(ctx, SLUICE_CL_QUEUE), static_cast<void *>(ctx))
        << "wrong kind goes through unchanged";
    EXPECT_EQ(sluice_cl_in(nullptr, SLUICE_CL_CONTEXT), nullptr);
    EXPECT_EQ(sluice_cl_find(fake_real(1)), ctx);
    EXPECT_EQ(sluice_cl_lookup(SLUICE_CL_CONTEXT, fake_real(1), &g_be), ctx);
    EXPECT_EQ(sluice_cl_live_count(), before + 1);
    sluice_cl_obj_release(ctx);
    EXPECT_EQ(sluice_cl_find(fake_real(1)), nullptr);
    EXPECT_EQ(sluice_cl_live_count(), before);
}

TEST(ClHandles, ChildKeepsParentAliveUntilItDies)
{
    sluice_cl_obj *ctx = sluice_cl_wrap_new(SLUICE_CL_CONTEXT, fake_real(2), nullptr, &g_be);
    sluice_cl_obj *buf = sluice_cl_wrap_new(SLUICE_CL_MEM, fake_real(3), ctx, &g_be);
    sluice_cl_obj *sub = sluice_cl_wrap_new(SLUICE_CL_MEM, fake_real(4), buf, &g_be);
    ASSERT_TRUE(ctx && buf && sub);
    sluice_cl_obj_release(ctx); // the program's last reference to the context
    sluice_cl_obj_release(buf); // and to the buffer
    // Queries about the sub-buffer still find the program's parent and context handles.
    EXPECT_EQ(sluice_cl_lookup(SLUICE_CL_MEM, fake_real(3), &g_be), buf);
    EXPECT_EQ(sluice_cl_lookup(SLUICE_CL_CONTEXT, fake_real(2), &g_be), ctx);
    EXPECT_EQ(buf->parent, ctx);
    sluice_cl_obj_release(sub); // the whole chain goes
    EXPECT_EQ(sluice_cl_find(fake_real(2)), nullptr);
    EXPECT_EQ(sluice_cl_find(fake_real(3)), nullptr);
    EXPECT_EQ(sluice_cl_find(fake_real(4)), nullptr);
}

TEST(ClHandles, RetainMirrorsTheProgramsReferences)
{
    sluice_cl_obj *ev = sluice_cl_wrap_new(SLUICE_CL_EVENT, fake_real(5), nullptr, &g_be);
    sluice_cl_obj_retain(ev);
    sluice_cl_obj_release(ev);
    EXPECT_EQ(sluice_cl_find(fake_real(5)), ev) << "one reference left";
    sluice_cl_obj_release(ev);
    EXPECT_EQ(sluice_cl_find(fake_real(5)), nullptr);
}

TEST(ClHandles, ProvisionalHandleIsAdoptedByTheCreateCall)
{
    // clLinkProgram's notify can fire before clLinkProgram returns the program.
    sluice_cl_obj *seen = sluice_cl_lookup(SLUICE_CL_PROGRAM, fake_real(6), &g_be);
    ASSERT_NE(seen, nullptr);
    EXPECT_TRUE(seen->flags & SLUICE_CL_F_PROVISIONAL);
    sluice_cl_obj *created = sluice_cl_wrap_new(SLUICE_CL_PROGRAM, fake_real(6), nullptr, &g_be);
    EXPECT_EQ(created, seen);
    EXPECT_FALSE(created->flags & SLUICE_CL_F_PROVISIONAL);
    sluice_cl_obj_release(created);
    EXPECT_EQ(sluice_cl_find(fake_real(6)), nullptr);
}

TEST(ClHandles, ReusedAddressGetsAFreshHandle)
{
    // A handle pinned past its real object's death (a pending callback) must not stand for a
    // new object the backend allocates at the same address.
    sluice_cl_obj *old = sluice_cl_wrap_new(SLUICE_CL_MEM, fake_real(7), nullptr, &g_be);
    sluice_cl_obj *fresh = sluice_cl_wrap_new(SLUICE_CL_KERNEL, fake_real(7), nullptr, &g_be);
    EXPECT_NE(old, fresh);
    EXPECT_EQ(sluice_cl_find(fake_real(7)), fresh);
    sluice_cl_obj_release(old); // does not remove the new mapping
    EXPECT_EQ(sluice_cl_find(fake_real(7)), fresh);
    sluice_cl_obj_release(fresh);
}

TEST(ClHandles, PersistentPlatformAndDeviceAreFoundAgain)
{
    sluice_cl_obj *p = sluice_cl_wrap_persistent(SLUICE_CL_PLATFORM, fake_real(8), nullptr, &g_be);
    sluice_cl_obj *d = sluice_cl_wrap_persistent(SLUICE_CL_DEVICE, fake_real(9), p, &g_be);
    EXPECT_EQ(sluice_cl_wrap_persistent(SLUICE_CL_PLATFORM, fake_real(8), nullptr, &g_be), p);
    EXPECT_EQ(sluice_cl_wrap_persistent(SLUICE_CL_DEVICE, fake_real(9), p, &g_be), d);
    sluice_cl_obj_release(d); // root devices ignore releases
    EXPECT_EQ(sluice_cl_find(fake_real(9)), d);
}

TEST(ClTranslate, HandleArraysOnStackAndHeap)
{
    std::vector<sluice_cl_obj *> evs;
    for (uintptr_t i = 0; i < 40; i++)
        evs.push_back(sluice_cl_wrap_new(SLUICE_CL_EVENT, fake_real(100 + i), nullptr, &g_be));
    void *stack[SLUICE_CL_STACK_ARRAY];
    void *heap = nullptr;
    void *const *small =
        sluice_cl_in_array(reinterpret_cast<void *const *>(evs.data()), 3, SLUICE_CL_EVENT, stack, &heap);
    EXPECT_EQ(small, static_cast<void *const *>(stack));
    EXPECT_EQ(heap, nullptr);
    EXPECT_EQ(small[2], fake_real(102));
    void *const *big =
        sluice_cl_in_array(reinterpret_cast<void *const *>(evs.data()), 40, SLUICE_CL_EVENT, stack, &heap);
    ASSERT_NE(heap, nullptr);
    EXPECT_EQ(big, heap);
    for (uintptr_t i = 0; i < 40; i++)
        EXPECT_EQ(big[i], fake_real(100 + i));
    free(heap);
    EXPECT_EQ(sluice_cl_in_array(nullptr, 5, SLUICE_CL_EVENT, stack, &heap), nullptr);
    for (auto *e : evs)
        sluice_cl_obj_release(e);
}

TEST(ClTranslate, ContextPropertiesNamePlatformsByHandle)
{
    sluice_cl_obj *p = sluice_cl_wrap_persistent(SLUICE_CL_PLATFORM, fake_real(10), nullptr, &g_be);
    cl_context_properties props[] = {CL_CONTEXT_INTEROP_USER_SYNC, CL_TRUE, CL_CONTEXT_PLATFORM,
                                     reinterpret_cast<cl_context_properties>(p), 0};
    cl_context_properties stack[SLUICE_CL_STACK_PROPS];
    cl_context_properties *heap = nullptr;
    const cl_context_properties *out = sluice_cl_in_ctx_props(props, stack, &heap);
    ASSERT_NE(out, props);
    EXPECT_EQ(out[0], CL_CONTEXT_INTEROP_USER_SYNC);
    EXPECT_EQ(out[3], reinterpret_cast<cl_context_properties>(fake_real(10)));
    EXPECT_EQ(out[4], 0);
    cl_context_properties none[] = {CL_CONTEXT_INTEROP_USER_SYNC, CL_FALSE, 0};
    EXPECT_EQ(sluice_cl_in_ctx_props(none, stack, &heap), none) << "nothing to translate: no copy";

    // And back, in a clGetContextInfo(CL_CONTEXT_PROPERTIES) answer.
    cl_context_properties answer[] = {CL_CONTEXT_PLATFORM,
                                      reinterpret_cast<cl_context_properties>(fake_real(10)), 0};
    sluice_cl_info_to_handles(SLUICE_CL_FN_clGetContextInfo, nullptr, CL_CONTEXT_PROPERTIES, answer,
                              sizeof answer);
    EXPECT_EQ(answer[1], reinterpret_cast<cl_context_properties>(p));
}

TEST(ClTranslate, ImageDescriptorNamingABuffer)
{
    sluice_cl_obj *b = sluice_cl_wrap_new(SLUICE_CL_MEM, fake_real(11), nullptr, &g_be);
    cl_image_desc d{};
    d.image_type = CL_MEM_OBJECT_IMAGE1D_BUFFER;
    d.buffer = reinterpret_cast<cl_mem>(b);
    cl_image_desc copy;
    const cl_image_desc *out = sluice_cl_in_image_desc(&d, &copy);
    EXPECT_EQ(out, &copy);
    EXPECT_EQ(out->buffer, fake_real(11));
    EXPECT_EQ(d.buffer, reinterpret_cast<cl_mem>(b)) << "the program's descriptor is not modified";
    sluice_cl_obj_release(b);
}

TEST(ClTranslate, QueryResultsBecomeHandles)
{
    sluice_cl_obj *d1 = sluice_cl_wrap_persistent(SLUICE_CL_DEVICE, fake_real(12), nullptr, &g_be);
    sluice_cl_obj *d2 = sluice_cl_wrap_persistent(SLUICE_CL_DEVICE, fake_real(13), nullptr, &g_be);
    void *devices[] = {fake_real(12), fake_real(13)};
    sluice_cl_info_to_handles(SLUICE_CL_FN_clGetContextInfo, nullptr, CL_CONTEXT_DEVICES, devices,
                              sizeof devices);
    EXPECT_EQ(devices[0], d1);
    EXPECT_EQ(devices[1], d2);
    // Results that are not objects are left alone.
    cl_uint count = 2;
    sluice_cl_info_to_handles(SLUICE_CL_FN_clGetContextInfo, nullptr, CL_CONTEXT_NUM_DEVICES, &count,
                              sizeof count);
    EXPECT_EQ(count, 2u);
}

TEST(ClTranslate, QueueReportsTheProgramsOwnProperties)
{
    sluice_cl_obj *q = sluice_cl_wrap_new(SLUICE_CL_QUEUE, fake_real(14), nullptr, &g_be);
    q->u.queue.forced_profiling = true;
    q->u.queue.app_props = CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE;
    cl_command_queue_properties props = 0;
    size_t size = 0;
    cl_int ret = -1;
    ASSERT_TRUE(sluice_cl_info_override(SLUICE_CL_FN_clGetCommandQueueInfo, q, CL_QUEUE_PROPERTIES,
                                        sizeof props, &props, &size, &ret));
    EXPECT_EQ(ret, CL_SUCCESS);
    EXPECT_EQ(props, (cl_command_queue_properties)CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE);
    EXPECT_EQ(size, sizeof props);
    sluice_cl_obj *ev = sluice_cl_wrap_new(SLUICE_CL_EVENT, fake_real(15), q, &g_be);
    ASSERT_TRUE(sluice_cl_info_override(SLUICE_CL_FN_clGetEventProfilingInfo, ev, CL_PROFILING_COMMAND_START,
                                        8, &props, nullptr, &ret));
    EXPECT_EQ(ret, CL_PROFILING_INFO_NOT_AVAILABLE);
    q->u.queue.forced_profiling = false;
    EXPECT_FALSE(sluice_cl_info_override(SLUICE_CL_FN_clGetEventProfilingInfo, ev, CL_PROFILING_COMMAND_START,
                                         8, &props, nullptr, &ret));
    sluice_cl_obj_release(ev);
    sluice_cl_obj_release(q);
}

class ClKernelArgs : public ::testing::Test
{
  protected:
    void SetUp() override
    {
        mem = sluice_cl_wrap_new(SLUICE_CL_MEM, fake_real(20), nullptr, &g_be);
        smp = sluice_cl_wrap_new(SLUICE_CL_SAMPLER, fake_real(21), nullptr, &g_be);
        ctx = sluice_cl_wrap_new(SLUICE_CL_CONTEXT, fake_real(22), nullptr, &g_be);
    }
    void TearDown() override
    {
        sluice_cl_obj_release(mem);
        sluice_cl_obj_release(smp);
        sluice_cl_obj_release(ctx);
        g_qualifiers.clear();
        g_type_names.clear();
    }
    sluice_cl_obj *new_kernel(uintptr_t n)
    {
        return sluice_cl_wrap_new(SLUICE_CL_KERNEL, fake_real(n), nullptr, &g_be);
    }
    sluice_cl_obj *mem = nullptr, *smp = nullptr, *ctx = nullptr;
};

TEST_F(ClKernelArgs, WithArgInfoQualifiersDecide)
{
    g_qualifiers = {CL_KERNEL_ARG_ADDRESS_GLOBAL, CL_KERNEL_ARG_ADDRESS_PRIVATE, CL_KERNEL_ARG_ADDRESS_LOCAL,
                    CL_KERNEL_ARG_ADDRESS_PRIVATE};
    g_type_names = {"float*", "long", "float*", "sampler_t"};
    sluice_cl_obj *k = new_kernel(30);
    void *tmp = nullptr;
    cl_mem m = reinterpret_cast<cl_mem>(mem);
    const void *v = sluice_cl_kernel_arg_value(k, 0, sizeof m, &m, &tmp);
    EXPECT_EQ(v, &tmp);
    EXPECT_EQ(tmp, fake_real(20));
    // A long whose value happens to equal a live handle's address stays a long.
    int64_t collide = reinterpret_cast<int64_t>(mem);
    EXPECT_EQ(sluice_cl_kernel_arg_value(k, 1, sizeof collide, &collide, &tmp), &collide);
    // __local: size only, no value.
    EXPECT_EQ(sluice_cl_kernel_arg_value(k, 2, 4096, nullptr, &tmp), nullptr);
    cl_sampler s = reinterpret_cast<cl_sampler>(smp);
    EXPECT_EQ(sluice_cl_kernel_arg_value(k, 3, sizeof s, &s, &tmp), &tmp);
    EXPECT_EQ(tmp, fake_real(21));
    // A NULL buffer stays NULL.
    cl_mem null_mem = nullptr;
    EXPECT_EQ(sluice_cl_kernel_arg_value(k, 0, sizeof null_mem, &null_mem, &tmp), &null_mem);
    sluice_cl_obj_release(k);
}

TEST_F(ClKernelArgs, WithoutArgInfoOnlyLiveHandlesAreTranslated)
{
    sluice_cl_obj *k = new_kernel(31);
    void *tmp = nullptr;
    cl_mem m = reinterpret_cast<cl_mem>(mem);
    EXPECT_EQ(sluice_cl_kernel_arg_value(k, 0, sizeof m, &m, &tmp), &tmp);
    EXPECT_EQ(tmp, fake_real(20));
    double d = 3.25; // 8 bytes, not a handle: never dereferenced, passed as is
    EXPECT_EQ(sluice_cl_kernel_arg_value(k, 1, sizeof d, &d, &tmp), &d);
    int small = 7;
    EXPECT_EQ(sluice_cl_kernel_arg_value(k, 2, sizeof small, &small, &tmp), &small);
    // A context handle is not a kernel argument kind: left alone for the backend to reject.
    cl_context c = reinterpret_cast<cl_context>(ctx);
    EXPECT_EQ(sluice_cl_kernel_arg_value(k, 3, sizeof c, &c, &tmp), &c);
    // Unaligned argument buffers are read safely.
    alignas(8) unsigned char raw[16];
    std::memcpy(raw + 1, &m, sizeof m);
    EXPECT_EQ(sluice_cl_kernel_arg_value(k, 0, sizeof m, raw + 1, &tmp), &tmp);
    EXPECT_EQ(tmp, fake_real(20));
    // A released handle is no longer recognised.
    sluice_cl_obj *gone = sluice_cl_wrap_new(SLUICE_CL_MEM, fake_real(23), nullptr, &g_be);
    cl_mem g = reinterpret_cast<cl_mem>(gone);
    sluice_cl_obj_release(gone);
    EXPECT_FALSE(sluice_cl_is_live(g, 1u << SLUICE_CL_MEM));
    sluice_cl_obj_release(k);
}

TEST(ClNames, EveryGeneratedEntryPointIsFoundByName)
{
    for (size_t i = 0; i < SLUICE_CL_FN_COUNT; i++) {
        const sluice_cl_name *n = sluice_cl_name_find(sluice_cl_names[i].name);
        ASSERT_NE(n, nullptr) << sluice_cl_names[i].name;
        EXPECT_STREQ(sluice_cl_fn_name(n->id), n->name);
    }
    EXPECT_EQ(sluice_cl_name_find("clNoSuchFunction"), nullptr);
    EXPECT_NE(sluice_cl_name_find("clEnqueueNDRangeKernel"), nullptr);
    EXPECT_NE(sluice_cl_name_find("clCreateCommandBufferKHR"), nullptr) << "cl_ext.h functions are wrapped";
    EXPECT_GE(SLUICE_CL_FN_COUNT, 150) << "OpenCL 1.0 to 3.0 plus extensions";
}
