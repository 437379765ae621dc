#!/usr/bin/env bash
# scripts/deps.sh [cpu|cpu-sanitize|cuda|hip|python]... — make sure the Debian packages tessel needs are
# present. As root, installs what is missing (apt-get); otherwise names the
# missing packages and the command to install them, and fails. The optional
# ccache (scripts/test.sh's builds share their identical C/C++ compilations
# through it) is installed alongside as root; its absence never fails this.
set -euo pipefail
want=(cmake g++ make ninja-build libtbb-dev libxsimd-dev libgtest-dev libopenblas-dev pkg-config)
for b in "$@"; do
  case "$b" in
    cpu) ;;
    cpu-sanitize) want+=(clang-15) ;;  # its compiler; pulls libclang-common-15-dev (the sanitizer runtimes)
    hip) want+=(hipcc) ;;  # pulls clang-15, lld-15, rocm-device-libs, libamdhip64-dev
    cuda) ;;               # the CUDA Toolkit is not a Debian 12 package here: nvcc must be on PATH
    python) want+=(python3-venv python3-dev) ;;  # pip, nanobind, numpy, ... then come from PyPI
    *) echo "deps.sh: unknown backend '$b' (expected cpu, cpu-sanitize, cuda, hip or python)" >&2; exit 2 ;;
  esac
done
installed() { dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q "install ok installed"; }
missing=() optional=()
for p in "${want[@]}"; do installed "$p" || missing+=("$p"); done
installed ccache || optional+=(ccache)
if ((${#missing[@]})) && [ "$(id -u)" != 0 ]; then
  echo "deps.sh: missing Debian packages: ${missing[*]}" >&2
  echo "deps.sh: install them with: sudo apt-get install ${missing[*]}" >&2
  exit 1
fi
if [ "$(id -u)" = 0 ] && ((${#missing[@]} + ${#optional[@]})); then
  echo "deps.sh: installing ${missing[*]} ${optional[*]:+(optional: ${optional[*]})}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq || ((${#missing[@]} == 0))  # (offline, only the optional missing: go on)
  ((${#missing[@]} == 0)) || apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
  ((${#optional[@]} == 0)) || apt-get install -y -qq --no-install-recommends "${optional[@]}" >/dev/null ||
    echo "deps.sh: ${optional[*]} could not be installed; the builds go on without it" >&2
fi
for b in "$@"; do
  if [ "$b" = cuda ] && ! command -v nvcc >/dev/null; then
    if [ -x /usr/local/cuda/bin/nvcc ]; then
      echo "deps.sh: nvcc is not on PATH; add /usr/local/cuda/bin to PATH" >&2
    else
      echo "deps.sh: the CUDA backend needs the CUDA Toolkit (nvcc), which is not installed" >&2
    fi
    exit 1
  fi
done
