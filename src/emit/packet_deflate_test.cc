#include "emit/packet_deflate.h"

#include <cstdint>
#include <random>
#include <string>
#include <zlib.h>

#include <catch2/catch.hpp>

#include "emit/proto_wire.h"

// Every unit test file is one namespace: they compile as a unity build.
namespace unit_packet_deflate_test {

using jobviz::AvailableDeflateLibraries;
using jobviz::DeflateLibrary;
using jobviz::DeflateLibraryName;
using jobviz::PacketDeflater;

namespace {

// What Perfetto's trace processor does with a compressed_packets field: a
// zlib inflate of the whole field (here with zlib itself, not the library
// that deflated it).
std::string Inflate(std::string_view deflated, size_t size) {
  std::string out(size + 1, '\0');  // one spare byte: a longer stream would show
  uLongf out_size = out.size();
  const int result = uncompress(reinterpret_cast<Bytef*>(out.data()), &out_size,
                                reinterpret_cast<const Bytef*>(deflated.data()), deflated.size());
  REQUIRE(result == Z_OK);
  out.resize(out_size);
  return out;
}

// Packets much like a job's: varints, short strings, repeats.
std::string TracePackets(int jobs) {
  jobviz::ProtoWire wire;
  for (int j = 0; j < jobs; ++j) {
    const size_t packet = wire.BeginMessage(1);
    wire.Varint(10, 2);
    wire.Varint(8, 1'700'000'000'000'000'000 + static_cast<std::uint64_t>(j) * 1'234'567);
    const size_t event = wire.BeginMessage(11);
    wire.Varint(11, 40 + static_cast<std::uint64_t>(j % 8));
    wire.Bytes(6, "machine3/workerlog.5:" + std::to_string(2 * j + 1));
    wire.EndMessage(event);
    wire.EndMessage(packet);
  }
  return std::string(wire.view());
}

std::string RandomBytes(size_t size) {
  std::mt19937_64 random(7);
  std::string bytes(size, '\0');
  for (char& c : bytes) c = static_cast<char>(random());
  return bytes;
}

}  // namespace

TEST_CASE("Every library this build has deflates packets that zlib inflates back, byte for byte") {
  for (DeflateLibrary library : AvailableDeflateLibraries()) {
    INFO(DeflateLibraryName(library));
    PacketDeflater deflater(library);
    for (const std::string& packets : {TracePackets(1), TracePackets(3000), std::string(1, 'x'), std::string(300'000, '\0')}) {
      const std::string_view deflated = deflater.Deflate(packets);
      CHECK(Inflate(deflated, packets.size()) == packets);
    }
    // Repetitive packets shrink (the point of compressing them).
    const std::string packets = TracePackets(3000);
    CHECK(deflater.Deflate(packets).size() * 4 < packets.size());
  }
}

TEST_CASE("Bytes that do not compress still come back whole: the output grows past the input as it must") {
  for (DeflateLibrary library : AvailableDeflateLibraries()) {
    INFO(DeflateLibraryName(library));
    PacketDeflater deflater(library);
    for (size_t size : {size_t{1}, size_t{1000}, size_t{65'536}, size_t{300'001}}) {
      const std::string bytes = RandomBytes(size);
      const std::string_view deflated = deflater.Deflate(bytes);
      CHECK(deflated.size() > bytes.size());
      CHECK(Inflate(deflated, bytes.size()) == bytes);
    }
  }
}

TEST_CASE("The fastest library this build has comes first, and one it lacks is refused") {
  const std::vector<DeflateLibrary> libraries = AvailableDeflateLibraries();
  REQUIRE(!libraries.empty());
  CHECK(libraries.back() == DeflateLibrary::kLibdeflate);  // always there
#ifdef JOBVIZ_WITH_ISAL
  CHECK(libraries.front() == DeflateLibrary::kIsal);
#else
  CHECK(libraries.size() == 1);
  CHECK_THROWS_AS(PacketDeflater(DeflateLibrary::kIsal), std::invalid_argument);
#endif
}

}  // namespace unit_packet_deflate_test
