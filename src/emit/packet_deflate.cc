#include "emit/packet_deflate.h"

#include <algorithm>
#include <cstdint>
#include <new>
#include <stdexcept>
#include <libdeflate.h>
#ifdef JOBVIZ_WITH_ISAL
#include <isa-l/igzip_lib.h>
#endif

namespace jobviz {

namespace {

constexpr int kLibdeflateLevel = 1;  // its fastest: 7x smaller here, at ~3x the speed of level 6
#ifdef JOBVIZ_WITH_ISAL
// Level 2 runs at level 1's speed on trace packets with ~2% fewer bytes;
// level 3 is 4x slower for 1.5% fewer.
constexpr int kIsalLevel = 2;
constexpr std::uint32_t kIsalLevelBuffer = ISAL_DEF_LVL2_DEFAULT;
#endif

}  // namespace

std::vector<DeflateLibrary> AvailableDeflateLibraries() {
#ifdef JOBVIZ_WITH_ISAL
  return {DeflateLibrary::kIsal, DeflateLibrary::kLibdeflate};
#else
  return {DeflateLibrary::kLibdeflate};
#endif
}

const char* DeflateLibraryName(DeflateLibrary library) {
  return library == DeflateLibrary::kIsal ? "ISA-L" : "libdeflate";
}

struct PacketDeflater::State {
  DeflateLibrary library;
  libdeflate_compressor* libdeflate = nullptr;
  std::vector<std::uint8_t> isal_level_buffer;  // igzip's hash tables, reused for every piece
};

PacketDeflater::PacketDeflater(DeflateLibrary library) : state_(std::make_unique<State>()) {
  const std::vector<DeflateLibrary> available = AvailableDeflateLibraries();
  if (std::find(available.begin(), available.end(), library) == available.end())
    throw std::invalid_argument(std::string("this jobviz was built without ") + DeflateLibraryName(library));
  state_->library = library;
  if (library == DeflateLibrary::kLibdeflate) {
    state_->libdeflate = libdeflate_alloc_compressor(kLibdeflateLevel);
    if (!state_->libdeflate) throw std::bad_alloc();
  }
#ifdef JOBVIZ_WITH_ISAL
  if (library == DeflateLibrary::kIsal) state_->isal_level_buffer.resize(kIsalLevelBuffer);
#endif
}

PacketDeflater::~PacketDeflater() {
  if (state_->libdeflate) libdeflate_free_compressor(state_->libdeflate);
}

std::string_view PacketDeflater::Deflate(std::string_view bytes) {
  if (state_->library == DeflateLibrary::kLibdeflate) {
    out_.resize(libdeflate_zlib_compress_bound(state_->libdeflate, bytes.size()));
    const size_t size =
        libdeflate_zlib_compress(state_->libdeflate, bytes.data(), bytes.size(), out_.data(), out_.size());
    if (size == 0) throw std::bad_alloc();  // cannot happen: the output was sized by the bound
    return {out_.data(), size};
  }
#ifdef JOBVIZ_WITH_ISAL
  // igzip counts in 32 bits; a piece is a few hundred KiB of packets.
  if (bytes.size() > (std::uint32_t{1} << 30)) throw std::length_error("packets to deflate past 1 GiB");
  // igzip has no bound function: start at what stored blocks need (5 bytes
  // a 64 KiB block, header and trailer) and grow if it still overflows.
  size_t room = bytes.size() + bytes.size() / 1024 + 1024;
  for (;;) {
    out_.resize(room);
    // Zeroed first: isal_deflate_stateless_init sets only some fields (not
    // hist_bits and parts of the internal state), and the stateless path
    // reads others; left as the stack had them, the same packets deflated
    // to different (valid) bytes from build to build (valgrind: "depends on
    // uninitialised value(s)" in isal_deflate_stateless).
    isal_zstream stream{};
    isal_deflate_stateless_init(&stream);
    // igzip keeps its hash tables in the level buffer and does not clear
    // them in a stateless call: matches found through the last piece's
    // entries are checked, so the output inflates right, but its bytes
    // depended on which thread's deflater had which piece before (-j 1 and
    // -j 2 wrote different .pftrace bytes). Cleared, each piece deflates
    // alone.
    std::fill(state_->isal_level_buffer.begin(), state_->isal_level_buffer.end(), std::uint8_t{0});
    stream.level = kIsalLevel;
    stream.level_buf = state_->isal_level_buffer.data();
    stream.level_buf_size = static_cast<std::uint32_t>(state_->isal_level_buffer.size());
    stream.gzip_flag = IGZIP_ZLIB;
    stream.end_of_stream = 1;
    stream.flush = NO_FLUSH;
    stream.next_in = reinterpret_cast<std::uint8_t*>(const_cast<char*>(bytes.data()));
    stream.avail_in = static_cast<std::uint32_t>(bytes.size());
    stream.next_out = reinterpret_cast<std::uint8_t*>(out_.data());
    stream.avail_out = static_cast<std::uint32_t>(out_.size());
    const int result = isal_deflate_stateless(&stream);
    if (result == COMP_OK) return {out_.data(), stream.total_out};
    if (result != STATELESS_OVERFLOW) throw std::bad_alloc();  // the other errors are misuse, not data
    room *= 2;
  }
#endif
  throw std::logic_error("not reached: a kIsal deflater exists only in builds with ISA-L");
}

}  // namespace jobviz
