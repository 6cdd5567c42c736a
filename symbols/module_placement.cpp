#include "symbols/module_placement.h"

#include "symbols/path_resolver.h"

namespace hangpy::symbols {

std::optional<uint64_t> load_bias_from(const std::vector<LoadSegment>& segments,
                                       uint64_t header_address, uint64_t page_size) {
  for (const LoadSegment& segment : segments) {
    if (align_down(segment.file_offset, page_size) == 0) {
      return header_address - align_down(segment.vaddr, page_size);
    }
  }
  return std::nullopt;
}

std::vector<size_t> symbol_search_order(std::span<const std::string_view> paths,
                                        std::optional<size_t> executable) {
  const auto is_libpython = [&paths](size_t i) { return base_name_view(paths[i]).starts_with("libpython"); };
  std::vector<size_t> order;
  if (executable) order.push_back(*executable);
  for (size_t i = 0; i < paths.size(); ++i)
    if (executable != i && is_libpython(i)) order.push_back(i);
  for (size_t i = 0; i < paths.size(); ++i)
    if (executable != i && !is_libpython(i)) order.push_back(i);
  return order;
}

}  // namespace hangpy::symbols
