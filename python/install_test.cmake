# Installs the Python package alone (component "python") into a fresh prefix and uses it from
# there: import, a check of a NumPy kernel, a run of generated C.
#   cmake -DBUILD_DIR=<build> -DPYTHON=<python3> -DPACKAGE_DIR=<relative install dir>
#         -DWORK_DIR=<scratch> -P install_test.cmake
file(REMOVE_RECURSE ${WORK_DIR})
set(prefix ${WORK_DIR}/prefix)
execute_process(COMMAND ${CMAKE_COMMAND} --install ${BUILD_DIR} --component python --prefix ${prefix}
                RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "cmake --install --component python failed (${rc})")
endif()
get_filename_component(site ${prefix}/${PACKAGE_DIR} DIRECTORY)
set(script [=[
import os, numpy as np, uops, uops.testing
assert uops.__file__.startswith(os.environ["PYTHONPATH"]), uops.__file__
uops.testing.check("relu", lambda x: np.maximum(x, x.dtype.type(0)), trials=20)
exe = uops.compile_c(uops.optimize(uops.forward_program("relu", "f64")))
np.testing.assert_array_equal(exe.run({"x": [[-1.0, 2.0]]})["y"], [[0.0, 2.0]])
print("installed uops works:", uops.__file__)
]=])
# From the scratch folder: `python -c` puts the current folder first on sys.path, and the build
# tree's package folder is where the test runs.
execute_process(COMMAND ${CMAKE_COMMAND} -E env PYTHONPATH=${site} ${PYTHON} -c "${script}"
                WORKING_DIRECTORY ${WORK_DIR} RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "the installed Python package failed (${rc})")
endif()
file(REMOVE_RECURSE ${WORK_DIR})
