#!/usr/bin/env bash
# THE test command: installs dependencies, builds everything and runs every test.
# Works from any directory; exits non-zero on any failure.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${root}/build"

bash "${root}/scripts/install-deps.sh"
cmake -S "${root}" -B "${build}" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo
cmake --build "${build}"
# Serial on purpose: the integration tests measure timing and throughput. 300 s is a bound
# per test for tests that set no TIMEOUT of their own.
ctest --test-dir "${build}" --output-on-failure --timeout 300
