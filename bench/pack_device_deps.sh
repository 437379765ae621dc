#!/usr/bin/env bash
# bench/pack_device_deps.sh — fill the gitignored .devdeps/ with what the GPU
# machine lacks for a tessel build: oneTBB (headers, shared libraries, CMake
# package), xsimd (headers, CMake package) and the GoogleTest sources; and the
# Python package's build and test tools as wheels (.devdeps/wheels, from PyPI).
#
# Run it on the development machine, from anywhere; it copies the files of this
# machine's installed Debian packages (libtbb-dev, libxsimd-dev, googletest /
# libgtest-dev); only the wheels are downloaded (pip download). The copy keeps Debian's layout under
# .devdeps/usr, so the packages' own CMake configs (which compute their prefix
# from their own location, four folders up) work unchanged with
#   -DCMAKE_PREFIX_PATH=$PWD/.devdeps/usr
#   -DTESSEL_GTEST_SOURCE_DIR=$PWD/.devdeps/googletest
# bench/device.sh does exactly that on the device machine.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
dst=$root/.devdeps
multiarch=$(dpkg-architecture -qDEB_HOST_MULTIARCH 2>/dev/null || gcc -print-multiarch)
lib=usr/lib/$multiarch

need() {
  dpkg -s "$1" >/dev/null 2>&1 || { echo "pack_device_deps: Debian package '$1' is not installed here" >&2; exit 1; }
}
need libtbb-dev
need libxsimd-dev
[ -f /usr/src/googletest/CMakeLists.txt ] || { echo "pack_device_deps: /usr/src/googletest is missing (apt install googletest)" >&2; exit 1; }

rm -rf "$dst/usr" "$dst/googletest"
mkdir -p "$dst/usr/include" "$dst/$lib/cmake"

# oneTBB: headers, every library its CMake package names (it checks that they exist), the package.
cp -a /usr/include/tbb /usr/include/oneapi "$dst/usr/include/"
cp -a /$lib/libtbb*.so* "$dst/$lib/"
cp -a /$lib/cmake/TBB "$dst/$lib/cmake/"

# xsimd: header-only.
cp -a /usr/include/xsimd "$dst/usr/include/"
cp -a /$lib/cmake/xsimd "$dst/$lib/cmake/"

# GoogleTest sources (googletest + googlemock), built by the tests with add_subdirectory.
cp -a /usr/src/googletest "$dst/googletest"

# Python: the package's build and test tools as wheels, for bench/device.sh's
# python step (the device reaches no package index; its PyTorch environment
# brings numpy). ml_dtypes is binary: one wheel per likely Python version.
if command -v pip >/dev/null; then
  rm -rf "$dst/wheels"
  pip download -q --no-deps -d "$dst/wheels" scikit-build-core nanobind pytest packaging pathspec iniconfig pluggy pygments \
    exceptiongroup tomli typing_extensions
  for v in 3.10 3.11 3.12 3.13; do
    pip download -q --no-deps --only-binary=:all: --python-version "$v" --platform manylinux2014_x86_64 \
      -d "$dst/wheels" ml_dtypes
  done
else
  echo "pack_device_deps: no pip here: the device's python step will have no wheels" >&2
fi

# Check that both packages are relocatable: configure a tiny project against the copy only.
probe=$(mktemp -d)
trap 'rm -rf "$probe"' EXIT
cat >"$probe/CMakeLists.txt" <<'CM'
cmake_minimum_required(VERSION 3.16)
project(probe LANGUAGES CXX)
find_package(TBB REQUIRED)
find_package(xsimd REQUIRED)
get_target_property(tbb_inc TBB::tbb INTERFACE_INCLUDE_DIRECTORIES)
get_target_property(tbb_lib TBB::tbb IMPORTED_LOCATION_NONE)
get_target_property(xs_inc xsimd INTERFACE_INCLUDE_DIRECTORIES)
message(STATUS "probe: TBB include ${tbb_inc}, library ${tbb_lib}, xsimd include ${xs_inc}")
foreach(p IN ITEMS "${tbb_inc}" "${tbb_lib}" "${xs_inc}")
  string(FIND "${p}" "${DEVDEPS}" at)
  if(NOT at EQUAL 0)
    message(FATAL_ERROR "probe: ${p} is outside ${DEVDEPS}: the package is not relocatable")
  endif()
endforeach()
CM
cmake -S "$probe" -B "$probe/build" -DCMAKE_PREFIX_PATH="$dst/usr" -DCMAKE_FIND_USE_CMAKE_SYSTEM_PATH=OFF \
  -DDEVDEPS="$dst" >"$probe/log" 2>&1 || { cat "$probe/log"; exit 1; }
grep "probe:" "$probe/log"
du -sh "$dst"
