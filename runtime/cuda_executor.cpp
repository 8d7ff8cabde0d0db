#include "uops/runtime/cuda_executor.h"

#include <exception>
#include <mutex>
#include <vector>

#include "runtime/cuda_driver.h"
#include "uops/runtime/error.h"

namespace uops::runtime {

using cuda::check;
using cuda::CU_EVENT_DEFAULT;
using cuda::CU_EVENT_DISABLE_TIMING;
using cuda::CU_STREAM_CAPTURE_MODE_THREAD_LOCAL;
using cuda::CU_STREAM_NON_BLOCKING;
using cuda::CUcontext;
using cuda::CUDA_SUCCESS;
using cuda::CUdevice;
using cuda::CUevent;
using cuda::CUgraph;
using cuda::CUgraphExec;
using cuda::CUresult;
using cuda::CUstream;
using cuda::Driver;
using cuda::load_driver;

bool CudaExecutor::available() {
  const Driver* driver = load_driver(nullptr);
  int count = 0;
  return driver && driver->cuDeviceGetCount(&count) == CUDA_SUCCESS && count > 0;
}

struct CudaExecutor::Impl {
  Graph graph;
  CudaOptions options;
  const Driver* cu = nullptr;
  CUdevice device = 0;
  CUcontext context = nullptr;
  std::vector<CUstream> streams;
  std::vector<CUevent> signal_events;  // per node; null where no stream waits on the node
  // Every stream waits on `fork` at the start of a run and stream 0 on every `join` at its
  // end: a capture must fork from and rejoin its origin stream, and a run's end is then one
  // stream to synchronize.
  CUevent fork = nullptr;
  std::vector<CUevent> joins;
  // Created on the first traced run, since timing events cost more to record.
  CUevent time_zero = nullptr;
  std::vector<CUevent> began, ended;
  CUgraphExec replay = nullptr;
  std::mutex run_mutex;

  Impl(Graph g, CudaOptions o) : graph(std::move(g)), options(o) {
    std::string why;
    cu = load_driver(&why);
    if (!cu) throw Error("CUDA driver unavailable: " + why);
    for (NodeIndex n = 0; n < graph.size(); ++n) {
      if (!graph.node(n).cuda) throw Error("node '" + graph.node(n).name + "' has no CUDA kernel");
    }
    check(*cu, cu->cuDeviceGet(&device, options.device), "cuDeviceGet");
    check(*cu, cu->cuDevicePrimaryCtxRetain(&context, device), "cuDevicePrimaryCtxRetain");
    try {
      create_resources();
    } catch (...) {
      release();
      throw;
    }
  }

  ~Impl() { release(); }

  void create_resources() {
    check(*cu, cu->cuCtxSetCurrent(context), "cuCtxSetCurrent");
    const Schedule& schedule = graph.schedule();
    streams.resize(schedule.streams.size(), nullptr);
    for (CUstream& stream : streams) {
      check(*cu, cu->cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING), "cuStreamCreate");
    }
    signal_events.resize(graph.size(), nullptr);
    for (NodeIndex n = 0; n < graph.size(); ++n) {
      if (schedule.signaled[n]) create_event(signal_events[n], CU_EVENT_DISABLE_TIMING);
    }
    create_event(fork, CU_EVENT_DISABLE_TIMING);
    joins.resize(streams.size(), nullptr);
    for (CUevent& join : joins) create_event(join, CU_EVENT_DISABLE_TIMING);
  }

  void create_event(CUevent& event, unsigned flags) {
    check(*cu, cu->cuEventCreate(&event, flags), "cuEventCreate");
  }

  // Best effort: this runs from the destructor, where there is nobody left to report to.
  void release() {
    if (cu->cuCtxSetCurrent(context) == CUDA_SUCCESS) {
      for (CUstream stream : streams) {
        if (stream) cu->cuStreamSynchronize(stream);
      }
      if (replay) cu->cuGraphExecDestroy(replay);
      for (auto* list : {&signal_events, &joins, &began, &ended}) {
        for (CUevent event : *list) {
          if (event) cu->cuEventDestroy(event);
        }
      }
      for (CUevent event : {fork, time_zero}) {
        if (event) cu->cuEventDestroy(event);
      }
      for (CUstream stream : streams) {
        if (stream) cu->cuStreamDestroy(stream);
      }
    }
    cu->cuDevicePrimaryCtxRelease(device);
  }

  void run(Trace* trace) {
    std::lock_guard lock(run_mutex);
    if (graph.size() == 0) {
      if (trace) *trace = Trace{};
      return;
    }
    check(*cu, cu->cuCtxSetCurrent(context), "cuCtxSetCurrent");
    if (options.use_cuda_graph) {
      if (trace)
        throw Error("tracing needs use_cuda_graph == false: replays are not timed per node");
      if (!replay) capture();
      check(*cu, cu->cuGraphLaunch(replay, streams[0]), "cuGraphLaunch");
      check(*cu, cu->cuStreamSynchronize(streams[0]), "cuStreamSynchronize");
      return;
    }
    if (trace) create_timing_events();
    std::exception_ptr error = enqueue(trace != nullptr);
    check(*cu, cu->cuStreamSynchronize(streams[0]), "cuStreamSynchronize");
    if (error) std::rethrow_exception(error);
    if (trace) fill(*trace);
  }

  void capture() {
    check(*cu, cu->cuStreamBeginCapture(streams[0], CU_STREAM_CAPTURE_MODE_THREAD_LOCAL),
          "cuStreamBeginCapture");
    std::exception_ptr error = enqueue(false);
    CUgraph captured = nullptr;
    CUresult ended_capture = cu->cuStreamEndCapture(streams[0], &captured);
    if (error) {
      if (captured) cu->cuGraphDestroy(captured);
      std::rethrow_exception(error);
    }
    check(*cu, ended_capture, "cuStreamEndCapture");
    CUresult instantiated = cu->cuGraphInstantiate(&replay, captured, 0);
    cu->cuGraphDestroy(captured);
    check(*cu, instantiated, "cuGraphInstantiate");
  }

  // Enqueues one run in the schedule's global order, so every signal event is recorded before
  // a stream is told to wait on it. Stops at the first kernel (or driver) error but still
  // rejoins all streams, so the caller can synchronize or end a capture cleanly.
  std::exception_ptr enqueue(bool timed) {
    const Schedule& schedule = graph.schedule();
    if (timed) check(*cu, cu->cuEventRecord(time_zero, streams[0]), "cuEventRecord");
    check(*cu, cu->cuEventRecord(fork, streams[0]), "cuEventRecord");
    for (std::size_t s = 1; s < streams.size(); ++s) {
      check(*cu, cu->cuStreamWaitEvent(streams[s], fork, 0), "cuStreamWaitEvent");
    }
    std::exception_ptr error;
    try {
      for (NodeIndex n : schedule.order) {
        CUstream stream = streams[schedule.stream_of[n]];
        for (std::uint32_t w : schedule.waits[n]) {
          check(*cu, cu->cuStreamWaitEvent(stream, signal_events[schedule.signals[w].producer], 0),
                "cuStreamWaitEvent");
        }
        if (timed) check(*cu, cu->cuEventRecord(began[n], stream), "cuEventRecord");
        graph.node(n).cuda(stream);
        if (timed) check(*cu, cu->cuEventRecord(ended[n], stream), "cuEventRecord");
        if (schedule.signaled[n]) {
          check(*cu, cu->cuEventRecord(signal_events[n], stream), "cuEventRecord");
        }
      }
    } catch (...) {
      error = std::current_exception();
    }
    for (std::size_t s = 1; s < streams.size(); ++s) {
      check(*cu, cu->cuEventRecord(joins[s], streams[s]), "cuEventRecord");
      check(*cu, cu->cuStreamWaitEvent(streams[0], joins[s], 0), "cuStreamWaitEvent");
    }
    return error;
  }

  void create_timing_events() {
    if (time_zero) return;
    began.resize(graph.size(), nullptr);
    ended.resize(graph.size(), nullptr);
    for (NodeIndex n = 0; n < graph.size(); ++n) {
      if (!began[n]) create_event(began[n], CU_EVENT_DEFAULT);
      if (!ended[n]) create_event(ended[n], CU_EVENT_DEFAULT);
    }
    // Last, so that a failure above is retried on the next traced run.
    create_event(time_zero, CU_EVENT_DEFAULT);
  }

  void fill(Trace& trace) {
    const Schedule& schedule = graph.schedule();
    trace.stream_count = streams.size();
    trace.events.clear();
    for (NodeIndex n : schedule.order) {
      float start_ms = 0, duration_ms = 0;
      check(*cu, cu->cuEventElapsedTime(&start_ms, time_zero, began[n]), "cuEventElapsedTime");
      check(*cu, cu->cuEventElapsedTime(&duration_ms, began[n], ended[n]), "cuEventElapsedTime");
      trace.events.push_back(TraceEvent{graph.node(n).name, n, schedule.stream_of[n],
                                        start_ms * 1000.0, duration_ms * 1000.0});
    }
  }
};

CudaExecutor::CudaExecutor(Graph graph, CudaOptions options)
    : impl_(std::make_unique<Impl>(std::move(graph), options)) {}
CudaExecutor::~CudaExecutor() = default;
void CudaExecutor::run(Trace* trace) {
  impl_->run(trace);
}
const Graph& CudaExecutor::graph() const {
  return impl_->graph;
}

}  // namespace uops::runtime
