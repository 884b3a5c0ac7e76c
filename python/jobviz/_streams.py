"""Streams and communicators a Profiler marks jobs on and syncs clocks over:
a CPU stand-in for a GPU stream, CUDA streams, a barrier over any process
group, and NCCL."""
from __future__ import annotations

import ctypes
import sys
import traceback
from typing import Any, Callable, Optional

from ._core import _INT32_MAX, _Handle, _check, _integer, _lib
from ._library import BARRIER_FN


class CpuStream(_Handle):
    """A CPU stand-in for a GPU stream: work runs in order on a thread of its own.

    ``sleep(us)`` enqueues simulated work; ``synchronize()`` waits for it.
    """

    _destroy = staticmethod(lambda h: _lib.jobviz_stream_destroy(h))

    def __init__(self) -> None:
        super().__init__()
        _check(_lib.jobviz_stream_create_cpu(ctypes.byref(self._handle)), "cannot create a CPU stream")

    def sleep(self, microseconds: int) -> None:
        """Enqueues ``microseconds`` of simulated work."""
        _check(_lib.jobviz_cpu_stream_sleep(self.handle, int(microseconds)), "sleep")

    def synchronize(self) -> None:
        """Waits until everything enqueued so far has run."""
        _check(_lib.jobviz_stream_synchronize(self.handle), "synchronize")


class _CudaStream(_Handle):
    """libjobviz's wrapper of a cudaStream_t (made for you from ``stream.cuda_stream``)."""

    _destroy = staticmethod(lambda h: _lib.jobviz_stream_destroy(h))

    def __init__(self, cuda_stream: int) -> None:
        super().__init__()
        _check(_lib.jobviz_stream_wrap_cuda(ctypes.c_void_p(cuda_stream), ctypes.byref(self._handle)),
               "cannot wrap the CUDA stream")


class Communicator(_Handle):
    """The group whose ranks take the time together for clock sync."""

    _destroy = staticmethod(lambda h: _lib.jobviz_communicator_destroy(h))
    needs_stream = True


class BarrierCommunicator(Communicator):
    """Clock sync through any barrier the application has: ``torch.distributed.barrier``,
    mpi4py's ``comm.Barrier``, ``multiprocessing.Barrier(n).wait``.

    Each rank takes its host time right after ``barrier()`` returns; no GPU and
    no NCCL are needed. An exception in the barrier loses that round (it is
    counted and printed), it does not stop training.
    """

    needs_stream = False
    def __init__(self, barrier: Callable[[], Any], rank: int, size: int) -> None:
        super().__init__()
        if not callable(barrier):
            raise TypeError(f"barrier is a callable taking no arguments, not {type(barrier).__name__}")
        size = _integer("size", size, 1, _INT32_MAX)
        rank = _integer("rank", rank, 0, size - 1)

        def call(_user: Optional[int]) -> int:
            try:
                barrier()
                return 0
            except Exception:  # never raise through C
                traceback.print_exc(file=sys.stderr)
                return 1

        self._callback = BARRIER_FN(call)  # kept alive as long as the handle
        _check(_lib.jobviz_communicator_create_barrier(self._callback, None, int(rank), int(size),
                                                       ctypes.byref(self._handle)),
               "cannot create a barrier communicator")


class NcclCommunicator(Communicator):
    """jobviz's own NCCL communicator (CUDA builds): from a unique id that rank 0 made
    with :func:`nccl_unique_id` and the application handed to every rank."""

    def __init__(self, unique_id: bytes, rank: int, size: int) -> None:
        super().__init__()
        if len(unique_id) != _NCCL_ID_BYTES:
            raise ValueError(f"an NCCL unique id has {_NCCL_ID_BYTES} bytes, not {len(unique_id)}")
        buffer = ctypes.create_string_buffer(bytes(unique_id), _NCCL_ID_BYTES)
        _check(_lib.jobviz_communicator_create_nccl(buffer, int(rank), int(size), ctypes.byref(self._handle)),
               "cannot create the NCCL communicator")


_NCCL_ID_BYTES = 128


def nccl_unique_id() -> bytes:
    """A fresh ncclUniqueId (on rank 0), to hand to every rank."""
    buffer = ctypes.create_string_buffer(_NCCL_ID_BYTES)
    _check(_lib.jobviz_nccl_unique_id(buffer), "cannot make an NCCL unique id")
    return buffer.raw


def nccl_communicator_from_group(rank: int, size: int,
                                 broadcast: Optional[Callable[[list], None]] = None) -> NcclCommunicator:
    """Builds jobviz's NCCL communicator over an existing process group: rank 0 makes
    the unique id and ``broadcast`` hands it to every rank. By default
    ``torch.distributed.broadcast_object_list(objects, src=0)``; any callable that
    fills ``objects[0]`` on every rank with rank 0's value will do (mpi4py:
    ``lambda o: o.__setitem__(0, comm.bcast(o[0], root=0))``).

    Every rank must call it, as with any collective.
    """
    if broadcast is None:
        import torch.distributed as dist  # only when asked for

        def broadcast(objects: list) -> None:
            dist.broadcast_object_list(objects, src=0)

    objects: list = [nccl_unique_id() if rank == 0 else None]
    broadcast(objects)
    return NcclCommunicator(objects[0], rank, size)
