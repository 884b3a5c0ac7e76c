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

// The identity of the file `path` names or would name: its device and inode
// when it exists, else its directory's plus its name.
std::string FileIdentity(const std::string& path);

}  // namespace jobviz
