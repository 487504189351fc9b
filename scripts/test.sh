#!/usr/bin/env bash
# Installs what is missing, builds, then runs the whole CTest suite; non-zero on any failure.
# Extra arguments go to ctest (e.g. scripts/test.sh -R config/ or -L rtl).
set -eo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/setup.sh"
tpusim_build
export SYSTEMC_DISABLE_COPYRIGHT_MESSAGE=1
cd "$TPUSIM_BUILD"
exec ctest --output-on-failure --timeout 600 -j "$(nproc)" "$@"
