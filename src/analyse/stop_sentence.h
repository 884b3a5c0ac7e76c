// How the stop report says what it found (analyse/stop_report.h): one plain
// sentence per kind, the same words in the terminal report, the tables,
// the HTML, the live page and --summary-json. A name comes with what it
// takes to go and look: the worker, its stage and global rank, its machine
// (the host), and the time of its last finished job after the run start,
// in UTC and in its log's own glog stamps.
#pragma once

#include <string>

#include "analyse/step_graph.h"
#include "analyse/stop_report.h"

namespace jobviz {

std::string StopSentence(const Timeline& timeline, const GraphLanes& graph, const StopReport& report);

// "machine2 worker 1 (stage 2, mp 1, replica 0, rank 9)".
std::string StopWorkerName(const Timeline& timeline, const Worker& worker, const LaneStop& lane);

// A time on the aligned clock as the worker's own log shows it: UTC
// ("2023-10-20T01:15:07.254006104Z") and, where its job lines carry glog
// prefixes, the local stamp ("09:15:07.254006 in its log's stamps").
std::string WallClockText(const Timeline& timeline, const Worker& worker, Nanos aligned);

}  // namespace jobviz
