# Smoke test of tessel-bench-resnet18 (CTest bench_resnet18_smoke): runs layer C12 of the
# workload set lowered directly, on fsim, and checks
#  - the exit status is 0 (which includes the bit-exact check against qconv2d_reference),
#  - the table is labelled with the original workloads.md labels and reports the checks passed,
#  - the JSON has C12 with workloads.md's 451,584 ideal GEMM uops (7*7 outputs * 32 * 32 blocks
#    * 9 taps), at least that many GEMM uops issued, and workloads.md's count 3.
# Usage: cmake -DBENCH=<tessel-bench-resnet18> -DOUT_DIR=<dir> -P smoke_test.cmake
file(MAKE_DIRECTORY ${OUT_DIR})
set(json ${OUT_DIR}/smoke.json)
file(REMOVE ${json})
execute_process(
  COMMAND ${BENCH} --layers-only --only C12 --sim fsim --json ${json}
  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
message("${out}${err}")
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "tessel-bench-resnet18 exited with ${rc}")
endif()
foreach(expected "ORIGINAL C1..C12" "\nC12 +3 " "checks \\([^)]*\\): passed"
        "C2..C12 weighted by count" "fsim speed: ")
  if(NOT out MATCHES "${expected}")
    message(FATAL_ERROR "output lacks '${expected}'")
  endif()
endforeach()
file(READ ${json} j)
string(JSON label GET "${j}" runs 0 layers 0 label)
string(JSON ideal GET "${j}" runs 0 layers 0 ideal_gemm_uops)
string(JSON gemm GET "${j}" runs 0 layers 0 gemm_uops)
string(JSON weight GET "${j}" runs 0 layers 0 weight)
string(JSON nlayers LENGTH "${j}" runs 0 layers)
string(JSON check_ok GET "${j}" check_ok)
if(NOT label STREQUAL "C12" OR NOT nlayers EQUAL 1 OR NOT weight EQUAL 3)
  message(FATAL_ERROR "json: expected one layer C12 with weight 3, got ${nlayers} layers, "
                      "first '${label}' weight ${weight}")
endif()
if(NOT ideal EQUAL 451584)
  message(FATAL_ERROR "json: C12 ideal_gemm_uops ${ideal}, expected 451584 (workloads.md)")
endif()
if(gemm LESS 451584)
  message(FATAL_ERROR "json: C12 issued ${gemm} GEMM uops, fewer than the 451584 it needs")
endif()
if(NOT check_ok)
  message(FATAL_ERROR "json: check_ok is ${check_ok}")
endif()
