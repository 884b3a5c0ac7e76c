// jobviz-read-floor [-j N] FILE...: reads every file in 1 MiB blocks into
// one reused buffer per thread and looks at nothing, as jobviz's line
// reader does before it scans a byte: the floor that the kernel's copy out
// of the page cache sets under any parser that reads with read(2)
// (tools/bench-scale prints it beside ripgrep; docs/benchmarks.md).
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "read/parallel_for.h"

int main(int argc, char** argv) {
  int threads = 1;
  std::vector<const char*> files;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "-j" && i + 1 < argc) {
      threads = std::max(1, std::atoi(argv[++i]));
    } else {
      files.push_back(argv[i]);
    }
  }
  if (files.empty()) {
    std::fprintf(stderr, "usage: jobviz-read-floor [-j N] FILE...\n");
    return 2;
  }
  const auto started = std::chrono::steady_clock::now();
  std::atomic<size_t> bytes{0}, failed{0};
  jobviz::ParallelFor(files.size(), threads, [&](size_t i) {
    thread_local std::vector<char> block(1 << 20);
    const int fd = open(files[i], O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
      ++failed;
      return;
    }
    size_t read_bytes = 0;
    ssize_t n = 0;
    while ((n = read(fd, block.data(), block.size())) > 0) read_bytes += static_cast<size_t>(n);
    if (n < 0) ++failed;
    close(fd);
    bytes += read_bytes;
  });
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  std::printf("%zu files, %zu bytes in %.4f s on %d thread%s\n", files.size(), bytes.load(), seconds, threads,
              threads == 1 ? "" : "s");
  if (failed > 0) {
    std::fprintf(stderr, "jobviz-read-floor: %zu files could not be read\n", failed.load());
    return 1;
  }
  return 0;
}
