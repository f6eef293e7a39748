/*===- CAPITest.h - Helpers of the C API's tests ------------------*- C -*-===*\
|*                                                                            *|
|* Part of the Loom project.                                                  *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/
/*
 * The tests in test/CAPI are C99 programs over include/loom-c/Loom.h; each
 * prints what it observed and lit checks it with FileCheck. A call that
 * must succeed goes through CHECK_OK, which prints the status and exits 1
 * (the test fails) instead of carrying on.
 */

#ifndef LOOM_TEST_CAPI_CAPITEST_H
#define LOOM_TEST_CAPI_CAPITEST_H

#include "loom-c/Loom.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Runs `expr`, which returns a LoomStatus *; exits 1 if it failed. */
#define CHECK_OK(expr)                                                         \
  do {                                                                         \
    LoomStatus *checkStatus = (expr);                                          \
    if (checkStatus) {                                                         \
      printf("FAILED %s (line %d): %s: %s\n", #expr, __LINE__,                 \
             loomStatusCodeGetName(loomStatusGetCode(checkStatus)),            \
             loomStatusGetMessage(checkStatus));                               \
      loomStatusDestroy(checkStatus);                                          \
      exit(1);                                                                 \
    }                                                                          \
  } while (0)

/* Runs `expr`, which must fail; prints "<label>: <code>: <message>". */
#define EXPECT_FAILURE(label, expr)                                            \
  do {                                                                         \
    LoomStatus *failStatus = (expr);                                           \
    if (!failStatus) {                                                         \
      printf("UNEXPECTED SUCCESS %s (line %d)\n", #expr, __LINE__);            \
      exit(1);                                                                 \
    }                                                                          \
    printf("%s: %s: %s\n", (label),                                            \
           loomStatusCodeGetName(loomStatusGetCode(failStatus)),               \
           loomStatusGetMessage(failStatus));                                  \
    loomStatusDestroy(failStatus);                                             \
  } while (0)

/* Reads the whole file `path` into a NUL-terminated buffer the caller
 * frees; exits 1 if it cannot. */
static inline char *readFile(const char *path, size_t *length) {
  FILE *file = fopen(path, "rb");
  char *data;
  long size;
  if (!file) {
    printf("FAILED cannot open %s\n", path);
    exit(1);
  }
  fseek(file, 0, SEEK_END);
  size = ftell(file);
  fseek(file, 0, SEEK_SET);
  data = (char *)malloc((size_t)size + 1);
  if (!data || fread(data, 1, (size_t)size, file) != (size_t)size) {
    printf("FAILED cannot read %s\n", path);
    exit(1);
  }
  data[size] = '\0';
  fclose(file);
  if (length)
    *length = (size_t)size;
  return data;
}

/* Writes `text` to `path`; exits 1 if it cannot. */
static inline void writeFile(const char *path, LoomStringRef text) {
  FILE *file = fopen(path, "wb");
  if (!file || fwrite(text.data, 1, text.length, file) != text.length) {
    printf("FAILED cannot write %s\n", path);
    exit(1);
  }
  fclose(file);
}

/* Whether `text` contains `needle`. */
static inline int contains(LoomStringRef text, const char *needle) {
  return text.data && strstr(text.data, needle) != NULL;
}

#endif /* LOOM_TEST_CAPI_CAPITEST_H */
