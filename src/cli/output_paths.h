// Outputs must not land on each other or on the logs they are made from.
// Paths are compared by file identity (device and inode, through symlinks
// and however they are spelled), not by their text.
#pragma once

#include <string>
#include <vector>

#include "emit/emitter.h"

namespace jobviz {

// "" when every output has a target of its own; otherwise what clashes.
std::string OutputClash(const std::vector<OutputRequest>& outputs);

// "" when no output is one of `inputs`; otherwise which one.
std::string OutputOverwritesInput(const std::vector<OutputRequest>& outputs, const std::vector<std::string>& inputs);

// `jobviz follow`, `extract --follow` and `merge --follow` against what they
// follow, before anything is read or written: "" when no output is an input
// (by identity; a named file not there yet by its path), and none lies
// where a log of the followed tree would be found now or later (a
// workerlog.N in --log_dir or one of its directories); otherwise which one.
std::string FollowedOutputClash(const std::vector<OutputRequest>& outputs, const std::string& log_dir,
                                const std::vector<std::string>& files);

// Whether `path` is this process's standard output by any name ("-",
// /dev/stdout, /proc/self/fd/1, a link to them, or the file stdout is
// redirected to).
bool IsStandardOutput(const std::string& path);

// The identity of the file `path` names or would name: its device and inode
// when it exists, else its directory's plus its name.
std::string FileIdentity(const std::string& path);

}  // namespace jobviz
