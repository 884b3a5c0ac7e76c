// A number of seconds on the command line: finite and within a range. NaN
// passes CLI11's Range (every comparison with it is false) and infinities
// overflow the waits they set: both are usage errors here, with the option
// named (exit 2), as are negative values.
#pragma once

#include <CLI/CLI.hpp>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>

namespace jobviz {

inline CLI::Validator SecondsBetween(double low, double high) {
  char range[96];
  std::snprintf(range, sizeof range, "SECONDS in [%g, %g]", low, high);
  return CLI::Validator(
      [low, high, range = std::string(range)](const std::string& value) -> std::string {
        char* end = nullptr;
        const double seconds = std::strtod(value.c_str(), &end);
        if (value.empty() || end != value.c_str() + value.size()) return "'" + value + "' is not a number of seconds";
        if (!std::isfinite(seconds)) return "'" + value + "' is not a finite number of seconds";
        if (seconds < low || seconds > high) return "'" + value + "' is not in " + range.substr(11);
        return "";
      },
      range, "seconds");
}

}  // namespace jobviz
