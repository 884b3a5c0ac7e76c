#include "parse/line_formats.h"

namespace jobviz {

namespace {
// Milliseconds since the epoch: "1697793307213.760986", or whole ms in old logs.
#define JOBVIZ_MILLIS R"((\d+(?:\.\d*)?))"
}  // namespace

const std::vector<LineFormat>& LineFormats() {
  static const std::vector<LineFormat> formats = {
      {LineKind::kJob,
       "job line",
       "Profiler Info: Job",
       {
           {"Profiler Info: Job (<id>)", R"(Profiler Info: Job\s*\(\s*([^()\s]+)\s*\))"},
           {", type = <word>", R"(,\s*type\s*=\s*(\w+))"},
           {", micro_batch_id = <integer>", R"(,\s*micro_batch_id\s*=\s*(\d+))"},
           {", job_start_time = <milliseconds>", R"(,\s*job_start_time\s*=\s*)" JOBVIZ_MILLIS},
           {", job_end_time = <milliseconds>", R"(,\s*job_end_time\s*=\s*)" JOBVIZ_MILLIS},
       },
       {
           "I1020 09:15:07.265326 22317 standalone_executor.cc:217] Profiler Info: Job (3), "
           "type = forward, micro_batch_id = 2, job_start_time = 1697793307213.760986, "
           "job_end_time = 1697793307254.006104",
           "Profiler Info: Job (0), type = backward_w0, micro_batch_id = 0, "
           "job_start_time = 1697793307213, job_end_time = 1697793307254.006104",
       }},
      {LineKind::kProfilerWindow,
       "profiler window line",
       "Schedule Profiler start",
       {
           {"Schedule Profiler start at step <integer>", R"(Schedule Profiler start at step\s+(\d+))"},
           {" and end at step <integer>", R"((?:\s+and end at step\s+(\d+))?)"},
       },
       {
           "Schedule Profiler start at step 5 and end at step 10",
           "[2023-10-20 09:15:07,265] [    INFO] - Schedule Profiler start at step 2",
       }},
      {LineKind::kNvtx,
       "NVTX step line",
       "NVTX range",
       {
           // A push names a step (digits) or a range of the model's own
           // (LlamaDecoderLayerAuto_fwd): any name up to the comma.
           {"NVTX range push: <step or name> or NVTX range pop",
            R"(NVTX range\s+(?:push:\s*(\d+|[^,\s][^,]*?)|(pop)))"},
           {", time: <milliseconds>", R"(,\s*time:\s*)" JOBVIZ_MILLIS},
       },
       {
           "NVTX range push: 7, time: 1697793307213.760986",
           "I1020 09:15:07.265326 22317 nvtx.cc:20] NVTX range pop, time: 1697793307290.113281",
           "NVTX range push: LlamaDecoderLayerAuto_fwd, time: 1697793307213.760986",
       }},
      {LineKind::kClockSync,
       "clock sync line",
       "Clock Sync:",
       {
           {"Clock Sync: rank = <integer>", R"(Clock Sync:\s*rank\s*=\s*(\d+))"},
           {", round = <integer>", R"(,\s*round\s*=\s*(\d+))"},
           {", time = <milliseconds>", R"(,\s*time\s*=\s*)" JOBVIZ_MILLIS},
       },
       {
           "Clock Sync: rank = 5, round = 0, time = 1697793307213.760986",
       }},
      // Paddle prints this once per process when it first sets up its GPU;
      // a second one in a workerlog means the job was started again.
      {LineKind::kStartBanner,
       "start-up banner",
       "GPU Compute Capability",
       {
           {"GPU Compute Capability", R"(GPU Compute Capability)"},
       },
       {
           "W1020 09:15:01.101362 22317 gpu_resources.cc:119] Please NOTE: device: 0, GPU Compute Capability: 8.0, "
           "Driver API Version: 12.0, Runtime API Version: 11.8",
       }},
  };
  return formats;
}

#undef JOBVIZ_MILLIS

}  // namespace jobviz
