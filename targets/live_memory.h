// A live process's memory as the engine reads it (live_target.h): pages read with
// process_vm_readv (or /proc/PID/mem) and kept, read anew in batches around a stop, each noted
// with the threads it was read for so that those of sleeping threads are read before the stop.
#pragma once

#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <climits>
#include <cstdint>
#include <cstring>
#include <mutex>
#include <optional>
#include <set>
#include <span>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "cpython/address_space.h"
#include "symbols/module_placement.h"

namespace hangpy::targets {

// The process's memory, read a page at a time and kept: an analysis makes thousands of small
// reads in a few hundred pages, and each system call costs more than copying a page, so the
// process stays stopped for less time. The pages kept are dropped with forget().
class LiveMemory final : public cpython::AddressSpace {
 public:
  // `mem_fd`: /proc/PID/mem opened for reading, used where the kernel has no process_vm_readv
  // (CONFIG_CROSS_MEMORY_ATTACH unset: Flatcar); -1 to use process_vm_readv. Owned.
  LiveMemory(int pid, uint64_t page_size, int mem_fd) : pid_(pid), page_size_(page_size), mem_fd_(mem_fd) {}
  ~LiveMemory() override {
    if (mem_fd_ >= 0) close(mem_fd_);
  }
  LiveMemory(const LiveMemory&) = delete;
  LiveMemory& operator=(const LiveMemory&) = delete;
  bool through_proc_mem() const { return mem_fd_ >= 0; }

  Expected<void> read(uint64_t address, std::span<std::byte> out) const override {
    std::lock_guard lock(mutex_);
    size_t done = 0;
    while (done < out.size()) {
      const uint64_t at = address + done;
      if (at < address) return make_error(ErrorKind::kUnmapped, "address past 2^64", at);
      const uint64_t page = symbols::align_down(at, page_size_);
      if (noting_readers_) note_reader(page);
      const std::vector<std::byte>* bytes =
          last_page_ != nullptr && last_page_address_ == page ? last_page_ : page_at(page);
      if (bytes == nullptr) {
        return make_error(ErrorKind::kUnmapped,
                          fmt::format("process {} does not map this address", pid_), at);
      }
      const size_t offset = static_cast<size_t>(at - page);
      const size_t count = std::min(out.size() - done, bytes->size() - offset);
      std::memcpy(out.data() + done, bytes->data() + offset, count);
      done += count;
    }
    return {};
  }

  void attribute_reads(std::optional<uint64_t> thread) const override {
    std::lock_guard lock(mutex_);
    reader_ = thread ? static_cast<int64_t>(*thread) : kNoOneThread;
  }

  // From here on no page is noted as read for a thread (the warm pass's details are no stack's).
  void stop_noting_readers() {
    std::lock_guard lock(mutex_);
    noting_readers_ = false;
  }

  // The mappings the process could not write when it was opened (/proc/PID/maps), sorted: the
  // ELF headers of its ~300 libraries, which the module table reads, do not change.
  void set_unwritable(std::vector<std::pair<uint64_t, uint64_t>> ranges) {
    std::lock_guard lock(mutex_);
    unwritable_ = std::move(ranges);
    std::sort(unwritable_.begin(), unwritable_.end());
  }

  // Reads again, as refresh() does, before the process is stopped, the pages kept that the stop
  // need not read: those read for threads in `asleep` alone (attribute_reads; a thread asleep in
  // the kernel does not change its stack, and the stop checks after its release that none of
  // them ran since it was found asleep: process_stop.h's moved()), and those of mappings the
  // process cannot write. refresh() then reads the others.
  void refresh_read_for(const std::set<int64_t>& asleep) {
    std::lock_guard lock(mutex_);
    last_page_ = nullptr;
    std::vector<uint64_t> asleep_bits;
    for (int64_t lwp : asleep) {
      auto bit = reader_bits_.find(lwp);
      if (bit == reader_bits_.end()) continue;
      if (asleep_bits.size() <= bit->second / 64) asleep_bits.resize(bit->second / 64 + 1);
      asleep_bits[bit->second / 64] |= uint64_t{1} << (bit->second % 64);
    }
    std::vector<uint64_t> addresses;
    for (const auto& [address, bytes] : pages_) {
      auto readers = readers_.find(address);
      if (bytes && (unwritable(address) || (readers != readers_.end() && read_only_for(readers->second, asleep_bits))))
        addresses.push_back(address);
    }
    refresh_pages(addresses);
    // Those of an earlier hold that never reached refresh() (one past its limit) are not kept.
    read_early_ = std::unordered_set<uint64_t>(addresses.begin(), addresses.end());
  }

  // Reads every page kept again, as the process has it now, in a few system calls (up to
  // IOV_MAX pages each): when a first pass ran with the process running, the pass that follows
  // in the stopped window then finds the pages it needs in place. Pages that cannot be read now
  // are dropped, as are the unreadable ones kept (they are tried again on demand). The pages
  // refresh_read_for() read since the last refresh() are left as it read them.
  void refresh() {
    std::lock_guard lock(mutex_);
    last_page_ = nullptr;
    std::vector<uint64_t> addresses;
    for (auto it = pages_.begin(); it != pages_.end();) {
      if (it->second) {
        if (!read_early_.contains(it->first)) addresses.push_back(it->first);
        ++it;
      } else {
        it = pages_.erase(it);
      }
    }
    read_early_.clear();
    refresh_pages(addresses);
  }

  void forget() {
    std::lock_guard lock(mutex_);
    last_page_ = nullptr;
    pages_.clear();
    readers_.clear();
    reader_bits_.clear();
    read_early_.clear();
    noting_readers_ = true;  // a fresh start: the next pass is a warm one again
  }

  std::vector<uint64_t> kept() const {
    std::lock_guard lock(mutex_);
    std::vector<uint64_t> addresses;
    addresses.reserve(pages_.size());
    for (const auto& [address, bytes] : pages_)
      if (bytes) addresses.push_back(address);
    return addresses;
  }

  void keep_only(const std::vector<uint64_t>& addresses) {
    std::lock_guard lock(mutex_);
    last_page_ = nullptr;
    const std::unordered_set<uint64_t> wanted(addresses.begin(), addresses.end());
    for (auto it = pages_.begin(); it != pages_.end();) {
      if (wanted.contains(it->first)) ++it;
      else it = pages_.erase(it);
    }
    std::erase_if(readers_, [&](const auto& entry) { return !wanted.contains(entry.first); });
  }

 private:
  // A page's readers: the threads it was read for, one bit each (by their order in reader_bits_:
  // the code of a thread pool's function is read for every thread of the pool), or anyone (read
  // for no one thread, or for more threads than kMaxReaders).
  struct Readers {
    bool anyone = false;
    std::vector<uint64_t> bits;
  };
  static constexpr int64_t kNoOneThread = -1;
  static constexpr size_t kMaxReaders = 1 << 14;

  void note_reader(uint64_t page) const {
    if (page == last_noted_page_ && reader_ == last_noted_reader_) return;
    last_noted_page_ = page;
    last_noted_reader_ = reader_;
    Readers& readers = readers_[page];
    if (readers.anyone) return;
    const size_t bit = reader_ == kNoOneThread ? kMaxReaders : reader_bit(reader_);
    if (bit >= kMaxReaders) {
      readers.anyone = true;
      readers.bits.clear();
      return;
    }
    if (readers.bits.size() <= bit / 64) readers.bits.resize(bit / 64 + 1);
    readers.bits[bit / 64] |= uint64_t{1} << (bit % 64);
  }

  bool unwritable(uint64_t page) const {
    auto after = std::upper_bound(unwritable_.begin(), unwritable_.end(), std::make_pair(page, ~uint64_t{0}));
    return after != unwritable_.begin() && page < std::prev(after)->second;
  }

  // The thread's bit among the readers; kMaxReaders past the last one given.
  size_t reader_bit(int64_t lwp) const {
    auto [it, inserted] = reader_bits_.try_emplace(lwp, reader_bits_.size());
    return it->second;
  }

  // Whether every thread the page was read for is in `asleep_bits` (reader_bit's numbering).
  static bool read_only_for(const Readers& readers, const std::vector<uint64_t>& asleep_bits) {
    if (readers.anyone || readers.bits.empty()) return false;
    for (size_t word = 0; word < readers.bits.size(); ++word) {
      const uint64_t asleep = word < asleep_bits.size() ? asleep_bits[word] : 0;
      if ((readers.bits[word] & ~asleep) != 0) return false;
    }
    return true;
  }

  // Reads `addresses` (kept pages) anew; drops those that cannot be read now. mutex_ held.
  void refresh_pages(const std::vector<uint64_t>& addresses) {
    constexpr size_t kBatch = IOV_MAX;
    std::vector<iovec> local, remote;
    for (size_t first = 0; first < addresses.size();) {
      local.clear();
      remote.clear();
      for (size_t i = first; i < addresses.size() && local.size() < kBatch; ++i) {
        std::vector<std::byte>& bytes = *pages_[addresses[i]];
        local.push_back({bytes.data(), bytes.size()});
        remote.push_back({reinterpret_cast<void*>(addresses[i]), bytes.size()});
      }
      const ssize_t count = read_vector(local, remote);
      // A short read stops at the first page that failed: drop it, go on after it.
      const size_t whole = count < 0 ? 0 : static_cast<size_t>(count) / page_size_;
      if (whole == local.size()) {
        first += whole;
        continue;
      }
      pages_.erase(addresses[first + whole]);
      first += whole + 1;
    }
  }

  // The page at `page`, read on first need; nullptr when the process does not map it (or the
  // kernel refuses it). Past kMaxKeptPages the pages are read again each time.
  const std::vector<std::byte>* page_at(uint64_t page) const {
    static constexpr size_t kMaxKeptPages = 16384;  // 64 MiB of 4 KiB pages
    if (auto it = pages_.find(page); it != pages_.end()) {
      if (!it->second) return nullptr;
      last_page_address_ = page;
      last_page_ = &*it->second;
      return last_page_;
    }
    if (pages_.size() >= kMaxKeptPages) {
      pages_.clear();
      last_page_ = nullptr;
    }
    std::optional<std::vector<std::byte>> bytes(std::in_place, page_size_);
    const std::vector<iovec> local{{bytes->data(), bytes->size()}};
    const std::vector<iovec> remote{{reinterpret_cast<void*>(page), bytes->size()}};
    if (read_vector(local, remote) != static_cast<ssize_t>(page_size_)) bytes.reset();
    auto [it, inserted] = pages_.emplace(page, std::move(bytes));
    if (!it->second) return nullptr;
    last_page_address_ = page;
    last_page_ = &*it->second;
    return last_page_;
  }

  // Pages into `local` from `remote` (the same sizes): the bytes read, up to the first page that
  // failed, or -1; process_vm_readv's contract, through /proc/PID/mem where that is the way.
  ssize_t read_vector(const std::vector<iovec>& local, const std::vector<iovec>& remote) const {
    if (mem_fd_ < 0) return process_vm_readv(pid_, local.data(), local.size(), remote.data(), remote.size(), 0);
    ssize_t total = 0;
    for (size_t i = 0; i < local.size(); ++i) {
      const ssize_t count = pread(mem_fd_, local[i].iov_base, local[i].iov_len,
                                  static_cast<off_t>(reinterpret_cast<uintptr_t>(remote[i].iov_base)));
      if (count != static_cast<ssize_t>(local[i].iov_len)) return total > 0 ? total : -1;
      total += count;
    }
    return total;
  }

  const int pid_;
  const uint64_t page_size_;
  const int mem_fd_;
  mutable std::unordered_map<uint64_t, std::optional<std::vector<std::byte>>> pages_;
  // Whom each page was read for while noting (attribute_reads), and the pages refresh_read_for()
  // read since the last refresh().
  mutable std::unordered_map<uint64_t, Readers> readers_;
  mutable std::unordered_map<int64_t, size_t> reader_bits_;
  std::vector<std::pair<uint64_t, uint64_t>> unwritable_;
  std::unordered_set<uint64_t> read_early_;
  mutable bool noting_readers_ = true;
  mutable int64_t reader_ = kNoOneThread;
  mutable uint64_t last_noted_page_ = ~uint64_t{0};
  mutable int64_t last_noted_reader_ = kNoOneThread;
  // The page the last read ended in: most reads are a few bytes from the one before.
  mutable uint64_t last_page_address_ = 0;
  mutable const std::vector<std::byte>* last_page_ = nullptr;
  mutable std::mutex mutex_;
};

}  // namespace hangpy::targets
