# Sanitizer and fuzzing instrumentation for the whole build (included by the top CMakeLists.txt
# before any room is added, so every library, test and tool is built the same way).
#
#   TESSEL_SANITIZE  comma-separated -fsanitize= list, e.g. "address,undefined" (empty: off).
#                    Adds -fsanitize=<list> -fno-omit-frame-pointer to every compile and link;
#                    with "undefined" also -fno-sanitize-recover=undefined, so that any undefined
#                    behaviour ends the process with a non-zero status (and fails its test).
#   TESSEL_FUZZ      build the libFuzzer executables of fuzz/ (needs clang: -fsanitize=fuzzer).
#                    Every other object is then compiled with -fsanitize=fuzzer-no-link, so the
#                    fuzzers see the coverage of the libraries they drive, not only of their own
#                    source. Without it fuzz/ still builds the replay drivers (any compiler).
set(TESSEL_SANITIZE "" CACHE STRING
    "Comma-separated sanitizers for every target (e.g. address,undefined); empty: none")
option(TESSEL_FUZZ "Build the libFuzzer targets of fuzz/ (clang only)" OFF)

if(TESSEL_SANITIZE)
  set(tessel_san_flags -fsanitize=${TESSEL_SANITIZE} -fno-omit-frame-pointer)
  if(TESSEL_SANITIZE MATCHES "undefined")
    list(APPEND tessel_san_flags -fno-sanitize-recover=undefined)
  endif()
  add_compile_options(${tessel_san_flags})
  add_link_options(-fsanitize=${TESSEL_SANITIZE})
  message(STATUS "tessel: sanitizers ${TESSEL_SANITIZE}")
endif()

if(TESSEL_FUZZ)
  if(NOT CMAKE_CXX_COMPILER_ID STREQUAL "Clang")
    message(FATAL_ERROR "TESSEL_FUZZ=ON needs clang (libFuzzer is -fsanitize=fuzzer); "
                        "configure with -DCMAKE_CXX_COMPILER=clang++-16 -DCMAKE_C_COMPILER=clang-16")
  endif()
  add_compile_options(-fsanitize=fuzzer-no-link)
  message(STATUS "tessel: libFuzzer targets on (coverage instrumentation in every object)")
endif()

# Flags for generated third-party code (Verilator's C++ output of hw/rtl and its runtime,
# sim/rtl): AddressSanitizer stays on (it checks how our wrapper drives the models), but
# UndefinedBehaviorSanitizer and the fuzzers' coverage instrumentation are turned off there. The
# code is not ours to fix, no fuzz target runs it, and with them its compile time triples (one
# model's __fast.cpp at -O2: 91 s with ASan+UBSan, under 40 s with ASan alone, on one core).
set(TESSEL_GENERATED_CODE_FLAGS "")
if(TESSEL_SANITIZE MATCHES "undefined")
  list(APPEND TESSEL_GENERATED_CODE_FLAGS -fno-sanitize=undefined)
endif()
if(TESSEL_FUZZ)
  list(APPEND TESSEL_GENERATED_CODE_FLAGS -fno-sanitize=fuzzer-no-link)
endif()
