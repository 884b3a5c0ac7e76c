#!/usr/bin/env python3
"""jobviz's native Perfetto protobuf trace, decoded by protoc (an independent
reader) against test/proto/perfetto_subset.proto, checked against the JSON
trace of the same run (whose times src/emit/perfetto_import_test.cc proves
exact): every job and step to the nanosecond, every name, arg, track, order,
flow and counter value; Perfetto's sequence rules (incremental state cleared
first, interned data before use, descriptors before their events), kept per
packet sequence; compressed_packets inflated with Python's zlib as Perfetto's
trace processor inflates them (each one a whole run of packets); gzip.

usage: check_pftrace.py JOBVIZ REPO_ROOT    (exits 77 without protoc)
"""
import codecs
import decimal
import gzip
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import zlib

PROTO_DIR = os.path.dirname(os.path.abspath(__file__))


def parse_text_format(text):
    """protoc's text format -> nested dicts of lists."""
    root, stack = {}, []
    node = root
    for raw in text.splitlines():
        line = raw.strip()
        if not line:
            continue
        if line == "}":
            node = stack.pop()
            continue
        if line.endswith("{"):
            child = {}
            node.setdefault(line[:-1].strip(), []).append(child)
            stack.append(node)
            node = child
            continue
        key, _, value = line.partition(": ")
        if re.fullmatch(r"\d+", key):
            raise SystemExit("field %s is not in the subset proto: jobviz wrote something unexpected" % key)
        if value.startswith('"'):
            value = codecs.escape_decode(value[1:-1].encode())[0].decode("utf-8")
        else:
            value = int(value)
        node.setdefault(key, []).append(value)
    return root


def one(node, key, default=None):
    values = node.get(key)
    return values[0] if values else default


def read_varint(data, at):
    value, shift = 0, 0
    while True:
        byte = data[at]
        at += 1
        value |= (byte & 0x7F) << shift
        shift += 7
        if byte < 0x80:
            return value, at


def packets_of(data):
    """The TracePacket payloads of a Trace (field 1, length-delimited, nothing else)."""
    at, packets = 0, []
    while at < len(data):
        tag, at = read_varint(data, at)
        assert tag == (1 << 3) | 2, "a Trace holds only packets (tag %d)" % tag
        size, at = read_varint(data, at)
        assert at + size <= len(data), "a packet runs past the end"
        packets.append(data[at:at + size])
        at += size
    return packets


def compressed_payload(packet):
    """The bytes of field 50 (compressed_packets) if that is all the packet holds."""
    tag, at = read_varint(packet, 0)
    if tag != (50 << 3) | 2:
        return None
    size, at = read_varint(packet, at)
    assert at + size == len(packet), "compressed_packets must be the packet's only field"
    return packet[at:]


def expand(raw):
    """The plain packet stream: every compressed_packets replaced by the packets it holds."""
    out, pieces = bytearray(), 0
    for packet in packets_of(raw):
        payload = compressed_payload(packet)
        inner = [packet] if payload is None else packets_of(zlib.decompress(payload))
        pieces += payload is not None
        for p in inner:
            assert compressed_payload(p) is None, "compressed packets inside compressed packets"
            out += b"\x0a" + encode_varint(len(p)) + p
    return bytes(out), pieces


def encode_varint(value):
    out = bytearray()
    while value >= 0x80:
        out.append(value & 0x7F | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


def decode(path):
    with open(path, "rb") as f:
        raw = f.read()
    subprocess.run(["protoc", "--decode_raw"], input=raw, check=True, capture_output=True)  # well-formed wire
    text = subprocess.run(["protoc", "-I", PROTO_DIR, "--decode=jobviz_test.Trace", "perfetto_subset.proto"],
                          input=raw, check=True, capture_output=True).stdout.decode()
    return parse_text_format(text).get("packet", [])


def import_like_perfetto(packets):
    """Tracks, slices, flows and counters, checking the sequence rules as Perfetto applies them:
    interned data belongs to its packet sequence, which must clear its incremental state first."""
    sequences = {}
    tracks, open_slices, slices, counters = {}, {}, [], []
    for packet in packets:
        sequence = one(packet, "trusted_packet_sequence_id")
        assert sequence is not None and sequence > 0
        if sequence not in sequences:
            assert one(packet, "sequence_flags") == 1, "a sequence's first packet must clear incremental state"
            sequences[sequence] = {"event_names": {}, "event_categories": {}, "debug_annotation_names": {}}
        interned = sequences[sequence]
        if "track_descriptor" in packet:
            d = packet["track_descriptor"][0]
            assert one(packet, "timestamp") is None
            tracks[one(d, "uuid")] = d
            continue
        for data in packet.get("interned_data", []):
            for kind in interned:
                for entry in data.get(kind, []):
                    interned[kind][one(entry, "iid")] = one(entry, "name")
        event = packet["track_event"][0]
        assert one(packet, "sequence_flags") == 2, "event packets use interned data"
        uuid = one(event, "track_uuid")
        assert uuid in tracks, "an event before its track's descriptor"
        ts = one(packet, "timestamp")
        kind = one(event, "type")
        if kind == 4:
            counters.append((tracks[uuid], ts, one(event, "counter_value")))
        elif kind == 1:
            args = {}
            for a in event.get("debug_annotations", []):
                iid = one(a, "name_iid")
                assert iid in interned["debug_annotation_names"], "debug annotation name %d used, never interned" % iid
                args[interned["debug_annotation_names"][iid]] = one(a, "int_value", one(a, "string_value"))
            s = {"track": uuid, "ts": ts, "name": interned["event_names"][one(event, "name_iid")],
                 "cat": [interned["event_categories"][i] for i in event.get("category_iids", [])],
                 "args": args, "flow_ids": event.get("flow_ids", []),
                 "terminating_flow_ids": event.get("terminating_flow_ids", [])}
            open_slices.setdefault(uuid, []).append(s)
        elif kind == 2:
            s = open_slices[uuid].pop()
            s["end"] = ts
            slices.append(s)
    assert all(not stack for stack in open_slices.values()), "slices left open"
    return tracks, slices, counters, len(sequences)


def json_nanos(origin, text):
    return origin + int(decimal.Decimal(text) * 1000)


def load_json_trace(path):
    with open(path) as f:
        text = f.read()
    trace = json.loads(text)
    root = trace["metadata"]["source_root"]
    if not root.endswith("_logs/"):
        raise SystemExit("%s: source_root %r is not the log directory" % (path, root))
    origin = trace["metadata"]["trace_origin_ns"]
    raw_ts = re.findall(r'"ts":([-0-9.]+)', text)
    raw_dur = iter(re.findall(r'"dur":([-0-9.]+)', text))
    events = trace["traceEvents"]
    assert len(raw_ts) == sum(1 for e in events if "ts" in e)
    ts_iter = iter(raw_ts)
    for e in events:
        if "ts" in e:
            e["ts_ns"] = json_nanos(origin, next(ts_iter))
        if "dur" in e:
            e["end_ns"] = e["ts_ns"] + int(decimal.Decimal(next(raw_dur)) * 1000)
    return events, root


def compare(json_events, root, tracks, slices, counters):
    failures = []
    names = {(e["pid"], e.get("tid")): e["args"] for e in json_events if e["ph"] == "M"
             and e["name"] in ("process_name", "thread_name")}
    thread_rank = {(e["pid"], e["tid"]): e["args"]["sort_index"] for e in json_events
                   if e["ph"] == "M" and e["name"] == "thread_sort_index"}
    process_rank = {e["pid"]: e["args"]["sort_index"] for e in json_events
                    if e["ph"] == "M" and e["name"] == "process_sort_index"}
    for d in tracks.values():
        if "process" in d:
            p = d["process"][0]
            if one(p, "pid") == 1 and p.get("process_labels") != ["source root " + root]:
                failures.append("the Steps process is labelled %s, not with the source root" % p.get("process_labels"))
            if one(p, "process_name") != names[(one(p, "pid"), None)]["name"]:
                failures.append("process %s named %r" % (one(p, "pid"), one(p, "process_name")))
            if one(d, "sibling_order_rank") != process_rank[one(p, "pid")] or one(d, "child_ordering") != 3:
                failures.append("process %s out of order" % one(p, "pid"))
        if "thread" in d:
            t = d["thread"][0]
            key = (one(t, "pid"), one(t, "tid"))
            if one(t, "thread_name") != names[key]["name"] or one(d, "sibling_order_rank") != thread_rank.get(key, 0):
                failures.append("thread %s named %r or out of order" % (key, one(t, "thread_name")))
    # By process and source: a what-if's replay has a copy of each job it moved, in a process of its own.
    jobs = {(e["pid"], e["args"]["source"]): e for e in json_events if e["ph"] == "X" and e["cat"] not in ("step", "critical_path")}
    # The critical-path row (analysed runs): the same slices in the same order on both.
    json_path = [(e["ts_ns"], e["end_ns"], e["name"], e["pid"], e["tid"], e["args"]["step"]) for e in json_events
                 if e["ph"] == "X" and e["cat"] == "critical_path"]
    proto_path = sorted((s["ts"], s["end"], s["name"], one(tracks[s["track"]]["thread"][0], "pid"),
                         one(tracks[s["track"]]["thread"][0], "tid"), s["args"]["step"]) for s in slices
                        if s["cat"] == ["critical_path"])
    if sorted(json_path) != proto_path:
        failures.append("critical path: %d slices in the JSON, %d in the protobuf, or they differ" % (len(json_path), len(proto_path)))
    steps = {e["name"]: e for e in json_events if e["ph"] == "X" and e["cat"] == "step"}
    # The JSON's hand-off arrows: a flow v1 event at its job's start, on its row.
    flow_at = {(e["pid"], e["tid"], e["ts_ns"]): (e["id"], e["ph"]) for e in json_events if e["ph"] in ("s", "t", "f")}
    seen = 0
    for s in slices:
        thread = tracks[s["track"]]["thread"][0]
        if s["cat"] == ["critical_path"]:
            continue
        if s["cat"] == ["step"]:
            e = steps[s["name"]]
        else:
            e = jobs[(one(thread, "pid"), s["args"]["source"])]
            seen += 1
            if s["args"] != e["args"] or s["cat"] != [e["cat"]]:
                failures.append("%s: args %s vs %s" % (e["args"]["source"], s["args"], e["args"]))
            flow = flow_at.get((e["pid"], e["tid"], e["ts_ns"]))  # (id, phase) of the JSON's flow event on this job
            got = s["flow_ids"] or s["terminating_flow_ids"]
            if (flow is None) != (not got) or (flow is not None and (got != [flow[0]] or
                                                                    bool(s["flow_ids"]) != (flow[1] != "f"))):
                failures.append("%s: flows %s/%s vs the JSON's flow event %s" % (e["args"]["source"], s["flow_ids"],
                                                                             s["terminating_flow_ids"], flow))
        if (s["ts"], s["end"], s["name"]) != (e["ts_ns"], e["end_ns"], e["name"]):
            failures.append("%s: %s..%s vs %s..%s" % (s["name"], s["ts"], s["end"], e["ts_ns"], e["end_ns"]))
        if (one(thread, "pid"), one(thread, "tid")) != (e["pid"], e["tid"]):
            failures.append("%s on the wrong track" % s["name"])
    if seen != len(jobs):
        failures.append("%d jobs in the protobuf, %d in the JSON" % (seen, len(jobs)))
    json_counter = [(e["ts_ns"], e["args"]["workers"]) for e in json_events if e["ph"] == "C"]
    if [(ts, v) for _, ts, v in counters] != json_counter or any(one(d, "name") != "busy workers" for d, _, _ in counters):
        failures.append("counter differs")
    return failures


def run(jobviz, logs, out, threads, extra):
    subprocess.run([jobviz, "--log_dir", logs, "--no-chrome", "-q", "-j", str(threads), "-o", out] + extra, check=True)


def generated_logs(jobviz, scratch):
    """A run big enough for several sequences of several compressed pieces each."""
    gen = os.path.join(os.path.dirname(jobviz), "tools", "jobviz-gen-logs")
    logs = os.path.join(scratch, "generated")
    subprocess.run([gen, "--out", logs, "--machines", "2", "--workers", "8", "--microbatches", "16", "--steps", "10",
                    "--nvtx", "--seed", "3"], check=True, stdout=subprocess.DEVNULL)
    return logs


def main():
    jobviz, root = os.path.abspath(sys.argv[1]), sys.argv[2]
    if not shutil.which("protoc"):
        print("protoc is not installed (Debian: protobuf-compiler); skipped")
        sys.exit(77)
    failures = []
    with tempfile.TemporaryDirectory(prefix="jobviz_pftrace_") as scratch:
        multi = ["--multi_machine"]
        cases = [("multi_machine_logs", os.path.join(root, "sample_logs", "multi_machine_logs"), 2, multi),
                 ("stage_order", os.path.join(root, "test/fixtures/skewed"), 1, multi),
                 ("generated", generated_logs(jobviz, scratch), 1, multi),
                 # several runs in one log: steps and jobs carry a "run" arg
                 ("appended_runs", os.path.join(root, "test/fixtures/appended_runs"), 1, ["--run", "all"]),
                 # hybrid parallel: row names with stage, mp and replica; --rows stage makes a process per
                 # stage whose rows come from several machines (dp2 x pp2: each machine one replica)
                 ("hybrid", os.path.join(root, "test/fixtures/hybrid/mp2sharding4pp4_skewed"), 2, multi),
                 ("hybrid_rows_stage", os.path.join(root, "test/fixtures/hybrid/dp2pp2"), 2, multi + ["--rows", "stage"]),
                 # the critical path's row and arg come from the analysis when it runs (here for the
                 # summary), from FindCriticalPaths otherwise (every case above): the same paths
                 ("critical_path", os.path.join(root, "test/fixtures/hybrid/mp2sharding4pp4_skewed"), 2,
                  multi + ["--summary-json", os.path.join(scratch, "critical_summary.json")]),
                 ("no_critical_path", os.path.join(root, "test/fixtures/hybrid/dp2pp2"), 2, multi + ["--no-critical-path"]),
                 # a what-if's replay as a process of its own (drawn whenever --what-if names one)
                 ("what_if", os.path.join(root, "test/fixtures/hybrid/mp2sharding4pp4_skewed"), 2,
                  multi + ["--what-if", "free_hand_offs"]),
                 # a run that stopped: the watchdog's job that never ended, open to its log's end
                 ("in_flight", os.path.join(root, "test/fixtures/stopped/worker_in_flight"), 1, multi)]
        for name, source, threads, extra in cases:
            logs = os.path.join(scratch, name + "_logs")
            shutil.copytree(source, logs, ignore=shutil.ignore_patterns("pipeline_profile*"))
            for out in ("t.json", "t.pftrace", "t.pftrace.gz"):  # the JSON with all the args the protobuf has
                run(jobviz, logs, os.path.join(scratch, name + out), threads, extra + ["--json-args", "full"] * (out == "t.json"))
            with open(os.path.join(scratch, name + "t.pftrace"), "rb") as f:
                packed = f.read()
            plain, pieces = expand(packed)
            with gzip.open(os.path.join(scratch, name + "t.pftrace.gz")) as f:
                if f.read() != plain:
                    failures.append(name + ": the .gz does not hold the packets the .pftrace compresses")
            if pieces == 0 or any(compressed_payload(p) is None for p in packets_of(packed)):
                failures.append(name + ": the .pftrace is not all compressed_packets")
            plain_path = os.path.join(scratch, name + "plain.pftrace")
            with open(plain_path, "wb") as f:
                f.write(plain)
            tracks, slices, counters, sequences = import_like_perfetto(decode(plain_path))
            problems = compare(*load_json_trace(os.path.join(scratch, name + "t.json")), tracks, slices, counters)
            failures += [name + ": " + p for p in problems[:20]]
            print("%s: %d slices, %d tracks, %d counter values checked; %d sequences, %d compressed pieces "
                  "(%d bytes, %d plain)" % (name, len(slices), len(tracks), len(counters), sequences, pieces,
                                            len(packed), len(plain)))
            marked = sum(1 for s in slices if s["args"].get("critical_path") == 1)
            path_slices = sum(1 for s in slices if s["cat"] == ["critical_path"])
            if (name not in ("no_critical_path", "in_flight")) != (marked > 0 and path_slices > 0):
                failures.append("%s: %d jobs marked on a critical path, %d slices on its row" % (name, marked, path_slices))
            open_slices = sum(1 for s in slices if s["cat"] == ["in_flight"])
            if (name == "in_flight") != (open_slices > 0):
                failures.append("%s: %d open slices of jobs that never ended" % (name, open_slices))
            if name == "generated" and (sequences < 3 or pieces <= sequences):
                failures.append("generated: wanted several sequences, one with several pieces")
    for failure in failures:
        print("FAIL:", failure)
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
