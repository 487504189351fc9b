#!/usr/bin/env bash
# Installs what is missing, builds, then runs the whole CTest suite; non-zero on any failure.
# Extra arguments go to ctest (e.g. scripts/test.sh -R config/ or -L rtl; -L slow for the slow ones).
set -eo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/setup.sh"
tpusim_install_missing "${tpusim_test_packages[@]}"
tpusim_build
export SYSTEMC_DISABLE_COPYRIGHT_MESSAGE=1
cd "$TPUSIM_BUILD"
# Tests labelled `slow` (a cheaper test covers the same path) run only when asked for: -L slow.
exclude=(-LE slow)
for arg in "$@"; do [ "$arg" = -L ] && exclude=(); done
exec ctest --output-on-failure --timeout 600 -j "$(nproc)" "${exclude[@]}" "$@"
