# trainsim_layer(NAME DIRS dir... [DEPS layer...] [LIBS target...] [PROGRAM exe])
#
# One layer of the library: the sources of its folders (relative to the
# project root) as the static library trainsim_NAME, linking the layers it
# builds on (DEPS) and the external libraries it uses (LIBS), nothing else.
# With RULE_ONLY nothing is built here (the folder has its own build), only
# the include rule is recorded. With PROGRAM, the layer is a front end: the executable `exe` instead of a
# library. Its *_test.cc files join the unit-test binary. The layer table is written to
# ${CMAKE_BINARY_DIR}/layers.txt, which tests/layering_test.cc reads to check
# that every #include in a folder names a header of its own layer or of one
# it builds on, and that the layers form no cycle: the CMake graph is the one
# statement of who may include whom.
function(trainsim_layer name)
  cmake_parse_arguments(L "RULE_ONLY" "PROGRAM" "DIRS;DEPS;LIBS" ${ARGN})
  set(sources "")
  set(tests "")
  foreach(dir IN LISTS L_DIRS)
    file(GLOB dir_sources CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/${dir}/*.cc)
    foreach(f IN LISTS dir_sources)
      if(f MATCHES "_(test|perftest)\\.cc$")
        list(APPEND tests ${f})
      else()
        list(APPEND sources ${f})
      endif()
    endforeach()
  endforeach()
  set(deps "")
  foreach(d IN LISTS L_DEPS)
    list(APPEND deps trainsim_${d})
  endforeach()
  if(L_RULE_ONLY)
    # Built elsewhere (e.g. with its own toolchain): only its include rule is recorded.
  elseif(L_PROGRAM)
    add_executable(${L_PROGRAM} ${sources})
    target_link_libraries(${L_PROGRAM} PRIVATE ${L_LIBS} ${deps})
  elseif(sources)
    add_library(trainsim_${name} STATIC ${sources})
    # Headers are included as "sim/LAYER/x.h", from the source tree or an install's include/.
    target_include_directories(trainsim_${name} PUBLIC $<BUILD_INTERFACE:${PROJECT_SOURCE_DIR}> $<INSTALL_INTERFACE:include>)
    target_link_libraries(trainsim_${name} PUBLIC ${deps} ${L_LIBS})
    set_target_properties(trainsim_${name} PROPERTIES POSITION_INDEPENDENT_CODE ON)
  else()
    add_library(trainsim_${name} INTERFACE)
    target_include_directories(trainsim_${name} INTERFACE $<BUILD_INTERFACE:${PROJECT_SOURCE_DIR}> $<INSTALL_INTERFACE:include>)
    target_link_libraries(trainsim_${name} INTERFACE ${deps} ${L_LIBS})
  endif()
  if(NOT L_RULE_ONLY)
    set_property(GLOBAL APPEND PROPERTY TRAINSIM_UNIT_TEST_SOURCES ${tests})
  endif()
  set_property(GLOBAL PROPERTY TRAINSIM_LAYER_DIRS_${name} "${L_DIRS}")  # for the install rules
  string(REPLACE ";" " " dirs_txt "${L_DIRS}")
  string(REPLACE ";" " " deps_txt "${L_DEPS}")
  file(APPEND ${CMAKE_BINARY_DIR}/layers.txt "${name} | ${dirs_txt} | ${deps_txt}\n")
endfunction()
