// The data behind the HTML report's timeline (src/emit/html/js/ draws
// it): the job table as JSON, and the Perfetto trace that "Open in
// Perfetto" hands over. Both are of the same jobs, which above a size cap are
// a window of whole steps, so that a page of a huge run still opens.
#pragma once

#include <cstddef>
#include <string>

#include "analyse/bottleneck.h"
#include "model/model.h"

namespace jobviz {

// Runs with more jobs than this show a window of steps in the HTML report
// (--html-max-jobs; docs/ci.md). 200k jobs load in about a second in Chromium.
inline constexpr size_t kDefaultHtmlMaxJobs = 200'000;
// Runs with more jobs than this get no what-if's replay in the traces unless
// --what-if names one (a copy of every job: twice the trace).
inline constexpr size_t kDefaultWhatIfJobs = 200'000;

struct HtmlTimeline {
  std::string json;          // for <script type="application/json">: no "<" in it
  std::string trace_base64;  // the .pftrace, gzip'd, in base64
  size_t shown_jobs = 0, total_jobs = 0;
  std::string window_note;   // what part of the run is shown, when not all of it
};

// `title` names the trace in Perfetto. With `bottleneck` (null: none), the
// critical paths of the steps shown are outlined and joined on the timeline
// ("critical" and "path" in the JSON) and marked in the trace. With
// `what_if` holding a drawn what-if (Bottleneck::drawn_what_if), its replayed
// times for the shown jobs ("what_if" in the JSON), which the page's switch
// draws; and `what_if_rows`, its rows, in the page's trace when the page shows
// the whole run.
struct WhatIfRows;
HtmlTimeline BuildHtmlTimeline(const Timeline& timeline, size_t max_jobs, const std::string& title,
                               const Bottleneck* bottleneck = nullptr, const Bottleneck* what_if = nullptr,
                               const WhatIfRows* what_if_rows = nullptr);

// Helpers with their own tests.
std::string Base64(std::string_view bytes);
std::string GzipBytes(std::string_view bytes);

}  // namespace jobviz
