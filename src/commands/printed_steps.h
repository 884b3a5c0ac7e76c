// What `jobviz follow` knows of the steps it has printed: the last one (a
// later step is new, and so is one that begins after it ends: a restarted
// run counts its steps again), their median time (the stall alarm's default
// and the quiet wait), and where the last ones begin in each log: every
// turn builds from the last one printed, and --keep-steps drops the records
// of the steps before the last N.
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "model/model.h"
#include "model/step_window.h"
#include "parse/followed_source.h"

namespace jobviz {

class PrintedSteps {
 public:
  // A step's first line in each log, by the log's name: indices move when
  // a log appears (machines and workers are put in order again).
  using FirstLineOf = std::vector<std::pair<std::string, std::uint64_t>>;

  // The first of steps [0, finished) not printed yet.
  size_t FirstNew(const std::vector<StepSpan>& steps, size_t finished) const;
  // A step handed over to be printed.
  void Add(const StepSpan& span, FirstLineOf first_lines);
  // After steps were added: each log's cursor at the last one (what a turn
  // builds from), and with `keep_steps` the records before the last N of
  // them dropped, once 2N are held (a record is copied by a drop about once,
  // however often steps finish). Logs are gone through on `threads`.
  void MoveCursors(FollowedSource& source, size_t keep_steps, int threads);

  bool any() const { return count_ > 0; }
  size_t count() const { return count_; }
  std::int64_t last() const { return last_step_; }
  // The median of the last kMedianOf steps, in seconds (0 before the first).
  double MedianSeconds() const;
  // The steps the outputs show: those printed, the last `keep_steps` of them (0: all).
  StepRange Shown(size_t keep_steps) const;

  static constexpr size_t kMedianOf = 1000;

 private:
  void EachLog(FollowedSource& source, const FirstLineOf& lines, int threads,
               const std::function<void(FollowedRecords&, std::uint64_t)>& act) const;

  size_t count_ = 0;
  std::int64_t last_step_ = kNoStep;
  Nanos last_end_ = 0;
  std::deque<Nanos> durations_;
  std::deque<std::pair<std::int64_t, FirstLineOf>> kept_;
  bool moved_ = true;  // the cursors are at kept_.back()
};

}  // namespace jobviz
