# The target graph of the build, written at configure time for scripts/check_layering.py (the
# link half of the one-way rule, ../shared/DESIGN.md section 2). Included by the top
# CMakeLists.txt after every room is added, when every target_link_libraries call has been made.
#
# Writes ${CMAKE_BINARY_DIR}/tessel_link_graph.tsv, one line per target defined in this source
# tree (sorted by name, so the same tree gives the same file), five tab-separated fields:
#   name    the target's name
#   type    STATIC_LIBRARY, EXECUTABLE, INTERFACE_LIBRARY, ... (CMake's TYPE property)
#   dir     the folder that defines it, relative to the source tree (e.g. compiler/backend/accel)
#   links   its direct link items, ';'-separated: LINK_LIBRARIES (PUBLIC and PRIVATE
#           target_link_libraries entries; INTERFACE_LINK_LIBRARIES for an interface library),
#           as written, so an item may be an imported or external library the checker ignores
#   sources its source files inside the source tree (not generated ones of the build folder),
#           relative to the source tree, ';'-separated
# A folder's targets come from the BUILDSYSTEM_TARGETS directory property, folders from
# SUBDIRECTORIES, recursively from the top.

function(tessel_collect_targets dir out_var)
  get_property(targets DIRECTORY ${dir} PROPERTY BUILDSYSTEM_TARGETS)
  get_property(subdirs DIRECTORY ${dir} PROPERTY SUBDIRECTORIES)
  foreach(sub IN LISTS subdirs)
    tessel_collect_targets(${sub} sub_targets)
    list(APPEND targets ${sub_targets})
  endforeach()
  set(${out_var} ${targets} PARENT_SCOPE)
endfunction()

function(tessel_write_link_graph path)
  tessel_collect_targets(${PROJECT_SOURCE_DIR} targets)
  list(SORT targets)
  set(text "")
  foreach(t IN LISTS targets)
    get_target_property(type ${t} TYPE)
    if(type STREQUAL "UTILITY" OR type STREQUAL "GLOBAL_TARGET")
      continue()  # custom targets link nothing
    endif()
    get_target_property(src_dir ${t} SOURCE_DIR)
    file(RELATIVE_PATH rel_dir ${PROJECT_SOURCE_DIR} ${src_dir})
    if(type STREQUAL "INTERFACE_LIBRARY")
      get_target_property(links ${t} INTERFACE_LINK_LIBRARIES)
      set(sources "")
    else()
      get_target_property(links ${t} LINK_LIBRARIES)
      get_target_property(sources ${t} SOURCES)
    endif()
    if(NOT links)
      set(links "")
    endif()
    set(rel_sources "")
    foreach(s IN LISTS sources)
      if(NOT IS_ABSOLUTE ${s})
        set(s ${src_dir}/${s})
      endif()
      cmake_path(NORMAL_PATH s)
      cmake_path(IS_PREFIX PROJECT_SOURCE_DIR ${s} NORMALIZE inside)
      cmake_path(IS_PREFIX PROJECT_BINARY_DIR ${s} NORMALIZE generated)
      if(inside AND NOT generated)
        file(RELATIVE_PATH rs ${PROJECT_SOURCE_DIR} ${s})
        list(APPEND rel_sources ${rs})
      endif()
    endforeach()
    string(APPEND text "${t}\t${type}\t${rel_dir}\t${links}\t${rel_sources}\n")
  endforeach()
  # Rewritten only when it changes (no needless timestamps for the tests that read it).
  file(CONFIGURE OUTPUT ${path} CONTENT "${text}" @ONLY)
endfunction()
