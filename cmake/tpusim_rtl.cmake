# The RTL of models/rtl/ under Verilator: source lists and a helper that verilates one array size
# into a target. Verilator fixes parameters at verilate time, so each size is its own model.
find_package(verilator REQUIRED HINTS $ENV{VERILATOR_ROOT} /usr/share/verilator)
find_program(TPUSIM_VERILATOR verilator REQUIRED)

set(TPUSIM_RTL_DIR ${PROJECT_SOURCE_DIR}/models/rtl)
set(TPUSIM_RTL_COMMON ${TPUSIM_RTL_DIR}/delay_line.sv)
set(TPUSIM_RTL_STATIONARY ${TPUSIM_RTL_COMMON} ${TPUSIM_RTL_DIR}/pe_stationary.sv
    ${TPUSIM_RTL_DIR}/array_stationary.sv)
set(TPUSIM_RTL_OS ${TPUSIM_RTL_COMMON} ${TPUSIM_RTL_DIR}/pe_os.sv ${TPUSIM_RTL_DIR}/array_os.sv)

# Adds the C++ model V<kind>_<rows>x<cols> (kind: stationary | os) to `target`, which should be
# a target of its own: generated code is built without our -Werror.
function(tpusim_verilate target kind rows cols)
  if(kind STREQUAL "stationary")
    set(sources ${TPUSIM_RTL_STATIONARY})
  else()
    set(sources ${TPUSIM_RTL_OS})
  endif()
  verilate(${target} SOURCES ${sources} TOP_MODULE array_${kind} PREFIX V${kind}_${rows}x${cols}
           VERILATOR_ARGS -GR=${rows} -GC=${cols} -O3)
endfunction()
