// Deflates a run of TracePackets into zlib format, for one
// TracePacket.compressed_packets (Perfetto's trace processor inflates them
// with zlib). Two libraries can do it: ISA-L's igzip, about twice
// libdeflate's speed at its level 1 for ~10% more bytes (what bounds a
// .pftrace's write: docs/benchmarks.md), where the build has it; libdeflate
// always (the Python wheel, which links its libraries statically: Debian
// ships no static ISA-L).
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace jobviz {

enum class DeflateLibrary { kLibdeflate, kIsal };

// What this build can use, the fastest first.
std::vector<DeflateLibrary> AvailableDeflateLibraries();
const char* DeflateLibraryName(DeflateLibrary library);

class PacketDeflater {
 public:
  explicit PacketDeflater(DeflateLibrary library = AvailableDeflateLibraries().front());
  ~PacketDeflater();
  PacketDeflater(const PacketDeflater&) = delete;
  PacketDeflater& operator=(const PacketDeflater&) = delete;

  // The zlib stream of `bytes`, valid until the next call. Throws
  // std::bad_alloc when the library cannot get its memory.
  std::string_view Deflate(std::string_view bytes);

 private:
  struct State;
  std::unique_ptr<State> state_;
  std::string out_;
};

}  // namespace jobviz
