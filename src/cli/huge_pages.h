// Transparent huge pages for jobviz's own memory: glibc's malloc asks the
// kernel for them only when its tunable is set before the program loads, so
// jobviz sets it and runs itself again, once, at start.
//
// Why: a run keeps every job it reads (40 bytes each) and the analysis's
// graphs, ~100 MB for 1.33 M jobs, and each 4 KiB page of it costs a page
// fault when first written. On the virtual machines jobviz was measured on a
// fault costs 7.5-15 us (28,000 faults: 0.3-0.4 s of a 1 s run); a 2 MiB
// page takes one fault for 512 of them. docs/benchmarks.md has the figures.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace jobviz {

// The GLIBC_TUNABLES value that adds glibc.malloc.hugetlb=1 to `current`
// (null: unset), or nothing when `current` already names that tunable: the
// user's own choice stands, 0 included.
std::optional<std::string> TunablesAskingHugePages(const char* current);

// Runs this program again with the tunable set, unless JOBVIZ_HUGE_PAGES=0,
// the tunable is already named, it has run again already, or the allocator is
// not glibc's (a sanitizer's, valgrind's). Returns only when it does not.
void RunAgainWithHugePages(char** argv);

// Whether this run's malloc asks for huge pages (the tunable set, not 0)
// and the kernel may give them (its mode is not "never").
bool HugePagesAsked();

// For the -v timing line: "huge pages asked (kernel: madvise)", or why not.
std::string HugePagesState();

}  // namespace jobviz
