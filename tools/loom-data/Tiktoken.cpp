//===- Tiktoken.cpp - GPT-2 BPE ids through Python's tiktoken -------------===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//

#include "Tiktoken.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Program.h"

#include <cstdlib>
#include <cstring>
#include <system_error>

namespace loom::data {

namespace {

/// Exit status of the script when `import tiktoken` fails: told apart from
/// tiktoken's own errors, which print their message.
constexpr int kNoTiktoken = 3;

/// argv[1]: the text file, argv[2]: the ids file. Reads the text as UTF-8
/// (nanoGPT's prepare scripts read it so), encodes it without special
/// tokens (`encode_ordinary`) and writes uint32 little-endian ids.
const char *kScript = R"py(
import sys
try:
    import tiktoken
except ImportError as e:
    sys.stderr.write(str(e) + "\n")
    sys.exit(3)
import array
with open(sys.argv[1], encoding="utf-8") as f:
    ids = tiktoken.get_encoding("gpt2").encode_ordinary(f.read())
out = array.array("I", ids)
if sys.byteorder != "little":
    out.byteswap()
with open(sys.argv[2], "wb") as f:
    out.tofile(f)
)py";

} // namespace

std::optional<std::string> encodeGpt2(const std::string &path,
                                      std::vector<int32_t> &ids) {
  const char *chosen = std::getenv("LOOM_PYTHON");
  std::string python = chosen && *chosen ? chosen : "python3";
  // findProgramByName returns a name with a slash as it is, found or not.
  llvm::ErrorOr<std::string> program =
      llvm::StringRef(python).contains('/')
          ? (llvm::sys::fs::can_execute(python)
                 ? llvm::ErrorOr<std::string>(python)
                 : llvm::ErrorOr<std::string>(std::make_error_code(
                       std::errc::no_such_file_or_directory)))
          : llvm::sys::findProgramByName(python);
  if (!program)
    return "--tokenizer gpt2 runs tiktoken in Python, but `" + python +
           "` was not found (set LOOM_PYTHON to an interpreter with "
           "tiktoken, or use --tokenizer bytes)";

  llvm::SmallString<128> idsPath, errPath;
  if (llvm::sys::fs::createTemporaryFile("loom-data-ids", "bin", idsPath) ||
      llvm::sys::fs::createTemporaryFile("loom-data-err", "txt", errPath))
    return std::string("cannot create a temporary file for tiktoken's ids");
  llvm::StringRef args[] = {*program, "-c", kScript, path, idsPath};
  std::optional<llvm::StringRef> redirects[] = {std::nullopt, std::nullopt,
                                                llvm::StringRef(errPath)};
  std::string launchError;
  int status = llvm::sys::ExecuteAndWait(*program, args, std::nullopt,
                                         redirects, 0, 0, &launchError);
  std::string stderrText;
  if (auto buffer = llvm::MemoryBuffer::getFile(errPath))
    stderrText = llvm::StringRef((*buffer)->getBuffer()).trim().str();
  llvm::sys::fs::remove(errPath);
  auto cleanup = [&] { llvm::sys::fs::remove(idsPath); };
  if (status == kNoTiktoken) {
    cleanup();
    return "--tokenizer gpt2 needs the Python package tiktoken, which `" +
           *program + "` cannot import (" + stderrText +
           "): `pip install tiktoken`, or set LOOM_PYTHON to an "
           "interpreter that has it; --tokenizer bytes needs nothing";
  }
  if (status != 0) {
    cleanup();
    return "tiktoken failed to encode `" + path + "`" +
           (launchError.empty() ? "" : ": " + launchError) +
           (stderrText.empty() ? "" : ":\n" + stderrText);
  }
  auto buffer = llvm::MemoryBuffer::getFile(idsPath);
  cleanup();
  if (!buffer)
    return std::string("cannot read tiktoken's ids back");
  llvm::StringRef bytes = (*buffer)->getBuffer();
  ids.resize(bytes.size() / 4);
  for (size_t i = 0; i < ids.size(); ++i) {
    const auto *p =
        reinterpret_cast<const unsigned char *>(bytes.data()) + 4 * i;
    uint32_t v = uint32_t(p[0]) | uint32_t(p[1]) << 8 | uint32_t(p[2]) << 16 |
                 uint32_t(p[3]) << 24;
    if (v >= kGpt2VocabSize)
      return "tiktoken returned id " + std::to_string(v) +
             ", outside GPT-2's vocabulary";
    ids[i] = static_cast<int32_t>(v);
  }
  return std::nullopt;
}

} // namespace loom::data
