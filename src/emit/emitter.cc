#include "emit/emitter.h"

#include <algorithm>
#include <cstdio>

#include "emit/chrome_json.h"
#include "emit/perfetto_json.h"
#include "emit/perfetto_proto.h"
#include "emit/html_report.h"
#include "write/json_text.h"
#include "emit/junit.h"
#include "emit/summary_json.h"
#include "emit/summary_markdown.h"
#include "emit/summary_tables.h"

namespace jobviz {

namespace {

constexpr const char* kTraceHint = "choose another path with -o/--output or --chrome-output";

// The registry: one line per format.
const EmitterInfo kEmitters[] = {
    {OutputFormat::kPerfettoJson, "the trace", true, kTraceHint, EmitPerfettoJson, false, true, true, true, true},
    {OutputFormat::kPerfettoProto, "the trace", true, kTraceHint, EmitPerfettoProto, false, true, true, true},
    {OutputFormat::kPerfettoProtoPlain, "the trace", true, kTraceHint, EmitPerfettoProtoPlain, false, true, true, true},
    {OutputFormat::kChromeJson, "the legacy Chrome trace", true, kTraceHint, EmitChromeJson},
    {OutputFormat::kSummaryTables, "the summary tables", false, "", EmitSummaryTables, true},
    {OutputFormat::kSummaryJson, "the summary", false, "", EmitSummaryJson, true},
    {OutputFormat::kSummaryMarkdown, "the Markdown summary", false, "", EmitSummaryMarkdown, true},
    {OutputFormat::kJUnit, "the gates as JUnit XML", false, "", EmitJUnit, true},
    {OutputFormat::kHtml, "the HTML report", true, "choose another path with --html", EmitHtmlReport, true, false, false, true},
};


}  // namespace

const EmitterInfo& EmitterFor(OutputFormat format) {
  for (const EmitterInfo& emitter : kEmitters)
    if (emitter.format == format) return emitter;
  std::abort();  // every OutputFormat has a line in kEmitters
}

namespace {

// Whether the emitter of any of `outputs` has `flag` set.
bool AnyEmitter(const std::vector<OutputRequest>& outputs, bool EmitterInfo::*flag) {
  return std::any_of(outputs.begin(), outputs.end(),
                     [&](const OutputRequest& output) { return EmitterFor(output.format).*flag; });
}

}  // namespace

bool ReadsAnalysis(const std::vector<OutputRequest>& outputs) { return AnyEmitter(outputs, &EmitterInfo::reads_analysis); }

bool MarksCriticalPath(const std::vector<OutputRequest>& outputs) {
  return AnyEmitter(outputs, &EmitterInfo::marks_critical_path);
}

bool DrawsFlows(const std::vector<OutputRequest>& outputs) { return AnyEmitter(outputs, &EmitterInfo::draws_flows); }

bool DrawsWhatIf(const std::vector<OutputRequest>& outputs) { return AnyEmitter(outputs, &EmitterInfo::draws_what_if); }

bool DrawsFlowsAfterJobs(const std::vector<OutputRequest>& outputs) {
  return AnyEmitter(outputs, &EmitterInfo::flows_after_jobs);
}


}  // namespace jobviz
