#===- LoomToolchain.cmake - Linker and compiler cache ---------------------===#
#
# Keeps builds lean on small machines: lld links in a fraction of the time and
# memory of GNU ld, and ccache makes rebuilds after a clean nearly free.
#
#===----------------------------------------------------------------------===#

# Prefer lld when the compiler can use it. HandleLLVMOptions (included after
# find_package(MLIR)) turns LLVM_USE_LINKER into -fuse-ld and checks it works.
if(NOT DEFINED LLVM_USE_LINKER AND CMAKE_CXX_COMPILER_ID MATCHES "Clang")
  find_program(LOOM_LLD_PATH NAMES ld.lld
               HINTS /usr/lib/llvm-22/bin NO_DEFAULT_PATH)
  if(LOOM_LLD_PATH)
    set(LLVM_USE_LINKER lld)
  endif()
endif()

option(LOOM_USE_CCACHE "Use ccache when it is installed" ON)
if(LOOM_USE_CCACHE)
  find_program(LOOM_CCACHE_PATH ccache)
  if(LOOM_CCACHE_PATH)
    message(STATUS "Using ccache: ${LOOM_CCACHE_PATH}")
    foreach(lang C CXX CUDA)
      if(NOT DEFINED CMAKE_${lang}_COMPILER_LAUNCHER)
        set(CMAKE_${lang}_COMPILER_LAUNCHER ${LOOM_CCACHE_PATH})
      endif()
    endforeach()
  endif()
endif()
