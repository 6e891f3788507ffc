# Beyond one machine (issue 16): aggregates as inputs, and tally-mpi under mpirun.
set(_cl_work ${CMAKE_CURRENT_BINARY_DIR}/cluster)

# report/summary/compare over partial and merged aggregates give the bytes of a run
# over the raw inputs; hostile partials are refused; sums at the limits saturate.
add_test(NAME cluster_aggregate_inputs
  COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/cluster/aggregate_inputs.sh
    $<TARGET_FILE:tally_cli> ${TALLY_CORPUS} ${_cl_work}/aggregate_inputs)
set_tests_properties(cluster_aggregate_inputs PROPERTIES LABELS cluster)

# tally-mpi -n 1, 2, 3 writes tally's bytes; bad inputs on some process; more
# processes than inputs; exit codes. Needs mpirun (openmpi-bin) and the generator.
find_program(TALLY_MPIRUN NAMES mpirun)
if(TARGET tally_mpi AND TARGET bench_gen_kineto_trace AND TALLY_MPIRUN)
  add_test(NAME cluster_mpi
    COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/cluster/mpi.sh
      $<TARGET_FILE:tally_cli> $<TARGET_FILE:tally_mpi> $<TARGET_FILE:bench_gen_kineto_trace>
      ${TALLY_CORPUS} ${_cl_work}/mpi)
  # OpenMPI's own allocations are not ours to leak-check under ASan.
  set_tests_properties(cluster_mpi PROPERTIES LABELS "cluster;mpi" TIMEOUT 600
    ENVIRONMENT "ASAN_OPTIONS=detect_leaks=0")
endif()

# tally-mpi's shares by bytes (no MPI needed).
tally_add_unit_test(test_mpi_shares
  SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/cluster/test_mpi_shares.c ${PROJECT_SOURCE_DIR}/tools/mpi/shares.c
  LIBS tally_commands LABELS cluster)
target_include_directories(test_mpi_shares PRIVATE ${PROJECT_SOURCE_DIR}/tools/mpi)
