// The one CUDA driver loader of the project: the handful of driver API types and entry points
// the CUDA executor and the CUDA backend (backends/cuda/) use, declared here and resolved with
// dlsym so that nothing includes cuda.h or links libcuda: a machine without the toolkit still
// builds everything, and one without a driver still runs everything else. A library of its own
// (uops_cuda_driver), so that the core uses it without linking the runtime.
#pragma once

#include <cstddef>
#include <string>

namespace uops::runtime::cuda {

// Layouts match cuda.h: handles are pointers to opaque structs, devices and results are ints.
using CUresult = int;
using CUdevice = int;
using CUcontext = struct CUctx_st*;
using CUstream = struct CUstream_st*;
using CUevent = struct CUevent_st*;
using CUgraph = struct CUgraph_st*;
using CUgraphExec = struct CUgraphExec_st*;
using CUmodule = struct CUmod_st*;
using CUfunction = struct CUfunc_st*;
using CUdeviceptr = unsigned long long;

constexpr CUresult CUDA_SUCCESS = 0;
constexpr CUresult CUDA_ERROR_NOT_READY = 600;
constexpr unsigned CU_STREAM_NON_BLOCKING = 0x1;
constexpr unsigned CU_EVENT_DEFAULT = 0x0;
constexpr unsigned CU_EVENT_DISABLE_TIMING = 0x2;
// Capture only this thread's calls, so other threads using the driver meanwhile are unaffected.
constexpr int CU_STREAM_CAPTURE_MODE_THREAD_LOCAL = 1;

// Field names are the symbols' names minus versioned suffixes (the loader resolves the _v2 ABI
// where cuda.h maps a name to it).
struct Driver {
  CUresult (*cuInit)(unsigned flags);
  CUresult (*cuDeviceGetCount)(int* count);
  CUresult (*cuDeviceGet)(CUdevice* device, int ordinal);
  CUresult (*cuDevicePrimaryCtxRetain)(CUcontext* context, CUdevice device);
  CUresult (*cuDevicePrimaryCtxRelease)(CUdevice device);
  CUresult (*cuCtxSetCurrent)(CUcontext context);
  CUresult (*cuStreamCreate)(CUstream* stream, unsigned flags);
  CUresult (*cuStreamDestroy)(CUstream stream);
  CUresult (*cuStreamSynchronize)(CUstream stream);
  CUresult (*cuStreamWaitEvent)(CUstream stream, CUevent event, unsigned flags);
  CUresult (*cuEventCreate)(CUevent* event, unsigned flags);
  CUresult (*cuEventDestroy)(CUevent event);
  CUresult (*cuEventRecord)(CUevent event, CUstream stream);
  CUresult (*cuEventQuery)(CUevent event);
  CUresult (*cuEventSynchronize)(CUevent event);
  CUresult (*cuEventElapsedTime)(float* milliseconds, CUevent start, CUevent end);
  CUresult (*cuStreamBeginCapture)(CUstream stream, int mode);
  CUresult (*cuStreamEndCapture)(CUstream stream, CUgraph* graph);
  CUresult (*cuGraphInstantiate)(CUgraphExec* exec, CUgraph graph, unsigned long long flags);
  CUresult (*cuGraphLaunch)(CUgraphExec exec, CUstream stream);
  CUresult (*cuGraphExecDestroy)(CUgraphExec exec);
  CUresult (*cuGraphDestroy)(CUgraph graph);
  CUresult (*cuGetErrorName)(CUresult error, const char** name);
  // What the CUDA backend adds: device attributes, modules, memory and launches.
  CUresult (*cuDeviceGetAttribute)(int* value, int attribute, CUdevice device);
  CUresult (*cuCtxSynchronize)();
  CUresult (*cuModuleLoadData)(CUmodule* module, const void* image);
  CUresult (*cuModuleGetFunction)(CUfunction* function, CUmodule module, const char* name);
  CUresult (*cuMemAlloc)(CUdeviceptr* address, size_t bytes);
  CUresult (*cuMemFree)(CUdeviceptr address);
  CUresult (*cuMemcpyHtoD)(CUdeviceptr to, const void* from, size_t bytes);
  CUresult (*cuMemcpyDtoH)(void* to, CUdeviceptr from, size_t bytes);
  CUresult (*cuMemcpyDtoDAsync)(CUdeviceptr to, CUdeviceptr from, size_t bytes, CUstream stream);
  CUresult (*cuMemsetD8Async)(CUdeviceptr address, unsigned char value, size_t bytes,
                              CUstream stream);
  CUresult (*cuLaunchKernel)(CUfunction function, unsigned grid_x, unsigned grid_y, unsigned grid_z,
                             unsigned block_x, unsigned block_y, unsigned block_z,
                             unsigned shared_bytes, CUstream stream, void** params, void** extra);
};

// Loads and initializes the driver once per process. Returns null and sets `why` when the
// library, a symbol, or cuInit fails.
const Driver* load_driver(std::string* why);

// "<call> failed: <the driver's error name>", or empty when `result` is CUDA_SUCCESS.
std::string failure(const Driver& driver, CUresult result, const char* call);

// Throws Error with failure()'s text unless `result` is CUDA_SUCCESS.
void check(const Driver& driver, CUresult result, const char* call);

}  // namespace uops::runtime::cuda
