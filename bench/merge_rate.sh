#!/usr/bin/env bash
# Records per second the coordinator merges from a stream of record batches on one core
# (issue 3: target 2,000,000 records/s). Runs bench/merge_bench.cc's cases in micro_benchmarks
# pinned to one CPU and prints each case's rate and, for the merge path with and without the
# records writer, whether the target is met. Exits 1 when a case fails, 0 otherwise (a missed
# target is printed, not an error: rates on a shared VM move from one minute to the next).
#
#   bench/merge_rate.sh              # BUILD_DIR=<repo>/build CPU=1 MIN_TIME=1 REPETITIONS=1
#   REPETITIONS=5 bench/merge_rate.sh  # median of five runs of each case
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${BUILD_DIR:-${root}/build}"
cpu="${CPU:-1}"
min_time="${MIN_TIME:-1}"
repetitions="${REPETITIONS:-1}"
target=2000000

fail() {
  echo "merge_rate: $*" >&2
  exit 1
}

[[ "${repetitions}" =~ ^[1-9][0-9]?$ ]] || fail "REPETITIONS must be a whole number in [1, 99]"
[[ "${min_time}" =~ ^[0-9]+(\.[0-9]+)?$ ]] || fail "MIN_TIME must be seconds, like 1 or 0.5"
command -v taskset >/dev/null || fail "taskset (util-linux) is needed to pin the benchmark"
command -v python3 >/dev/null || fail "python3 is needed to read the benchmark's JSON"

bin="${build}/bench/micro_benchmarks"
if [[ ! -f "${build}/CMakeCache.txt" ]]; then
  cmake -S "${root}" -B "${build}" -G Ninja -DCMAKE_BUILD_TYPE=Release \
    -DBARRAGE_BUILD_BENCH=ON >/dev/null
fi
# Rebuilds only what changed; a binary that exists is still usable when the tree does not build.
build_log="${build}/merge_rate_build.log"
if ! cmake --build "${build}" --target micro_benchmarks -- -j2 >"${build_log}" 2>&1; then
  [[ -x "${bin}" ]] || fail "building micro_benchmarks failed; see ${build_log}"
  echo "merge_rate: the build failed (${build_log}); using the existing binary" >&2
fi
build_type="$(sed -n 's/^CMAKE_BUILD_TYPE:[A-Z]*=//p' "${build}/CMakeCache.txt")"
[[ "${build_type}" == "Release" || "${build_type}" == "RelWithDebInfo" ]] ||
  echo "merge_rate: ${build} is a '${build_type:-no type}' build; rates need Release" >&2

work="$(mktemp -d "${TMPDIR:-/tmp}/barrage-merge-rate.XXXXXX")"
trap 'rm -rf "${work}"' EXIT
trap 'exit 130' INT TERM

args=(--benchmark_filter='^BM_Merge' --benchmark_min_time="${min_time}"
  --benchmark_format=console --benchmark_out="${work}/out.json" --benchmark_out_format=json)
if [[ "${repetitions}" -gt 1 ]]; then
  args+=(--benchmark_repetitions="${repetitions}" --benchmark_report_aggregates_only=true)
fi
echo "merge_rate: micro_benchmarks pinned to CPU ${cpu}, min time ${min_time} s," \
  "${repetitions} repetition(s)" >&2
TMPDIR="${work}" taskset -c "${cpu}" "${bin}" "${args[@]}" >"${work}/console" 2>&1 ||
  { sed 's/^/  | /' "${work}/console" >&2; fail "micro_benchmarks failed"; }

python3 - "${work}/out.json" "${target}" <<'PY'
import json
import sys

data = json.load(open(sys.argv[1]))
target = float(sys.argv[2])
repeated = any(b.get("run_type") == "aggregate" for b in data["benchmarks"])

rates = {}
errors = []
for bench in data["benchmarks"]:
    if bench.get("error_occurred"):
        errors.append(f'{bench["name"]}: {bench.get("error_message", "error")}')
        continue
    if repeated and bench.get("aggregate_name") != "median":
        continue
    name = bench.get("run_name", bench["name"])
    rates[name] = (bench["items_per_second"], bench.get("wire_bytes_per_record"),
                   bench.get("file_bytes_per_record"))

describe = {
    "BM_MergeOnMessage/no_writer": "OnMessage, no records writer",
    "BM_MergeOnMessage/jsonl_dev_null": "OnMessage + JSONL to /dev/null",
    "BM_MergeOnMessage/jsonl_file": "OnMessage + JSONL to a file",
    "BM_MergeWire/no_writer": "Parse + OnMessage, no writer",
    "BM_MergeWire/jsonl_dev_null": "Parse + OnMessage + JSONL /dev/null",
    "BM_MergeWire/jsonl_file": "Parse + OnMessage + JSONL file",
    "BM_MergePartParse": "part: AgentMessage::ParseFromString",
    "BM_MergePartDecode": "part: DecodeRecordBatch",
    "BM_MergePartRunStatsAdd": "part: RunStats::Add",
    "BM_MergePartWrite/jsonl_dev_null": "part: RecordsWriter JSONL /dev/null",
    "BM_MergePartWrite/jsonl_file": "part: RecordsWriter JSONL file",
    "BM_MergePartWrite/csv_dev_null": "part: RecordsWriter CSV /dev/null",
    "BM_MergePartWrite/csv_file": "part: RecordsWriter CSV file",
}
print(f'{"case":<40} {"records/s":>12} {"ns/record":>10} {"file B/rec":>10}  2M/s target')
for name, label in describe.items():
    if name not in rates:
        continue
    rate, _, file_bytes = rates[name]
    verdict = "" if name.startswith("BM_MergePart") else ("met" if rate >= target else "MISSED")
    size = f"{file_bytes:.0f}" if file_bytes else ""
    print(f"{label:<40} {rate:>12,.0f} {1e9 / rate:>10.1f} {size:>10}  {verdict}")
wire = next((w for _, w, _ in rates.values() if w), None)
if wire:
    print(f"wire size: {wire:.1f} bytes per record")

def verdict(name):
    if name not in rates:
        return "not measured"
    rate = rates[name][0]
    return f'{"met" if rate >= target else "MISSED"} ({rate / 1e6:.2f} M records/s)'

print()
print("coordinator merge path, without the records writer:",
      verdict("BM_MergeWire/no_writer"))
print("coordinator merge path, with --save-records (JSONL):",
      verdict("BM_MergeWire/jsonl_file"))
for error in errors:
    print("error:", error, file=sys.stderr)
sys.exit(1 if errors else 0)
PY
