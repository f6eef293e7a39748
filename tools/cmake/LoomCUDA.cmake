#===- LoomCUDA.cmake - CUDA language, cuBLAS and NCCL --------------------===#
#
# nvcc from CUDA 13 rejects clang-22 as its host compiler, so `.cu` files are
# compiled with g++ as host; their objects link into the same clang-built
# programs (both follow the Itanium C++ ABI and libstdc++).
#
# Architectures are set explicitly: sm_90a (H100/H200, for wgmma and TMA) and
# sm_80 (A100). Override with -DCMAKE_CUDA_ARCHITECTURES=...
#
#===----------------------------------------------------------------------===#

if(NOT CMAKE_CUDA_HOST_COMPILER)
  find_program(LOOM_CUDA_HOST_CXX NAMES g++)
  if(NOT LOOM_CUDA_HOST_CXX)
    message(FATAL_ERROR "LOOM_ENABLE_CUDA needs g++ as nvcc's host compiler; "
                        "install g++ or set CMAKE_CUDA_HOST_COMPILER")
  endif()
  set(CMAKE_CUDA_HOST_COMPILER ${LOOM_CUDA_HOST_CXX} CACHE FILEPATH
      "Host compiler for nvcc (g++: nvcc rejects clang-22)" FORCE)
endif()
if(NOT DEFINED CMAKE_CUDA_ARCHITECTURES)
  set(CMAKE_CUDA_ARCHITECTURES "90a;80")
endif()
enable_language(CUDA)
set(CMAKE_CUDA_STANDARD 17)
set(CMAKE_CUDA_STANDARD_REQUIRED ON)

find_package(CUDAToolkit REQUIRED)

# NCCL ships no CMake package; look for the library and header by hand.
find_library(LOOM_NCCL_LIBRARY nccl
             HINTS ${CUDAToolkit_LIBRARY_DIR} /usr/local/cuda/lib64
                   /usr/lib/x86_64-linux-gnu)
find_path(LOOM_NCCL_INCLUDE_DIR nccl.h
          HINTS ${CUDAToolkit_INCLUDE_DIRS} /usr/local/cuda/include /usr/include)
if(NOT LOOM_NCCL_LIBRARY OR NOT LOOM_NCCL_INCLUDE_DIR)
  message(FATAL_ERROR "LOOM_ENABLE_CUDA needs NCCL: libnccl and nccl.h were not "
                      "found; install NCCL or configure with -DLOOM_ENABLE_CUDA=OFF")
endif()
add_library(Loom::NCCL UNKNOWN IMPORTED)
set_target_properties(Loom::NCCL PROPERTIES
  IMPORTED_LOCATION ${LOOM_NCCL_LIBRARY}
  INTERFACE_INCLUDE_DIRECTORIES ${LOOM_NCCL_INCLUDE_DIR})
message(STATUS "CUDA ${CMAKE_CUDA_COMPILER_VERSION} (host ${CMAKE_CUDA_HOST_COMPILER}), "
               "architectures ${CMAKE_CUDA_ARCHITECTURES}, NCCL ${LOOM_NCCL_LIBRARY}")
