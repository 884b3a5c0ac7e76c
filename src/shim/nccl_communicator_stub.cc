// NcclCommunicator in a build without CUDA and NCCL: nothing can be created.
#include "jobviz/clock_sync.h"

namespace jobviz {

std::unique_ptr<NcclCommunicator> NcclCommunicator::Wrap(void*) { return nullptr; }
std::unique_ptr<NcclCommunicator> NcclCommunicator::Create(const void*, int, int) { return nullptr; }
bool NcclCommunicator::CreateUniqueId(void*) { return false; }
NcclCommunicator::~NcclCommunicator() = default;
bool NcclCommunicator::EnqueueCollective(Stream&) { return false; }

}  // namespace jobviz
