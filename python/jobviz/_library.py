"""Finds and loads libjobviz, and declares the C API's signatures."""
from __future__ import annotations

import ctypes
import ctypes.util
import os

from . import _location

_SONAMES = ("libjobviz.so.0", "libjobviz.so", "libjobviz.dylib")

# int (*jobviz_barrier_fn)(void* user_data)
BARRIER_FN = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p)


def _candidates():
    explicit = os.environ.get("JOBVIZ_LIBRARY")
    if explicit:
        yield explicit
        return
    here = os.path.dirname(os.path.abspath(__file__))
    for name in _SONAMES:
        yield os.path.join(here, name)
    for directory in _location.LIBRARY_DIRS:
        for name in _SONAMES:
            yield os.path.join(directory, name)
    found = ctypes.util.find_library("jobviz")
    if found:
        yield found
    yield from _SONAMES  # the loader's own search path (LD_LIBRARY_PATH, ld.so.cache)


def load_library() -> ctypes.CDLL:
    tried = []
    for candidate in _candidates():
        if os.path.isabs(candidate) and not os.path.exists(candidate):
            tried.append(candidate + " (no such file)")
            continue
        try:
            return _declare(ctypes.CDLL(candidate))
        except OSError as error:
            tried.append(f"{candidate} ({error})")
    raise ImportError("jobviz: cannot load libjobviz. Tried:\n  " + "\n  ".join(tried) +
                      "\nSet JOBVIZ_LIBRARY to the library's path, or install jobviz (meson install).")


class Stats(ctypes.Structure):
    """jobviz_stats: what a profiler recorded, lost and refused."""
    _fields_ = [("jobs_recorded", ctypes.c_uint64), ("records_lost", ctypes.c_uint64),
                ("lines_written", ctypes.c_uint64), ("calls_refused", ctypes.c_uint64),
                ("jobs_never_ended", ctypes.c_uint64)]


class JobInfo(ctypes.Structure):
    """jobviz_job_info: a job begun and never ended."""
    _fields_ = [("type", ctypes.c_char * 64), ("job_id", ctypes.c_int64), ("micro_batch", ctypes.c_int64),
                ("start_ns", ctypes.c_int64)]


def _declare(lib: ctypes.CDLL) -> ctypes.CDLL:
    c = ctypes
    p = c.c_void_p
    signatures = {
        "jobviz_profiler_create_emulated": ([c.c_int, c.c_int, c.c_int, c.c_char_p, c.c_int64, c.c_int64, c.c_int64,
                                             c.c_double, c.POINTER(p)], c.c_int),
        "jobviz_profiler_destroy": ([p], None),
        "jobviz_job_begin": ([p, p, c.c_char_p, c.c_int64, c.c_int64, c.POINTER(c.c_uint64)], c.c_int),
        "jobviz_job_end": ([p, p, c.c_uint64], c.c_int),
        "jobviz_step_begin": ([p, c.c_int64], c.c_int),
        "jobviz_step_end": ([p], c.c_int),
        "jobviz_set_profile_window": ([p, c.c_int64, c.c_int64], c.c_int),
        "jobviz_set_topology": ([p, c.c_int, c.c_int, c.c_int], c.c_int),
        "jobviz_set_stall_after": ([p, c.c_double], c.c_int),
        "jobviz_records_lost": ([p], c.c_uint64),
        "jobviz_profiler_shutdown": ([p, c.c_int, c.c_int], c.c_int),
        "jobviz_get_stats": ([p, c.POINTER(Stats)], c.c_int),
        "jobviz_never_ended_job": ([p, c.c_uint64, c.POINTER(JobInfo)], c.c_int),
        "jobviz_stream_wrap_cuda": ([p, c.POINTER(p)], c.c_int),
        "jobviz_stream_create_cpu": ([c.POINTER(p)], c.c_int),
        "jobviz_cpu_stream_sleep": ([p, c.c_int64], c.c_int),
        "jobviz_stream_synchronize": ([p], c.c_int),
        "jobviz_stream_destroy": ([p], None),
        "jobviz_communicator_create_barrier": ([BARRIER_FN, p, c.c_int, c.c_int, c.POINTER(p)], c.c_int),
        "jobviz_communicator_create_nccl": ([p, c.c_int, c.c_int, c.POINTER(p)], c.c_int),
        "jobviz_nccl_unique_id": ([p], c.c_int),
        "jobviz_communicator_destroy": ([p], None),
        "jobviz_sync_clocks": ([p, p, p, c.c_int], c.c_int),
        "jobviz_attach_clock_sync": ([p, p, p], c.c_int),
        "jobviz_status_string": ([c.c_int], c.c_char_p),
        "jobviz_version": ([], c.c_char_p),
    }
    for name, (argtypes, restype) in signatures.items():
        function = getattr(lib, name)
        function.argtypes = argtypes
        function.restype = restype
    return lib
