//===- loom-opt.cpp - The Loom optimizer driver ---------------------------===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// mlir-opt for Loom: parses IR in Loom's dialects and the upstream ones it
// uses, runs any Loom pass or phase pipeline, and prints the result. Tests
// drive every pass through this tool, including the test-only passes of
// test/lib that print analyses (-test-print-sharding-rules, ...).
//
// It is MlirOptMain's own main (options, input, output) with the input
// checked first, as every Loom reader checks it (docs/Testing.md, "Bad
// input"): a regular file, and brackets nested no deeper than the limit
// (the MLIR parser recurses per level and would overflow the stack).
//
//===----------------------------------------------------------------------===//

#include "loom/InitAllDialects.h"
#include "loom/InitAllPasses.h"
#include "loom/Support/CommandLine.h"
#include "loom/Support/InputFile.h"
#include "loom/Support/InputLimits.h"
#include "TestPasses.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/Support/FileUtilities.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/ToolOutputFile.h"
#include "llvm/Support/raw_ostream.h"

static int fail(const std::string &message) {
  llvm::errs() << "loom-opt: error: " << message << "\n";
  return EXIT_FAILURE;
}

int main(int argc, char **argv) {
  mlir::loom::registerAllPasses();
  mlir::loom::test::registerTestPasses();
  mlir::DialectRegistry registry;
  mlir::loom::registerAllDialects(registry);
  auto [inputFilename, outputFilename] = mlir::registerAndParseCLIOptions(
      argc, argv, "Loom optimizer driver\n", registry);
  if (auto repeated = ::loom::support::findRepeatedFlag())
    return fail(*repeated);
  mlir::MlirOptMainConfig config = mlir::MlirOptMainConfig::createFromCLOptions();
  // Listings read no input: MlirOptMain prints them.
  if (config.shouldShowDialects() || config.shouldListPasses())
    return mlir::asMainReturnCode(mlir::MlirOptMain(
        argc, argv, inputFilename, outputFilename, registry));

  if (inputFilename != "-")
    if (auto error = ::loom::support::checkRegularFile(inputFilename))
      return fail(*error);
  std::string errorMessage;
  std::unique_ptr<llvm::MemoryBuffer> file =
      mlir::openInputFile(inputFilename, &errorMessage);
  if (!file)
    return fail(errorMessage);
  llvm::StringRef text = file->getBuffer();
  if (auto problem = ::loom::support::checkIRText(
          std::string_view(text.data(), text.size())))
    return fail(inputFilename + ":" + std::to_string(problem->position.line) +
                ":" + std::to_string(problem->position.column) + ": " +
                problem->message);
  std::unique_ptr<llvm::ToolOutputFile> output =
      mlir::openOutputFile(outputFilename, &errorMessage);
  if (!output)
    return fail(errorMessage);
  if (mlir::failed(
          mlir::MlirOptMain(output->os(), std::move(file), registry, config)))
    return EXIT_FAILURE;
  output->keep();
  return EXIT_SUCCESS;
}
