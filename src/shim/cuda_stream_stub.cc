// CudaStream in a build without the CUDA backend: nothing can be enqueued.
#include "jobviz/stream.h"

namespace jobviz {

bool CudaStream::LaunchHostFunction(HostFunction, void*) { return false; }

bool IsCudaAvailable() { return false; }

}  // namespace jobviz
