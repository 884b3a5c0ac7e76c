// Device-timed job marks: a CUDA event per job start and end, timed by the
// GPU, put on the host clock later by the profiler's writer thread.
//
// Why: on a GPU a host callback costs the stream what the driver takes to
// wake a host thread and hear back from it. Measured on an H200
// (docs/runtime-shim.md, "On a GPU"): 76 us of stream time per job and a
// median of 35 us between the stream reaching the mark and the callback's
// clock reading. An event costs the stream next to nothing and its
// timestamp is the GPU's own.
//
// The host time of an event comes from an anchor per device: an event
// recorded on an idle side stream between two host clock readings (the
// narrowest of three tries), renewed every 100 ms so that the drift of the
// GPU's clock against the host's stays negligible. The anchor's error is
// half that round trip; every mark resolved against it shares it.
//
// The launching thread calls Record (one cudaEventRecord; the event of a
// slot is created on its first use); only the writer thread calls Resolve.
// Nothing runs inside a host callback.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>

namespace jobviz {

class EventClock {
 public:
  // Null in a build without CUDA.
  static std::unique_ptr<EventClock> Create(size_t slots);
  // What the profiler calls: Create, or the factory a test put in its place.
  using Factory = std::unique_ptr<EventClock> (*)(size_t slots);
  static std::unique_ptr<EventClock> Make(size_t slots);
  static void SetFactoryForTesting(Factory factory);  // nullptr: Create again
  virtual ~EventClock() = default;

  // Launching thread: enqueues the timed point `slot` on `cuda_stream`
  // (a cudaStream_t of the current device). False when CUDA refused.
  virtual bool Record(void* cuda_stream, size_t slot) = 0;

  enum class Resolution { kPending, kDone, kFailed };
  // Writer thread: the host time of `slot`'s point once the stream has
  // passed it. kFailed when it never can be (a CUDA error).
  virtual Resolution Resolve(size_t slot, std::int64_t* host_ns) = 0;
};

}  // namespace jobviz
