/*===- interpret.c - The interpreter entry equals loom-run --------*- C -*-===*\
|*                                                                            *|
|* Part of the Loom project.                                                  *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/
/*
 * loomSessionInterpret runs @train_step on caller buffers and returns the
 * same results as `loom-run` on the same IR and inputs, bit for bit (the
 * summaries below carry an FNV-1a hash of each result's bytes), on one
 * device and partitioned over dp=2 (two simulated ranks, in f64 and in
 * f32). Inputs find their argument by name or by index; bad inputs are
 * statuses.
 *
 * RUN: rm -rf %t && mkdir -p %t
 * RUN: %capi_bin/capi-interpret %S/../Target/GraphJSON/Inputs/tiny.json %t | FileCheck %s
 * RUN: loom-run %t/single.mlir --entry train_step --inputs %t/input_ids.npy --inputs %t/labels.npy > %t/single.run.txt
 * RUN: diff %t/single.run.txt %t/single.capi.txt
 * RUN: loom-run %t/dp2.mlir --entry train_step --inputs %t/input_ids.npy --inputs %t/labels.npy > %t/dp2.run.txt
 * RUN: diff %t/dp2.run.txt %t/dp2.capi.txt
 * RUN: loom-run %t/dp2-f32.mlir --entry train_step --dtype f32 --inputs %t/input_ids.npy --inputs %t/labels.npy > %t/dp2-f32.run.txt
 * RUN: diff %t/dp2-f32.run.txt %t/dp2-f32.capi.txt
 */

#include "CAPITest.h"

#include <inttypes.h>
#include <math.h>

enum { kBatch = 2, kSeq = 4, kVocab = 16 };

/* Writes a [kBatch, kSeq] int64 .npy file (format 1.0), which loom-run
 * reads as the tensor named by the file's stem. */
static void writeNpy(const char *path, const int64_t *values) {
  char header[128];
  unsigned char prefix[10] = {0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0, 0, 0};
  int length = sprintf(header,
                       "{'descr': '<i8', 'fortran_order': False, "
                       "'shape': (%d, %d), }",
                       kBatch, kSeq);
  FILE *file = fopen(path, "wb");
  /* Pad with spaces and a newline so the data starts at a multiple of 64. */
  while ((10 + length + 1) % 64 != 0)
    header[length++] = ' ';
  header[length++] = '\n';
  prefix[8] = (unsigned char)(length & 0xff);
  prefix[9] = (unsigned char)(length >> 8);
  if (!file || fwrite(prefix, 1, 10, file) != 10 ||
      fwrite(header, 1, (size_t)length, file) != (size_t)length ||
      fwrite(values, sizeof(int64_t), kBatch * kSeq, file) != kBatch * kSeq) {
    printf("FAILED cannot write %s\n", path);
    exit(1);
  }
  fclose(file);
}

/* The element `i` of a result as a double. */
static double elementAt(const LoomTensorView *view, int64_t i) {
  switch (view->dtype) {
  case LOOM_DTYPE_F64:
    return ((const double *)view->data)[i];
  case LOOM_DTYPE_F32:
    return ((const float *)view->data)[i];
  case LOOM_DTYPE_I64:
    return (double)((const int64_t *)view->data)[i];
  case LOOM_DTYPE_I32:
    return (double)((const int32_t *)view->data)[i];
  case LOOM_DTYPE_BOOL:
    return ((const unsigned char *)view->data)[i];
  case LOOM_DTYPE_MAX_ENUM:
    break;
  }
  return 0;
}

/* Writes one line per result in loom-run's summary format. */
static void writeSummaries(const char *path, const LoomTensorList *results) {
  const char *dtypeNames[] = {"F64", "F32", "I64", "I32", "BOOL"};
  FILE *file = fopen(path, "w");
  size_t r;
  if (!file) {
    printf("FAILED cannot write %s\n", path);
    exit(1);
  }
  for (r = 0; r < loomTensorListGetSize(results); ++r) {
    LoomTensorView view = loomTensorListGet(results, r);
    int64_t n = (int64_t)(view.byteSize / loomDTypeGetSize(view.dtype)), i;
    double sum = 0, absMax = 0;
    uint64_t hash = 0xcbf29ce484222325ull;
    size_t b;
    for (i = 0; i < n; ++i) {
      double v = elementAt(&view, i);
      sum += v;
      absMax = fmax(absMax, fabs(v));
    }
    for (b = 0; b < view.byteSize; ++b) {
      hash ^= ((const unsigned char *)view.data)[b];
      hash *= 0x100000001b3ull;
    }
    fprintf(file, "%s: shape [", view.name);
    for (i = 0; i < view.rank; ++i)
      fprintf(file, "%s%" PRId64, i ? ", " : "", view.shape[i]);
    fprintf(file, "] dtype %s mean %.9g absmax %.9g fnv1a64 %016" PRIx64 "\n",
            dtypeNames[view.dtype], n ? sum / (double)n : 0.0, absMax, hash);
  }
  fclose(file);
}

/* The index of the argument called `name` of @train_step. */
static int64_t argumentIndex(LoomSession *session, const char *name) {
  LoomTensorList *arguments = NULL;
  size_t i;
  int64_t index = -1;
  CHECK_OK(loomSessionGetEntryArguments(session, NULL, LOOM_DTYPE_F64,
                                        &arguments));
  for (i = 0; i < loomTensorListGetSize(arguments); ++i)
    if (strcmp(loomTensorListGet(arguments, i).name, name) == 0)
      index = (int64_t)i;
  loomTensorListDestroy(arguments);
  return index;
}

/* Runs @train_step on `ids` (by name) and `labels` (by index), writes the
 * IR to DIR/<tag>.mlir and the summaries to DIR/<tag>.capi.txt. */
static void runAndRecord(LoomSession *session, const char *dir,
                         const char *tag, LoomDType floatType,
                         const int64_t *ids, const int64_t *labels) {
  int64_t shape[2] = {kBatch, kSeq};
  LoomTensor inputs[2];
  LoomInterpretOptions options;
  LoomTensorList *results = NULL;
  LoomStringRef ir;
  char path[4096];

  inputs[0].name = "input_ids";
  inputs[0].argIndex = -1;
  inputs[1].name = NULL;
  inputs[1].argIndex = argumentIndex(session, "labels");
  inputs[0].dtype = inputs[1].dtype = LOOM_DTYPE_I64;
  inputs[0].rank = inputs[1].rank = 2;
  inputs[0].shape = inputs[1].shape = shape;
  inputs[0].data = ids;
  inputs[1].data = labels;
  loomInterpretOptionsInit(&options);
  options.floatType = floatType;
  CHECK_OK(loomSessionInterpret(session, &options, inputs, 2, &results));
  printf("%s: %d results, first %s\n", tag,
         (int)loomTensorListGetSize(results),
         loomTensorListGet(results, 0).name);
  snprintf(path, sizeof path, "%s/%s.capi.txt", dir, tag);
  writeSummaries(path, results);
  loomTensorListDestroy(results);
  CHECK_OK(loomSessionGetIR(session, &ir));
  snprintf(path, sizeof path, "%s/%s.mlir", dir, tag);
  writeFile(path, ir);
}

int main(int argc, char **argv) {
  LoomSession *session = NULL;
  int64_t ids[kBatch * kSeq], labels[kBatch * kSeq], badShape[1] = {3};
  LoomTensorList *arguments = NULL, *results = NULL;
  LoomTensor bad;
  char path[4096];
  int i;

  if (argc != 3) {
    printf("usage: capi-interpret GRAPH.json DIR\n");
    return 1;
  }
  for (i = 0; i < kBatch * kSeq; ++i) {
    ids[i] = (i * 7 + 3) % kVocab;
    labels[i] = (i * 5 + 1) % kVocab;
  }
  snprintf(path, sizeof path, "%s/input_ids.npy", argv[2]);
  writeNpy(path, ids);
  snprintf(path, sizeof path, "%s/labels.npy", argv[2]);
  writeNpy(path, labels);

  CHECK_OK(loomSessionCreate(&session));
  CHECK_OK(loomSessionLoadFile(session, argv[1]));

  /* The import phase has no @train_step yet. */
  // CHECK: import: invalid-argument: the module has no function @train_step (it has: @forward); @train_step appears after the autodiff phase
  EXPECT_FAILURE("import", loomSessionInterpret(session, NULL, NULL, 0, &results));

  CHECK_OK(loomSessionRunTo(session, LOOM_PHASE_AUTODIFF));
  CHECK_OK(loomSessionGetEntryArguments(session, NULL, LOOM_DTYPE_F32,
                                        &arguments));
  {
    LoomTensorView first = loomTensorListGet(arguments, 0);
    LoomTensorView last = loomTensorListGet(
        arguments, loomTensorListGetSize(arguments) - 1);
    // CHECK-NEXT: arguments: transformer.wte.weight f32 [16, 8], last labels
    printf("arguments: %s %s [%d, %d], last %s\n", first.name,
           first.dtype == LOOM_DTYPE_F32 ? "f32" : "?", (int)first.shape[0],
           (int)first.shape[1], last.name);
  }
  loomTensorListDestroy(arguments);

  /* Data inputs must be given; shapes and names are checked. */
  // CHECK-NEXT: missing: invalid-argument: {{.*}}input_ids
  EXPECT_FAILURE("missing", loomSessionInterpret(session, NULL, NULL, 0, &results));
  bad.name = "labels";
  bad.argIndex = -1;
  bad.dtype = LOOM_DTYPE_I64;
  bad.rank = 1;
  bad.shape = badShape;
  bad.data = ids;
  // CHECK-NEXT: shape: invalid-argument: input `labels` has shape [3], but argument #{{[0-9]+}} expects the global shape [2, 4]
  EXPECT_FAILURE("shape", loomSessionInterpret(session, NULL, &bad, 1, &results));
  bad.name = "tokens";
  // CHECK-NEXT: name: invalid-argument: input `tokens` matches no argument of @train_step (arguments: {{.*}}input_ids{{.*}})
  EXPECT_FAILURE("name", loomSessionInterpret(session, NULL, &bad, 1, &results));

  // CHECK-NEXT: single: 1{{[0-9]*}} results, first loss
  runAndRecord(session, argv[2], "single", LOOM_DTYPE_F64, ids, labels);

  /* Partitioned over two data-parallel ranks. */
  CHECK_OK(loomSessionSetDevices(session, 2));
  CHECK_OK(loomSessionRunTo(session, LOOM_PHASE_PARTITION));
  // CHECK-NEXT: dp2: 1{{[0-9]*}} results, first loss
  runAndRecord(session, argv[2], "dp2", LOOM_DTYPE_F64, ids, labels);
  /* The same in f32. */
  // CHECK-NEXT: dp2-f32: 1{{[0-9]*}} results, first loss
  runAndRecord(session, argv[2], "dp2-f32", LOOM_DTYPE_F32, ids, labels);

  loomSessionDestroy(session);
  // CHECK-NEXT: done
  printf("done\n");
  return 0;
}
