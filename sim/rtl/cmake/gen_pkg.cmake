# Build-time step of sim/rtl: writes the tessel_isa_pkg of one configuration to a fixed path.
# tessel-isagen names its output after HwConfig::name(), which several configurations share (the
# bus width is not part of VTA's name), so it runs in a private folder and the package is copied
# to OUT_SV. Variables: ISAGEN (tessel-isagen), CONFIG (JSON file), WORK (scratch folder),
# OUT_SV (package path to write).
file(REMOVE_RECURSE ${WORK})
file(MAKE_DIRECTORY ${WORK})
execute_process(COMMAND ${ISAGEN} --config ${CONFIG} --out ${WORK}
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "tessel-isagen --config ${CONFIG} failed (${rc}): ${err}")
endif()
file(GLOB pkgs ${WORK}/hw/generated/tessel_isa_pkg_*.sv)
list(LENGTH pkgs n)
if(NOT n EQUAL 1)
  message(FATAL_ERROR "tessel-isagen --config ${CONFIG} wrote ${n} packages, expected 1: ${pkgs}")
endif()
configure_file(${pkgs} ${OUT_SV} COPYONLY)
