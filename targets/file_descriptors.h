// What a running process's file descriptor is, in words, for a thread blocked reading, writing,
// sending, receiving or accepting on it: "pipe:[123456]", the FIFO's or file's path, "TCP
// 127.0.0.1:41234 -> 127.0.0.1:29500", "TCP listening on 0.0.0.0:8000", "unix socket
// /run/app.sock"; for a pipe, who holds its other end ("pipe:[123456], its write end held by PID
// 4242 (python3, fd 7)"), among the process, its parent, children and siblings. Read from
// /proc/PID/fd (the link), /proc/PID/fdinfo (the access mode) and /proc/PID/net/{tcp,tcp6,udp,
// udp6,unix} (the socket's addresses, by inode), each file once per call.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace hangpy::targets {

struct DescribedFileDescriptor {
  std::string text;
  // For a pipe: the other processes found holding its other end (the wait's possible wakers).
  std::vector<int> other_end_pids;
};

// O_ACCMODE of descriptor `fd` of process `pid`, from its fdinfo's "flags:" (octal); nullopt when
// /proc cannot tell.
std::optional<int> access_mode(int pid, int fd);

// nullopt when the descriptor is not open (or /proc cannot be read).
std::optional<DescribedFileDescriptor> describe_file_descriptor(int pid, int fd);

}  // namespace hangpy::targets
