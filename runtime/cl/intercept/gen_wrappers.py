#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""Generates sluice's OpenCL layer from the installed OpenCL headers (run by CMake at build time).

The headers are the one list of entry points: this script preprocesses them with the C compiler
(so #if blocks and deprecation macros resolve exactly as they do for the library), extracts every
`cl*` function declaration, classifies each parameter (handle in, handle array in, event out,
error code out, callback, context properties, image descriptor, plain) and writes:

  cl/api.h        one id, one function-pointer typedef and one api-table slot per entry point,
                  and the X-macro SLUICE_CL_FUNCTIONS(X) listing them all
  cl/names.c      the sorted name table (engine): name -> id, used for loader binding
  cl/wrappers.c   one exported wrapper per entry point (shim), except the few hand-written ones
                  in shim/opencl_manual.c
  cl/dispatch.c   the cl_khr_icd dispatch table every sluice handle starts with, pointing back at
                  the wrappers, and the name -> wrapper table used by dlsym and
                  clGetExtensionFunctionAddress(ForPlatform)

With --api-doc it writes docs/DISTRIBUTED_API.md instead: every entry point and what it does for a
distributed run's objects (from the distributed backend's install functions).

Per-function directives (like mpiP's) live in the tables below; an unclassifiable parameter is a
build error naming the function, never a silently wrong wrapper.
"""
import os
import re
import subprocess
import sys

HANDLE_KINDS = {
    "cl_platform_id": "SLUICE_CL_PLATFORM",
    "cl_device_id": "SLUICE_CL_DEVICE",
    "cl_context": "SLUICE_CL_CONTEXT",
    "cl_command_queue": "SLUICE_CL_QUEUE",
    "cl_mem": "SLUICE_CL_MEM",
    "cl_program": "SLUICE_CL_PROGRAM",
    "cl_kernel": "SLUICE_CL_KERNEL",
    "cl_event": "SLUICE_CL_EVENT",
    "cl_sampler": "SLUICE_CL_SAMPLER",
}

# Entry points written by hand in shim/opencl_manual.c: they return arrays of new handles, answer
# from sluice's own tables, or change what reaches the driver.
MANUAL = {
    "clGetPlatformIDs", "clIcdGetPlatformIDsKHR", "clGetDeviceIDs", "clCreateSubDevices",
    "clCreateSubDevicesEXT", "clCreateKernelsInProgram", "clGetExtensionFunctionAddress",
    "clGetExtensionFunctionAddressForPlatform", "clSetKernelArg", "clCreateCommandQueue",
    "clCreateCommandQueueWithProperties", "clCreateCommandQueueWithPropertiesKHR", "clCreateContextFromType",
}

# Input handle arrays the headers declare without const.
NONCONST_INPUT_ARRAYS = {("clEnqueueCommandBufferKHR", "queues")}

# Bytes moved by enqueues, for the trace: direction and a C expression over the parameters.
TRANSFERS = {
    "clEnqueueWriteBuffer": ("SLUICE_CL_H2D", "size"),
    "clEnqueueReadBuffer": ("SLUICE_CL_D2H", "size"),
    "clEnqueueWriteBufferRect": ("SLUICE_CL_H2D", "region[0] * region[1] * region[2]"),
    "clEnqueueReadBufferRect": ("SLUICE_CL_D2H", "region[0] * region[1] * region[2]"),
    "clEnqueueCopyBuffer": ("SLUICE_CL_D2D", "size"),
    "clEnqueueCopyBufferRect": ("SLUICE_CL_D2D", "region[0] * region[1] * region[2]"),
    "clEnqueueWriteImage": ("SLUICE_CL_H2D", "sluice_cl_image_bytes(image, region)"),
    "clEnqueueReadImage": ("SLUICE_CL_D2H", "sluice_cl_image_bytes(image, region)"),
    "clEnqueueCopyImage": ("SLUICE_CL_D2D", "sluice_cl_image_bytes(src_image, region)"),
    "clEnqueueCopyImageToBuffer": ("SLUICE_CL_D2D", "sluice_cl_image_bytes(src_image, region)"),
    "clEnqueueCopyBufferToImage": ("SLUICE_CL_D2D", "sluice_cl_image_bytes(dst_image, region)"),
    "clEnqueueMapBuffer": ("(map_flags & CL_MAP_WRITE_INVALIDATE_REGION) ? SLUICE_CL_NONE : SLUICE_CL_D2H", "size"),
    "clEnqueueSVMMemcpy": ("SLUICE_CL_D2D", "size"),
}

HEADERS = ["CL/cl.h", "CL/cl_ext.h", "CL/cl_gl.h", "CL/cl_egl.h"]

# Queries sluice answers in part itself (translate.c, sluice_cl_info_override): the program's
# own queue properties, profiling it did not ask for.
INFO_OVERRIDES = {"clGetCommandQueueInfo", "clGetEventProfilingInfo"}

# Query results that hold objects: read from info_objects.def (shared with translate.c).
INFO_OBJECTS = {}


def load_info_objects(path):
    with open(path) as fh:
        text = fh.read()
    for fn, param, _kind in re.findall(r"^SLUICE_CL_INFO_OBJECT\((\w+),\s*(\w+),\s*(\w+)\)", text, re.M):
        INFO_OBJECTS.setdefault(fn, []).append(param)
    if not INFO_OBJECTS:
        raise SystemExit(f"gen_wrappers: no SLUICE_CL_INFO_OBJECT entries in {path}")


class Param:
    def __init__(self, text):
        self.text = " ".join(text.split())
        self.callback = None
        m = re.match(r"^(.*)\(\s*\*\s*(\w+)\s*\)\s*\((.*)\)$", self.text)
        if m:
            self.name = m.group(2)
            self.callback = [" ".join(a.split()) for a in split_top(m.group(3))]
            self.base, self.depth, self.const = "callback", 0, False
            return
        m = re.match(r"^(.*?)(\w+)\s*(\[\s*\])?$", self.text)
        if not m:
            raise SystemExit(f"gen_wrappers: cannot parse parameter '{text}'")
        typ, self.name, arr = m.group(1).strip(), m.group(2), m.group(3)
        self.depth = typ.count("*") + (1 if arr else 0)
        self.const = bool(re.match(r"^const\b", typ))
        self.base = re.sub(r"\bconst\b|\*", " ", typ).split()
        self.base = " ".join(self.base)


class Func:
    def __init__(self, ret, name, params):
        self.ret = " ".join(ret.split())
        self.name = name
        self.params = [Param(p) for p in params if p.strip() not in ("void", "")]


def split_top(s):
    out, depth, cur = [], 0, ""
    for ch in s:
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
        if ch == "," and depth == 0:
            out.append(cur)
            cur = ""
        else:
            cur += ch
    if cur.strip():
        out.append(cur)
    return out


def parse_functions(cc, defines):
    src = "".join(f"#include <{h}>\n" for h in HEADERS)
    cmd = [cc, "-E", "-P"] + [d if d.startswith("-") else f"-D{d}" for d in defines] + ["-x", "c", "-"]
    text = subprocess.run(cmd, input=src, capture_output=True, text=True, check=True).stdout
    text = " ".join(text.split())
    funcs, seen = [], set()
    for m in re.finditer(r"extern\s+([^;{}()]*?)\b(cl[A-Z]\w*)\s*\(((?:[^()]|\([^()]*\)\s*\([^()]*\))*)\)\s*(?:__attribute__\s*\(\(.*?\)\)\s*)*;", text):
        ret, name, params = m.group(1), m.group(2), m.group(3)
        ret = re.sub(r"__attribute__\s*\(\(.*?\)\)", "", ret)
        if name in seen:
            continue
        seen.add(name)
        funcs.append(Func(ret, name, split_top(params)))
    if len(funcs) < 100:
        raise SystemExit(f"gen_wrappers: only {len(funcs)} OpenCL functions found in {HEADERS}: are the headers complete?")
    return funcs


def icd_fields(cc, defines):
    src = "#include <CL/cl_icd.h>\n"
    cmd = [cc, "-E", "-P"] + [d if d.startswith("-") else f"-D{d}" for d in defines] + ["-x", "c", "-"]
    text = subprocess.run(cmd, input=src, capture_output=True, text=True, check=True).stdout
    text = " ".join(text.split())
    m = re.search(r"struct _cl_icd_dispatch\s*\{(.*?)\}", text)
    if not m:
        raise SystemExit("gen_wrappers: struct _cl_icd_dispatch not found in CL/cl_icd.h")
    return [f.split()[-1] for f in m.group(1).split(";") if f.strip()]


def handle_kind(p):
    return HANDLE_KINDS.get(p.base)


def classify(f):
    """Attaches a role to every parameter, or stops the build naming what it cannot handle."""
    last_count = None
    for p in f.params:
        kind = handle_kind(p)
        if p.callback is not None:
            p.role = "callback"
        elif kind and p.depth == 0:
            p.role = "in"
        elif kind and p.depth == 1 and (p.const or (f.name, p.name) in NONCONST_INPUT_ARRAYS):
            if last_count is None:
                raise SystemExit(f"gen_wrappers: {f.name}: no count parameter before array '{p.name}'")
            p.role, p.count = "in_array", last_count
        elif kind == "SLUICE_CL_EVENT" and p.depth == 1 and p.name == "event":
            p.role = "out_event"
        elif kind:
            raise SystemExit(f"gen_wrappers: {f.name}: unclassified handle parameter '{p.text}' (add a directive or write it by hand)")
        elif p.base == "cl_int" and p.depth == 1 and p.name == "errcode_ret":
            p.role = "errcode"
        elif p.base == "cl_context_properties" and p.depth == 1 and p.const:
            p.role = "ctx_props"
        elif p.base == "cl_image_desc" and p.depth == 1 and p.const:
            p.role = "image_desc"
        else:
            p.role = "plain"
        if p.depth == 0 and p.base in ("cl_uint",) and (p.name.startswith("num_") or p.name == "num_queues"):
            last_count = p.name
    for p in f.params:
        if p.role == "callback":
            classify_callback(f, p)


def classify_callback(f, p):
    kinds = [HANDLE_KINDS.get(a.split()[0]) for a in p.callback]
    if not any(kinds):
        p.cb, p.role = "plain", "plain"  # no objects in it: the program's function goes through as is
        return
    sig = ",".join(re.sub(r"\W.*", "", a.replace("const ", "")) for a in p.callback)
    table = {
        "cl_program,void": "program",
        "cl_mem,void": "mem",
        "cl_context,void": "context",
        "cl_event,cl_int,void": "event",
        "cl_command_queue,cl_uint,void,void": "svm_free",
    }
    if sig not in table:
        raise SystemExit(f"gen_wrappers: {f.name}: callback '{p.text}' of unknown shape ({sig})")
    p.cb = table[sig]
    idx = f.params.index(p)
    if idx + 1 >= len(f.params) or f.params[idx + 1].name != "user_data":
        raise SystemExit(f"gen_wrappers: {f.name}: callback '{p.name}' is not followed by user_data")


def proto(f, name=None, pfn=False):
    params = ", ".join(p.text for p in f.params) or "void"
    if pfn:
        return f"typedef {f.ret} (CL_API_CALL *{name})({params});"
    return f"{f.ret} CL_API_CALL {name or f.name}({params})"


def call_args(f, translated):
    return ", ".join((f"r_{p.name}" if translated and p.role != "plain" else p.name) for p in f.params)


def ret_default(f):
    if f.ret == "cl_int":
        return "CL_INVALID_OPERATION"
    if f.ret == "void":
        return None
    return "NULL" if ("*" in f.ret or f.ret in HANDLE_KINDS or f.ret.endswith("_khr")) else "0"


def gen_wrapper(f):
    fid = f"SLUICE_CL_FN_{f.name}"
    is_info = re.match(r"^clGet\w*Info(KHR|EXT|INTEL)?$", f.name) and any(p.name == "param_name" for p in f.params) \
        and any(p.name == "param_value_size_ret" for p in f.params)
    retain = re.match(r"^cl(Retain|Release)(Context|CommandQueue|MemObject|Program|Kernel|Event|Sampler|Device|DeviceEXT)$", f.name)
    enqueue = f.name.startswith("clEnqueue") and any(p.role == "out_event" for p in f.params)
    handles = [p for p in f.params if p.role == "in"]
    arrays = [p for p in f.params if p.role == "in_array"]
    o = []
    o.append(f"SLUICE_EXPORT {proto(f)}\n{{")
    void_ret = f.ret == "void"
    # Hands off: SLUICE_OPENCL=off forwards the caller's own arguments to the loader.
    o.append(f"    if (!sluice_cl_on()) {{")
    o.append(f"        sluice_cl_pfn_{f.name} raw_ = sluice_cl_raw_api()->{f.name};")
    d = ret_default(f)
    err_p = next((p for p in f.params if p.role == "errcode"), None)
    if d is not None:
        miss = f"{{ {'if (' + err_p.name + ') *' + err_p.name + ' = CL_INVALID_OPERATION; ' if err_p else ''}return {d}; }}"
        o.append(f"        if (raw_ == NULL) {miss}")
        o.append(f"        return raw_({call_args(f, False)});")
    else:
        o.append(f"        if (raw_ != NULL) raw_({call_args(f, False)});")
        o.append(f"        return;")
    o.append("    }")
    # The backend comes from the first handle the call names: local today, remote later.
    if handles:
        primary = f"(struct sluice_cl_obj *){handles[0].name}"
    elif arrays:
        a = arrays[0]
        primary = f"(({a.count}) > 0 && {a.name} ? (struct sluice_cl_obj *){a.name}[0] : NULL)"
    else:
        primary = "NULL"
    pk = handles[0].base if handles else (arrays[0].base if arrays else None)
    pkind = HANDLE_KINDS[pk] if pk else "SLUICE_CL_PLATFORM"
    o.append(f"    struct sluice_cl_obj *primary_ = sluice_cl_valid({primary}, {pkind});")
    o.append(f"    const struct sluice_cl_backend *be_ = sluice_cl_backend_of(primary_);")
    o.append(f"    sluice_cl_pfn_{f.name} fn_ = be_->api.{f.name};")
    if d is not None:
        o.append(f"    if (fn_ == NULL) {miss}")
    else:
        o.append(f"    if (fn_ == NULL) return;")
    o.append(f"    const bool tr_ = sluice_trace_active();")
    o.append(f"    const uint64_t t0_ = tr_ ? sluice_now_ns() : 0;")
    cleanup = []
    for p in f.params:
        if p.role == "in":
            o.append(f"    {p.base} r_{p.name} = ({p.base})sluice_cl_in({p.name}, {HANDLE_KINDS[p.base]});")
        elif p.role == "in_array":
            o.append(f"    void *stk_{p.name}[SLUICE_CL_STACK_ARRAY];")
            o.append(f"    void *heap_{p.name} = NULL;")
            o.append(f"    {'const ' if p.const else ''}{p.base} *r_{p.name} = ({'const ' if p.const else ''}{p.base} *)sluice_cl_in_array((void *const *){p.name}, {p.count}, {HANDLE_KINDS[p.base]}, stk_{p.name}, &heap_{p.name});")
            cleanup.append(f"    free(heap_{p.name});")
        elif p.role == "out_event":
            o.append(f"    cl_event ev_local_ = NULL;")
            o.append(f"    cl_event *r_{p.name} = ({p.name} != NULL || tr_) ? &ev_local_ : NULL;")
        elif p.role == "errcode":
            o.append(f"    cl_int err_local_ = CL_SUCCESS;")
            o.append(f"    cl_int *r_{p.name} = &err_local_;")
        elif p.role == "ctx_props":
            o.append(f"    cl_context_properties stkp_{p.name}[SLUICE_CL_STACK_PROPS];")
            o.append(f"    cl_context_properties *heapp_{p.name} = NULL;")
            o.append(f"    const cl_context_properties *r_{p.name} = sluice_cl_in_ctx_props({p.name}, stkp_{p.name}, &heapp_{p.name});")
            cleanup.append(f"    free(heapp_{p.name});")
        elif p.role == "image_desc":
            o.append(f"    cl_image_desc desc_{p.name};")
            o.append(f"    const cl_image_desc *r_{p.name} = sluice_cl_in_image_desc({p.name}, &desc_{p.name});")
        elif p.role == "callback":
            if p.cb == "plain":
                o.append(f"    __typeof__({p.name}) r_{p.name} = {p.name};")
                o.append(f"    void *r_user_data = user_data;")
            else:
                owner = handles[0].name if handles else "NULL"
                o.append(f"    struct sluice_cl_tramp *tramp_ = {p.name} ? sluice_cl_tramp_new((void (*)(void)){p.name}, user_data, (struct sluice_cl_obj *){owner}) : NULL;")
                o.append(f"    __typeof__({p.name}) r_{p.name} = {p.name} ? sluice_cl_tramp_{p.cb} : NULL;")
                o.append(f"    void *r_user_data = {p.name} ? (void *)tramp_ : user_data;")
        if p.name == "user_data" and any(q.role == "callback" and q.cb != "plain" for q in f.params):
            p.role = "user_data"
    objects = INFO_OBJECTS.get(f.name, []) if is_info else []
    if objects:
        # The result size is needed to translate an array even when the caller asks none.
        o.append(f"    size_t size_local_ = 0;")
        o.append(f"    size_t *r_param_value_size_ret = param_value_size_ret ? param_value_size_ret : &size_local_;")
        for p in f.params:
            if p.name == "param_value_size_ret":
                p.role = "info_size"
    args = ", ".join(f"r_{p.name}" if p.role != "plain" else p.name for p in f.params)
    # Queries that sluice answers itself (original queue properties, hidden profiling), and
    # results that name objects, tested inline so that other queries pay nothing.
    if is_info and (objects or f.name in INFO_OVERRIDES):
        o.append(f"    {f.ret} ret_;")
        if f.name in INFO_OVERRIDES:
            size_ret = "r_param_value_size_ret" if objects else "param_value_size_ret"
            o.append(f"    if (!sluice_cl_info_override({fid}, primary_, param_name, param_value_size, param_value, {size_ret}, &ret_))")
            o.append(f"        ret_ = fn_({args});")
        else:
            o.append(f"    ret_ = fn_({args});")
        if objects:
            test = " || ".join(f"param_name == {pn}" for pn in objects)
            o.append(f"    if (ret_ == CL_SUCCESS && param_value != NULL && ({test}))")
            o.append(f"        sluice_cl_info_to_handles({fid}, primary_, param_name, param_value, *r_param_value_size_ret);")
    elif void_ret:
        o.append(f"    fn_({args});")
    else:
        o.append(f"    {f.ret} ret_ = fn_({args});")
    # Outputs back to the handles the program knows.
    code = "ret_" if f.ret == "cl_int" else ("err_local_" if err_p else "CL_SUCCESS")
    if f.ret in HANDLE_KINDS:
        o.append(f"    if (ret_ != NULL) {{")
        o.append(f"        ret_ = ({f.ret})sluice_cl_wrap_new({HANDLE_KINDS[f.ret]}, ret_, primary_, be_);")
        o.append(f"        if (ret_ == NULL) err_local_ = CL_OUT_OF_HOST_MEMORY;")
        o.append(f"    }}")
    if retain:
        if retain.group(1) == "Retain":
            o.append(f"    if (ret_ == CL_SUCCESS) sluice_cl_obj_retain(primary_);")
        else:
            o.append(f"    if (ret_ == CL_SUCCESS) sluice_cl_obj_release(primary_);")
    if enqueue:
        tdir, texpr = TRANSFERS.get(f.name, ("SLUICE_CL_NONE", "0"))
        wl = next((p for p in f.params if p.name == "event_wait_list"), None)
        nw = next((p for p in f.params if p.name == "num_events_in_wait_list"), None)
        o.append(f"    {{")
        o.append(f"        cl_int code_ = {code};")
        o.append(f"        sluice_cl_enqueue_done({fid}, primary_, code_, ev_local_, event, tr_, t0_,")
        o.append(f"                               {nw.name if nw else 0}, {'(struct sluice_cl_obj *const *)' + wl.name if wl else 'NULL'},")
        o.append(f"                               tr_ ? (int)({tdir}) : SLUICE_CL_NONE, tr_ ? (uint64_t)({texpr}) : 0);")
        o.append(f"    }}")
    elif any(p.role == "out_event" for p in f.params):
        o.append(f"    if (event != NULL) *event = ({code} == CL_SUCCESS && ev_local_) ? (cl_event)sluice_cl_wrap_new(SLUICE_CL_EVENT, ev_local_, primary_, be_) : NULL;")
        o.append(f"    else if (ev_local_) be_->api.clReleaseEvent(ev_local_);")
    if err_p:
        o.append(f"    if ({err_p.name} != NULL) *{err_p.name} = err_local_;")
    if not enqueue:
        rc = code if f.ret != "void" else "CL_SUCCESS"
        o.append(f"    if (tr_) sluice_cl_trace_call({fid}, t0_, {rc}, primary_);")
    o.extend(cleanup)
    if not void_ret:
        o.append(f"    return ret_;")
    o.append("}\n")
    return "\n".join(o)


# docs/DISTRIBUTED_API.md (--api-doc): what each entry point does for objects of a distributed
# run's merged platforms. The distributed backend's slots are read from its install functions
# (`api->clXxx = ...` in runtime/cl/rank0/dist_*.c); these notes say what a slot or a hand-written
# wrapper does beyond "works across ranks", and the table the outcome of the others.
DIST_NOTES = {
    "clEnqueueTask": "as clEnqueueNDRangeKernel of one work-item (dist_legacy.c)",
    "clEnqueueMarker": "as clEnqueueMarkerWithWaitList with an empty list",
    "clEnqueueBarrier": "as clEnqueueBarrierWithWaitList with an empty list",
    "clEnqueueWaitForEvents": "as clEnqueueBarrierWithWaitList with that list (PoCL 3 does not implement it locally)",
    "clGetPlatformIDs": "the merged platforms: one per platform name, with the devices of every rank",
    "clIcdGetPlatformIDsKHR": "the merged platforms, as clGetPlatformIDs",
    "clGetExtensionFunctionAddressForPlatform": "sluice's entry point where the distributed backend implements the "
                                                "function, else NULL",
    "clGetExtensionFunctionAddress": "the local loader's answer, as sluice's entry points: for a merged platform's "
                                     "objects they give the errors of this table",
    "clGetDeviceInfo": "the owning rank's answer, except CL_DEVICE_PLATFORM and CL_DEVICE_PARENT_DEVICE (rank 0's "
                       "handles), pipes and SVM (absent: CL_FALSE, 0) and the extensions and OpenCL C features of "
                       "those and of mipmaps (not listed)",
    "clGetPlatformInfo": "the first rank's answer; extensions whose functions the distributed backend lacks are not "
                         "listed",
    "clCreateContextFromType": "the platform of CL_CONTEXT_PLATFORM, or the first merged platform without one; no "
                               "device of the type: CL_DEVICE_NOT_FOUND",
    "clCreateBuffer": "USE_HOST_PTR: the program's memory is rank 0's copy; HOST_*_ACCESS enforced on rank 0",
    "clCreateBufferWithProperties": "an empty property list only (else CL_INVALID_PROPERTY)",
    "clGetSupportedImageFormats": "the formats every rank of the context supports, in the first rank's order, "
                                  "asked once per context, flags and type",
    "clGetImageInfo": "the owning rank's driver's answers, asked once (at creation, or at the first such query "
                      "of an image created without waiting) and answered on rank 0; CL_IMAGE_BUFFER the buffer it "
                      "was made from (else NULL)",
    "clCreateImage": "one real image on every rank of the context (dist_image.c); its contents move whole, packed, "
                     "through the coherence directory; an image made from a buffer (image1d_buffer, a 2D image of "
                     "a buffer) is made on every rank from that rank's buffer and shares its storage there, "
                     "and the directory moves the buffer for both",
    "clCreateImageWithProperties": "an empty property list only (else CL_INVALID_PROPERTY), then as clCreateImage",
    "clCreateImage2D": "as clCreateImage",
    "clCreateImage3D": "as clCreateImage",
    "clEnqueueReadImage": "on the queue's rank; packed between ranks, unpacked into the program's pitches on rank 0",
    "clEnqueueWriteImage": "on the queue's rank; packed on rank 0 at enqueue (the program may reuse its memory)",
    "clEnqueueMapImage": "served from rank 0 memory laid out as the whole image (the program's own with "
                         "CL_MEM_USE_HOST_PTR), so the pitches are a local driver's",
    "clCreateSampler": "one real sampler on every rank of the context, that rank's in each kernel launch",
    "clCreateSamplerWithProperties": "as clCreateSampler, with the property list",
    "clGetPipeInfo": "CL_INVALID_MEM_OBJECT: no memory object of a merged platform is a pipe",
    "clCreateProgramWithIL": "created on every rank; PoCL 3.1 takes no IL (CL_INVALID_VALUE)",
    "clGetProgramBuildInfo": "CL_PROGRAM_BUILD_OPTIONS without the -cl-kernel-arg-info the servers add",
    "clSetKernelArg": "kept on rank 0 and checked against the argument's declaration; sent with each launch",
    "clUnloadPlatformCompiler": "every rank of the platform",
    "clGetDeviceAndHostTimer": "the ranks' clocks are not rank 0's: no synchronised timer (the specification's "
                               "error for a platform without one)",
    "clGetHostTimer": "as clGetDeviceAndHostTimer",
    "clCreateCommandQueueWithProperties": "CL_QUEUE_PROPERTIES and CL_QUEUE_SIZE, as PoCL takes them; device-side "
                                          "queues: CL_INVALID_QUEUE_PROPERTIES",
    "clSetDefaultDeviceCommandQueue": "no device-side queues (PoCL has none either)",
    "clCompileProgram": "on every rank of the program, with the headers' programs there",
    "clLinkProgram": "on every rank with devices in the list (or the context), with the inputs' programs there",
    "clSetKernelExecInfo": "devices report no SVM: SVM pointers CL_INVALID_OPERATION, fine-grain system SVM only "
                           "CL_FALSE",
    "clEnqueueNDRangeKernel": "what the driver refuses at once is refused at enqueue, from the device's and the "
                              "kernel's limits cached on rank 0 (dist_validate.c)",
    "clEnqueueNativeKernel": "on the queue's rank, in that rank's process: the function is named by its object "
                             "file and offset (the same executable), the memory objects are made valid there "
                             "(dist_native.c); an object not loaded there: CL_INVALID_OPERATION",
    "clSetProgramReleaseCallback": "deprecated by OpenCL 2.2; PoCL 3.1 gives CL_INVALID_OPERATION locally too",
    "clGetKernelSubGroupInfo": "not forwarded; PoCL 3.1's devices have no sub-groups (CL_DEVICE_MAX_NUM_SUB_GROUPS "
                               "0) and give CL_INVALID_OPERATION locally too",
    "clGetKernelSubGroupInfoKHR": "as clGetKernelSubGroupInfo",
    "clSetCommandQueueProperty": "OpenCL 1.0's, deprecated by 1.1 (PoCL 3.1 crashes on it locally)",
    "clEnqueueMigrateMemObjects": "the coherence directory makes the buffers valid on the queue's rank before a "
                                  "marker there (contents kept, as PoCL keeps them); toward the host: a marker",
    "clCreateSubDevicesEXT": "the OpenCL 1.1 extension cl_ext_device_fission, not listed: clCreateSubDevices works",
}

# Extension functions without a slot: their extension is not listed for a merged platform's
# devices (dist_devices.c filters what the backend lacks), so a program that checks never calls them.
EXTENSION_SUFFIX = re.compile(r"(KHR|EXT|INTEL|ARM|IMG|APPLE|QCOM|NV|AMD)$")
EXTENSION_NOTE = "its extension is not listed for a merged platform's devices (not forwarded)"
INTEROP = re.compile(r"GL|EGL|D3D|DX9|VA_API|VAAPI")
INTEROP_NOTE = ("sharing with a graphics or media API of rank 0's process cannot reach other ranks' devices: "
                "no sharing extension is listed")

# What a missing slot means, where the specification gives that error to a device without the
# feature (the devices of a merged platform report no pipes or SVM), or where the entry point
# belongs to an extension of images the merged platform does not offer.
ABSENT_FEATURE = [
    (re.compile(r"Pipe"), "devices report no pipes: as for a device without them"),
    (re.compile(r"SVM"), "devices report no SVM: as for a device without them"),
    (re.compile(r"Image|Sampler"), "an extension the merged platform does not offer (command buffers, vendor "
                                   "image queries, images shared with EGL): as for a platform without it"),
]

# Hand-written wrappers (MANUAL) whose outcome without a distributed slot is not the generated one.
MANUAL_MISSING = {
    "clCreateSubDevicesEXT": "CL_INVALID_OPERATION",
}


def dist_slots(root):
    slots = set()
    cl_dir = os.path.join(root, "runtime", "cl", "rank0")
    for name in sorted(os.listdir(cl_dir)):
        if name.startswith("dist_") and name.endswith(".c"):
            with open(os.path.join(cl_dir, name)) as fh:
                slots.update(re.findall(r"\bapi->(cl\w+)\s*=", fh.read()))
    return slots


def missing_outcome(f):
    """What the generated wrapper returns when the backend has no slot for the call."""
    if f.name in MANUAL_MISSING:
        return MANUAL_MISSING[f.name]
    d = ret_default(f)
    err = any(p.name == "errcode_ret" for p in f.params)
    if d is None:
        return "does nothing"
    if d == "CL_INVALID_OPERATION":
        return "CL_INVALID_OPERATION"
    return f"{d}" + (", errcode CL_INVALID_OPERATION" if err else "")


def names_no_object(f):
    if f.name in MANUAL:
        return False
    return not any(getattr(p, "role", None) in ("in", "in_array") for p in f.params)


def write_api_doc(path, funcs):
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
    slots = dist_slots(root)
    hand = {"clGetPlatformIDs", "clIcdGetPlatformIDsKHR", "clGetExtensionFunctionAddressForPlatform"}
    rows, counts = [], {"ranks": 0, "loader": 0, "error": 0}
    for f in funcs:
        note = DIST_NOTES.get(f.name, "")
        if f.name in slots or f.name in hand:
            kind, what = "ranks", "yes"
        elif names_no_object(f) or f.name == "clGetExtensionFunctionAddress":
            kind, what = "loader", "local loader"
        else:
            kind, what = "error", missing_outcome(f)
            if not note:
                for pattern, reason in ABSENT_FEATURE:
                    if pattern.search(f.name):
                        note = reason
                        break
            if not note and INTEROP.search(f.name):
                note = INTEROP_NOTE
            if not note and EXTENSION_SUFFIX.search(f.name):
                note = EXTENSION_NOTE
            if not note:
                raise SystemExit(f"gen_wrappers.py: {f.name} returns an error in distributed mode without a "
                                 "reason: add it to DIST_NOTES")
        counts[kind] += 1
        rows.append(f"| `{f.name}` | {what} | {note} |")
    out = ["# Distributed OpenCL: API coverage", "",
           "<!-- Generated by runtime/cl/intercept/gen_wrappers.py --api-doc from the installed OpenCL headers and the",
           "     distributed backend's install functions (runtime/cl/rank0/dist_*.c): do not edit; regenerate with",
           "     python3 runtime/cl/intercept/gen_wrappers.py --api-doc docs/DISTRIBUTED_API.md cc -DCL_TARGET_OPENCL_VERSION=300 ...",
           "     (tests/integration/cl/dist_api_doc.sh checks that it is current). -->", "",
           "What every OpenCL entry point sluice exports does with the objects of a distributed run's merged",
           "platforms (`SLUICE_OPENCL=distributed`, docs/DISTRIBUTED.md), in header order:", "",
           "- **yes**: works across ranks; the distributed backend implements it (the notes say how, where",
           "  it differs from a local driver).",
           "- **local loader**: the call names no object sluice wraps, so it goes to the local ICD loader",
           "  unchanged, as without distribution (the extension objects some of them take, command buffers",
           "  or semaphores, are never created for a merged platform).",
           "- otherwise the result every call gets, never a crash: a missing slot of the distributed backend",
           "  makes sluice's generated wrapper return it. Devices report no pipes or SVM",
           "  (`CL_DEVICE_PIPE_SUPPORT` is `CL_FALSE`, `CL_DEVICE_SVM_CAPABILITIES` 0), so for those",
           "  `CL_INVALID_OPERATION` is the error the specification gives such a device, and programs that",
           "  check take their fallback path. Images and samplers work across ranks.", "",
           f"{counts['ranks']} entry points work across ranks, {counts['loader']} go to the local loader and "
           f"{counts['error']} return an error.", "",
           "| entry point | across ranks | notes |", "|---|---|---|"]
    write(path, "\n".join(out + rows) + "\n")


def main():
    if len(sys.argv) > 2 and sys.argv[1] == "--api-doc":
        doc, cc, defines = sys.argv[2], sys.argv[3], sys.argv[4:]
        load_info_objects(os.path.join(os.path.dirname(os.path.abspath(__file__)), "info_objects.def"))
        funcs = parse_functions(cc, defines)
        for f in funcs:
            if f.name not in MANUAL:
                classify(f)
        write_api_doc(doc, funcs)
        return
    if len(sys.argv) < 3:
        raise SystemExit("usage: gen_wrappers.py <outdir> <c compiler> [DEFINE | -Iinclude-dir ...]\n"
                         "       gen_wrappers.py --api-doc <file.md> <c compiler> [DEFINE | -Iinclude-dir ...]")
    outdir, cc, defines = sys.argv[1], sys.argv[2], sys.argv[3:]
    load_info_objects(os.path.join(os.path.dirname(os.path.abspath(__file__)), "info_objects.def"))
    funcs = parse_functions(cc, defines)
    for f in funcs:
        if f.name not in MANUAL:
            classify(f)
    fields = icd_fields(cc, defines)
    names = {f.name for f in funcs}
    os.makedirs(os.path.join(outdir, "cl"), exist_ok=True)

    hdr = ["/* Generated by runtime/cl/intercept/gen_wrappers.py from the installed OpenCL headers: do not edit. */",
           "#ifndef SLUICE_CL_GENERATED_API_H", "#define SLUICE_CL_GENERATED_API_H",
           "#include <CL/cl.h>", "#include <CL/cl_ext.h>", "#include <CL/cl_gl.h>", "#include <CL/cl_egl.h>", "",
           "/* X(name): every OpenCL entry point sluice exports, in header order. */",
           "#define SLUICE_CL_FUNCTIONS(X) \\"]
    hdr += [f"    X({f.name}) \\" for f in funcs]
    hdr += ["", "typedef enum {"]
    hdr += [f"    SLUICE_CL_FN_{f.name}," for f in funcs]
    hdr += ["    SLUICE_CL_FN_COUNT", "} sluice_cl_fn_id;", ""]
    hdr += [proto(f, f"sluice_cl_pfn_{f.name}", pfn=True) for f in funcs]
    hdr += ["", "/* One slot per entry point: what a backend (the local loader, later a remote rank) offers. */",
            "struct sluice_cl_api {"]
    hdr += [f"    sluice_cl_pfn_{f.name} {f.name};" for f in funcs]
    hdr += ["};", "", "#endif"]
    write(os.path.join(outdir, "cl", "api.h"), "\n".join(hdr) + "\n")

    srt = sorted(funcs, key=lambda f: f.name)
    nm = ["/* Generated by runtime/cl/intercept/gen_wrappers.py: do not edit. Sorted by name for bsearch. */",
          '#include "cl/intercept/names.h"', "",
          "const struct sluice_cl_name sluice_cl_names[SLUICE_CL_FN_COUNT] = {"]
    nm += [f'    {{"{f.name}", SLUICE_CL_FN_{f.name}, offsetof(struct sluice_cl_api, {f.name})}},' for f in srt]
    nm += ["};", ""]
    write(os.path.join(outdir, "cl", "names.c"), "\n".join(nm))

    w = ["/* Generated by runtime/cl/intercept/gen_wrappers.py from the installed OpenCL headers: do not edit.",
         " * One exported wrapper per entry point; see runtime/cl/intercept/wrap.h for the helpers they use. */",
         '#include "cl/intercept/wrap.h"', ""]
    for f in funcs:
        if f.name not in MANUAL:
            w.append(gen_wrapper(f))
    write(os.path.join(outdir, "cl", "wrappers.c"), "\n".join(w))

    dp = ["/* Generated by runtime/cl/intercept/gen_wrappers.py: do not edit.",
          " * The cl_khr_icd dispatch table at the head of every sluice handle (an ICD loader that is",
          " * handed one of them lands back in sluice), and the name -> wrapper table. */",
          '#include "cl/intercept/wrap.h"', "",
          "const struct _cl_icd_dispatch sluice_cl_icd_dispatch = {"]
    for fld in fields:
        if fld in names:
            dp.append(f"    .{fld} = (__typeof__(((struct _cl_icd_dispatch *)0)->{fld}))(void (*)(void)){fld},")
    dp += ["};", "", "/* Indexed by sluice_cl_fn_id. */",
           "void (*const sluice_cl_wrappers[SLUICE_CL_FN_COUNT])(void) = {"]
    dp += [f"    [SLUICE_CL_FN_{f.name}] = (void (*)(void)){f.name}," for f in funcs]
    dp += ["};", ""]
    write(os.path.join(outdir, "cl", "dispatch.c"), "\n".join(dp))


def write(path, text):
    # Rewrite only on change, so that a re-run does not rebuild the library.
    try:
        with open(path) as fh:
            if fh.read() == text:
                return
    except OSError:
        pass
    with open(path, "w") as fh:
        fh.write(text)


if __name__ == "__main__":
    main()
