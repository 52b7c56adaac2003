# `cmake --install build --prefix P`: the programs in P/bin, their data in
# P/share/trainsim (hardware-profiles/, models/catalogue/, examples/ and the
# reference runs validate predicts), and the simulation library with its
# headers and a CMake package (find_package(trainsim): trainsim::run,
# trainsim::io, ...) so another project can load a scenario and call Simulate.
# The installed tree is relocatable: trainsim finds P/share/trainsim from its
# own path (sim/io/data_paths.cc), or $TRAINSIM_DATA_DIR.
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

set(TRAINSIM_INSTALL_DATADIR ${CMAKE_INSTALL_DATADIR}/trainsim)
set(TRAINSIM_INSTALL_CMAKEDIR ${CMAKE_INSTALL_LIBDIR}/cmake/trainsim)

install(TARGETS trainsim RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
if(TARGET trainsim-gui)
  install(TARGETS trainsim-gui RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
endif()

install(DIRECTORY ${PROJECT_SOURCE_DIR}/hardware-profiles DESTINATION ${TRAINSIM_INSTALL_DATADIR})
install(DIRECTORY ${PROJECT_SOURCE_DIR}/models/catalogue DESTINATION ${TRAINSIM_INSTALL_DATADIR}/models)
install(DIRECTORY ${PROJECT_SOURCE_DIR}/examples DESTINATION ${TRAINSIM_INSTALL_DATADIR})
# The published runs `trainsim validate` predicts: tests/reference when the
# tree carries them, else the project's ../shared/reference beside the checkout.
foreach(ref IN ITEMS ${PROJECT_SOURCE_DIR}/tests/reference ${PROJECT_SOURCE_DIR}/../shared/reference)
  if(EXISTS ${ref}/measured.yaml)
    install(DIRECTORY ${ref}/ DESTINATION ${TRAINSIM_INSTALL_DATADIR}/reference FILES_MATCHING PATTERN "*.yaml" PATTERN "*.md")
    break()
  endif()
endforeach()

# The library: the layers up to Simulate and the planner, validation and
# reports (sweep needs MPI and calib Eigen: they stay with the CLI).
set(TRAINSIM_EXPORTED_LAYERS core io models cost schedule analytical des run plan validate report)
foreach(layer IN LISTS TRAINSIM_EXPORTED_LAYERS)
  set_target_properties(trainsim_${layer} PROPERTIES EXPORT_NAME ${layer})
  install(TARGETS trainsim_${layer} EXPORT trainsimTargets ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR})
  get_property(dirs GLOBAL PROPERTY TRAINSIM_LAYER_DIRS_${layer})
  foreach(dir IN LISTS dirs)
    install(DIRECTORY ${PROJECT_SOURCE_DIR}/${dir}/ DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/${dir}
            FILES_MATCHING PATTERN "*.h" PATTERN "testdata" EXCLUDE PATTERN "catalogue" EXCLUDE)
  endforeach()
endforeach()
if(TRAINSIM_SANITIZE)
  # Instrumented static libraries need the sanitizer runtime wherever they are linked.
  target_link_options(trainsim_core INTERFACE $<INSTALL_INTERFACE:-fsanitize=address,undefined>)
endif()
install(EXPORT trainsimTargets NAMESPACE trainsim:: DESTINATION ${TRAINSIM_INSTALL_CMAKEDIR} FILE trainsimTargets.cmake)
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/trainsimConfig.cmake.in
  ${CMAKE_BINARY_DIR}/trainsimConfig.cmake
  INSTALL_DESTINATION ${TRAINSIM_INSTALL_CMAKEDIR}
  PATH_VARS TRAINSIM_INSTALL_DATADIR)
write_basic_package_version_file(${CMAKE_BINARY_DIR}/trainsimConfigVersion.cmake COMPATIBILITY SameMinorVersion)
install(FILES ${CMAKE_BINARY_DIR}/trainsimConfig.cmake ${CMAKE_BINARY_DIR}/trainsimConfigVersion.cmake
        DESTINATION ${TRAINSIM_INSTALL_CMAKEDIR})
