#include "analyse/what_if.h"

namespace jobviz {

const char* WhatIfKey(WhatIfKind kind) {
  switch (kind) {
    case WhatIfKind::kBalancedStages: return "balanced_stages";
    case WhatIfKind::kFreeHandOffs: return "free_hand_offs";
    case WhatIfKind::kNoOutliers: return "no_outliers";
    case WhatIfKind::kNoStall: return "no_stall";
    case WhatIfKind::kNoSlowWorkers: return "no_slow_workers";
    case WhatIfKind::kNoStepGaps: return "no_step_gaps";
    case WhatIfKind::kAll: case WhatIfKind::kCount: break;
  }
  return "all";
}

}  // namespace jobviz
