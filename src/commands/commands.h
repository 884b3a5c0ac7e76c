// The jobviz subcommands, each in a file of its own; main() dispatches.
#pragma once

#include <vector>

#include "cli/plan.h"
#include "commands/stages.h"

namespace jobviz {

int RunDraw(const DrawPlan& plan);        // jobviz [--log_dir DIR | FILE...]   (draw.cc)
int RunMerge(const DrawPlan& plan);       // jobviz merge EVENTS...            (merge.cc)
int RunExtract(const ExtractPlan& plan);  // jobviz extract --log_dir DIR ...   (extract.cc)
int RunExtractFollow(const ExtractPlan& plan);  // jobviz extract --follow ...  (extract_follow.cc)
int RunDiff(const DiffPlan& plan);        // jobviz diff BASE NEW               (diff.cc)
int RunFollow(const FollowPlan& plan);
int RunHistory(const HistoryPlan& plan);  // jobviz history LEDGER, jobviz hosts LEDGER (history.cc)
// --record: appends the finished run (its analysis made) to the run history;
// kExitLedger when the ledger cannot be used (history.cc).
int RecordRun(const RecordPlan& plan, const FinishedRun& run, const char* command, int verbosity);    // jobviz follow --log_dir DIR ...    (follow.cc),
                                          // jobviz merge --follow STREAMS...

// Everything after read+parse; merge enters here with the events files'
// records (draw.cc).
// `built`: the files' workers, built while reading (draw); merge builds them here.
int DrawFromScans(const DrawPlan& plan, const LogSet& logs, std::vector<WorkerLogScan> scans,
                  StageClock::time_point started, BuiltFiles* built = nullptr);

}  // namespace jobviz
