#!/usr/bin/env bash
# Host emulation of kernels/pfsp/ig-warp.cu: one warp as 32 std::threads (shuffles, ballots and
# __syncwarp through a barrier), to check the kernel's logic against the CPU reference
# (solvers::pfsp::ig_warp) on a machine without a GPU. Slow (minutes), so not part of CI.
# Usage: scripts/pfsp-igw-emulate/build.sh N M WIDE SHARED_TABLES  -> /tmp/igw-emu/emu_N_M_WIDE_SHARED
# then copy compare.rs.txt to solvers/tests/igw_emu.rs (it runs /tmp/igw-emu/emu_20_5_0_1 and
# emu_12_40_1_0, both with and without a hard stop) and `cargo test -p mats-solvers --test igw_emu`.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
kernel=$here/../../kernels/pfsp/ig-warp.cu
out=/tmp/igw-emu
mkdir -p "$out"
sed -e 's/pfsp_ig_warp(/pfsp_ig_warp_emu(/' \
    -e 's/u64\* __restrict__ iterations_out)/u64* __restrict__ iterations_out, unsigned char* igw_smem)/' \
    -e '/extern __shared__ __align__(16) unsigned char igw_smem/d' "$kernel" > "$out/igw_emu.cu"
sed "s#/work/wt-pfsp/kernels/pfsp/ig-warp.cu#$out/igw_emu.cu#" "$here/emu_main.cpp" > "$out/emu_main.cpp"
g++ -std=c++20 -O1 -pthread -Wno-unknown-pragmas -include "$here/emu.h" -DPFSP_N="$1" -DPFSP_M="$2" \
    -DPFSP_WIDE="$3" -DIGW_WARPS=1 -DIGW_SHARED_TABLES="$4" -I "$here/../../kernels/pfsp" -x c++ \
    "$out/emu_main.cpp" -o "$out/emu_$1_$2_$3_$4"
