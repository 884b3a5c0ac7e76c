// EventClock on CUDA events (event_clock.h). Compiled with the CUDA backend only.
#include <cuda_runtime_api.h>

#include <array>
#include <cmath>
#include <vector>

#include "event_clock.h"
#include "profiler_impl.h"  // WallClockNanos: the clock the profiler's lines use

namespace jobviz {

namespace {

using profiler_detail::WallClockNanos;

constexpr std::int64_t kAnchorLifeNs = 100'000'000;  // renewed every 100 ms
constexpr std::int64_t kAnchorWaitNs = 20'000'000;   // a side-stream event that takes longer: try later
constexpr int kAnchorTries = 3;
constexpr int kMaxDevices = 64;

class CudaEventClock : public EventClock {
 public:
  explicit CudaEventClock(size_t slots) : slots_(slots) {}
  ~CudaEventClock() override {
    // Errors ignored: at process exit the runtime may be gone already.
    for (Slot& slot : slots_)
      if (slot.event) cudaEventDestroy(slot.event);
    for (Anchor& anchor : anchors_) {
      if (anchor.event) cudaEventDestroy(anchor.event);
      if (anchor.stream) cudaStreamDestroy(anchor.stream);
    }
  }

  bool Record(void* cuda_stream, size_t slot_index) override {
    Slot& slot = slots_[slot_index];
    int device = 0;
    if (cudaGetDevice(&device) != cudaSuccess || device < 0 || device >= kMaxDevices) return false;
    if (slot.event && slot.device != device) {  // the slot's last job ran on another device
      cudaEventDestroy(slot.event);
      slot.event = nullptr;
    }
    if (!slot.event) {
      if (cudaEventCreate(&slot.event) != cudaSuccess) {
        slot.event = nullptr;
        return false;
      }
      slot.device = device;
    }
    return cudaEventRecord(slot.event, static_cast<cudaStream_t>(cuda_stream)) == cudaSuccess;
  }

  Resolution Resolve(size_t slot_index, std::int64_t* host_ns) override {
    const Slot& slot = slots_[slot_index];
    const cudaError_t status = cudaEventQuery(slot.event);
    if (status == cudaErrorNotReady) return Resolution::kPending;
    if (status != cudaSuccess) return Failed();
    const Anchor* anchor = AnchorOf(slot.device);
    if (!anchor) return Resolution::kPending;  // no anchor yet: the device is busy or failing; next pass
    float ms = 0;
    // Either order: an event older than the anchor has a negative distance.
    if (cudaEventElapsedTime(&ms, anchor->event, slot.event) != cudaSuccess) {
      cudaGetLastError();
      if (cudaEventElapsedTime(&ms, slot.event, anchor->event) != cudaSuccess) return Failed();
      ms = -ms;
    }
    *host_ns = anchor->host_ns + std::llround(static_cast<double>(ms) * 1e6);
    return Resolution::kDone;
  }

 private:
  struct Slot {
    cudaEvent_t event = nullptr;
    int device = -1;
  };
  struct Anchor {
    cudaStream_t stream = nullptr;
    cudaEvent_t event = nullptr;
    std::int64_t host_ns = 0;  // when the anchor event was taken, on the host clock; 0: none yet
  };

  static Resolution Failed() {
    cudaGetLastError();  // clear a non-sticky error for the next call
    return Resolution::kFailed;
  }

  // The device's anchor, renewed when it is older than kAnchorLifeNs.
  const Anchor* AnchorOf(int device) {
    Anchor& anchor = anchors_[device];
    if (anchor.host_ns != 0 && WallClockNanos() - anchor.host_ns < kAnchorLifeNs) return &anchor;
    int current = 0;
    cudaGetDevice(&current);
    if (current != device) cudaSetDevice(device);  // the writer thread's own device setting
    TakeAnchor(anchor);
    if (current != device) cudaSetDevice(current);
    return anchor.host_ns != 0 ? &anchor : nullptr;
  }

  // An event on an idle side stream between two clock readings: its host
  // time is the middle, within half the round trip. The narrowest of a few
  // tries. The side stream does not wait for the application's streams.
  void TakeAnchor(Anchor& anchor) {
    if (!anchor.stream && cudaStreamCreateWithFlags(&anchor.stream, cudaStreamNonBlocking) != cudaSuccess) {
      anchor.stream = nullptr;
      return;
    }
    std::int64_t best_width = INT64_MAX, best_middle = 0;
    cudaEvent_t best = nullptr;
    std::array<cudaEvent_t, kAnchorTries> tries{};
    for (cudaEvent_t& event : tries) {
      if (cudaEventCreate(&event) != cudaSuccess) {
        event = nullptr;
        break;
      }
      const std::int64_t before = WallClockNanos();
      if (cudaEventRecord(event, anchor.stream) != cudaSuccess) break;
      cudaError_t status;
      std::int64_t after;
      // Polled, not cudaEventSynchronize: a failing device must not hold the writer.
      while ((status = cudaEventQuery(event)) == cudaErrorNotReady && (after = WallClockNanos()) - before < kAnchorWaitNs) {
      }
      after = WallClockNanos();
      if (status != cudaSuccess) break;
      if (after - before < best_width) {
        best_width = after - before;
        best_middle = before + (after - before) / 2;
        best = event;
      }
    }
    for (cudaEvent_t event : tries)
      if (event && event != best) cudaEventDestroy(event);
    cudaGetLastError();
    if (!best) return;
    if (anchor.event) cudaEventDestroy(anchor.event);
    anchor.event = best;
    anchor.host_ns = best_middle;
  }

  std::vector<Slot> slots_;
  std::array<Anchor, kMaxDevices> anchors_{};  // writer thread only
};

}  // namespace

std::unique_ptr<EventClock> EventClock::Create(size_t slots) { return std::make_unique<CudaEventClock>(slots); }

}  // namespace jobviz
