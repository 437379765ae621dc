#!/usr/bin/env python3
"""check_isa.py — asserts, from the machine code, that tessel's HIP GEMM kernels
run their main loop on MFMA and use no scratch memory.

For every object file given that carries a .hip_fatbin section, and for every
--arch, the device code object is unbundled and read:
  * llvm-readelf --notes (the AMDGPU metadata): per kernel .private_segment_fixed_size
    must be 0, .vgpr_spill_count 0, .uses_dynamic_stack false;
  * llvm-objdump -d: no scratch_* instruction and no buffer_load/buffer_store
    (the only buffer accesses a HIP kernel emits are spills to scratch);
  * for the bf16 / fp16 GEMM kernels: the chip's own MFMA mnemonic
    (gfx90a v_mfma_f32_32x32x8bf16_1k / v_mfma_f32_32x32x8f16, gfx940+
    v_mfma_f32_32x32x8_bf16 / v_mfma_f32_32x32x8_f16) appears, every MFMA
    instruction lies in a basic block inside a loop of the control flow graph,
    that loop is the K loop (below), and it holds at least --mfma-per-iteration
    MFMAs.
The control flow graph is rebuilt from the disassembly: blocks start at branch
targets and after branches; s_branch jumps, s_cbranch_* jumps or falls through,
s_endpgm / s_setpc end a block with no known successor. Loops are the natural
loops of its back edges; "the K loop" is the innermost loop around the MFMAs,
which must hold an s_barrier and LDS reads and contain no inner loop with an
s_barrier (an outer loop, e.g. over batch entries, does not count).

Exit status 0 only if every check passed for every kernel; every failure is
printed. Standard library only.
"""
import argparse
import os
import re
import subprocess
import sys
import tempfile

# The MFMA each chip must run, by input type: (opcode, the names llvm-objdump
# may print for it). The opcode (bits 31..16 of the first encoding dword)
# is what identifies the instruction: llvm-objdump-15 prints the gfx940 f16
# MFMA, whose encoding is the gfx90a one, under its gfx90a name (and then shows
# its VGPR operands as a[...]; bit 15, acc_cd, tells the truth).
_CDNA3 = {"bf16": (0xD3E0, ("v_mfma_f32_32x32x8_bf16",)),
          "fp16": (0xD3CC, ("v_mfma_f32_32x32x8_f16", "v_mfma_f32_32x32x8f16"))}
MFMA = {
    "gfx90a": {"bf16": (0xD3E6, ("v_mfma_f32_32x32x8bf16_1k",)),
               "fp16": (0xD3CC, ("v_mfma_f32_32x32x8f16",))},
    "gfx940": _CDNA3, "gfx941": _CDNA3, "gfx942": _CDNA3,
}
ACC_CD = 0x8000  # C/D in AGPRs

# gemm_stages<cdna_policy, TIn, ...> (the GEMM pipeline kernel): the input type from the mangled name.
INPUT_TYPE = [("bf16", re.compile(r"cdna_policyENS_4bf16E")),
              ("fp16", re.compile(r"cdna_policyENS_4fp16E")),
              ("fp32", re.compile(r"cdna_policyEf"))]

INSN = re.compile(r"^\s+([a-z][a-z0-9_]*)(.*?)\s*//\s*([0-9A-Fa-f]+):\s*([0-9A-Fa-f]{8})")
FUNC = re.compile(r"^[0-9A-Fa-f]+ <([^>]+)>:$")


def run(cmd):
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if p.returncode != 0:
        raise SystemExit("check_isa: command failed (%d): %s\n%s" % (p.returncode, " ".join(cmd), p.stderr))
    return p.stdout


def parse_notes(text):
    """kernel name -> {field: value} from the AMDGPU metadata YAML (flat fields only)."""
    kernels, cur = {}, None
    for line in text.splitlines():
        m = re.match(r"^\s*-?\s*\.(name|vgpr_count|agpr_count|sgpr_count|vgpr_spill_count|sgpr_spill_count|"
                     r"private_segment_fixed_size|uses_dynamic_stack|group_segment_fixed_size):\s+(\S+)", line)
        if not m:
            continue
        key, val = m.group(1), m.group(2)
        if line.lstrip().startswith("- ."):  # first field of a new kernel entry
            cur = {}
        if cur is None:
            cur = {}
        cur[key] = val
        if key == "name":
            kernels[val] = cur
    return kernels


def parse_functions(text):
    """function name -> list of (address, mnemonic, operands, first encoding dword)."""
    funcs, cur = {}, None
    for line in text.splitlines():
        m = FUNC.match(line.strip())
        if m:
            cur = funcs.setdefault(m.group(1), [])
            continue
        m = INSN.match(line)
        if m and cur is not None:
            cur.append((int(m.group(3), 16), m.group(1), m.group(2).strip(), int(m.group(4), 16)))
    return funcs


def is_branch(mn):
    return mn == "s_branch" or mn.startswith("s_cbranch_")


def is_terminator(mn):
    return is_branch(mn) or mn in ("s_endpgm", "s_setpc_b64", "s_trap")


def branch_target(insns, i):
    addr, mn, ops, _ = insns[i]
    imm = int(ops.split()[0], 0)
    if imm >= 0x8000:
        imm -= 0x10000
    nxt = insns[i + 1][0] if i + 1 < len(insns) else addr + 4
    return nxt + 4 * imm


def build_cfg(insns):
    """Basic blocks as (start index, end index exclusive) and successor lists."""
    index_of = {a: i for i, (a, _, _, _) in enumerate(insns)}
    leaders = {0}
    for i, (a, mn, _, _) in enumerate(insns):
        if is_branch(mn):
            t = branch_target(insns, i)
            if t not in index_of:
                raise SystemExit("check_isa: branch at 0x%x to 0x%x: not an instruction boundary" % (a, t))
            leaders.add(index_of[t])
        if is_terminator(mn) and i + 1 < len(insns):
            leaders.add(i + 1)
    starts = sorted(leaders)
    blocks = [(s, starts[k + 1] if k + 1 < len(starts) else len(insns)) for k, s in enumerate(starts)]
    block_of = {s: k for k, (s, _) in enumerate(blocks)}
    succ = []
    for k, (s, e) in enumerate(blocks):
        last = e - 1
        mn = insns[last][1]
        out = []
        if is_branch(mn):
            out.append(block_of[index_of[branch_target(insns, last)]])
        if not (mn == "s_branch" or mn in ("s_endpgm", "s_setpc_b64", "s_trap")) and k + 1 < len(blocks):
            out.append(k + 1)
        succ.append(out)
    return blocks, succ


def natural_loops(n, succ):
    """Loops of the CFG as sets of blocks: for every back edge u -> h found by a
    depth-first walk from the entry (h on the walk's stack), h plus every block
    that reaches u without passing through h; loops sharing a header merge."""
    pred = [[] for _ in range(n)]
    for u in range(n):
        for v in succ[u]:
            pred[v].append(u)
    state = [0] * n  # 0 unseen, 1 on stack, 2 done
    back = []
    work = [(0, 0)]
    state[0] = 1
    while work:
        u, i = work.pop()
        if i < len(succ[u]):
            work.append((u, i + 1))
            v = succ[u][i]
            if state[v] == 0:
                state[v] = 1
                work.append((v, 0))
            elif state[v] == 1:
                back.append((u, v))
        else:
            state[u] = 2
    loops = {}
    for u, h in back:
        body = loops.setdefault(h, {h})
        todo = [u]
        while todo:
            x = todo.pop()
            if x in body:
                continue
            body.add(x)
            todo.extend(pred[x])
    return list(loops.values())


def check_kernel(arch, name, insns, notes, min_mfma, errors, report):
    def fail(msg):
        errors.append("%s %s: %s" % (arch, name, msg))

    meta = notes.get(name)
    if meta is None:
        fail("no AMDGPU metadata entry")
        meta = {}
    if meta.get("private_segment_fixed_size") != "0":
        fail(".private_segment_fixed_size is %s, expected 0 (scratch in use)" % meta.get("private_segment_fixed_size"))
    if meta.get("vgpr_spill_count") != "0":
        fail(".vgpr_spill_count is %s, expected 0" % meta.get("vgpr_spill_count"))
    if meta.get("uses_dynamic_stack", "false") != "false":
        fail(".uses_dynamic_stack is %s" % meta.get("uses_dynamic_stack"))
    for a, mn, ops, _ in insns:
        if mn.startswith("scratch_") or mn.startswith("buffer_load") or mn.startswith("buffer_store"):
            fail("scratch access at 0x%x: %s %s" % (a, mn, ops))
            break

    kind = next((k for k, rx in INPUT_TYPE if rx.search(name)), None)
    mfmas = [i for i, x in enumerate(insns) if x[1].startswith("v_mfma")]
    line = "%s %-6s vgpr %s agpr %s sgpr %s (sgpr spills to VGPR lanes %s) scratch %s" % (
        arch, kind, meta.get("vgpr_count"), meta.get("agpr_count"), meta.get("sgpr_count"),
        meta.get("sgpr_spill_count"), meta.get("private_segment_fixed_size"))
    if kind not in ("bf16", "fp16"):
        report.append(line + ", %d mfma (scalar path)" % len(mfmas))
        return
    opcode, names = MFMA[arch][kind]
    want = names[0]

    def is_want(i):
        return insns[i][3] >> 16 == opcode and insns[i][1] in names

    wrong = sorted({"%s (opcode 0x%04X)" % (insns[i][1], insns[i][3] >> 16) for i in mfmas if not is_want(i)})
    if wrong:
        fail("MFMA instructions %s, expected only %s (opcode 0x%04X)" % (wrong, want, opcode))
    if not any(is_want(i) for i in mfmas):
        fail("no %s instruction at all" % want)
        return
    in_agpr = sum(1 for i in mfmas if insns[i][3] & ACC_CD)
    blocks, succ = build_cfg(insns)
    block_at = [0] * len(insns)
    for k, (s, e) in enumerate(blocks):
        for i in range(s, e):
            block_at[i] = k
    loops = natural_loops(len(blocks), succ)

    def has(body, pred):
        return any(pred(i) for k in body for i in range(*blocks[k]))

    def barrier(i):
        return insns[i][1] == "s_barrier"

    outside = [insns[i][0] for i in mfmas if not any(block_at[i] in L for L in loops)]
    if outside:
        fail("%d MFMA instruction(s) outside any loop, first at 0x%x" % (len(outside), outside[0]))
    # The K loop: the innermost loop around each MFMA must hold a barrier and
    # LDS reads, and no loop nested in it may hold a barrier (else the MFMA sits
    # in an outer loop, e.g. over batches, not in the K loop).
    best = 0
    for i in mfmas:
        around = [L for L in loops if block_at[i] in L]
        if not around:
            continue
        inner = min(around, key=len)
        nested_barrier = any(L < inner and has(L, barrier) for L in loops)
        if not has(inner, barrier) or not has(inner, lambda j: insns[j][1].startswith("ds_read")):
            fail("MFMA at 0x%x: its innermost loop has no s_barrier / LDS read (not the K loop)" % insns[i][0])
            break
        if nested_barrier:
            fail("MFMA at 0x%x: its innermost loop contains another loop with an s_barrier (MFMA outside the K loop)"
                 % insns[i][0])
            break
        best = max(best, sum(1 for k in inner for j in range(*blocks[k]) if is_want(j)))
    if best < min_mfma:
        fail("the K loop holds %d %s, expected at least %d" % (best, want, min_mfma))
    report.append(line + ", %d %s (%d with C/D in AGPRs), %d in the K loop" % (len(mfmas), want, in_agpr, best))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("objects", nargs="+", help="object files (those with .hip_fatbin are checked)")
    ap.add_argument("--arch", action="append", required=True, help="gfx90a, gfx940, ... (repeatable)")
    ap.add_argument("--objcopy", default="objcopy")
    ap.add_argument("--bundler", default="clang-offload-bundler")
    ap.add_argument("--objdump", default="llvm-objdump")
    ap.add_argument("--readelf", default="llvm-readelf")
    ap.add_argument("--kernel-regex", default=r"gemm_stages", help="kernels to check (others are ignored)")
    ap.add_argument("--expect-kernels", type=int, default=1, help="minimum number of matching kernels per arch")
    ap.add_argument("--mfma-per-iteration", type=int, default=1,
                    help="MFMAs the K loop of a bf16/fp16 kernel must hold at least")
    args = ap.parse_args()

    errors, report, checked = [], [], 0
    kernel_rx = re.compile(args.kernel_regex)
    with tempfile.TemporaryDirectory() as tmp:
        for obj in args.objects:
            fat = os.path.join(tmp, "fatbin")
            run([args.objcopy, "-O", "binary", "--only-section=.hip_fatbin", obj, fat])
            if not os.path.exists(fat) or os.path.getsize(fat) == 0:
                continue
            bundles = run([args.bundler, "--type=o", "--input=" + fat, "--list"]).split()
            for arch in args.arch:
                if arch not in MFMA:
                    raise SystemExit("check_isa: no MFMA table for %s" % arch)
                target = "hipv4-amdgcn-amd-amdhsa--" + arch
                if target not in bundles:
                    errors.append("%s: no %s code object (bundles: %s)" % (obj, arch, ", ".join(bundles)))
                    continue
                co = os.path.join(tmp, arch + ".co")
                run([args.bundler, "--type=o", "--input=" + fat, "--targets=" + target, "--output=" + co, "--unbundle"])
                notes = parse_notes(run([args.readelf, "--notes", co]))
                funcs = parse_functions(run([args.objdump, "-d", "--mcpu=" + arch, co]))
                names = [n for n in funcs if kernel_rx.search(n)]
                if len(names) < args.expect_kernels:
                    errors.append("%s %s: %d kernels match /%s/, expected at least %d" %
                                  (obj, arch, len(names), args.kernel_regex, args.expect_kernels))
                for n in sorted(names):
                    check_kernel(arch, n, funcs[n], notes, args.mfma_per_iteration, errors, report)
                    checked += 1
    for line in sorted(set(report)):
        print("  %2d kernels: %s" % (report.count(line), line))
    if checked == 0:
        errors.append("no kernel was checked: no object with a .hip_fatbin section among %s" % args.objects)
    if errors:
        print("check_isa: FAILED (%d problem(s)):" % len(errors))
        for e in errors:
            print("  " + e)
        return 1
    print("check_isa: OK: %d kernels, MFMA in the K loop, no scratch" % checked)
    return 0


if __name__ == "__main__":
    sys.exit(main())
