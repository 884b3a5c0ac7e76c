// Which steps of a growing run are finished: those that every worker has
// moved past (it holds a job of a later step). Until then a step may still
// gain jobs: a worker's last step in the logs so far is one it is running.
// `jobviz follow` reports each finished step once.
#pragma once

#include <cstddef>
#include <set>
#include <string>

#include "model/model.h"

namespace jobviz {

// How many of timeline.steps, from the first, are finished (Job::step must
// be set). 0 while some worker has no job yet. Workers whose file is in
// `gone` (a log deleted while followed) hold no step back.
size_t FinishedStepCount(const Timeline& timeline, const std::set<std::string>& gone = {});

}  // namespace jobviz
