# Sourced by scripts/tpusim and scripts/test.sh: installs the Debian packages tpusim needs that
# are missing (nothing when all are present), then configures build/ once and builds it
# incrementally (Ninja rebuilds only what changed; ccache makes rebuilds after a clean cheap).

TPUSIM_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
TPUSIM_BUILD="${TPUSIM_BUILD:-$TPUSIM_ROOT/build}"

tpusim_packages=(
  cmake ninja-build ccache g++ pkg-config
  libsystemc-dev verilator libyaml-cpp-dev libspdlog-dev catch2 libcli11-dev nlohmann-json3-dev
  python3 python3-matplotlib python3-numpy python3-yaml
)
# Only the tests use these (scripts/test.sh installs them too).
tpusim_test_packages=(
  nodejs  # runs the --show HTML page's script in tests/sim/test_show.cpp
  chromium  # opens the --show HTML page headless in tests/sim/test_browser.cpp (~120 MB download)
)

# tpusim_install_missing [PACKAGE...]: installs those missing (default: tpusim_packages).
tpusim_install_missing() {
  local missing=() p
  [ $# -gt 0 ] || set -- "${tpusim_packages[@]}"
  for p in "$@"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
  done
  [ ${#missing[@]} -eq 0 ] && return 0
  local sudo=""
  [ "$(id -u)" -ne 0 ] && sudo="sudo"
  echo "tpusim: installing missing packages: ${missing[*]}" >&2
  $sudo apt-get update -qq >&2
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends \
    "${missing[@]}" >&2
}

# tpusim_build [TARGET...]: builds the given targets (default: everything, tests included).
tpusim_build() {
  mkdir -p "$TPUSIM_BUILD"
  local log="$TPUSIM_BUILD/build.log"
  if [ ! -f "$TPUSIM_BUILD/build.ninja" ]; then
    echo "tpusim: configuring $TPUSIM_BUILD (Release, Ninja, ccache)" >&2
    if ! cmake -S "$TPUSIM_ROOT" -B "$TPUSIM_BUILD" -G Ninja -DCMAKE_BUILD_TYPE=Release >"$log" 2>&1; then
      cat "$log" >&2
      echo "tpusim: configure failed (log: $log)" >&2
      return 1
    fi
  fi
  local targets=()
  [ $# -gt 0 ] && targets=(--target "$@")
  [ -f "$TPUSIM_BUILD/.ninja_log" ] || echo "tpusim: first build (a few minutes on 2 cores)" >&2
  if ! cmake --build "$TPUSIM_BUILD" "${targets[@]}" >"$log" 2>&1; then
    grep -v '^\[' "$log" | tail -n 60 >&2
    echo "tpusim: build failed (full log: $log)" >&2
    return 1
  fi
}

tpusim_install_missing
