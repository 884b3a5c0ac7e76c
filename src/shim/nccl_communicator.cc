// NcclCommunicator: the synchronising collective is an all-reduce of one
// float. Compiled with the CUDA backend and NCCL only.
#include <cuda_runtime_api.h>
#include <nccl.h>

#include <cstring>

#include "jobviz/clock_sync.h"

namespace jobviz {

static_assert(sizeof(ncclUniqueId) == NcclCommunicator::kUniqueIdBytes, "NCCL unique id size");

std::unique_ptr<NcclCommunicator> NcclCommunicator::Wrap(void* nccl_comm) {
  auto c = std::unique_ptr<NcclCommunicator>(new NcclCommunicator);
  c->comm_ = nccl_comm;
  ncclComm_t comm = static_cast<ncclComm_t>(nccl_comm);
  if (ncclCommUserRank(comm, &c->rank_) != ncclSuccess || ncclCommCount(comm, &c->size_) != ncclSuccess ||
      cudaMalloc(&c->device_value_, sizeof(float)) != cudaSuccess)
    return nullptr;
  return c;
}

std::unique_ptr<NcclCommunicator> NcclCommunicator::Create(const void* unique_id, int rank, int size) {
  ncclUniqueId id;
  std::memcpy(&id, unique_id, sizeof id);
  ncclComm_t comm;
  if (ncclCommInitRank(&comm, size, id, rank) != ncclSuccess) return nullptr;
  auto c = Wrap(comm);
  if (!c) {
    ncclCommDestroy(comm);
    return nullptr;
  }
  c->owned_ = true;
  return c;
}

bool NcclCommunicator::CreateUniqueId(void* unique_id_out) {
  ncclUniqueId id;
  if (ncclGetUniqueId(&id) != ncclSuccess) return false;
  std::memcpy(unique_id_out, &id, sizeof id);
  return true;
}

NcclCommunicator::~NcclCommunicator() {
  if (device_value_) cudaFree(device_value_);
  if (owned_) ncclCommDestroy(static_cast<ncclComm_t>(comm_));
}

bool NcclCommunicator::EnqueueCollective(Stream& stream) {
  auto* cuda = dynamic_cast<CudaStream*>(&stream);
  if (!cuda) return false;
  return ncclAllReduce(device_value_, device_value_, 1, ncclFloat, ncclSum, static_cast<ncclComm_t>(comm_),
                       static_cast<cudaStream_t>(cuda->handle())) == ncclSuccess;
}

}  // namespace jobviz
