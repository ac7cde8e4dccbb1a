# Shared by verilate.cmake and lint.cmake: the Verilator source list of hw/rtl for one
# configuration: PKG (the configuration's generated tessel_isa_pkg) first, then every entry of
# FILES_F in order, except the committed package (any line naming tessel_isa_pkg). Relative
# entries are resolved against hw/rtl, then the repository root; option lines (-..., +...) pass.
function(tessel_rtl_sources out pkg files_f)
  get_filename_component(rtl_dir ${files_f} DIRECTORY)
  get_filename_component(repo_dir ${rtl_dir}/../.. ABSOLUTE)
  file(STRINGS ${files_f} lines)
  set(sources ${pkg})
  foreach(line IN LISTS lines)
    string(STRIP "${line}" line)
    if(line STREQUAL "" OR line MATCHES "^(//|#)" OR line MATCHES "tessel_isa_pkg")
      continue()
    endif()
    if(line MATCHES "^[-+]" OR IS_ABSOLUTE ${line})
      list(APPEND sources ${line})
    elseif(EXISTS ${rtl_dir}/${line})
      list(APPEND sources ${rtl_dir}/${line})
    else()
      list(APPEND sources ${repo_dir}/${line})
    endif()
  endforeach()
  set(${out} ${sources} PARENT_SCOPE)
endfunction()
