#include "uops/runtime/cuda_context.h"

#include <exception>
#include <mutex>
#include <unordered_map>
#include <utility>

#include "cuda_driver.h"
#include "eager_plan.h"
#include "uops/runtime/error.h"

namespace uops::runtime {

using cuda::check;
using cuda::CUcontext;
using cuda::CUDA_ERROR_NOT_READY;
using cuda::CUDA_SUCCESS;
using cuda::CUdevice;
using cuda::CUevent;
using cuda::CUresult;
using cuda::CUstream;
using cuda::Driver;

struct CudaContext::Impl {
  // A computation is its completion event, destroyed with the last reference; the driver
  // releases an event that streams still wait on once it completes.
  struct Event {
    const Driver* cu = nullptr;
    CUevent event = nullptr;
    StreamIndex stream = 0;
    ~Event() {
      if (event) cu->cuEventDestroy(event);
    }
  };

  const Driver* cu = nullptr;
  CUdevice device = 0;
  CUcontext context = nullptr;
  mutable std::mutex mutex;
  const std::size_t max_streams;
  EagerPlan plan;
  std::vector<CUstream> streams;                   // the plan's, and at most one spare
  std::vector<std::shared_ptr<Event>> last_event;  // per stream
  std::unordered_map<ComputationId, std::shared_ptr<Event>> active;
  std::exception_ptr first_error;

  explicit Impl(CudaContextOptions options)
      : max_streams(options.max_streams), plan(options.max_streams) {
    std::string why;
    cu = cuda::load_driver(&why);
    if (!cu) throw Error("CUDA driver unavailable: " + why);
    check(*cu, cu->cuDeviceGet(&device, options.device), "cuDeviceGet");
    check(*cu, cu->cuDevicePrimaryCtxRetain(&context, device), "cuDevicePrimaryCtxRetain");
    if (CUresult result = cu->cuCtxSetCurrent(context); result != CUDA_SUCCESS) {
      cu->cuDevicePrimaryCtxRelease(device);
      check(*cu, result, "cuCtxSetCurrent");
    }
  }

  ~Impl() {
    if (cu->cuCtxSetCurrent(context) == CUDA_SUCCESS) {
      for (CUstream stream : streams) cu->cuStreamSynchronize(stream);
      active.clear();
      last_event.clear();
      for (CUstream stream : streams) cu->cuStreamDestroy(stream);
    }
    cu->cuDevicePrimaryCtxRelease(device);
  }

  // Streams whose last event has completed ran out of work, in index order.
  void poll_streams() {
    for (StreamIndex s = 0; s < plan.stream_count(); ++s) {
      if (plan.pending_on(s) == 0 || !last_event[s]) continue;
      const CUresult result = cu->cuEventQuery(last_event[s]->event);
      if (result == CUDA_SUCCESS) {
        plan.finished_all(s);
      } else if (result != CUDA_ERROR_NOT_READY) {
        check(*cu, result, "cuEventQuery");
      }
    }
  }

  Launched launch(std::string name, CudaKernel kernel, std::vector<BufferId> reads,
                  std::vector<BufferId> writes) {
    if (!kernel) throw Error("launch: computation '" + name + "' has no kernel");
    std::lock_guard lock(mutex);
    check(*cu, cu->cuCtxSetCurrent(context), "cuCtxSetCurrent");
    poll_streams();
    // Resources first, so a driver failure leaves the plan untouched: the completion event,
    // and a spare stream for when the plan asks for a new one.
    auto event = std::make_shared<Event>();
    event->cu = cu;
    check(*cu, cu->cuEventCreate(&event->event, cuda::CU_EVENT_DISABLE_TIMING), "cuEventCreate");
    if (streams.size() == plan.stream_count() && streams.size() < max_streams) {
      CUstream spare = nullptr;
      check(*cu, cu->cuStreamCreate(&spare, cuda::CU_STREAM_NON_BLOCKING), "cuStreamCreate");
      streams.push_back(spare);
      last_event.push_back(nullptr);
    }
    EagerPlan::Decision d = plan.launch(reads, writes);
    const StreamIndex s = d.launched.stream;
    event->stream = s;
    CUstream stream = streams[s];
    // A parent launched on this stream is ordered by the stream already.
    for (ComputationId parent : d.launched.dependencies) {
      const Event& waited = *active.at(parent);
      if (waited.stream != s) {
        check(*cu, cu->cuStreamWaitEvent(stream, waited.event, 0), "cuStreamWaitEvent");
      }
    }
    for (ComputationId id : d.retired) active.erase(id);
    if (plan.is_active(d.launched.id)) active.emplace(d.launched.id, event);
    if (!first_error) {
      try {
        kernel(stream);
      } catch (...) {
        first_error = std::current_exception();
      }
    }
    last_event[s] = event;
    check(*cu, cu->cuEventRecord(event->event, stream), "cuEventRecord");
    return std::move(d.launched);
  }

  void wait_for(BufferId b, bool write) {
    std::vector<std::shared_ptr<Event>> touching;
    {
      std::lock_guard lock(mutex);
      for (ComputationId id : plan.touching(b, write)) touching.push_back(active.at(id));
    }
    check(*cu, cu->cuCtxSetCurrent(context), "cuCtxSetCurrent");
    for (const auto& e : touching) {
      check(*cu, cu->cuEventSynchronize(e->event), "cuEventSynchronize");
    }
    std::lock_guard lock(mutex);
    if (first_error) std::rethrow_exception(first_error);
  }

  void sync() {
    std::lock_guard lock(mutex);
    check(*cu, cu->cuCtxSetCurrent(context), "cuCtxSetCurrent");
    for (CUstream stream : streams) {
      check(*cu, cu->cuStreamSynchronize(stream), "cuStreamSynchronize");
    }
    for (StreamIndex s = 0; s < plan.stream_count(); ++s) plan.finished_all(s);
    plan.clear();
    active.clear();
    if (first_error) std::rethrow_exception(std::exchange(first_error, nullptr));
  }
};

CudaContext::CudaContext(CudaContextOptions options) : impl_(std::make_unique<Impl>(options)) {}
CudaContext::~CudaContext() = default;

Launched CudaContext::launch(std::string name, CudaKernel kernel, std::vector<BufferId> reads,
                             std::vector<BufferId> writes) {
  return impl_->launch(std::move(name), std::move(kernel), std::move(reads), std::move(writes));
}

void CudaContext::read(BufferId b) {
  impl_->wait_for(b, false);
}

void CudaContext::write(BufferId b) {
  impl_->wait_for(b, true);
}

void CudaContext::sync() {
  impl_->sync();
}

std::vector<ComputationId> CudaContext::active() const {
  std::lock_guard lock(impl_->mutex);
  return impl_->plan.active();
}

std::size_t CudaContext::stream_count() const {
  std::lock_guard lock(impl_->mutex);
  return impl_->plan.stream_count();
}

}  // namespace uops::runtime
