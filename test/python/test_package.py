#!/usr/bin/env python3
"""The `jobviz` Python package: its surface, its errors, and lines that the
jobviz command reads back.
usage: test_package.py JOBVIZ_EXE BUILD_ROOT PYTHON_INSTALL_DIR CONFIGURED_PYTHON
(the last two: where meson installs the package, for which interpreter)"""
import os
import pydoc
import subprocess
import sys
import tempfile
import threading
import unittest

import jobviz

JOBVIZ_EXE = None
BUILD_ROOT = None
PYTHON_INSTALL_DIR = None
CONFIGURED_PYTHON = None


class PackageTest(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.TemporaryDirectory(prefix="jobviz_py_")
        self.log = os.path.join(self.dir.name, "workerlog.0")

    def tearDown(self):
        self.dir.cleanup()

    def draw(self, *extra):
        return subprocess.run([JOBVIZ_EXE, self.log, "--no-chrome", "-o", os.path.join(self.dir.name, "t.json"),
                               "--summary-json", "-", *extra], capture_output=True, text=True)

    def test_jobs_and_steps_reach_the_log_and_jobviz_draws_them(self):
        stream = jobviz.CpuStream()
        with jobviz.Profiler(rank=0, local_worker=0, world_size=1, log_path=self.log) as prof:
            for step in range(3):
                with prof.step(step):
                    for mb in range(2):
                        with prof.job(stream, "forward", micro_batch=mb):
                            stream.sleep(200)
                    for mb in range(2):
                        with prof.job(stream, "backward", micro_batch=mb, job_id=100 + mb):
                            stream.sleep(300)
            stream.synchronize()
            self.assertEqual(prof.records_lost, 0)
        result = self.draw()
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertIn("12 jobs drawn, 0 skipped", result.stderr)
        self.assertIn("3 steps (step0 to step2) from NVTX step lines", result.stderr)
        with open(self.log) as f:
            text = f.read()
        self.assertIn("Profiler Info: Job (100), type = backward, micro_batch_id = 0", text)

    def test_topology_lines_make_pipelines_that_jobviz_follows(self):
        """Four ranks, pp2 x tp2 (one process here, one CPU stream each): with
        pp_rank/tp_rank given, jobviz reads the topology from the lines, pairs
        hand-offs only between consecutive stages of one tp index, and
        recognises 1F1B over 2 stages."""
        streams = [jobviz.CpuStream() for _ in range(4)]
        logs = [os.path.join(self.dir.name, "workerlog.%d" % r) for r in range(4)]
        profs = [jobviz.Profiler(rank=r, local_worker=r, world_size=4, log_path=logs[r], pp_rank=r // 2,
                                 tp_rank=r % 2) for r in range(4)]
        order = {0: [("forward", 0), ("forward", 1), ("backward", 0), ("forward", 2), ("backward", 1),
                     ("backward", 2)],
                 1: [("forward", 0), ("backward", 0), ("forward", 1), ("backward", 1), ("forward", 2),
                     ("backward", 2)]}
        for prof in profs:
            prof.begin_step(0)
        # Stage 1 waits for stage 0's forward; stage 0 for stage 1's backward:
        # each rank's stream sleeps so that its order matches the schedule.
        for r, prof in enumerate(profs):
            stage = r // 2
            for typ, mb in order[stage]:
                with prof.job(streams[r], typ, micro_batch=mb):
                    streams[r].sleep(300 if typ == "forward" else 600)
        for r, prof in enumerate(profs):
            streams[r].synchronize()
            prof.end_step()
            prof.close()
        with open(logs[3]) as f:
            self.assertIn("HybridParallelInfo: rank_id: 3, pp_rank: 1, dp_rank: 0, tp_rank: 1", f.read())
        result = subprocess.run([JOBVIZ_EXE, "--log_dir", self.dir.name, "--no-chrome", "-o",
                                 os.path.join(self.dir.name, "t.json"), "--summary-json", "-"],
                                capture_output=True, text=True)
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertIn("topology: pp2 × mp2 from jobviz topology lines", result.stderr)
        import json
        summary = json.loads(result.stdout)
        self.assertEqual(summary["stages"], 2)
        self.assertEqual(summary["topology"]["source"], "jobviz topology lines")
        self.assertEqual([w["stage"] for w in summary["workers"]], [0, 0, 1, 1])
        self.assertEqual([w["mp"] for w in summary["workers"]], [0, 1, 0, 1])

    def test_topology_arguments_are_checked_before_anything_is_written(self):
        for bad, error in ((-1, ValueError), (1_000_000, ValueError), (1.5, TypeError), (True, TypeError)):
            with self.assertRaises(error):
                jobviz.Profiler(rank=0, local_worker=0, world_size=1, log_path=self.log, pp_rank=bad)
            with self.assertRaises(error):
                jobviz.Profiler(rank=0, local_worker=0, world_size=1, log_path=self.log, pp_rank=0, tp_rank=bad)
        # dp_rank and tp_rank are checked without pp_rank too, and only written with it.
        for kwargs, error in ((dict(dp_rank=-5), ValueError), (dict(tp_rank="x"), TypeError),
                              (dict(dp_rank=3), ValueError),
                              # each below 10^6, but a job holding them would have 10^12 ranks
                              (dict(pp_rank=0, dp_rank=999_999, tp_rank=999_999), ValueError)):
            with self.assertRaises(error, msg=str(kwargs)):
                jobviz.Profiler(rank=0, local_worker=0, world_size=1, log_path=self.log, **kwargs)
        self.assertFalse(os.path.exists(self.log))

    def test_topology_takes_integer_like_values(self):
        """Anything with __index__ (NumPy's integers) is an int here, as the docs say."""
        class Index:
            def __init__(self, value):
                self.value = value

            def __index__(self):
                return self.value

        jobviz.Profiler(rank=0, local_worker=0, world_size=1, log_path=self.log, pp_rank=Index(1),
                        dp_rank=Index(2), tp_rank=Index(3)).close()
        with open(self.log) as f:
            self.assertIn("HybridParallelInfo: rank_id: 0, pp_rank: 1, dp_rank: 2, tp_rank: 3", f.read())

    def test_watchdog_writes_a_line_for_a_job_still_running(self):
        """stall_after: a job begun and not ended gets its in-flight line while it runs;
        jobviz reads it and names the job in the stop report. Bad waits raise first."""
        for bad in (-1, float("inf"), float("nan"), "60", True):
            with self.assertRaises(ValueError):
                jobviz.Profiler(rank=0, local_worker=0, world_size=1, log_path=self.log, stall_after=bad)
        self.assertFalse(os.path.exists(self.log))
        stream = jobviz.CpuStream()
        with jobviz.Profiler(rank=0, local_worker=0, world_size=1, log_path=self.log, stall_after=0.05) as prof:
            with prof.job(stream, "backward", micro_batch=2):
                stream.sleep(400_000)  # the job runs 0.4 s: the watchdog speaks at 0.05 s
                for _ in range(300):
                    with open(self.log) as f:
                        if "still running" in f.read():
                            break
                    threading.Event().wait(0.01)
            with open(self.log) as f:
                text = f.read()
            stream.synchronize()
        self.assertIn("Profiler Info: Job (0) still running, type = backward, micro_batch_id = 2, job_start_time = ",
                      text)

    def test_arguments_are_checked_before_the_c_call(self):
        """Values the C types or the log lines cannot hold raise, instead of being truncated or
        written and then refused by jobviz (issue: rank 2**32+1 became rank 1)."""
        new = lambda **kw: jobviz.Profiler(**{"rank": 0, "local_worker": 0, "world_size": 1, "log_path": self.log, **kw})
        for kw, error in (({"rank": 2**32 + 1, "world_size": 2**33}, ValueError), ({"rank": 5, "world_size": 2}, ValueError),
                          ({"rank": -1}, ValueError), ({"world_size": 0}, ValueError), ({"rank": 1.0}, TypeError),
                          ({"window": (10, 5)}, ValueError), ({"window": (-1, 5)}, ValueError),
                          ({"window": (0, 10**12 + 1)}, ValueError)):
            with self.assertRaises(error, msg=str(kw)):
                new(**kw)
        self.assertFalse(os.path.exists(self.log))
        stream = jobviz.CpuStream()
        with new() as prof:
            for kwargs, error in (({"micro_batch": 2**64 + 3}, ValueError), ({"micro_batch": -1}, ValueError),
                                  ({"micro_batch": 2**31}, ValueError),
                                  ({"job_id": 2**64 + 5}, ValueError), ({"micro_batch": 1.5}, TypeError),
                                  ({"micro_batch": True}, TypeError)):
                with self.assertRaises(error, msg=str(kwargs)):
                    prof.begin_job(stream, "forward", **kwargs)
            for bad_type in ("forward-1", "forward pass", "", "fw\n", "vorwärts"):
                with self.assertRaises(ValueError, msg=bad_type):
                    with prof.job(stream, bad_type):
                        pass
            for step, error in ((-5, ValueError), (10**12, ValueError), ("3", TypeError)):
                with self.assertRaises(error, msg=str(step)):
                    prof.begin_step(step)
            with self.assertRaises(ValueError):
                prof.set_window(7, 7)
            with prof.step(10**12 - 1):
                with prof.job(stream, "forward", micro_batch=2**31 - 1, job_id=-(2**63)):
                    stream.sleep(10)
            stream.synchronize()
        result = self.draw()
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertIn("1 job drawn, 0 skipped", result.stderr)
        for barrier, rank, size, error in ((None, 0, 1, TypeError), (lambda: None, 1, 1, ValueError),
                                           (lambda: None, 0, 0, ValueError)):
            with self.assertRaises(error):
                jobviz.BarrierCommunicator(barrier, rank, size)

    def test_a_bytes_or_pathlike_log_path_is_a_path(self):
        import pathlib
        for path in (os.fsencode(self.log), pathlib.Path(self.log)):
            with jobviz.Profiler(rank=0, local_worker=0, world_size=1, log_path=path) as prof:
                prof.begin_step(1)
                prof.end_step()
            self.assertTrue(os.path.exists(self.log))
            self.assertFalse(os.path.exists("b'" + self.log + "'"))
            os.remove(self.log)

    def test_window_records_only_its_steps(self):
        stream = jobviz.CpuStream()
        prof = jobviz.Profiler(rank=0, local_worker=0, world_size=1, log_path=self.log, window=(2, 4))
        for step in range(6):
            with prof.step(step):
                with prof.job(stream, "forward"):
                    stream.sleep(50)
        stream.synchronize()
        prof.close()
        self.assertIn("2 jobs drawn", self.draw().stderr)

    def test_errors_raise_with_the_status_text(self):
        prof = jobviz.Profiler(rank=0, local_worker=0, world_size=1, log_path=self.log)
        with self.assertRaises(jobviz.JobvizError) as raised:  # a C-level refusal: a second topology line
            jobviz._check(jobviz._lib.jobviz_set_topology(prof.handle, 0, 0, 0), "first")
            jobviz._check(jobviz._lib.jobviz_set_topology(prof.handle, 0, 0, 0), "second")
        self.assertEqual(raised.exception.status, 1)
        self.assertIn("second: invalid argument", str(raised.exception))
        prof.close()
        not_a_dir = os.path.join(self.dir.name, "file")
        open(not_a_dir, "w").close()
        with self.assertRaises(jobviz.JobvizError) as raised:
            jobviz.Profiler(rank=0, local_worker=0, world_size=1, log_path=os.path.join(not_a_dir, "workerlog.0"))
        self.assertIn("cannot open the output", str(raised.exception))

    def test_a_stream_must_be_a_cpu_stream_or_have_a_cuda_stream_handle(self):
        prof = jobviz.Profiler(rank=0, local_worker=0, world_size=1, log_path=self.log)
        with self.assertRaises(TypeError):
            prof.begin_job(object(), "forward")

        class FakeTorchStream:  # torch.cuda.Stream's attribute, on a build without CUDA
            cuda_stream = 0x1234

        try:
            prof.begin_job(FakeTorchStream(), "forward")
        except jobviz.JobvizError as error:
            self.assertIn("without CUDA", str(error))
        prof.close()

    def test_closed_objects_say_so(self):
        stream = jobviz.CpuStream()
        stream.close()
        stream.close()  # twice is fine
        with self.assertRaises(ValueError):
            stream.sleep(1)

    def test_barrier_sync_through_a_python_barrier(self):
        barrier = threading.Barrier(2)
        logs = [os.path.join(self.dir.name, "workerlog.%d" % r) for r in range(2)]

        def rank(r):
            prof = jobviz.Profiler(rank=r, local_worker=r, world_size=2, log_path=logs[r],
                                   emulate_clock_offset_ns=3_000_000 * r)
            prof.sync_clocks(jobviz.BarrierCommunicator(barrier.wait, r, 2), rounds=3)
            prof.close()

        threads = [threading.Thread(target=rank, args=(r,)) for r in range(2)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        for log in logs:
            with open(log) as f:
                self.assertEqual(f.read().count("Clock Sync: rank ="), 3)

    def test_a_failing_barrier_loses_the_round_not_the_program(self):
        def broken():
            raise RuntimeError("the group is gone")

        prof = jobviz.Profiler(rank=0, local_worker=0, world_size=1, log_path=self.log)
        prof.sync_clocks(jobviz.BarrierCommunicator(broken, 0, 1), rounds=2)
        self.assertEqual(prof.records_lost, 2)
        prof.close()

    def test_a_stream_based_communicator_needs_a_stream(self):
        prof = jobviz.Profiler(rank=0, local_worker=0, world_size=1, log_path=self.log)
        with self.assertRaises(ValueError):
            prof.sync_clocks(jobviz.Communicator())
        prof.close()

    def test_a_forgotten_end_job_holds_back_nothing_and_close_says_so(self):
        """Issue 24: begin_job without end_job, then two jobs: close() does not wait for the
        forgotten end (a 600 s timeout would hit the test's own), warns with the job, writes
        the two jobs, and the stats, readable after close, match the file."""
        stream = jobviz.CpuStream()
        prof = jobviz.Profiler(rank=0, local_worker=0, world_size=1, log_path=self.log)
        prof.begin_job(stream, "forward", micro_batch=0)
        with prof.job(stream, "forward", micro_batch=1):
            stream.sleep(100)
        with prof.job(stream, "backward", micro_batch=1):
            stream.sleep(100)
        stream.synchronize()
        with self.assertWarnsRegex(jobviz.JobvizWarning, r"1 job\(s\) begun and never ended.*forward micro-batch 0"):
            prof.close(timeout=600)
        self.assertEqual(prof.stats, jobviz.ProfilerStats(jobs_recorded=2, records_lost=1, lines_written=prof.stats.lines_written,
                                                          calls_refused=0, jobs_never_ended=1))
        self.assertEqual(prof.records_lost, 1)
        self.assertEqual([(j.type, j.micro_batch) for j in prof.never_ended], [("forward", 0)])
        result = self.draw()
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertIn("2 jobs drawn", result.stderr)
        with open(self.log) as f:
            self.assertIn("jobs recorded = 2, records lost = 1, calls refused = 0, jobs never ended = 1", f.read())

    def test_ending_a_job_twice_raises(self):
        stream = jobviz.CpuStream()
        with jobviz.Profiler(rank=0, local_worker=0, world_size=1, log_path=self.log) as prof:
            token = prof.begin_job(stream, "forward")
            prof.end_job(stream, token)
            with self.assertRaisesRegex(jobviz.JobvizError, "end job"):
                prof.end_job(stream, token)
            stream.synchronize()
        self.assertEqual(prof.stats.calls_refused, 1)
        self.assertEqual(prof.stats.jobs_recorded, 1)

    def test_help_documents_the_surface(self):
        text = pydoc.render_doc(jobviz, renderer=pydoc.plaintext)
        for name in ("Profiler", "CpuStream", "BarrierCommunicator", "nccl_communicator_from_group", "job(",
                     "step(", "JobvizError"):
            self.assertIn(name, text)

    def test_python_m_jobviz_runs_the_cli_of_the_same_version(self):
        cli = subprocess.run([JOBVIZ_EXE, "--version"], capture_output=True, text=True)
        run = subprocess.run([sys.executable, "-m", "jobviz", "--version"], capture_output=True, text=True)
        self.assertEqual(run.returncode, 0, run.stderr)
        self.assertEqual(run.stdout, cli.stdout)
        self.assertEqual(cli.stdout.split(), ["jobviz", jobviz.__version__])
        self.assertEqual(jobviz.library_version(), jobviz.__version__)
        env = dict(os.environ, JOBVIZ_CLI="/nonexistent/jobviz")
        missing = subprocess.run([sys.executable, "-m", "jobviz"], capture_output=True, text=True, env=env)
        self.assertEqual(missing.returncode, 2)
        self.assertIn("/nonexistent/jobviz", missing.stderr)
        # JOBVIZ_CLI set but unusable: why, not "set JOBVIZ_CLI"; never a traceback.
        with tempfile.TemporaryDirectory() as scratch:
            no_exec, no_shebang = os.path.join(scratch, "no_exec"), os.path.join(scratch, "no_shebang")
            for path, mode in ((no_exec, 0o644), (no_shebang, 0o755)):
                with open(path, "w") as f:
                    f.write("echo hi\n")
                os.chmod(path, mode)
            for cli, why in ((scratch, "is a directory"), (no_exec, "not executable"),
                             (no_shebang, "Exec format error")):
                run = subprocess.run([sys.executable, "-m", "jobviz"], capture_output=True, text=True,
                                     env=dict(os.environ, JOBVIZ_CLI=cli))
                self.assertEqual(run.returncode, 2, run.stderr)
                self.assertIn(why, run.stderr)
                self.assertNotIn("Traceback", run.stderr)
                self.assertNotIn("set JOBVIZ_CLI", run.stderr)

    def test_a_missing_library_is_named_clearly(self):
        env = dict(os.environ, JOBVIZ_LIBRARY="/nonexistent/libjobviz.so")
        result = subprocess.run([sys.executable, "-c", "import jobviz"], capture_output=True, text=True, env=env)
        self.assertNotEqual(result.returncode, 0)
        self.assertIn("cannot load libjobviz", result.stderr)
        self.assertIn("JOBVIZ_LIBRARY", result.stderr)


class InstalledPackageTest(unittest.TestCase):
    """`meson install` puts the package into site-packages under the prefix; it
    finds libjobviz next to itself, or through the loader's path."""

    def setUp(self):
        self.dest = tempfile.TemporaryDirectory(prefix="jobviz_install_")
        self.install_dir = os.path.normpath(PYTHON_INSTALL_DIR)
        subprocess.run(["meson", "install", "-C", BUILD_ROOT, "--destdir", self.dest.name, "--no-rebuild",
                        "--quiet"], check=True, capture_output=True)
        found = [root for root, dirs, files in os.walk(self.dest.name) if root.endswith(os.sep + "jobviz")
                 and "__init__.py" in files]
        self.assertEqual(len(found), 1, found)
        self.package = found[0]
        self.libs = [root for root, dirs, files in os.walk(self.dest.name) if "libjobviz.so.0" in files]

    def tearDown(self):
        self.dest.cleanup()

    def import_jobviz(self, **env):
        env = dict(os.environ, PYTHONPATH=os.path.dirname(self.package), **env)
        env.pop("JOBVIZ_LIBRARY", None)
        return subprocess.run([sys.executable, "-c", "import jobviz; print(jobviz.library_version())"],
                              capture_output=True, text=True, env=env, cwd=self.dest.name)

    def test_installed_where_the_configured_interpreter_reads(self):
        # py.get_install_dir() under --destdir, and on that interpreter's own sys.path.
        self.assertEqual(self.package, os.path.join(self.dest.name + self.install_dir, "jobviz"))
        path = subprocess.run([CONFIGURED_PYTHON, "-c", "import sys; print('\\n'.join(sys.path))"],
                              capture_output=True, text=True, check=True, env={"PATH": os.environ.get("PATH", "")})
        self.assertIn(self.install_dir, [os.path.normpath(p) for p in path.stdout.splitlines() if p])

    def test_found_through_the_loader_path(self):
        result = self.import_jobviz(LD_LIBRARY_PATH=self.libs[0])
        self.assertEqual(result.returncode, 0, result.stderr)

    def test_found_next_to_the_package(self):
        import shutil
        shutil.copy(os.path.join(self.libs[0], "libjobviz.so.0"), self.package)
        result = self.import_jobviz()
        self.assertEqual(result.returncode, 0, result.stderr)


if __name__ == "__main__":
    JOBVIZ_EXE = sys.argv.pop(1)
    BUILD_ROOT = sys.argv.pop(1)
    PYTHON_INSTALL_DIR = sys.argv.pop(1)
    CONFIGURED_PYTHON = sys.argv.pop(1)
    unittest.main(verbosity=2)
