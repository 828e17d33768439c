#!/usr/bin/env bash
# The launch guard's hardware proof (bench/gpu/guard_proof.py), on a machine with a GPU and no network.
# Wheels: the DSL 4.8.1 (its cu12 libs in two parts: the first already in /root/cdsl), lark, tvm-ffi.
#   bash bench/gpu/run_guard_proof.sh WHEEL_DIR OUT_DIR
set -u
WHEELS=$1 OUT=$2
mkdir -p /root/cdsl "$OUT"
cat /root/cdsl/cu12.part.aa "$WHEELS"/cu12.part.ab > /root/cdsl/nvidia_cutlass_dsl_libs_cu12-4.8.1-cp312-cp312-manylinux_2_28_x86_64.whl || exit 1
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target /root/site \
  "$WHEELS"/*.whl /root/cdsl/*.whl > "$OUT/install.log" 2>&1 || { tail -20 "$OUT/install.log"; exit 1; }
export PYTHONPATH=/root/site:/root/site/nvidia_cutlass_dsl/dsl_packages:$PWD PYTHONUNBUFFERED=1
python3 -c "import torch, cutlass; print(torch.__version__, torch.cuda.get_device_name(0), cutlass.__file__)"
for c in poke-plain poke-guarded poke-guarded-tvm fill-plain fill-guarded fill-guarded-tvm; do
  timeout 300 python3 bench/gpu/guard_proof.py "$c" 2>>"$OUT/stderr.log" | tee -a "$OUT/results.jsonl"
  rc=${PIPESTATUS[0]}
  [ "$rc" = 0 ] || echo "{\"case\": \"$c\", \"exit\": $rc}" | tee -a "$OUT/results.jsonl"
done
python3 bench/bench_guard.py --repeat 7 --number 2000 2>>"$OUT/stderr.log" | tee "$OUT/bench.txt"
