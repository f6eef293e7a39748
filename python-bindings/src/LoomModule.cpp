//===- LoomModule.cpp - The native module loom._loom over the C API -------===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// `loom._loom` binds the C API (include/loom-c/Loom.h) and nothing else: a
// `Session` class whose methods are the session functions, numpy arrays in
// and out of the interpreter, and every `LoomStatus` turned into the
// package's `loom.LoomError` (with the status code's name in `.code`). The
// Python layer (python-bindings/loom/) builds everything users see on top,
// so this file stays a thin, mechanical translation.
//
// pybind11 needs C++ exceptions and RTTI, which Loom's C++ code is built
// without; this file includes no Loom C++ header, so it alone is built with
// them (python-bindings/CMakeLists.txt).
//
//===----------------------------------------------------------------------===//

#include "loom-c/Loom.h"

#include <pybind11/functional.h>
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <cstring>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace py = pybind11;

namespace {

/// Raises `loom.LoomError(message)` with `.code` set, taking ownership of
/// `status`; does nothing for success (NULL).
void check(LoomStatus *status) {
  if (!status)
    return;
  std::string message = loomStatusGetMessage(status);
  std::string code = loomStatusCodeGetName(loomStatusGetCode(status));
  // A status reads "summary\nfirst error\n..."; a Python error leads with
  // what went wrong (as the tools backend's does) and ends with the summary.
  if (size_t newline = message.find('\n'); newline != std::string::npos)
    message = message.substr(newline + 1) + "\n(" +
              message.substr(0, newline) + ")";
  loomStatusDestroy(status);
  py::object errorType = py::module_::import("loom.errors").attr("LoomError");
  py::object error = errorType(message.empty() ? code : message);
  error.attr("code") = code;
  PyErr_SetObject(errorType.ptr(), error.ptr());
  throw py::error_already_set();
}

std::string toString(LoomStringRef ref) {
  return ref.data ? std::string(ref.data, ref.length) : std::string();
}

LoomPhase parsePhase(const std::string &name) {
  LoomPhase phase;
  check(loomPhaseParse(name.c_str(), &phase));
  return phase;
}

/// The numpy dtype of an interpreter edge type.
py::dtype toNumpy(LoomDType dtype) {
  switch (dtype) {
  case LOOM_DTYPE_F64:
    return py::dtype::of<double>();
  case LOOM_DTYPE_F32:
    return py::dtype::of<float>();
  case LOOM_DTYPE_I64:
    return py::dtype::of<int64_t>();
  case LOOM_DTYPE_I32:
    return py::dtype::of<int32_t>();
  case LOOM_DTYPE_BOOL:
    return py::dtype::of<bool>();
  case LOOM_DTYPE_MAX_ENUM:
    break;
  }
  throw py::value_error("unknown LoomDType " + std::to_string(dtype));
}

/// The interpreter edge type of a numpy array's dtype; an error names
/// `name` and the dtype when the interpreter takes no such data.
LoomDType fromNumpy(const py::array &array, const std::string &name) {
  py::dtype dtype = array.dtype();
  if (dtype.is(py::dtype::of<double>()))
    return LOOM_DTYPE_F64;
  if (dtype.is(py::dtype::of<float>()))
    return LOOM_DTYPE_F32;
  if (dtype.is(py::dtype::of<int64_t>()))
    return LOOM_DTYPE_I64;
  if (dtype.is(py::dtype::of<int32_t>()))
    return LOOM_DTYPE_I32;
  if (dtype.is(py::dtype::of<bool>()))
    return LOOM_DTYPE_BOOL;
  throw py::type_error("input `" + name + "`: dtype " +
                       py::str(dtype).cast<std::string>() +
                       " is not one the interpreter takes (float64, float32, "
                       "int64, int32, bool)");
}

/// Copies a Loom-owned tensor list into [(name, numpy array)] and frees it.
py::list takeTensorList(LoomTensorList *list, bool withData) {
  std::unique_ptr<LoomTensorList, void (*)(LoomTensorList *)> owner(
      list, loomTensorListDestroy);
  py::list out;
  size_t size = loomTensorListGetSize(list);
  for (size_t i = 0; i < size; ++i) {
    LoomTensorView view = loomTensorListGet(list, i);
    std::vector<py::ssize_t> shape(view.shape, view.shape + view.rank);
    if (!withData) {
      out.append(py::make_tuple(view.name, py::tuple(py::cast(shape)),
                                toNumpy(view.dtype)));
      continue;
    }
    py::array array(toNumpy(view.dtype), shape);
    if (static_cast<size_t>(array.nbytes()) != view.byteSize)
      throw py::value_error(std::string("result `") + view.name +
                            "`: size mismatch between shape and bytes");
    std::memcpy(array.mutable_data(), view.data, view.byteSize);
    out.append(py::make_tuple(view.name, array));
  }
  return out;
}

/// A LoomSession with the Python diagnostic handler it calls.
class Session {
public:
  Session() { check(loomSessionCreate(&session)); }
  ~Session() { loomSessionDestroy(session); }
  Session(const Session &) = delete;
  Session &operator=(const Session &) = delete;

  void loadGraphJson(const std::string &text, const std::string &sourceName) {
    check(loomSessionLoadGraphJson(session, {text.data(), text.size()},
                                   sourceName.c_str()));
  }
  void loadMlir(const std::string &text, const std::string &sourceName) {
    check(loomSessionLoadMlir(session, {text.data(), text.size()},
                              sourceName.c_str()));
  }
  void loadFile(const std::string &path) {
    check(loomSessionLoadFile(session, path.c_str()));
  }
  void loadModel(const std::string &family, const std::string &options) {
    check(loomSessionLoadModel(session, family.c_str(),
                               options.empty() ? nullptr : options.c_str()));
  }
  void setOption(const std::string &name, const std::string &value) {
    check(loomSessionSetOption(session, name.c_str(), value.c_str()));
  }
  void unsetOption(const std::string &name) {
    check(loomSessionUnsetOption(session, name.c_str()));
  }
  void resetOptions() { loomSessionResetOptions(session); }

  void runTo(const std::string &phase) {
    check(loomSessionRunTo(session, parsePhase(phase)));
  }
  std::string phase() {
    return loomPhaseGetName(loomSessionGetPhase(session));
  }
  std::string ir() {
    LoomStringRef text;
    check(loomSessionGetIR(session, &text));
    return toString(text);
  }
  std::string planJson() {
    LoomStringRef text;
    check(loomSessionGetPlanJson(session, &text));
    return toString(text);
  }
  std::string report() { return toString(loomSessionGetReport(session)); }
  void emit(const std::string &target, const std::string &directory) {
    check(loomSessionEmit(session, target.c_str(), directory.c_str()));
  }

  py::list entryArguments(const std::string &entry, bool f32) {
    LoomTensorList *list = nullptr;
    check(loomSessionGetEntryArguments(
        session, entry.c_str(), f32 ? LOOM_DTYPE_F32 : LOOM_DTYPE_F64, &list));
    return takeTensorList(list, /*withData=*/false);
  }

  /// Runs `entry` on {name: array} inputs; returns [(name, array)].
  py::list interpret(const py::dict &inputs, const std::string &entry,
                     bool f32, int64_t ranks, uint64_t seed) {
    // The arrays stay referenced (and contiguous) until the call returns.
    std::vector<py::array> arrays;
    std::vector<std::string> names;
    std::vector<std::vector<int64_t>> shapes;
    arrays.reserve(inputs.size());
    names.reserve(inputs.size());
    shapes.reserve(inputs.size());
    for (auto item : inputs) {
      names.push_back(py::str(item.first).cast<std::string>());
      // A C-contiguous view, or a contiguous copy when the array is not.
      arrays.push_back(py::array::ensure(item.second, py::array::c_style));
      if (!arrays.back())
        throw py::type_error("input `" + names.back() +
                             "` is not convertible to a numpy array");
      shapes.emplace_back(arrays.back().shape(),
                          arrays.back().shape() + arrays.back().ndim());
    }
    std::vector<LoomTensor> tensors;
    for (size_t i = 0; i < arrays.size(); ++i)
      tensors.push_back({names[i].c_str(), -1,
                         fromNumpy(arrays[i], names[i]),
                         static_cast<int64_t>(shapes[i].size()),
                         shapes[i].data(), arrays[i].data()});
    LoomInterpretOptions options;
    loomInterpretOptionsInit(&options);
    options.entry = entry.c_str();
    options.floatType = f32 ? LOOM_DTYPE_F32 : LOOM_DTYPE_F64;
    options.ranks = ranks;
    options.seed = seed;
    LoomTensorList *results = nullptr;
    check(loomSessionInterpret(session, &options, tensors.data(),
                               tensors.size(), &results));
    return takeTensorList(results, /*withData=*/true);
  }

  /// Calls `handler(severity, location, message)` for every diagnostic;
  /// None removes it.
  void setDiagnosticHandler(py::object handler) {
    diagnosticHandler = std::move(handler);
    if (diagnosticHandler.is_none()) {
      loomSessionSetDiagnosticCallback(session, nullptr, nullptr);
      return;
    }
    loomSessionSetDiagnosticCallback(session, &Session::onDiagnostic, this);
  }

private:
  static void onDiagnostic(LoomSeverity severity, const char *location,
                           const char *message, void *userData) {
    static const char *const names[] = {"error", "warning", "note",
                                        "remark"};
    auto *self = static_cast<Session *>(userData);
    const char *name = severity <= LOOM_SEVERITY_REMARK ? names[severity]
                                                        : "unknown";
    // A C callback must not unwind into Loom: a failing handler's error is
    // reported as unraisable and the compilation goes on.
    try {
      self->diagnosticHandler(name, location, message);
    } catch (py::error_already_set &error) {
      error.discard_as_unraisable("loom diagnostic handler");
    }
  }

  LoomSession *session = nullptr;
  py::object diagnosticHandler = py::none();
};

} // namespace

PYBIND11_MODULE(_loom, m) {
  m.doc() = "Loom's C API (include/loom-c/Loom.h); use the `loom` package";
  m.def("version", &loomGetVersion, "The release of the loaded Loom library");
  m.def("api_version", &loomGetApiVersion,
        "LOOM_API_VERSION of the loaded library");
  m.attr("HEADER_API_VERSION") = LOOM_API_VERSION;
  m.def(
      "options",
      [] {
        py::list out;
        for (size_t i = 0, e = loomOptionGetCount(); i < e; ++i)
          out.append(py::make_tuple(loomOptionGetName(i),
                                    loomOptionKindGetName(loomOptionGetKind(i)),
                                    loomOptionGetDescription(i)));
        return out;
      },
      "The options a Session takes, as (name, kind, description): the "
      "library's option table");

  py::class_<Session>(m, "Session", "One compilation (a LoomSession)")
      .def(py::init<>())
      .def("load_graph_json", &Session::loadGraphJson, py::arg("text"),
           py::arg("source_name") = "<graph>")
      .def("load_mlir", &Session::loadMlir, py::arg("text"),
           py::arg("source_name") = "<ir>")
      .def("load_file", &Session::loadFile, py::arg("path"))
      .def("load_model", &Session::loadModel, py::arg("family"),
           py::arg("options") = "")
      .def("set_option", &Session::setOption, py::arg("name"),
           py::arg("value"))
      .def("unset_option", &Session::unsetOption, py::arg("name"))
      .def("reset_options", &Session::resetOptions)
      .def("run_to", &Session::runTo, py::arg("phase"))
      .def("phase", &Session::phase)
      .def("ir", &Session::ir)
      .def("plan_json", &Session::planJson)
      .def("report", &Session::report)
      .def("emit", &Session::emit, py::arg("target"), py::arg("directory"))
      .def("entry_arguments", &Session::entryArguments,
           py::arg("entry") = "train_step", py::arg("f32") = false)
      .def("interpret", &Session::interpret, py::arg("inputs"),
           py::arg("entry") = "train_step", py::arg("f32") = false,
           py::arg("ranks") = 0, py::arg("seed") = 0)
      .def("set_diagnostic_handler", &Session::setDiagnosticHandler,
           py::arg("handler"));
}
