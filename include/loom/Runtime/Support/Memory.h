//===- Memory.h - Keep the step's memory resident between steps -*- C++ -*-===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// A training step allocates the same large buffers every step (activations,
// gradients, the updated parameters) and frees them at its end. glibc serves
// each allocation above its mmap threshold with a fresh mmap and returns it
// with munmap, so every step faults every page of those buffers in again and
// the kernel zeroes each one: on GPT-2 small that was a third of the step's
// time (docs/Performance.md). Programs that run steps call
// keepFreedMemoryResident() once at start-up, after which freed buffers stay
// in the heap and the next step reuses them.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_RUNTIME_SUPPORT_MEMORY_H
#define LOOM_RUNTIME_SUPPORT_MEMORY_H

namespace loom::runtime {

/// Makes the C allocator keep freed memory for reuse instead of returning it
/// to the system: no mmap for large blocks, no trimming of the heap. The
/// process's footprint becomes its peak (which a training step reaches
/// every step anyway). Does nothing where the allocator is not glibc's.
void keepFreedMemoryResident();

} // namespace loom::runtime

#endif // LOOM_RUNTIME_SUPPORT_MEMORY_H
