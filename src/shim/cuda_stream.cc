// CudaStream: host callbacks on a real CUDA stream (cudaLaunchHostFunc).
// Compiled with the CUDA backend only; cuda_stream_stub.cc otherwise.
#include <cuda_runtime_api.h>

#include "jobviz/stream.h"

namespace jobviz {

bool CudaStream::LaunchHostFunction(HostFunction function, void* argument) {
  return cudaLaunchHostFunc(static_cast<cudaStream_t>(stream_), function, argument) == cudaSuccess;
}

bool IsCudaAvailable() { return true; }

}  // namespace jobviz
