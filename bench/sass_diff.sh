#!/usr/bin/env bash
# bench/sass_diff.sh LIB_A LIB_B KERNEL_SUBSTRING — on the GPU machine (cuobjdump):
# the instruction-kind histograms of one kernel in two builds, and where they differ.
# For A/B changes that should not touch a kernel's inner loop (or should, by so much).
set -euo pipefail
for v in A B; do
  lib=$1; [ "$v" = B ] && lib=$2
  cuobjdump -sass "$lib" 2>/dev/null | awk -v k="$3" '/Function :/ {on = index($0, k) > 0} on' >"/tmp/sass_fun_$v.txt"
  grep -oE "^\s+/\*[0-9a-f]{4}\*/\s+(@!?U?P[0-9T] )?[A-Z0-9_.]+" "/tmp/sass_fun_$v.txt" | awk '{print $NF}' |
    sed 's/\..*//' | sort | uniq -c | awk '{print $2, $1}' | sort >"/tmp/sass_hist_$v.txt"
  echo "$v ($lib): $(grep -cE '^\s+/\*[0-9a-f]{4}\*/' "/tmp/sass_fun_$v.txt") instructions"
done
echo "kind A B (where they differ)"
join -a1 -a2 -e0 -o 0,1.2,2.2 /tmp/sass_hist_A.txt /tmp/sass_hist_B.txt | awk '$2 != $3'
