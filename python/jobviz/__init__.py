"""jobviz: record when each pipeline-parallel job ran on its stream.

A thin layer over libjobviz's C API (ctypes). Lines go to the rank's worker
log in the framework's own format, and `jobviz` (the command) draws them::

    import jobviz
    prof = jobviz.Profiler(rank=3, local_worker=1, world_size=8, log_path="workerlog.1", window=(10, 20))
    for step in range(30):
        with prof.step(step):
            for mb in range(micro_batches):
                with prof.job(stream, "forward", micro_batch=mb):
                    run_forward(mb)          # enqueue the stage's work on `stream`
    prof.close()

``python -m jobviz ARGS`` (and the ``jobviz`` command a wheel installs) runs
the jobviz CLI that came with this package.

`stream` is anything with a ``cuda_stream`` handle (``torch.cuda.Stream``,
CuPy streams) or a :class:`CpuStream`. Clock sync over any process group:
``prof.attach_clock_sync(jobviz.BarrierCommunicator(torch.distributed.barrier, rank, world))``.

The environment variables of the C API are honoured (JOBVIZ_PROFILE_START,
JOBVIZ_PROFILE_END). libjobviz is looked for in $JOBVIZ_LIBRARY, next to this
package, where it was installed, then on the loader's path.
"""
from __future__ import annotations

import contextlib
import ctypes
import itertools
import math
import operator
import os
import re
import sys
import traceback
import warnings
from typing import Any, Callable, Iterator, List, NamedTuple, Optional, Tuple

from ._core import (_INT32_MAX, _INT64_MAX, _INT64_MIN, _NO_JOB, _OK, _STEP_LIMIT, _WORD, JobvizError, JobvizWarning,
                    NeverEndedJob, ProfilerStats, _check, _Handle, _integer, _lib, _window, library_version)
from ._library import BARRIER_FN, JobInfo, Stats
from ._streams import (BarrierCommunicator, Communicator, CpuStream, NcclCommunicator, _CudaStream, nccl_communicator_from_group,
                       nccl_unique_id)
from ._location import VERSION as __version__  # the jobviz CLI's and libjobviz's version

__all__ = [
    "JobvizError", "JobvizWarning", "ProfilerStats", "NeverEndedJob", "Profiler", "CpuStream", "Communicator", "BarrierCommunicator", "NcclCommunicator",
    "nccl_unique_id", "nccl_communicator_from_group", "library_version",
]

def _topology_index(name: str, value: Any) -> int:
    """A pp_rank, dp_rank or tp_rank: an integer (int, or anything with __index__, as NumPy's
    integers have) from 0 to 999999 (as jobviz reads the line)."""
    if isinstance(value, bool):
        raise TypeError(f"{name} is an int, not bool")
    try:
        value = operator.index(value)
    except TypeError:
        raise TypeError(f"{name} is an int, not {type(value).__name__}") from None
    if not 0 <= value < 1_000_000:
        raise ValueError(f"{name} must be 0..999999, not {value}")
    return value


def _topology_place(pp_rank: Any, dp_rank: Any, tp_rank: Any) -> Optional[Tuple[int, int, int]]:
    """The three coordinates, checked whether or not pp_rank is given; None without pp_rank.
    A job that holds them all has at most 10,000,000 ranks, what jobviz reads back."""
    dp = _topology_index("dp_rank", 0 if dp_rank is None else dp_rank)
    tp = _topology_index("tp_rank", 0 if tp_rank is None else tp_rank)
    if pp_rank is None:
        if dp or tp:
            raise ValueError("dp_rank and tp_rank are written with pp_rank: give pp_rank too")
        return None
    pp = _topology_index("pp_rank", pp_rank)
    if (pp + 1) * (dp + 1) * (tp + 1) > 10_000_000:
        raise ValueError(f"pp_rank {pp}, dp_rank {dp}, tp_rank {tp} need more than the 10,000,000 ranks a job can have")
    return pp, dp, tp


class Profiler(_Handle):
    """Records jobs and steps of one rank and writes them to its worker log.

    rank, local_worker, world_size: the global rank, the N of workerlog.N, the ranks in all.
    log_path: the file lines are appended to; None writes to stderr (which the launcher
      puts into workerlog.N).
    window: (start, end) steps to record, start <= step < end; None: every step, or
      JOBVIZ_PROFILE_START / JOBVIZ_PROFILE_END from the environment.
    emulate_clock_offset_ns, emulate_clock_drift_ppm: pretend this process's clock is
      off (tests and demos of clock alignment on one machine).
    pp_rank, dp_rank, tp_rank: where this rank sits in a hybrid-parallel job (pipeline
      stage, data-parallel or sharding replica, tensor-parallel index), written once as a
      HybridParallelInfo line (Paddle's, with pp_rank/dp_rank/tp_rank) so that jobviz knows the pipelines; give pp_rank to write it
      (dp_rank and tp_rank default to 0; given without pp_rank, ValueError). Integers 0..999999
      (NumPy's too) whose (pp_rank+1)(dp_rank+1)(tp_rank+1) is at most 10,000,000 ranks.
      Not needed where Paddle prints HybridParallelInfo.
    stall_after: the watchdog's wait in seconds (default 60): a job begun and not ended
      after it, or enqueued and never begun, gets a line at once, so that jobviz can say
      what a hung rank hangs in; 0 turns it off.
    """

    _destroy = staticmethod(lambda h: _lib.jobviz_profiler_destroy(h))

    def __init__(self, rank: int, local_worker: int, world_size: int, log_path: Optional[str] = None,
                 window: Optional[Tuple[int, int]] = None, emulate_clock_offset_ns: int = 0,
                 emulate_clock_drift_ppm: float = 0.0, pp_rank: Optional[int] = None, dp_rank: Optional[int] = None,
                 tp_rank: Optional[int] = None, stall_after: float = 60.0) -> None:
        super().__init__()
        world_size = _integer("world_size", world_size, 1, _INT32_MAX)
        rank = _integer("rank", rank, 0, world_size - 1)
        local_worker = _integer("local_worker", local_worker, 0, _INT32_MAX)
        start, end = _window(*window) if window is not None else (-1, -1)
        path = os.fsencode(log_path) if log_path is not None and log_path != "" else None  # str, bytes, PathLike
        if isinstance(stall_after, bool) or not isinstance(stall_after, (int, float)) or \
                not math.isfinite(stall_after) or stall_after < 0:
            raise ValueError(f"stall_after must be a finite number of seconds >= 0, not {stall_after!r}")
        place = _topology_place(pp_rank, dp_rank, tp_rank)
        _check(_lib.jobviz_profiler_create_emulated(int(rank), int(local_worker), int(world_size), path, int(start),
                                                    int(end), int(emulate_clock_offset_ns),
                                                    float(emulate_clock_drift_ppm), ctypes.byref(self._handle)),
               f"cannot create the profiler (log {log_path!r})")
        if place is not None:
            _check(_lib.jobviz_set_topology(self.handle, *place), "write the topology line")
        _check(_lib.jobviz_set_stall_after(self.handle, float(stall_after)), "set the watchdog")
        self._final: Optional[Tuple[ProfilerStats, List[NeverEndedJob]]] = None  # after close()
        self._job_ids = itertools.count()
        self._streams: dict = {}  # CUDA stream handle -> its wrapper
        self._sync: Optional[Tuple[Communicator, Any]] = None

    def _stream(self, stream: Any) -> _Handle:
        if isinstance(stream, (CpuStream, _CudaStream)):
            return stream
        handle = getattr(stream, "cuda_stream", None)
        if handle is None:
            raise TypeError("a stream is a jobviz.CpuStream or has a cuda_stream handle "
                            f"(torch.cuda.Stream, CuPy), not {type(stream).__name__}")
        if handle not in self._streams:
            self._streams[handle] = _CudaStream(handle)
        return self._streams[handle]

    def begin_job(self, stream: Any, type: str, micro_batch: int = 0, job_id: Optional[int] = None) -> int:
        """Marks a job's start on ``stream``; returns the token for :meth:`end_job`."""
        if not isinstance(type, str) or not _WORD.fullmatch(type):
            raise ValueError(f"a job type is one word of letters, digits and _ (forward, backward_b1), not {type!r}")
        micro_batch = _integer("micro_batch", micro_batch, 0, _INT32_MAX)  # what jobviz draws
        job_id = next(self._job_ids) if job_id is None else _integer("job_id", job_id, _INT64_MIN, _INT64_MAX)
        token = ctypes.c_uint64()
        _check(_lib.jobviz_job_begin(self.handle, self._stream(stream).handle, type.encode(), job_id,
                                     micro_batch, ctypes.byref(token)), f"begin job {type}")
        return token.value

    def end_job(self, stream: Any, token: int) -> None:
        """Marks the end of the job ``token`` on ``stream`` (or a stream ordered after it).

        Raises JobvizError for a token ended already, or one given up as never ended."""
        _check(_lib.jobviz_job_end(self.handle, self._stream(stream).handle, token),
               "end job (a token ends once; a job never ended is given up at close, or when the "
               "records behind it fill the buffer)")

    @contextlib.contextmanager
    def job(self, stream: Any, type: str, micro_batch: int = 0, job_id: Optional[int] = None) -> Iterator[int]:
        """``with prof.job(stream, "forward", micro_batch=i):`` around the work a stage enqueues."""
        token = self.begin_job(stream, type, micro_batch, job_id)
        try:
            yield token
        finally:
            self.end_job(stream, token)

    def begin_step(self, step: int) -> None:
        step = _integer("step", step, 0, _STEP_LIMIT - 1)
        _check(_lib.jobviz_step_begin(self.handle, step), f"begin step {step}")

    def end_step(self) -> None:
        _check(_lib.jobviz_step_end(self.handle), "end step")

    @contextlib.contextmanager
    def step(self, step: int) -> Iterator[None]:
        """``with prof.step(n):`` around one training step."""
        self.begin_step(step)
        try:
            yield
        finally:
            self.end_step()

    def set_window(self, start: int, end: int) -> None:
        """Records steps start <= step < end from now on."""
        start, end = _window(start, end)
        _check(_lib.jobviz_set_profile_window(self.handle, start, end), "set window")

    def sync_clocks(self, communicator: Communicator, stream: Any = None, rounds: int = -1) -> None:
        """Runs clock-sync rounds now; every rank must call it. A barrier communicator needs no stream."""
        _check(_lib.jobviz_sync_clocks(self.handle, communicator.handle, self._stream_or_none(communicator, stream),
                                       int(rounds)), "sync clocks")

    def attach_clock_sync(self, communicator: Optional[Communicator], stream: Any = None) -> None:
        """Syncs clocks by itself at the window's start and end; None detaches."""
        if communicator is None:
            _check(_lib.jobviz_attach_clock_sync(self.handle, None, None), "detach clock sync")
            self._sync = None
            return
        stream_handle = self._stream_or_none(communicator, stream)
        _check(_lib.jobviz_attach_clock_sync(self.handle, communicator.handle, stream_handle), "attach clock sync")
        self._sync = (communicator, stream)  # both must outlive the attachment

    def _stream_or_none(self, communicator: Communicator, stream: Any) -> Optional[ctypes.c_void_p]:
        if stream is None:
            if communicator.needs_stream:
                raise ValueError(f"{type(communicator).__name__} needs the stream to sync on")
            return None
        return self._stream(stream).handle

    @property
    def stats(self) -> ProfilerStats:
        """What the profiler recorded, lost and refused so far; after close(), the final
        figures (the ones of the log's last line)."""
        if not self._handle and self._final is not None:
            return self._final[0]
        raw = Stats()
        _check(_lib.jobviz_get_stats(self.handle, ctypes.byref(raw)), "stats")
        return ProfilerStats(raw.jobs_recorded, raw.records_lost, raw.lines_written, raw.calls_refused,
                             raw.jobs_never_ended)

    @property
    def records_lost(self) -> int:
        """Records dropped so far (a full buffer, a failed launch or barrier, a job never
        ended); readable after close()."""
        return self.stats.records_lost

    @property
    def never_ended(self) -> List[NeverEndedJob]:
        """Jobs begun and never ended, given up so far (the first 16; stats counts them all)."""
        if not self._handle and self._final is not None:
            return list(self._final[1])
        jobs = []
        info = JobInfo()
        while _lib.jobviz_never_ended_job(self.handle, len(jobs), ctypes.byref(info)) == _OK:
            jobs.append(NeverEndedJob(info.type.decode(errors="replace"), info.micro_batch, info.job_id,
                                      info.start_ns))
        return jobs

    def close(self, timeout: float = 5.0) -> None:
        """Writes everything and the final line; the log is complete afterwards.

        Waits up to ``timeout`` seconds for jobs whose end is enqueued on a stream that is
        still busy. Jobs begun and never ended are not waited for: they are reported with a
        JobvizWarning (and in the log) and counted in ``stats``, which stays readable."""
        if self._handle:
            if self._sync is not None:
                _lib.jobviz_attach_clock_sync(self._handle, None, None)
                self._sync = None
            _check(_lib.jobviz_profiler_shutdown(self._handle, int(max(0.0, timeout) * 1000), 0), "close")
            self._final = (self.stats, self.never_ended)
            stats, never_ended = self._final
            if stats.jobs_never_ended:
                shown = ", ".join(f"{job.type} micro-batch {job.micro_batch} (job id {job.job_id})"
                                  for job in never_ended[:3])
                more = stats.jobs_never_ended - min(3, len(never_ended))
                warnings.warn(JobvizWarning(
                    f"jobviz: {stats.jobs_never_ended} job(s) begun and never ended, their lines not written: "
                    f"{shown}{f' and {more} more' if more > 0 else ''}; every begin_job needs its end_job "
                    "(or use `with prof.job(...)`)"), stacklevel=2)
        super().close()
        for wrapper in self._streams.values():
            wrapper.close()
        self._streams.clear()
