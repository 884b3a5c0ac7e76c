// Clock sync: all ranks take the time right after one synchronising
// collective, so jobviz can put every machine on one clock
// ("Clock Sync: rank = R, round = K, time = T" lines; docs/clock-alignment.md).
#pragma once

#include <cstddef>
#include <functional>
#include <memory>
#include <vector>

#include "jobviz/stream.h"

namespace jobviz {

// A collective the profiler can enqueue on a stream: when the stream passes
// it, every rank of the group has reached it.
class Communicator {
 public:
  virtual ~Communicator() = default;
  virtual int rank() const = 0;
  virtual int size() const = 0;
  // Enqueues one tiny synchronising collective on `stream`.
  virtual bool EnqueueCollective(Stream& stream) = 0;
  // Host-side groups (BarrierCommunicator) synchronise the calling threads
  // instead: the profiler calls HostBarrier() and takes the host time as
  // soon as it returns, without a stream.
  virtual bool OnHost() const { return false; }
  virtual bool HostBarrier() { return false; }
};

// A group whose collective is a barrier the application supplies, across
// any processes: torch.distributed.barrier, MPI_Barrier, a
// multiprocessing.Barrier. It needs no GPU and no NCCL. SyncClocks calls the
// barrier on the calling thread (every rank must, as with any collective)
// and each rank takes its host time right after the barrier returns, so the
// clocks agree to within the barrier's release skew (docs/runtime-shim.md).
class BarrierCommunicator : public Communicator {
 public:
  // Returns false when the barrier failed; that round is then counted lost.
  using Barrier = std::function<bool()>;
  BarrierCommunicator(Barrier barrier, int rank, int size)
      : barrier_(std::move(barrier)), rank_(rank), size_(size) {}
  int rank() const override { return rank_; }
  int size() const override { return size_; }
  bool EnqueueCollective(Stream&) override { return false; }  // host-side only
  bool OnHost() const override { return true; }
  bool HostBarrier() override { return barrier_ && barrier_(); }

 private:
  Barrier barrier_;
  int rank_, size_;
};

// In-process group for the CPU backend (tests, the demo): the collective is
// a barrier across the group's CpuStreams. Works with CpuStream only.
class CpuCommunicator : public Communicator {
 public:
  static std::vector<std::unique_ptr<CpuCommunicator>> CreateGroup(int size);
  int rank() const override { return rank_; }
  int size() const override;
  bool EnqueueCollective(Stream& stream) override;

  struct Group;

 private:
  CpuCommunicator(std::shared_ptr<Group> group, int rank) : group_(std::move(group)), rank_(rank) {}
  std::shared_ptr<Group> group_;
  int rank_;
};

// NCCL all-reduce of one float (CUDA builds only; IsCudaAvailable()).
class NcclCommunicator : public Communicator {
 public:
  static constexpr size_t kUniqueIdBytes = 128;  // NCCL_UNIQUE_ID_BYTES
  // Wraps the application's communicator (an ncclComm_t); not owned.
  static std::unique_ptr<NcclCommunicator> Wrap(void* nccl_comm);
  // Creates an own communicator from an ncclUniqueId (kUniqueIdBytes bytes)
  // that rank 0 made with CreateUniqueId and the application distributed.
  static std::unique_ptr<NcclCommunicator> Create(const void* unique_id, int rank, int size);
  static bool CreateUniqueId(void* unique_id_out);
  ~NcclCommunicator() override;
  int rank() const override { return rank_; }
  int size() const override { return size_; }
  bool EnqueueCollective(Stream& stream) override;

 private:
  NcclCommunicator() = default;
  // Read only by the CUDA build (the stub never makes one).
  [[maybe_unused]] void* comm_ = nullptr;
  [[maybe_unused]] bool owned_ = false;
  [[maybe_unused]] float* device_value_ = nullptr;
  int rank_ = 0, size_ = 1;
};

}  // namespace jobviz
