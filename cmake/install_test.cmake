# The install test: install the build tree into a fresh prefix, build examples/ against it as an
# outside project, and run the examples and the installed uopc.
#   cmake -DBUILD_DIR=<build> -DSOURCE_DIR=<source> -DWORK_DIR=<scratch> -P install_test.cmake
file(REMOVE_RECURSE ${WORK_DIR})
set(prefix ${WORK_DIR}/prefix)

function(run)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "failed (${rc}): ${ARGN}\n${out}\n${err}")
  endif()
endfunction()

run(${CMAKE_COMMAND} --install ${BUILD_DIR} --prefix ${prefix})
run(${CMAKE_COMMAND} -S ${SOURCE_DIR}/examples -B ${WORK_DIR}/examples -G Ninja
    -DCMAKE_BUILD_TYPE=Release -DCMAKE_PREFIX_PATH=${prefix})
run(${CMAKE_COMMAND} --build ${WORK_DIR}/examples)
run(${WORK_DIR}/examples/describe_an_op)
run(${WORK_DIR}/examples/check_my_kernel)
run(${WORK_DIR}/examples/train_mlp ${WORK_DIR})
run(${prefix}/bin/uopc check transpose --trials 5)
run(${prefix}/bin/uopc --ops ${WORK_DIR}/examples/librmsnorm_ops.so check rmsnorm --trials 20)
file(REMOVE_RECURSE ${WORK_DIR})
