// The CUDA backend in a build without CUDA: CudaStream enqueues nothing and
// there is no event clock.
#include "event_clock.h"
#include "jobviz/stream.h"

namespace jobviz {

bool CudaStream::LaunchHostFunction(HostFunction, void*) { return false; }

bool IsCudaAvailable() { return false; }

std::unique_ptr<EventClock> EventClock::Create(size_t) { return nullptr; }

}  // namespace jobviz
