#include "gdbplugin/gdb_memory.h"

#include <algorithm>
#include <cstring>

#include "gdbplugin/python_error.h"

namespace hangpy::gdbplugin {
namespace {

constexpr uint64_t kPageSize = 4096;
// 64 MiB of cached pages at most; a walk of even thousands of deep threads needs far less.
constexpr size_t kMaxCachedPages = 16384;
// How often (in calls into gdb) to look for a pending Ctrl-C.
constexpr size_t kInterruptCheckInterval = 32;

}  // namespace

GdbMemory::GdbMemory(PyRef inferior)
    : read_memory_(checked(PyObject_GetAttrString(inferior.get(), "read_memory"))) {}

void GdbMemory::check_for_interrupt() const {
  if (interrupted_ || gdb_reads_ % kInterruptCheckInterval != 0) return;
  // gdb turns Ctrl-C into Python's KeyboardInterrupt while Python code runs.
  if (PyErr_CheckSignals() != 0) {
    interrupted_ = true;
    PyErr_Clear();  // raised again by the command once the engine has returned
  }
}

bool GdbMemory::read_from_gdb(uint64_t address, std::span<std::byte> out) const {
  ++gdb_reads_;
  check_for_interrupt();
  if (interrupted_) return false;
  PyObject* buffer_object = PyObject_CallFunction(read_memory_.get(), "KK",
                                                  static_cast<unsigned long long>(address),
                                                  static_cast<unsigned long long>(out.size()));
  if (!buffer_object) {
    // gdb.MemoryError for an unreadable address; KeyboardInterrupt when gdb saw Ctrl-C itself.
    if (PyErr_ExceptionMatches(PyExc_KeyboardInterrupt)) interrupted_ = true;
    PyErr_Clear();
    return false;
  }
  PyRef owner = PyRef::steal(buffer_object);
  // The Stable ABI has buffers only from 3.11: the memory view is copied into a bytes object.
  PyObject* bytes = PyObject_Bytes(buffer_object);
  if (!bytes) {
    PyErr_Clear();
    return false;
  }
  PyRef bytes_owner = PyRef::steal(bytes);
  char* data = nullptr;
  Py_ssize_t size = 0;
  if (PyBytes_AsStringAndSize(bytes, &data, &size) != 0) {
    PyErr_Clear();
    return false;
  }
  bool complete = static_cast<size_t>(size) == out.size();
  if (complete) std::memcpy(out.data(), data, out.size());
  return complete;
}

const GdbMemory::Page& GdbMemory::page(uint64_t page_address) const {
  if (auto found = pages_.find(page_address); found != pages_.end()) return found->second;
  if (pages_.size() >= kMaxCachedPages) pages_.clear();
  std::vector<std::byte> bytes(kPageSize);
  Page result;
  if (read_from_gdb(page_address, bytes)) result = std::move(bytes);
  // An interrupted read says nothing about the page: do not remember it as unreadable.
  if (interrupted_) {
    static const Page kNone;
    return kNone;
  }
  return pages_.emplace(page_address, std::move(result)).first->second;
}

Expected<void> GdbMemory::read(uint64_t address, std::span<std::byte> out) const {
  if (out.empty()) return {};
  if (address + out.size() < address) {
    return make_error(ErrorKind::kUnmapped, "read past the end of the address space", address);
  }
  size_t done = 0;
  while (done < out.size()) {
    uint64_t at = address + done;
    uint64_t page_address = at & ~(kPageSize - 1);
    size_t in_page = std::min<size_t>(out.size() - done, page_address + kPageSize - at);
    const Page& cached = page(page_address);
    if (cached) {
      std::memcpy(out.data() + done, cached->data() + (at - page_address), in_page);
    } else if (!read_from_gdb(at, out.subspan(done, in_page))) {
      // A mapping may end inside a page gdb reads only in part: the direct read above settles it.
      if (interrupted_) return make_error(ErrorKind::kInvalidInput, "interrupted", at);
      return make_error(ErrorKind::kUnmapped, "gdb cannot read memory", at);
    }
    done += in_page;
  }
  return {};
}

}  // namespace hangpy::gdbplugin
