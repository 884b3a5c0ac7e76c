// Real NVTX ranges for steps in CUDA builds (Nsight shows the same steps);
// nothing otherwise.
#pragma once

#include <cstdint>

namespace jobviz {

void NvtxPushStep(std::int64_t step);
void NvtxPopStep();

}  // namespace jobviz
