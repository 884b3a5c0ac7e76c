// Fuzz target: any bytes as a log file that may be gzip (recognised by its
// magic bytes): reading ends in data or a message, never a crash, and a cut
// stream is an error.
#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <string>

#include "fuzz_pipeline.h"
#include "read/byte_source.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, size_t size) {
  using namespace jobviz;
  static const int fd = memfd_create("jobviz-gzip-fuzz", 0);
  fuzz::Require(fd >= 0, "memfd");
  if (ftruncate(fd, 0) != 0 || pwrite(fd, data, size, 0) != static_cast<ssize_t>(size)) return 0;
  std::string error;
  auto source = OpenByteSource("/proc/self/fd/" + std::to_string(fd), &error);
  if (!source) return 0;
  char buffer[4096];
  std::uint64_t total = 0;
  for (long n; (n = source->Read(buffer, sizeof buffer)) != 0;) {
    if (n < 0) {
      fuzz::Require(!source->error().empty(), "a failed read says why");
      return 0;
    }
    total += static_cast<std::uint64_t>(n);
    fuzz::Require(total < (1ull << 32), "bounded output");
  }
  return 0;
}
