//===- cuda_runtime.h - CUDA emulator: runtime API and kernel language ----===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// What nvcc puts in front of every .cu file, for the CUDA emulator: the
// runtime API and the kernel language (loom_cuda_emulator/Kernel.h). The
// emulated libraries compile each .cu file through a wrapper that includes
// this header first.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_CUDA_EMULATOR_CUDA_RUNTIME_H
#define LOOM_CUDA_EMULATOR_CUDA_RUNTIME_H

#include "cuda_runtime_api.h"
#include "loom_cuda_emulator/Kernel.h"

#endif // LOOM_CUDA_EMULATOR_CUDA_RUNTIME_H
