//===- library_types.h - CUDA emulator: data types of the libraries -------===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// The CUDA emulator's stand-in for the toolkit header of the same name: the
// element types cuBLAS is told about. Values are the toolkit's, so a program
// that prints or stores them reads the same numbers (docs/Codegen.md, "The
// CUDA emulator").
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_CUDA_EMULATOR_LIBRARY_TYPES_H
#define LOOM_CUDA_EMULATOR_LIBRARY_TYPES_H

typedef enum cudaDataType_t {
  CUDA_R_32F = 0,
  CUDA_R_64F = 1,
  CUDA_R_16F = 2,
  CUDA_R_16BF = 14,
} cudaDataType_t;

#endif // LOOM_CUDA_EMULATOR_LIBRARY_TYPES_H
