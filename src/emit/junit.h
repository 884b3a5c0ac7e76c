// --junit: each --fail-on condition as a JUnit XML test case, so CI systems
// (GitLab, Jenkins, GitHub test reporters) list the gates.
#pragma once

#include <string>

#include "emit/emitter.h"

namespace jobviz {

std::string EmitJUnit(const FinishedRun& run, const Sink& sink);

}  // namespace jobviz
