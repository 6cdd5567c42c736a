// CoreFile and CoreTarget on a real core made during the test: a forked child of this test
// process starts two threads, writes a known string into a global buffer and aborts (the kernel
// writes "core" into its temporary working directory); when no core appears there (core_pattern
// pipes elsewhere) gdb's gcore takes it instead. fork keeps addresses, so the parent knows where
// the child's buffer and code live.
#include <elf.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <string_view>

#include "targets/core_file.h"
#include "targets/core_target.h"

// Exported so that the core target finds it through this binary's .symtab.
extern "C" {
char hangpy_test_core_marker[64] = "parent value";
}

namespace hangpy::targets {
namespace {

namespace fs = std::filesystem;

constexpr char kChildMarker[] = "hangpy core marker 42";

[[gnu::noinline]] int text_probe(int x) { return x * 7 + 3; }

uint64_t address_of(const void* pointer) { return reinterpret_cast<uintptr_t>(pointer); }

void* park_thread(void* argument) {
  const int fd = *static_cast<int*>(argument);
  const int64_t tid = syscall(SYS_gettid);
  if (write(fd, &tid, sizeof tid) != sizeof tid) _exit(3);
  for (;;) pause();
}

// Runs in the forked child: reports three LWPs, then waits for the parent's word to abort.
[[noreturn]] void run_child(const std::string& directory, int report_fd, int go_fd) {
  if (chdir(directory.c_str()) != 0) _exit(2);
  const rlimit unlimited{RLIM_INFINITY, RLIM_INFINITY};
  setrlimit(RLIMIT_CORE, &unlimited);
  prctl(PR_SET_DUMPABLE, 1);
  std::strcpy(hangpy_test_core_marker, kChildMarker);
  static int fd;
  fd = report_fd;
  for (int i = 0; i < 2; ++i) {
    pthread_t thread;
    if (pthread_create(&thread, nullptr, park_thread, &fd) != 0) _exit(4);
  }
  const int64_t tid = syscall(SYS_gettid);
  if (write(report_fd, &tid, sizeof tid) != sizeof tid) _exit(3);
  char go = 0;
  if (read(go_fd, &go, 1) != 1) _exit(5);
  if (go == 'a') {
    signal(SIGABRT, SIG_DFL);
    raise(SIGABRT);
  }
  for (;;) pause();  // gcore mode: the parent dumps and kills us
}

struct GeneratedCore {
  std::string directory;
  std::string core_path;
  int64_t pid = 0;
  std::set<int64_t> lwps;
  bool by_kernel = false;
  std::string skip_reason;
};

std::string self_executable() { return fs::read_symlink("/proc/self/exe").string(); }

std::vector<char> read_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::vector<char>((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

bool read_lwps(int fd, std::set<int64_t>& lwps) {
  while (lwps.size() < 3) {
    pollfd waiting{fd, POLLIN, 0};
    if (poll(&waiting, 1, 10000) != 1) return false;
    int64_t tid = 0;
    if (read(fd, &tid, sizeof tid) != sizeof tid) return false;
    lwps.insert(tid);
  }
  return true;
}

// One attempt: the child aborts (kernel core) or is dumped by gcore. Returns the core's path.
std::optional<std::string> make_core(const std::string& directory, bool use_gcore,
                                     GeneratedCore& out) {
  int report[2];
  int go[2];
  if (pipe(report) != 0 || pipe(go) != 0) return std::nullopt;
  const pid_t child = fork();
  if (child == 0) {
    close(report[0]);
    close(go[1]);
    run_child(directory, report[1], go[0]);
  }
  close(report[1]);
  close(go[0]);
  out.pid = child;
  out.lwps.clear();
  const bool reported = read_lwps(report[0], out.lwps);
  std::optional<std::string> core;
  if (reported && !use_gcore) {
    (void)!write(go[1], "a", 1);
    int status = 0;
    waitpid(child, &status, 0);
    for (const std::string& name : {std::string("core"), "core." + std::to_string(child)}) {
      if (fs::exists(fs::path(directory) / name)) core = (fs::path(directory) / name).string();
    }
  } else {
    if (reported) {
      const std::string prefix = (fs::path(directory) / "gcore").string();
      const std::string command =
          "gcore -o " + prefix + " " + std::to_string(child) + " >/dev/null 2>&1";
      if (std::system(command.c_str()) == 0) {
        const std::string path = prefix + "." + std::to_string(child);
        if (fs::exists(path)) core = path;
      }
    }
    kill(child, SIGKILL);
    waitpid(child, nullptr, 0);
  }
  close(report[0]);
  close(go[1]);
  return core;
}

class CoreFileTest : public testing::Test {
 protected:
  static void SetUpTestSuite() {
    generated_ = new GeneratedCore;
    std::string pattern = (fs::temp_directory_path() / "hangpy-core-XXXXXX").string();
    if (mkdtemp(pattern.data()) == nullptr) {
      generated_->skip_reason = "cannot create a temporary directory";
      return;
    }
    generated_->directory = pattern;
    if (auto core = make_core(pattern, false, *generated_)) {
      generated_->core_path = *core;
      generated_->by_kernel = true;
    } else if (std::system("command -v gcore >/dev/null 2>&1") != 0) {
      generated_->skip_reason = "no core from the kernel (core_pattern) and no gcore";
    } else if (auto gcore = make_core(pattern, true, *generated_)) {
      generated_->core_path = *gcore;
    } else {
      generated_->skip_reason = "neither the kernel nor gcore produced a core";
    }
  }
  static void TearDownTestSuite() {
    std::error_code ignored;
    if (!generated_->directory.empty()) fs::remove_all(generated_->directory, ignored);
    delete generated_;
    generated_ = nullptr;
  }
  void SetUp() override {
    if (!generated_->skip_reason.empty()) GTEST_SKIP() << generated_->skip_reason;
    auto core = CoreFile::open(generated_->core_path);
    ASSERT_TRUE(core) << core.error().describe();
    core_ = std::move(*core);
  }

  static std::unique_ptr<CoreTarget> open_target(CoreOptions options = {}) {
    options.core_path = generated_->core_path;
    auto target = CoreTarget::open(options);
    EXPECT_TRUE(target) << target.error().describe();
    return target ? std::move(*target) : nullptr;
  }
  static std::string write_file(const std::string& name, std::span<const std::byte> bytes) {
    const std::string path = (fs::path(generated_->directory) / name).string();
    std::ofstream(path, std::ios::binary)
        .write(reinterpret_cast<const char*>(bytes.data()),
               static_cast<std::streamsize>(bytes.size()));
    return path;
  }

  static GeneratedCore* generated_;
  std::unique_ptr<CoreFile> core_;
};

GeneratedCore* CoreFileTest::generated_ = nullptr;

TEST_F(CoreFileTest, ThreadsAreTheChildsLwps) {
  std::set<int64_t> lwps;
  for (const CoreThread& thread : core_->threads()) {
    lwps.insert(thread.lwp);
    EXPECT_NE(thread.registers.sp(), 0u);
    EXPECT_NE(thread.registers.thread_register(), 0u);
    EXPECT_NE(core_->segment_containing(thread.registers.sp()), nullptr);
  }
  EXPECT_EQ(core_->threads().size(), 3u);
  EXPECT_EQ(lwps, generated_->lwps);
}

TEST_F(CoreFileTest, ProcessNotes) {
  EXPECT_EQ(core_->pid(), generated_->pid);
  EXPECT_TRUE(self_executable().find(core_->command()) != std::string::npos);
  EXPECT_FALSE(core_->arguments().empty());
  if (generated_->by_kernel) {
    EXPECT_EQ(core_->signal(), SIGABRT);
    // The child raise()d it: tgkill from its own pid, which NT_SIGINFO names as the sender.
    ASSERT_TRUE(core_->signal_info());
    EXPECT_EQ(core_->signal_info()->number, SIGABRT);
    EXPECT_EQ(core_->signal_info()->code, SI_TKILL);
    EXPECT_EQ(core_->signal_info()->sender_pid, generated_->pid);
    EXPECT_EQ(core_->signal_info()->sender_uid, getuid());
    EXPECT_FALSE(core_->signal_info()->fault_address);
  }
  // This test forked the child: NT_PRPSINFO names it as the parent, and the same owner.
  EXPECT_EQ(core_->parent_pid(), static_cast<int64_t>(getpid()));
  EXPECT_EQ(core_->uid(), getuid());
  EXPECT_EQ(core_->gid(), getgid());
  EXPECT_TRUE(core_->state());
  EXPECT_TRUE(core_->auxv_value(AT_ENTRY));
  EXPECT_EQ(core_->auxv_value(AT_PAGESZ), static_cast<uint64_t>(sysconf(_SC_PAGESIZE)));
  ASSERT_TRUE(core_->execfn());
  EXPECT_EQ(fs::path(*core_->execfn()).filename(), fs::path(self_executable()).filename());
  EXPECT_EQ(core_->page_size(), static_cast<uint64_t>(sysconf(_SC_PAGESIZE)));
  const auto& mappings = core_->file_mappings();
  EXPECT_TRUE(std::any_of(mappings.begin(), mappings.end(),
                          [](const FileMapping& m) { return m.path == self_executable(); }));
  EXPECT_TRUE(core_->warnings().empty()) << core_->warnings().front();
}

TEST_F(CoreFileTest, ReadsTheChildsMemory) {
  char marker[sizeof kChildMarker] = {};
  ASSERT_TRUE(
      core_->read(address_of(hangpy_test_core_marker), std::as_writable_bytes(std::span(marker))));
  EXPECT_STREQ(marker, kChildMarker);
  EXPECT_STREQ(hangpy_test_core_marker, "parent value");  // so it did come from the child
}

TEST_F(CoreFileTest, UnmappedAndUnsavedAddressesAreFaultsWithTheAddress) {
  std::array<std::byte, 16> buffer{};
  auto unmapped = core_->read(8, buffer);
  ASSERT_FALSE(unmapped);
  EXPECT_EQ(unmapped.error().kind, ErrorKind::kUnmapped);
  EXPECT_EQ(unmapped.error().address, 8u);

  // An ELF mapping whose first page only was saved: a read across that page's end.
  for (const CoreSegment& segment : core_->segments()) {
    if (segment.available_bytes == 0 || segment.available_bytes >= segment.memsz) continue;
    const uint64_t edge = segment.vaddr + segment.available_bytes;
    auto across = core_->read(edge - 8, buffer);
    ASSERT_FALSE(across);
    EXPECT_EQ(across.error().kind, ErrorKind::kNotSaved);
    EXPECT_EQ(across.error().address, edge);
    return;
  }
  ADD_FAILURE() << "no partly saved segment in the core";
}

TEST_F(CoreFileTest, ReadsSpanAdjacentSegments) {
  const auto& segments = core_->segments();
  for (size_t i = 0; i + 1 < segments.size(); ++i) {
    const CoreSegment& a = segments[i];
    const CoreSegment& b = segments[i + 1];
    if (a.vaddr + a.memsz != b.vaddr || a.available_bytes != a.memsz || b.available_bytes == 0) {
      continue;
    }
    std::array<std::byte, 16> across{};
    std::array<std::byte, 8> left{};
    std::array<std::byte, 8> right{};
    ASSERT_TRUE(core_->read(b.vaddr - 8, across));
    ASSERT_TRUE(core_->read(b.vaddr - 8, left));
    ASSERT_TRUE(core_->read(b.vaddr, right));
    EXPECT_EQ(std::memcmp(across.data(), left.data(), 8), 0);
    EXPECT_EQ(std::memcmp(across.data() + 8, right.data(), 8), 0);
    return;
  }
  GTEST_SKIP() << "no two adjacent saved segments in this core";
}

TEST_F(CoreFileTest, TextIsNotSavedButTheTargetReadsItFromTheFile) {
  const uint64_t text = address_of(reinterpret_cast<const void*>(&text_probe));
  std::array<std::byte, 64> expected{};
  std::memcpy(expected.data(), reinterpret_cast<const void*>(text), expected.size());

  std::array<std::byte, 64> bytes{};
  auto from_core = core_->read(text, bytes);
  ASSERT_FALSE(from_core) << "the core saved text pages; the fallback is not exercised";
  EXPECT_EQ(from_core.error().kind, ErrorKind::kNotSaved);

  auto target = open_target();
  ASSERT_TRUE(target);
  ASSERT_TRUE(target->memory().read(text, bytes));
  EXPECT_EQ(bytes, expected);

  // libc's text comes from libc's file in the same way.
  const uint64_t libc_text = address_of(reinterpret_cast<const void*>(&getpid));
  std::memcpy(expected.data(), reinterpret_cast<const void*>(libc_text), expected.size());
  ASSERT_TRUE(target->memory().read(libc_text, bytes));
  EXPECT_EQ(bytes, expected);
}

TEST_F(CoreFileTest, TargetFindsSymbolsModulesAndThreads) {
  auto target = open_target();
  ASSERT_TRUE(target);
  EXPECT_TRUE(target->warnings().empty()) << target->warnings().front();
  EXPECT_EQ(target->find_symbol("hangpy_test_core_marker"), address_of(hangpy_test_core_marker));
  EXPECT_FALSE(target->find_symbol("hangpy_no_such_symbol"));

  char marker[sizeof kChildMarker] = {};
  ASSERT_TRUE(target->memory().read(address_of(hangpy_test_core_marker),
                                    std::as_writable_bytes(std::span(marker))));
  EXPECT_STREQ(marker, kChildMarker);

  const auto modules = target->modules();
  auto executable = std::find_if(modules.begin(), modules.end(),
                                 [](const auto& m) { return m.path == self_executable(); });
  ASSERT_NE(executable, modules.end());
  EXPECT_LE(executable->start, address_of(hangpy_test_core_marker));
  EXPECT_GT(executable->end, address_of(hangpy_test_core_marker));
  auto libc = std::find_if(modules.begin(), modules.end(), [](const auto& m) {
    return m.path.find("/libc.so") != std::string::npos;
  });
  ASSERT_NE(libc, modules.end());
  auto getpid_address = target->find_symbol("getpid");
  ASSERT_TRUE(getpid_address);
  EXPECT_GE(*getpid_address, libc->start);
  EXPECT_LT(*getpid_address, libc->end);

  std::set<int64_t> lwps;
  for (const auto& thread : target->threads()) lwps.insert(thread.lwp);
  EXPECT_EQ(lwps, generated_->lwps);
  EXPECT_EQ(target->process().pid, generated_->pid);
  EXPECT_EQ(target->process().executable, self_executable());
  if (generated_->by_kernel) {
    EXPECT_EQ(target->process().signal, SIGABRT);
  }
}

TEST_F(CoreFileTest, MissingFilesAreWarningsNotErrors) {
  const std::string empty_root = (fs::path(generated_->directory) / "empty-sysroot").string();
  fs::create_directories(empty_root);
  CoreOptions options;
  options.sysroot = empty_root;
  auto target = open_target(options);
  ASSERT_TRUE(target);
  const auto& warnings = target->warnings();
  // Every missing file is named in one warning line, the executable first.
  auto missing = std::count_if(warnings.begin(), warnings.end(), [](const std::string& w) {
    return w.starts_with("cannot find ");
  });
  EXPECT_EQ(missing, 1);
  auto missing_self = std::find_if(warnings.begin(), warnings.end(), [](const std::string& w) {
    return w.starts_with("cannot find " + self_executable()) &&
           w.ends_with("(use --sysroot or --lib-path)");
  });
  EXPECT_NE(missing_self, warnings.end());
  EXPECT_FALSE(target->find_symbol("hangpy_test_core_marker"));
  // Memory the core saved is still there; text needs the files.
  std::array<std::byte, 8> bytes{};
  EXPECT_TRUE(target->memory().read(address_of(hangpy_test_core_marker), bytes));
  auto text = target->memory().read(address_of(reinterpret_cast<const void*>(&text_probe)), bytes);
  ASSERT_FALSE(text);
  EXPECT_EQ(text.error().kind, ErrorKind::kNotSaved);
}

TEST_F(CoreFileTest, WrongExecutableGivesBuildIdMismatchWarning) {
  if (!fs::exists("/bin/true")) GTEST_SKIP() << "/bin/true is missing";
  CoreOptions options;
  options.executable = "/bin/true";
  auto target = open_target(options);
  ASSERT_TRUE(target);
  const auto& warnings = target->warnings();
  const std::string expected = "the build-id of /bin/true is ";
  EXPECT_TRUE(std::any_of(warnings.begin(), warnings.end(), [&](const std::string& w) {
    return w.starts_with(expected) && w.ends_with("(for " + self_executable() + ")");
  }));
  // The mismatch is a cause that explains a failed analysis.
  auto causes = target->causes();
  ASSERT_FALSE(causes.empty());
  EXPECT_EQ(causes.front().kind, InputCause::Kind::kWrongBinary);
  EXPECT_TRUE(causes.front().message.starts_with(expected)) << causes.front().message;
  EXPECT_FALSE(target->find_symbol("hangpy_test_core_marker"));
}

TEST_F(CoreFileTest, TruncatedCoreOpensWithWarningAndFaultsPastTheCut) {
  std::vector<char> chars = read_bytes(generated_->core_path);
  const size_t whole = chars.size();
  chars.resize(whole / 2);
  const std::string cut = write_file("truncated-core", std::as_bytes(std::span(chars)));

  auto truncated = CoreFile::open(cut);
  ASSERT_TRUE(truncated) << truncated.error().describe();
  ASSERT_FALSE((*truncated)->warnings().empty());
  const std::string expected =
      fmt::format("the core is truncated at {} of {} bytes", chars.size(), whole);
  EXPECT_TRUE((*truncated)->warnings().front().starts_with(expected))
      << (*truncated)->warnings().front();
  EXPECT_EQ((*truncated)->threads().size(), 3u);

  std::array<std::byte, 8> bytes{};
  bool checked_a_cut_segment = false;
  for (const CoreSegment& segment : (*truncated)->segments()) {
    if (segment.available_bytes >= segment.filesz) continue;
    const uint64_t last = segment.vaddr + segment.filesz - bytes.size();
    auto past_cut = (*truncated)->read(last, bytes);
    ASSERT_FALSE(past_cut);
    EXPECT_EQ(past_cut.error().kind, ErrorKind::kNotSaved);
    // The intact core has those bytes.
    EXPECT_TRUE(core_->read(last, bytes));
    checked_a_cut_segment = true;
  }
  EXPECT_TRUE(checked_a_cut_segment);

  CoreOptions options;
  options.core_path = cut;
  auto target = CoreTarget::open(options);
  ASSERT_TRUE(target) << target.error().describe();
  EXPECT_TRUE((*target)->warnings().front().starts_with(expected));
  auto causes = (*target)->causes();
  ASSERT_FALSE(causes.empty());
  EXPECT_EQ(causes.front().kind, InputCause::Kind::kTruncatedCore);
}

// Where a note's descriptor lies in a core's bytes (the first note of that owner and type).
std::optional<std::span<char>> find_note(std::vector<char>& core, std::string_view owner,
                                         uint32_t type) {
  Elf64_Ehdr header;
  if (core.size() < sizeof header) return std::nullopt;
  std::memcpy(&header, core.data(), sizeof header);
  for (size_t i = 0; i < header.e_phnum; ++i) {
    Elf64_Phdr phdr;
    const size_t at = header.e_phoff + i * sizeof phdr;
    if (at + sizeof phdr > core.size()) return std::nullopt;
    std::memcpy(&phdr, core.data() + at, sizeof phdr);
    if (phdr.p_type != PT_NOTE || phdr.p_offset + phdr.p_filesz > core.size()) continue;
    const size_t end = phdr.p_offset + phdr.p_filesz;
    for (size_t offset = phdr.p_offset; offset + sizeof(Elf64_Nhdr) <= end;) {
      Elf64_Nhdr note;
      std::memcpy(&note, core.data() + offset, sizeof note);
      const size_t name_at = offset + sizeof note;
      const size_t desc_at = name_at + ((note.n_namesz + 3) & ~size_t{3});
      if (desc_at + note.n_descsz > end) break;
      const std::string_view name(core.data() + name_at, note.n_namesz ? note.n_namesz - 1 : 0);
      if (name == owner && note.n_type == type) {
        return std::span(core.data() + desc_at, note.n_descsz);
      }
      offset = desc_at + ((note.n_descsz + 3) & ~size_t{3});
    }
  }
  return std::nullopt;
}

uint64_t get_u64(std::span<char> bytes, size_t offset) {
  uint64_t value;
  std::memcpy(&value, bytes.data() + offset, sizeof value);
  return value;
}

void put_u64(std::span<char> bytes, size_t offset, uint64_t value) {
  std::memcpy(bytes.data() + offset, &value, sizeof value);
}

// The test core with NT_FILE's offsets counted in `unit`s: the kernel writes pages (4096), gdb's
// gcore bytes (1). Same size, same mappings.
std::vector<char> with_nt_file_unit(std::vector<char> core, uint64_t unit) {
  auto desc = find_note(core, "CORE", NT_FILE);
  if (!desc) {
    ADD_FAILURE() << "the core has no NT_FILE note";
    return core;
  }
  const uint64_t count = get_u64(*desc, 0);
  const uint64_t old_unit = get_u64(*desc, 8);
  put_u64(*desc, 8, unit);
  for (uint64_t i = 0; i < count; ++i) {
    const size_t at = 16 + i * 24 + 16;
    const uint64_t bytes = get_u64(*desc, at) * old_unit;
    EXPECT_EQ(bytes % unit, 0u);
    put_u64(*desc, at, bytes / unit);
  }
  return core;
}

// The test core with its AT_PAGESZ entry changed to (key, value).
std::vector<char> with_page_size_entry(std::vector<char> core, uint64_t key, uint64_t value) {
  auto desc = find_note(core, "CORE", NT_AUXV);
  if (!desc) {
    ADD_FAILURE() << "the core has no NT_AUXV note";
    return core;
  }
  for (size_t at = 0; at + 16 <= desc->size(); at += 16) {
    if (get_u64(*desc, at) != AT_PAGESZ) continue;
    put_u64(*desc, at, key);
    put_u64(*desc, at + 8, value);
    return core;
  }
  ADD_FAILURE() << "the core has no AT_PAGESZ";
  return core;
}

// gdb's gcore writes NT_FILE with a "page size" of 1 and byte offsets. That unit must not become
// the memory's page size (reads would go byte by byte), and the offsets must still be right: the
// text read from the mapped files (the core saves none) is the process's.
TEST_F(CoreFileTest, NtFileWrittenByGcoreOrKernelGivesTheSameMappingsAndText) {
  const uint64_t page_size = static_cast<uint64_t>(sysconf(_SC_PAGESIZE));
  const uint64_t text = address_of(reinterpret_cast<const void*>(&text_probe));
  const uint64_t libc_text = address_of(reinterpret_cast<const void*>(&getpid));
  std::array<std::byte, 64> own_text{};
  std::array<std::byte, 64> own_libc_text{};
  std::memcpy(own_text.data(), reinterpret_cast<const void*>(text), own_text.size());
  std::memcpy(own_libc_text.data(), reinterpret_cast<const void*>(libc_text), own_libc_text.size());

  const std::vector<char> original = read_bytes(generated_->core_path);
  for (const uint64_t unit : {uint64_t{1}, page_size}) {
    SCOPED_TRACE("NT_FILE unit " + std::to_string(unit));
    const std::vector<char> rewritten = with_nt_file_unit(original, unit);
    const std::string path =
        write_file("core-unit-" + std::to_string(unit), std::as_bytes(std::span(rewritten)));
    auto core = CoreFile::open(path);
    ASSERT_TRUE(core) << core.error().describe();
    EXPECT_EQ((*core)->page_size(), page_size);
    const auto& mappings = (*core)->file_mappings();
    ASSERT_EQ(mappings.size(), core_->file_mappings().size());
    bool some_offset_is_not_zero = false;
    for (size_t i = 0; i < mappings.size(); ++i) {
      EXPECT_EQ(mappings[i].start, core_->file_mappings()[i].start);
      EXPECT_EQ(mappings[i].file_offset, core_->file_mappings()[i].file_offset);
      EXPECT_EQ(mappings[i].path, core_->file_mappings()[i].path);
      some_offset_is_not_zero |= mappings[i].file_offset != 0;
    }
    EXPECT_TRUE(some_offset_is_not_zero);

    CoreOptions options;
    options.core_path = path;
    auto target = CoreTarget::open(options);
    ASSERT_TRUE(target) << target.error().describe();
    EXPECT_TRUE((*target)->warnings().empty()) << (*target)->warnings().front();
    std::array<std::byte, 64> bytes{};
    ASSERT_TRUE((*target)->memory().read(text, bytes));
    EXPECT_EQ(bytes, own_text);
    ASSERT_TRUE((*target)->memory().read(libc_text, bytes));
    EXPECT_EQ(bytes, own_libc_text);
    EXPECT_EQ((*target)->find_symbol("hangpy_test_core_marker"),
              address_of(hangpy_test_core_marker));
  }
}

TEST_F(CoreFileTest, PageSizeComesFromAuxvNotFromNtFile) {
  const std::vector<char> gcore_style = with_nt_file_unit(read_bytes(generated_->core_path), 1);
  const auto open_variant = [&](const std::string& name, uint64_t key, uint64_t value) {
    const std::vector<char> rewritten = with_page_size_entry(gcore_style, key, value);
    const std::string path = write_file(name, std::as_bytes(std::span(rewritten)));
    auto core = CoreFile::open(path);
    EXPECT_TRUE(core) << core.error().describe();
    return core ? std::move(*core) : nullptr;
  };
  auto big_pages = open_variant("core-16k-pages", AT_PAGESZ, 16384);
  ASSERT_TRUE(big_pages);
  EXPECT_EQ(big_pages->page_size(), 16384u);
  EXPECT_TRUE(big_pages->warnings().empty()) << big_pages->warnings().front();

  auto no_page_size = open_variant("core-no-pagesz", AT_IGNORE, 0);
  ASSERT_TRUE(no_page_size);
  EXPECT_FALSE(no_page_size->auxv_value(AT_PAGESZ));
  EXPECT_EQ(no_page_size->page_size(), 4096u);

  auto bad_page_size = open_variant("core-bad-pagesz", AT_PAGESZ, 3);
  ASSERT_TRUE(bad_page_size);
  EXPECT_EQ(bad_page_size->page_size(), 4096u);
  ASSERT_FALSE(bad_page_size->warnings().empty());
  EXPECT_EQ(bad_page_size->warnings().front(), "AT_PAGESZ is 3, not a page size; assuming 4096");
}

TEST(CoreFileErrors, NotACoreIsInvalidInput) {
  std::string pattern = (fs::temp_directory_path() / "hangpy-notcore-XXXXXX").string();
  ASSERT_NE(mkdtemp(pattern.data()), nullptr);
  const fs::path directory = pattern;
  std::ofstream(directory / "empty").flush();
  std::ofstream(directory / "text") << "this is not an ELF file at all, just some text\n";
  std::vector<std::string> inputs = {(directory / "empty").string(), (directory / "text").string()};
  if (fs::exists("/bin/true")) inputs.push_back("/bin/true");

  for (const std::string& input : inputs) {
    auto core = CoreFile::open(input);
    ASSERT_FALSE(core) << input;
    EXPECT_EQ(core.error().kind, ErrorKind::kInvalidInput) << input;
    EXPECT_EQ(core.error().message.find('\n'), std::string::npos);
    EXPECT_NE(core.error().message.find(input), std::string::npos);
    CoreOptions options;
    options.core_path = input;
    auto target = CoreTarget::open(options);
    ASSERT_FALSE(target) << input;
    EXPECT_EQ(target.error().kind, ErrorKind::kInvalidInput);
  }
  if (fs::exists("/bin/true")) {
    EXPECT_NE(CoreFile::open("/bin/true").error().message.find("not a core file"),
              std::string::npos);
  }
  auto missing = CoreFile::open((directory / "missing").string());
  ASSERT_FALSE(missing);
  EXPECT_EQ(missing.error().kind, ErrorKind::kIo);
  fs::remove_all(directory);
}

}  // namespace
}  // namespace hangpy::targets
