// pdsh's host lists expanded as pdsh itself does (its hostlist syntax): "node[01-03,07],gpu5"
// is node01 node02 node03 node07 gpu5. Done here, not by parsing `pdsh -q`, because pdsh 2.34
// prints that list compressed again ("node[01-03,07]"), so the nodes expected to answer were
// never known and every collect through pdsh ended "no results from node[01-03,07]".
#pragma once

#include <string>
#include <vector>

#include "base/error.h"

namespace hangpy::jobs {

// At most this many hosts: a range of a million is a typo, not a cluster.
inline constexpr size_t kMaxHosts = 100000;

// Each host of `list`, in order, duplicates removed. Several bracket groups in one name multiply
// ("r[1-2]n[1-2]": r1n1 r1n2 r2n1 r2n2); a range keeps its low bound's zero padding.
// Errors: kInvalidInput (an unclosed bracket, a range whose end is below its start or not a
// number, more than kMaxHosts hosts), naming the part.
Expected<std::vector<std::string>> expand_host_list(const std::string& list);

}  // namespace hangpy::jobs
