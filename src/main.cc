// jobviz: worker logs of a pipeline-parallel training run -> Perfetto timeline.
// The first argument may name a subcommand; each has a parser that turns its
// command line into a checked plan, and a command that carries it out.
#include <algorithm>
#include <cstdio>
#include <exception>
#include <string_view>
#if defined(__GLIBC__)
#include <malloc.h>
#endif

#include "cli/exit_status.h"
#include "cli/huge_pages.h"

#include "cli/options.h"
#include "commands/commands.h"

namespace {

template <typename Plan>
int Run(const jobviz::Parsed<Plan>& parsed, int (*command)(const Plan&)) {
  return parsed.plan ? command(*parsed.plan) : parsed.exit_code;
}

// jobviz is one short batch run that frees and soon reallocates buffers of
// megabytes (blocks of records, pieces of trace). glibc serves those with
// mmap and gives freed memory back to the kernel, so each reuse faults in
// and zeroes fresh pages: about 9,000 faults and a tenth of the wall time on
// 1 GB of logs. Kept in the heap instead, the memory is reused as it is;
// peak memory hardly moves (it is the live data that sets it). The one
// exception is given back by hand: the analysis's scratch, before the traces
// are written (commands/draw.cc).
void KeepFreedMemory() {
#if defined(__GLIBC__)
  mallopt(M_MMAP_THRESHOLD, 32 << 20);  // glibc's largest; below it blocks come from the heap
  mallopt(M_TRIM_THRESHOLD, 1 << 30);
  // With huge pages (cli/huge_pages.h), a new thread's heap is made whole
  // at once: glibc makes it its first request plus this pad (64 MB, its
  // largest) and advises it for huge pages; a heap grown later, a few pages
  // at a time, is filled by the kernel with 4 KiB pages (12,000 of the
  // 14,000 faults of a two-core run on 1.33 M jobs; 0.75 -> 0.62 s). The
  // pad is address space: the pages are made as they are written.
  if (jobviz::HugePagesAsked()) mallopt(M_TOP_PAD, 64 << 20);
#endif
}

int Dispatch(int argc, char** argv) {
  using namespace jobviz;
  const std::string_view subcommand = argc > 1 ? argv[1] : "";
  if (subcommand == "extract") return Run(ParseExtractCommandLine(argc - 1, argv + 1), RunExtract);
  if (subcommand == "follow") return Run(ParseFollowCommandLine(argc - 1, argv + 1), RunFollow);
  if (subcommand == "diff") return Run(ParseDiffCommandLine(argc - 1, argv + 1), RunDiff);
  if (subcommand == "history") return Run(ParseHistoryCommandLine(argc - 1, argv + 1, /*hosts=*/false), RunHistory);
  if (subcommand == "hosts") return Run(ParseHistoryCommandLine(argc - 1, argv + 1, /*hosts=*/true), RunHistory);
  if (subcommand == "merge" && std::find(argv + 2, argv + argc, std::string_view("--follow")) != argv + argc)
    return Run(ParseFollowCommandLine(argc - 1, argv + 1, /*merge=*/true), RunFollow);
  if (subcommand == "merge") return Run(ParseDrawCommandLine(argc - 1, argv + 1, /*merge=*/true), RunMerge);
  return Run(ParseDrawCommandLine(argc, argv, /*merge=*/false), RunDraw);
}

}  // namespace

int main(int argc, char** argv) {
  jobviz::RunAgainWithHugePages(argv);  // returns when it does not run again
  KeepFreedMemory();
  // The last line of defence: a bug must not leave temporary files behind
  // (unwinding removes them) or die without a word.
  try {
    return Dispatch(argc, argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "jobviz: internal error: %s\n  hint: please report it with the command line\n", e.what());
    return jobviz::kExitInternal;
  }
}
