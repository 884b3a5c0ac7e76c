"""What every part of the jobviz package shares: the loaded libjobviz, its
errors and warnings, the checks that turn Python values into what the C API
and the log lines take, and the handle every C object is owned by."""
from __future__ import annotations

import ctypes
import operator
import re
from typing import Any, Callable, NamedTuple, Tuple

from ._library import load_library

_OK = 0
_NO_JOB = 2**64 - 1

_lib = load_library()


class JobvizError(RuntimeError):
    """A libjobviz call failed; ``status`` is the C status code, the message its text."""

    def __init__(self, status: int, what: str):
        self.status = status
        text = _lib.jobviz_status_string(status).decode()
        super().__init__(f"jobviz: {what}: {text}")


class JobvizWarning(RuntimeWarning):
    """Something the profiler could not record as asked: jobs begun and never ended."""


class ProfilerStats(NamedTuple):
    """What a profiler recorded (jobs_recorded: job lines written or to be written), lost
    (records_lost, jobs_never_ended among them), wrote (lines_written) and refused
    (calls_refused: a second or stale end_job)."""
    jobs_recorded: int
    records_lost: int
    lines_written: int
    calls_refused: int
    jobs_never_ended: int


class NeverEndedJob(NamedTuple):
    """A job begun with begin_job and never ended: its line is not written."""
    type: str
    micro_batch: int
    job_id: int
    start_ns: int  # when its start ran on the stream, ns since the epoch


def _check(status: int, what: str) -> None:
    if status != _OK:
        raise JobvizError(status, what)


# What jobviz reads back from the lines these values go into (docs/workerlog-format.md):
# steps below 10**12, micro-batches and ids that fit in 64 bits, one-word job types.
_STEP_LIMIT = 10**12
_INT32_MAX = 2**31 - 1
_INT64_MIN, _INT64_MAX = -(2**63), 2**63 - 1
_WORD = re.compile(r"\w+", re.ASCII)


def _integer(name: str, value: Any, low: int, high: int) -> int:
    """``value`` as an int in low..high: a TypeError for what is not an integer (a float,
    a bool, a string), a ValueError for one out of range, instead of a silent truncation
    at the C boundary."""
    if isinstance(value, bool):
        raise TypeError(f"{name} is an integer, not a bool")
    try:
        number = operator.index(value)  # int, NumPy integers; not floats
    except TypeError:
        raise TypeError(f"{name} is an integer, not {type(value).__name__}") from None
    if not low <= number <= high:
        raise ValueError(f"{name} must be {low}..{high}, not {number}")
    return number


def _window(start: Any, end: Any) -> Tuple[int, int]:
    start = _integer("the window's start", start, 0, _STEP_LIMIT - 1)
    end = _integer("the window's end", end, 0, _STEP_LIMIT)
    if end <= start:
        raise ValueError(f"a window (start, end) records start <= step < end: end must be above start, not ({start}, {end})")
    return start, end


def library_version() -> str:
    """The version of the loaded libjobviz."""
    return _lib.jobviz_version().decode()


class _Handle:
    """Owns one C handle; closes it once, on close() or garbage collection."""

    _destroy: Callable[[ctypes.c_void_p], None]

    def __init__(self) -> None:
        self._handle = ctypes.c_void_p()

    @property
    def handle(self) -> ctypes.c_void_p:
        if not self._handle:
            raise ValueError(f"{type(self).__name__} is closed")
        return self._handle

    def close(self) -> None:
        if self._handle:
            type(self)._destroy(self._handle)
            self._handle = ctypes.c_void_p()

    def __enter__(self):
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def __del__(self) -> None:
        try:
            self.close()
        except Exception:  # interpreter shutdown: the library may be gone
            pass
