// One Python frame's arguments and locals as (name, repr) pairs, held once for every rank whose
// frame has the same ones (sharing_pool.h).
//
// Why: a fleet's ranks run the same code, and most of their frames hold the same values (the
// model's hyper-parameters, the same paths, the same objects' reprs): of the 15 KB a rank's
// record kept, 9 KB were such reprs, copied per rank. A triage of 100,000 ranks kept 1.45 GB.
// Shared, a frame's values cost a pointer per rank; only the frames whose values differ (a rank
// number, a step count: what differing_locals.h reports) are held apart.
#pragma once

#include <cstddef>
#include <initializer_list>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace hangpy::triage {

class FrameLocals {
 public:
  using Entry = std::pair<std::string, std::string>;
  using Entries = std::vector<Entry>;

  FrameLocals() = default;
  FrameLocals(std::initializer_list<Entry> entries);
  explicit FrameLocals(std::shared_ptr<const Entries> shared) : entries_(std::move(shared)) {}

  Entries::const_iterator begin() const { return entries().begin(); }
  Entries::const_iterator end() const { return entries().end(); }
  size_t size() const { return entries().size(); }
  bool empty() const { return entries().empty(); }
  const Entry& at(size_t i) const { return entries().at(i); }
  const Entry& operator[](size_t i) const { return entries()[i]; }
  bool operator==(const FrameLocals& other) const { return entries() == other.entries(); }

 private:
  const Entries& entries() const;
  std::shared_ptr<const Entries> entries_;  // null: none
};

}  // namespace hangpy::triage
