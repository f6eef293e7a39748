//===- ParseCache.h - Parse each distinct input once ------------*- C++ -*-===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// The parallel config, strategy file and cluster spec reach Loom's passes as
// option text (a preset name, inline JSON or a path), so that
// `loomc --dump-pass-pipeline` prints a pipeline `loom-opt` replays. Several
// passes of one compile read the same option (the driver, the search,
// dist-insert-reshards, the reports). A `ParseCache` keeps each parse by the
// exact bytes parsed, so every distinct input is parsed once per process and
// every reader gets the same immutable result. Keying by content, not by path,
// keeps it correct when a file changes between compiles (a Python session
// that edits its config and compiles again).
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_SUPPORT_PARSECACHE_H
#define LOOM_SUPPORT_PARSECACHE_H

#include <cstddef>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <utility>

namespace loom::support {

template <typename T> class ParseCache {
public:
  /// The result of `parse()` for `key` (the bytes parsed, with anything else
  /// the result depends on, such as the name errors quote): parsed on the
  /// first request, shared afterwards. Thread-safe; `parse` runs outside the
  /// lock, so two threads may both parse a new key (the first result is
  /// kept).
  template <typename ParseFn>
  std::shared_ptr<const T> getOrParse(const std::string &key, ParseFn parse) {
    {
      std::lock_guard<std::mutex> lock(mutex);
      auto it = entries.find(key);
      if (it != entries.end())
        return it->second;
    }
    auto parsed = std::make_shared<const T>(parse());
    std::lock_guard<std::mutex> lock(mutex);
    // A long-lived process (a Python session) compiling many configs keeps
    // only the recent ones.
    if (entries.size() >= kMaxEntries)
      entries.clear();
    auto [it, inserted] = entries.emplace(key, std::move(parsed));
    numParses += inserted;
    return it->second;
  }

  /// How many inputs were parsed (not answered from the cache); for tests.
  size_t getNumParses() const {
    std::lock_guard<std::mutex> lock(mutex);
    return numParses;
  }

private:
  static constexpr size_t kMaxEntries = 64;
  mutable std::mutex mutex;
  std::map<std::string, std::shared_ptr<const T>> entries;
  size_t numParses = 0;
};

} // namespace loom::support

#endif // LOOM_SUPPORT_PARSECACHE_H
