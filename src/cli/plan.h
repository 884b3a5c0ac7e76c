// What a jobviz command will do, as typed values: the command line is turned
// into one of these and checked whole before any log is opened. Nothing
// downstream sees an option string.
#pragma once

#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "align/clock_align.h"
#include "align/pipeline_order.h"
#include "analyse/bottleneck.h"
#include "analyse/fail_on.h"
#include "emit/diff_report.h"
#include "emit/emitter.h"
#include "history/run_history.h"
#include "model/step_window.h"
#include "parse/timeline_builder.h"
#include "model/topology_resolver.h"

namespace jobviz {

enum Verbosity : int { kQuiet = 0, kNormal = 1, kVerbose = 2 };

struct InputPlan {
  std::string log_dir;             // a directory of workerlog.N (or machine*/workerlog.N), or
  std::vector<std::string> files;  // explicit logs ('-': standard input); merge: events files
  bool multi_machine = false;
  std::vector<int> devices;        // sorted, unique; empty = every workerlog found
  int threads = 0;                 // files read in parallel; 0 = one per core
};

struct ClockPlan {
  AlignMode mode = AlignMode::kAuto;
  std::string reference;                 // "" = the first machine
  std::map<std::string, Nanos> offsets;  // --clock_offset, by machine name
};

// --record: the run appended to the run history (docs/history.md).
struct RecordPlan {
  std::string ledger;  // the SQLite file
  std::string name;    // --run-name; by default the log directory's name (merge: the first events file's)
  std::map<std::string, std::string> tags;  // --tag KEY=VALUE
};

// `jobviz [--log_dir DIR | FILE...]` and `jobviz merge EVENTS...`.
struct DrawPlan {
  bool merge = false;
  InputPlan inputs;
  RunChoice run;
  ClockPlan clocks;
  std::vector<StageRef> stage_order;  // empty = global rank order
  TopologyRequest topology;           // --topology, --rank-order
  std::optional<StepRange> steps;     // --steps: the window of steps to keep
  std::vector<Condition> gates;       // --fail-on
  std::optional<nlohmann::json> baseline;  // --baseline: a summary JSON, read and checked here
  std::vector<OutputRequest> outputs; // in the order they are written
  size_t html_max_jobs = kDefaultHtmlMaxJobs;
  JsonArgs json_args = JsonArgs::kCompact;
  WorkerListing summary_workers = WorkerListing::kAuto;  // --summary-workers
  bool rows_by_stage = false;  // --rows stage
  bool critical_path = true;   // mark it in the traces (--no-critical-path)
  WhatIfDrawing what_if;       // --what-if: the replay drawn beside the run
  StopOptions stop;            // --hung
  std::optional<RecordPlan> record;  // --record
  int verbosity = kNormal;
};

// `jobviz follow`: the inputs and outputs of a DrawPlan, read as the logs
// grow (docs/follow.md).
struct FollowPlan {
  DrawPlan draw;                 // its outputs: only those named, rewritten every `refresh_seconds`
  double poll_seconds = 1;       // every file is looked at this often, whatever inotify says
  double refresh_seconds = 10;
  bool json = false;             // one JSON object per step on stdout
  std::optional<double> stall_after;  // seconds; empty: the larger of 60 s and 10 median steps
  bool exit_on_stall = false;
  size_t keep_steps = 0;         // finished steps kept in memory and the outputs; 0: all
  bool status_line = false;      // a status line on stderr (a terminal)
  std::string serve;             // --serve [ADDR:]PORT: the live page; "" = none
};

// `jobviz extract`.
struct ExtractPlan {
  InputPlan inputs;
  std::string machine;  // its name in the merged trace
  std::string output;   // the events file
  bool follow = false;  // --follow: an open stream, written as the logs grow, until stopped
  double poll_seconds = 1;
  int verbosity = kNormal;
};

// `jobviz diff BASE NEW`: each a --summary-json or a log directory.
struct DiffPlan {
  std::string base, now;
  DiffFormat format = DiffFormat::kTable;
  int verbosity = kNormal;
};

// `jobviz history LEDGER` and `jobviz hosts LEDGER`.
struct HistoryPlan {
  bool hosts = false;  // jobviz hosts
  std::string ledger;
  RunFilter filter;    // --name, --tag, --since
  HistoryOptions options;  // --last, --compare
  size_t top = 20;     // hosts: lines of each table
  bool json = false;
  std::string html;    // --html FILE: the page (history/history_html.h)
  std::string series;  // history --series KEY: a tag key, or "name"; "" = the first tag that changes
  std::string import;  // history --import DIR: the run files of --record DIR, added to `ledger`
};

}  // namespace jobviz
