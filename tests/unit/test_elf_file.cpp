// ElfFile against real binaries of this machine (Debian's static-libpython python3.11 and, when
// present, pyenv's libpython3.11.so), compared with readelf's view; plus truncated copies, which
// must be refused when their ELF header is cut and otherwise read as a prefix of the whole file
// (nothing it lacks, errors past the cut), and corrupted images, which must never crash.
#include <elf.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>
#include <regex>
#include <string>

#include "symbols/demangle.h"
#include "symbols/elf_file.h"

namespace hangpy::symbols {
namespace {

namespace fs = std::filesystem;

constexpr const char* kDebianPython = "/usr/bin/python3.11";

std::string pyenv_libpython() {
  const char* home = std::getenv("HOME");
  return std::string(home ? home : "/root") + "/.pyenv/versions/3.11.7/lib/libpython3.11.so.1.0";
}

std::string run(const std::string& command) {
  std::string output;
  FILE* pipe = popen(command.c_str(), "r");
  if (pipe == nullptr) return output;
  char buffer[4096];
  while (size_t n = fread(buffer, 1, sizeof buffer, pipe)) output.append(buffer, n);
  pclose(pipe);
  return output;
}

bool have_readelf() { return run("command -v readelf").find("readelf") != std::string::npos; }

std::optional<std::string> readelf_build_id(const std::string& path) {
  std::smatch match;
  const std::string notes = run("readelf -n " + path + " 2>/dev/null");
  if (!std::regex_search(notes, match, std::regex("Build ID: ([0-9a-f]+)"))) return std::nullopt;
  return match[1].str();
}

// The value readelf prints for `name` in the given symbol table ("--dyn-syms" or "-s").
std::optional<uint64_t> readelf_symbol_value(const std::string& path, const std::string& option,
                                             const std::string& name) {
  const std::string table = run("readelf -W " + option + " " + path + " 2>/dev/null");
  std::smatch match;
  const std::regex line("\\d+: ([0-9a-f]{16}) +\\S+ +\\S+ +\\S+ +\\S+ +\\d+ " + name + "\\n");
  if (!std::regex_search(table, match, line)) return std::nullopt;
  return std::stoull(match[1].str(), nullptr, 16);
}

std::vector<std::byte> read_whole(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::vector<char> chars((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::vector<std::byte> bytes(chars.size());
  std::memcpy(bytes.data(), chars.data(), chars.size());
  return bytes;
}

class TempDir {
 public:
  TempDir() {
    std::string pattern = (fs::temp_directory_path() / "hangpy-elf-XXXXXX").string();
    path_ = mkdtemp(pattern.data());
  }
  ~TempDir() {
    std::error_code ignored;
    fs::remove_all(path_, ignored);
  }
  std::string file(const std::string& name, std::span<const std::byte> contents) const {
    const std::string path = (path_ / name).string();
    std::ofstream(path, std::ios::binary)
        .write(reinterpret_cast<const char*>(contents.data()),
               static_cast<std::streamsize>(contents.size()));
    return path;
  }
  const fs::path& path() const { return path_; }

 private:
  fs::path path_;
};

// Every query an engine might make; corrupt input must survive all of them.
void exercise(const ElfFile& file) {
  (void)file.build_id();
  (void)file.notes();
  for (const char* name : {"_PyRuntime", "main", "bytearray_length", "", "x"}) {
    (void)file.find_symbol(name);
  }
  std::byte buffer[64];
  for (const LoadSegment& segment : file.load_segments()) {
    (void)file.symbol_at(segment.vaddr + 16);
    (void)file.read_vaddr(segment.vaddr, buffer);
    (void)file.read_vaddr(segment.vaddr + segment.filesz - 1, buffer);
  }
  (void)file.read_file_offset(file.file_size() - 1, buffer);
}

class DebianPython : public testing::Test {
 protected:
  void SetUp() override {
    if (!fs::exists(kDebianPython)) GTEST_SKIP() << kDebianPython << " is not installed";
    auto opened = ElfFile::open(kDebianPython);
    ASSERT_TRUE(opened) << opened.error().describe();
    file_ = std::move(*opened);
  }
  std::unique_ptr<ElfFile> file_;
};

TEST_F(DebianPython, HeaderFields) {
  EXPECT_EQ(file_->path(), kDebianPython);
  EXPECT_EQ(file_->type(), ET_EXEC);
  EXPECT_EQ(file_->machine(), EM_X86_64);
  EXPECT_EQ(file_->file_size(), fs::file_size(kDebianPython));
  ASSERT_FALSE(file_->load_segments().empty());
  EXPECT_EQ(file_->load_segments().front().file_offset, 0u);
}

// A file read by its segments alone (as a core is) gives the same segments, notes and bytes as
// open(), its own ELF header included, though libelf was shown one without a section table.
TEST_F(DebianPython, OpenBySegmentsReadsSegmentsNotesAndTheFilesOwnHeader) {
  auto by_segments = ElfFile::open_by_segments(kDebianPython);
  ASSERT_TRUE(by_segments) << by_segments.error().describe();
  const ElfFile& file = **by_segments;
  EXPECT_EQ(file.type(), file_->type());
  EXPECT_EQ(file.file_size(), file_->file_size());
  ASSERT_EQ(file.load_segments().size(), file_->load_segments().size());
  for (size_t i = 0; i < file.load_segments().size(); ++i) {
    EXPECT_EQ(file.load_segments()[i].vaddr, file_->load_segments()[i].vaddr);
    EXPECT_EQ(file.load_segments()[i].file_offset, file_->load_segments()[i].file_offset);
  }
  EXPECT_EQ(file.notes_end(), file_->notes_end());
  EXPECT_EQ(file.build_id(), file_->build_id());
  // No section table was shown to libelf: a section lookup finds nothing (open() finds .text).
  EXPECT_TRUE(file_->section_address(".text"));
  EXPECT_FALSE(file.section_address(".text"));
  // Every read of the header's bytes, at any offset into it, gives the file's.
  const auto bytes = read_whole(kDebianPython);
  for (size_t offset : {size_t{0}, size_t{1}, size_t{40}, size_t{60}, size_t{63}}) {
    std::array<std::byte, 96> mapped{};
    ASSERT_TRUE(file.read_file_offset(offset, mapped));
    EXPECT_EQ(std::memcmp(mapped.data(), bytes.data() + offset, mapped.size()), 0) << "offset " << offset;
  }
}

TEST_F(DebianPython, BuildIdMatchesReadelf) {
  if (!have_readelf()) GTEST_SKIP() << "readelf is not installed";
  ASSERT_TRUE(file_->build_id());
  EXPECT_EQ(file_->build_id(), readelf_build_id(kDebianPython));
}

TEST_F(DebianPython, FindsPyRuntimeThroughGnuHash) {
  auto symbol = file_->find_symbol("_PyRuntime");
  ASSERT_TRUE(symbol);
  EXPECT_EQ(symbol->name, "_PyRuntime");
  EXPECT_EQ(symbol->type, STT_OBJECT);
  EXPECT_GT(symbol->size, 0u);
  if (have_readelf()) {
    EXPECT_EQ(symbol->value, readelf_symbol_value(kDebianPython, "--dyn-syms", "_PyRuntime"));
  }
}

TEST_F(DebianPython, UndefinedAndUnknownSymbolsAreAbsent) {
  EXPECT_FALSE(file_->find_symbol("hangpy_no_such_symbol"));
  EXPECT_FALSE(file_->find_symbol("malloc"));  // imported from libc: undefined here
  EXPECT_FALSE(file_->find_symbol(""));
}

TEST_F(DebianPython, SymbolAtFindsTheContainingObject) {
  auto runtime = file_->find_symbol("_PyRuntime");
  ASSERT_TRUE(runtime);
  auto inside = file_->symbol_at(runtime->value + runtime->size / 2);
  ASSERT_TRUE(inside);
  EXPECT_EQ(inside->name, "_PyRuntime");
  auto start = file_->symbol_at(runtime->value);
  ASSERT_TRUE(start);
  EXPECT_EQ(start->value, runtime->value);
  EXPECT_FALSE(file_->symbol_at(1));
}

TEST_F(DebianPython, ReadVaddrReadsFileBytes) {
  const LoadSegment& first = file_->load_segments().front();
  std::array<std::byte, 4> magic{};
  ASSERT_TRUE(file_->read_vaddr(first.vaddr, magic));
  EXPECT_EQ(std::memcmp(magic.data(), ELFMAG, SELFMAG), 0);

  std::array<std::byte, 4> from_offset{};
  ASSERT_TRUE(file_->read_file_offset(0, from_offset));
  EXPECT_EQ(magic, from_offset);
}

TEST_F(DebianPython, ReadVaddrBeyondFileBackedBytesIsNotFound) {
  std::array<std::byte, 8> buffer{};
  for (const LoadSegment& segment : file_->load_segments()) {
    if (segment.memsz <= segment.filesz) continue;  // looking for the one with .bss
    auto result = file_->read_vaddr(segment.vaddr + segment.filesz, buffer);
    ASSERT_FALSE(result);
    EXPECT_EQ(result.error().kind, ErrorKind::kNotFound);
    EXPECT_EQ(result.error().address, segment.vaddr + segment.filesz);
    // A read straddling the end of the file-backed part fails too.
    EXPECT_FALSE(file_->read_vaddr(segment.vaddr + segment.filesz - 4, buffer));
    return;
  }
  FAIL() << "no segment with .bss";
}

TEST_F(DebianPython, ReadVaddrOutsideSegmentsIsNotFound) {
  std::array<std::byte, 8> buffer{};
  auto result = file_->read_vaddr(0x10, buffer);
  ASSERT_FALSE(result);
  EXPECT_EQ(result.error().kind, ErrorKind::kNotFound);
}

TEST_F(DebianPython, ReadFileOffsetIsBoundsChecked) {
  std::array<std::byte, 8> buffer{};
  EXPECT_TRUE(file_->read_file_offset(file_->file_size() - buffer.size(), buffer));
  auto past_end = file_->read_file_offset(file_->file_size() - 4, buffer);
  ASSERT_FALSE(past_end);
  EXPECT_EQ(past_end.error().kind, ErrorKind::kNotFound);
  EXPECT_FALSE(file_->read_file_offset(~uint64_t{0} - 2, buffer));
}

TEST_F(DebianPython, ImageOfTheFirstPagesKeepsHeadersAndBuildId) {
  auto bytes = read_whole(kDebianPython);
  bytes.resize(8192);
  auto image = ElfFile::from_image(std::move(bytes), "first pages");
  ASSERT_TRUE(image) << image.error().describe();
  EXPECT_EQ((*image)->build_id(), file_->build_id());
  EXPECT_EQ((*image)->load_segments().size(), file_->load_segments().size());
  EXPECT_FALSE((*image)->find_symbol("_PyRuntime"));  // section headers are cut off
  exercise(**image);
}

TEST(PyenvLibpython, SymtabDynsymAndBuildId) {
  const std::string path = pyenv_libpython();
  if (!fs::exists(path)) GTEST_SKIP() << path << " is not installed";
  auto opened = ElfFile::open(path);
  ASSERT_TRUE(opened) << opened.error().describe();
  const ElfFile& file = **opened;
  EXPECT_EQ(file.type(), ET_DYN);
  ASSERT_TRUE(file.build_id());

  auto runtime = file.find_symbol("_PyRuntime");
  ASSERT_TRUE(runtime);
  // A static function is only in .symtab.
  auto local = file.find_symbol("bytearray_length");
  ASSERT_TRUE(local);
  EXPECT_EQ(local->type, STT_FUNC);
  auto at = file.symbol_at(local->value + 1);
  ASSERT_TRUE(at);
  EXPECT_EQ(at->value, local->value);

  if (have_readelf()) {
    EXPECT_EQ(file.build_id(), readelf_build_id(path));
    EXPECT_EQ(runtime->value, readelf_symbol_value(path, "--dyn-syms", "_PyRuntime"));
    EXPECT_EQ(local->value, readelf_symbol_value(path, "-s", "bytearray_length"));
  }
}

TEST(ElfFileErrors, MissingFileIsIoErrorNamingThePath) {
  auto result = ElfFile::open("/nonexistent/hangpy/libfoo.so");
  ASSERT_FALSE(result);
  EXPECT_EQ(result.error().kind, ErrorKind::kIo);
  EXPECT_NE(result.error().message.find("/nonexistent/hangpy/libfoo.so"), std::string::npos);
  EXPECT_NE(result.error().message.find("No such file"), std::string::npos);
}

TEST(ElfFileErrors, EmptyTextAndDirectoryAreInvalidInput) {
  TempDir dir;
  const std::string text = "just some text, long enough to hold an ELF header if it were one\n";
  for (const std::string& path :
       {dir.file("empty", {}), dir.file("text", std::as_bytes(std::span(text))),
        dir.path().string()}) {
    auto result = ElfFile::open(path);
    ASSERT_FALSE(result) << path;
    EXPECT_EQ(result.error().kind, ErrorKind::kInvalidInput) << path;
    EXPECT_EQ(result.error().message.find('\n'), std::string::npos);
  }
  EXPECT_FALSE(ElfFile::from_image({}, "nothing"));
}

// What a copy of `whole` (whose bytes are `bytes`) cut to `size` bytes must yield once it opens:
// the same header fields, a prefix of its load segments (all of them once the program headers are
// in the copy), a build-id only when it is the whole's (and the whole's once the notes are in),
// only symbols the whole has, at the same places, and reads that give the whole's bytes where the
// copy holds them and errors past its end, never bytes from elsewhere.
void expect_prefix_of(const ElfFile& file, const ElfFile& whole, std::span<const std::byte> bytes,
                      size_t size, uint64_t program_headers_end) {
  EXPECT_EQ(file.file_size(), size);
  EXPECT_EQ(file.type(), whole.type());
  EXPECT_EQ(file.machine(), whole.machine());

  const std::vector<LoadSegment>& segments = file.load_segments();
  ASSERT_LE(segments.size(), whole.load_segments().size());
  if (size >= program_headers_end) {
    EXPECT_EQ(segments.size(), whole.load_segments().size());
  }
  for (size_t i = 0; i < segments.size(); ++i) {
    const LoadSegment& want = whole.load_segments()[i];
    EXPECT_EQ(segments[i].vaddr, want.vaddr) << "segment " << i;
    EXPECT_EQ(segments[i].memsz, want.memsz) << "segment " << i;
    EXPECT_EQ(segments[i].file_offset, want.file_offset) << "segment " << i;
    EXPECT_EQ(segments[i].filesz, want.filesz) << "segment " << i;
    EXPECT_EQ(segments[i].flags, want.flags) << "segment " << i;
  }

  if (file.build_id() || size >= whole.notes_end()) {
    EXPECT_EQ(file.build_id(), whole.build_id());
  }
  if (auto notes = file.notes(); !notes) {
    EXPECT_EQ(notes.error().kind, ErrorKind::kCorrupt);
  }

  for (const char* name : {"_PyRuntime", "main", "bytearray_length", "Py_Initialize"}) {
    const auto found = file.find_symbol(name);
    if (!found) continue;
    const auto want = whole.find_symbol(name);
    ASSERT_TRUE(want) << name << " found in the copy only";
    EXPECT_EQ(found->value, want->value) << name;
    EXPECT_EQ(found->size, want->size) << name;
    EXPECT_EQ(found->type, want->type) << name;
    if (const auto at = file.symbol_at(found->value); at) {
      const auto whole_at = whole.symbol_at(found->value);
      ASSERT_TRUE(whole_at) << name;
      EXPECT_EQ(at->value, whole_at->value) << name;
    }
  }

  std::array<std::byte, 64> buffer{};
  for (const LoadSegment& segment : segments) {
    if (segment.filesz < buffer.size()) continue;
    for (uint64_t into : {uint64_t{0}, segment.filesz / 2, segment.filesz - buffer.size()}) {
      const uint64_t offset = segment.file_offset + into;
      auto read = file.read_vaddr(segment.vaddr + into, buffer);
      if (offset + buffer.size() <= size) {
        ASSERT_TRUE(read) << read.error().describe();
        EXPECT_EQ(std::memcmp(buffer.data(), bytes.data() + offset, buffer.size()), 0)
            << "the bytes at vaddr 0x" << std::hex << segment.vaddr + into;
      } else {
        ASSERT_FALSE(read) << "read 64 bytes at file offset " << offset << " of a copy of " << size;
        EXPECT_EQ(read.error().kind, ErrorKind::kCorrupt);
      }
    }
  }
  std::array<std::byte, 1> last{};
  ASSERT_TRUE(file.read_file_offset(size - 1, last));
  EXPECT_EQ(last[0], bytes[size - 1]);
  auto past_end = file.read_file_offset(size, last);
  ASSERT_FALSE(past_end);
  EXPECT_EQ(past_end.error().kind, ErrorKind::kNotFound);
  exercise(file);
}

TEST(ElfFileRobustness, TruncatedCopiesNeverCrash) {
  size_t binaries = 0;
  for (const std::string& path : {std::string(kDebianPython), pyenv_libpython()}) {
    if (!fs::exists(path)) continue;
    ++binaries;
    SCOPED_TRACE(path);
    const auto bytes = read_whole(path);
    ASSERT_GE(bytes.size(), sizeof(Elf64_Ehdr));
    Elf64_Ehdr header;
    std::memcpy(&header, bytes.data(), sizeof header);
    const uint64_t program_headers_end = header.e_phoff + uint64_t{header.e_phnum} * header.e_phentsize;

    // The untruncated file, which every copy is compared with: it opens whole, with its
    // segments, build-id, sections and symbols.
    auto opened = ElfFile::open(path);
    ASSERT_TRUE(opened) << opened.error().describe();
    const ElfFile& whole = **opened;
    EXPECT_EQ(whole.file_size(), bytes.size());
    ASSERT_FALSE(whole.load_segments().empty());
    ASSERT_TRUE(whole.build_id());
    ASSERT_GT(whole.notes_end(), 0u);
    ASSERT_TRUE(whole.section_address(".text"));
    const auto runtime = whole.find_symbol("_PyRuntime");
    ASSERT_TRUE(runtime);
    EXPECT_EQ(runtime->type, STT_OBJECT);
    const auto at = whole.symbol_at(runtime->value);
    ASSERT_TRUE(at);
    EXPECT_EQ(at->name, "_PyRuntime");
    expect_prefix_of(whole, whole, bytes, bytes.size(), program_headers_end);

    TempDir dir;
    size_t opened_copies = 0;
    for (size_t size : {size_t{1}, size_t{4}, size_t{16}, size_t{63}, size_t{64}, size_t{100},
                        size_t{4096}, size_t{65536}, bytes.size() / 2, bytes.size() - 1}) {
      SCOPED_TRACE("cut to " + std::to_string(size) + " of " + std::to_string(bytes.size()) + " bytes");
      const std::string cut = dir.file("cut", std::span(bytes).first(size));
      auto file = ElfFile::open(cut);
      // Read by its segments alone, the copy opens exactly when open() opens it, with its segments.
      auto by_segments = ElfFile::open_by_segments(cut);
      ASSERT_EQ(static_cast<bool>(by_segments), static_cast<bool>(file));
      if (by_segments) {
        EXPECT_EQ((*by_segments)->load_segments().size(), (*file)->load_segments().size());
        exercise(**by_segments);
      }
      if (size < sizeof(Elf64_Ehdr)) {
        // Not even the ELF header: refused (libelf will not map it, or it is no ELF file), in one
        // line that names the file.
        ASSERT_FALSE(file);
        EXPECT_TRUE(file.error().kind == ErrorKind::kInvalidInput || file.error().kind == ErrorKind::kIo)
            << file.error().describe();
        EXPECT_NE(file.error().message.find(cut), std::string::npos) << file.error().message;
        EXPECT_EQ(file.error().message.find('\n'), std::string::npos);
        continue;
      }
      // The header is whole: the copy opens, as the first pages of a mapping must.
      ASSERT_TRUE(file) << file.error().describe();
      ++opened_copies;
      expect_prefix_of(**file, whole, bytes, size, program_headers_end);
    }
    EXPECT_EQ(opened_copies, 6u);
  }
  if (binaries == 0) GTEST_SKIP() << kDebianPython << " and " << pyenv_libpython() << " are not installed";
}

TEST(ElfFileRobustness, CorruptedImagesNeverCrash) {
  if (!fs::exists(kDebianPython)) GTEST_SKIP() << kDebianPython << " is not installed";
  const auto pristine = read_whole(kDebianPython);
  std::mt19937_64 random(20240611);  // fixed seed: failures must reproduce
  for (int round = 0; round < 40; ++round) {
    auto image = pristine;
    // Headers, .gnu.hash, .dynsym and .dynstr live in the first 128 KiB; section headers at the
    // end of the file.
    for (int flip = 0; flip < 24; ++flip) {
      const bool near_end = random() % 4 == 0;
      const size_t span = std::min<size_t>(image.size(), near_end ? 16384 : 131072);
      size_t position = random() % span;
      if (near_end) position = image.size() - 1 - position;
      image[position] = static_cast<std::byte>(random());
    }
    auto file = ElfFile::from_image(std::move(image), "corrupt");
    if (file) exercise(**file);
  }
}

TEST(Demangle, DemanglesItaniumNamesAndKeepsPlainOnes) {
  EXPECT_EQ(demangle("_ZN6hangpy7symbols8demangleESt17basic_string_viewIcSt11char_traitsIcEE"),
            "hangpy::symbols::demangle(std::basic_string_view<char, std::char_traits<char> >)");
  EXPECT_EQ(demangle("_PyEval_EvalFrameDefault"), "_PyEval_EvalFrameDefault");
  EXPECT_EQ(demangle(""), "");
  EXPECT_EQ(demangle("_Z"), "_Z");
}

TEST(ToHex, FormatsLowercasePairs) {
  const std::array<std::byte, 3> bytes{std::byte{0x00}, std::byte{0xab}, std::byte{0x7f}};
  EXPECT_EQ(to_hex(bytes), "00ab7f");
}

}  // namespace
}  // namespace hangpy::symbols
