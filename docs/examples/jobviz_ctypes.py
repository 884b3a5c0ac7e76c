#!/usr/bin/env python3
"""Using libjobviz from Python through ctypes: a pattern a PyTorch user can copy.

With PyTorch on a GPU, pass the current CUDA stream:
    stream = jobviz.wrap_cuda_stream(torch.cuda.current_stream().cuda_stream)
Without a GPU (and in jobviz's test suite) it uses the CPU stand-in stream.

    python3 jobviz_ctypes.py --lib /path/to/libjobviz.so --log workerlog.0
"""
import argparse
import ctypes
import os

OK = 0
NO_JOB = 2**64 - 1


class Jobviz:
    def __init__(self, path):
        lib = ctypes.CDLL(path)
        c = ctypes
        lib.jobviz_profiler_create.argtypes = [c.c_int, c.c_int, c.c_int, c.c_char_p, c.c_int64, c.c_int64,
                                               c.POINTER(c.c_void_p)]
        lib.jobviz_profiler_destroy.argtypes = [c.c_void_p]
        lib.jobviz_job_begin.argtypes = [c.c_void_p, c.c_void_p, c.c_char_p, c.c_int64, c.c_int64,
                                         c.POINTER(c.c_uint64)]
        lib.jobviz_job_end.argtypes = [c.c_void_p, c.c_void_p, c.c_uint64]
        lib.jobviz_step_begin.argtypes = [c.c_void_p, c.c_int64]
        lib.jobviz_step_end.argtypes = [c.c_void_p]
        lib.jobviz_stream_wrap_cuda.argtypes = [c.c_void_p, c.POINTER(c.c_void_p)]
        lib.jobviz_stream_create_cpu.argtypes = [c.POINTER(c.c_void_p)]
        lib.jobviz_cpu_stream_sleep.argtypes = [c.c_void_p, c.c_int64]
        lib.jobviz_stream_synchronize.argtypes = [c.c_void_p]
        lib.jobviz_stream_destroy.argtypes = [c.c_void_p]
        lib.jobviz_records_lost.argtypes = [c.c_void_p]
        lib.jobviz_records_lost.restype = c.c_uint64
        lib.jobviz_status_string.argtypes = [c.c_int]
        lib.jobviz_status_string.restype = c.c_char_p
        self.lib = lib

    def check(self, status):
        if status != OK:
            raise RuntimeError("jobviz: " + self.lib.jobviz_status_string(status).decode())

    def profiler(self, rank, worker, world_size, log_path=None, start=-1, end=-1):
        handle = ctypes.c_void_p()
        self.check(self.lib.jobviz_profiler_create(rank, worker, world_size,
                                                   log_path.encode() if log_path else None,
                                                   start, end, ctypes.byref(handle)))
        return handle

    def wrap_cuda_stream(self, cuda_stream_pointer):
        handle = ctypes.c_void_p()
        self.check(self.lib.jobviz_stream_wrap_cuda(ctypes.c_void_p(cuda_stream_pointer), ctypes.byref(handle)))
        return handle

    def cpu_stream(self):
        handle = ctypes.c_void_p()
        self.check(self.lib.jobviz_stream_create_cpu(ctypes.byref(handle)))
        return handle

    def begin(self, profiler, stream, job_type, job_id, micro_batch):
        job = ctypes.c_uint64(NO_JOB)
        self.check(self.lib.jobviz_job_begin(profiler, stream, job_type.encode(), job_id, micro_batch,
                                             ctypes.byref(job)))
        return job.value

    def end(self, profiler, stream, job):
        self.check(self.lib.jobviz_job_end(profiler, stream, job))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--lib", default="libjobviz.so")
    parser.add_argument("--log", default=None, help="workerlog to write (default: stderr)")
    args = parser.parse_args()
    jv = Jobviz(args.lib)
    profiler = jv.profiler(rank=0, worker=0, world_size=1, log_path=args.log)
    try:
        import torch  # noqa: F401  (optional)
        use_cuda = torch.cuda.is_available()
    except ImportError:
        use_cuda = False
    stream = jv.wrap_cuda_stream(torch.cuda.current_stream().cuda_stream) if use_cuda else jv.cpu_stream()
    for step in range(3):
        jv.lib.jobviz_step_begin(profiler, step)
        for job_id, (job_type, micro_batch) in enumerate([("forward", 0), ("forward", 1),
                                                          ("backward", 0), ("backward", 1), ("optimizer", 0)]):
            job = jv.begin(profiler, stream, job_type, job_id, micro_batch)
            if use_cuda:
                pass  # launch the model's kernels for this job here
            else:
                jv.check(jv.lib.jobviz_cpu_stream_sleep(stream, 500))
            jv.end(profiler, stream, job)
        jv.lib.jobviz_step_end(profiler)
    jv.check(jv.lib.jobviz_stream_synchronize(stream))
    lost = jv.lib.jobviz_records_lost(profiler)
    jv.lib.jobviz_profiler_destroy(profiler)  # flushes everything
    jv.lib.jobviz_stream_destroy(stream)
    print("recorded 15 jobs, lost %d" % lost)
    return 0 if lost == 0 else 1


if __name__ == "__main__":
    raise SystemExit(main())
