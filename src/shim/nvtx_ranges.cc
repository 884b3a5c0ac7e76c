#include "nvtx_ranges.h"

#ifdef JOBVIZ_WITH_NVTX
#include <nvtx3/nvToolsExt.h>

#include <cstdio>
#endif

namespace jobviz {

#ifdef JOBVIZ_WITH_NVTX
void NvtxPushStep(std::int64_t step) {
  char name[32];
  std::snprintf(name, sizeof name, "step %lld", static_cast<long long>(step));
  nvtxRangePushA(name);
}
void NvtxPopStep() { nvtxRangePop(); }
#else
void NvtxPushStep(std::int64_t) {}
void NvtxPopStep() {}
#endif

}  // namespace jobviz
