// `coreanalyze collect --via 'podman exec CTR'`: the collection made inside a container, for a
// user who can get into the container but not onto its node (a Kubernetes pod through `kubectl
// exec`, a container on a machine the user has no shell on). The command given is a prefix that
// runs a program inside (`docker exec CTR`, `podman exec CTR`, `kubectl exec POD -c C --`):
//
//   1. coreanalyze is found inside (on its PATH), or this program (--remote-binary) is copied in,
//      through the prefix's stdin, into a directory of its own under /tmp;
//   2. it collects there, on the node side's own selection (the container's whole process tree,
//      from its PID 1, unless --pid or --name says otherwise), into that directory;
//   3. each result file is copied back, one `cat` per file whose name the collector would write
//      (a result directory inside the container is the container's to forge: no archive is
//      unpacked, no name taken as a path), into DIR/NODE; the triage runs here.
//
// Ptrace inside a container needs CAP_SYS_PTRACE (or the same user and a permissive Yama): a
// refusal says how the container must be started.
#pragma once

#include <string>

#include "jobs/collect_options.h"

namespace hangpy::jobs {

// The node name a --via collection is filed under when --node-name is not given: the prefix's
// last word (the container or pod), made a valid directory name.
std::string via_node_name(const std::string& via);

// Runs the collection through options.via; returns the node's exit code (as collect's --help
// lists them) after DIR/NODE holds what came back.
int collect_via(const CollectOptions& options, const std::string& self);

}  // namespace hangpy::jobs
