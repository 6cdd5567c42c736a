#include "cpython/frame_variables.h"

#include "cpython/container_reader.h"
#include "cpython/object_repr.h"

namespace hangpy::cpython {
namespace {

constexpr size_t kMaxLocals = 4096;

// The target's memory with a budget: once `budget` bytes were read, every read fails.
class BudgetedMemory final : public AddressSpace {
 public:
  BudgetedMemory(const AddressSpace& memory, size_t budget) : memory_(memory), left_(budget) {}
  Expected<void> read(uint64_t address, std::span<std::byte> out) const override {
    if (out.size() > left_)
      return make_error(ErrorKind::kUnsupported, "the read budget of this value is spent", address);
    left_ -= out.size();
    return memory_.read(address, out);
  }
  Expected<void> read_c_string_chunk(uint64_t address, std::span<std::byte> out) const override {
    if (out.size() > left_)
      return make_error(ErrorKind::kUnsupported, "the read budget of this value is spent", address);
    left_ -= out.size();
    return memory_.read_c_string_chunk(address, out);
  }

 private:
  const AddressSpace& memory_;
  mutable size_t left_;
};

std::string bounded_repr(const AddressSpace& memory, const Layout& layout, uint64_t object,
                         RepeatedObjects repeated, std::set<uint64_t>* visited = nullptr) {
  BudgetedMemory budget(memory, kMaxBytesReadPerValue);
  ObjectReader objects(budget, layout);
  if (visited) return ObjectRepr(objects, repeated).repr(object, kMaxReprLength, *visited);
  return ObjectRepr(objects, repeated).repr(object, kMaxReprLength);
}

// The names of a frame's fast slots, in slot order (see VariablesLayout); with kPlainLocals only
// the leading plain locals'.
Expected<std::vector<std::string>> slot_names(const ObjectReader& objects, uint64_t code,
                                              SlotsShown shown) {
  const VariablesLayout& v = objects.layout().variables;
  ContainerReader containers(objects);
  std::vector<std::string> names;
  for (int32_t offset : {v.code_local_names, v.code_cell_names, v.code_free_names}) {
    if (offset == kAbsent) continue;
    // Before 3.11 the first tuple (co_varnames) holds the plain locals alone.
    if (shown == SlotsShown::kPlainLocals && offset != v.code_local_names) break;
    auto tuple = read_pointer(objects.memory(), code + static_cast<uint64_t>(offset));
    if (!tuple) return std::unexpected(tuple.error());
    auto items = containers.tuple_items(*tuple, kMaxLocals);
    if (!items) return std::unexpected(items.error());
    for (uint64_t item : *items) {
      auto name = objects.read_string(item);
      names.push_back(name ? *name : fmt::format("<unreadable name at 0x{:x}>", item));
    }
  }
  if (shown == SlotsShown::kPlainLocals && v.code_local_count != kAbsent) {
    auto count = read_value<int32_t>(objects.memory(), code + static_cast<uint64_t>(v.code_local_count));
    if (!count) return std::unexpected(count.error());
    if (*count >= 0 && static_cast<size_t>(*count) <= names.size()) names.resize(static_cast<size_t>(*count));
  }
  return names;
}

}  // namespace

VariableReader::VariableReader(const AddressSpace& memory, const Layout& layout,
                               RepeatedObjects repeated, SlotsShown shown)
    : memory_(memory), layout_(layout), repeated_(repeated), shown_(shown) {}

Expected<std::vector<Variable>> VariableReader::locals(const PythonFrame& frame) const {
  return slot_values(frame, Want::kRepr);
}

Expected<std::vector<Variable>> VariableReader::locals_as_one_repr(const PythonFrame& frame) const {
  auto variables = slot_values(frame, Want::kObjectOnly);
  if (!variables) return variables;
  std::set<uint64_t> visited;
  for (Variable& variable : *variables)
    variable.repr = bounded_repr(memory_, layout_, variable.object, repeated_, &visited);
  return variables;
}

Expected<std::vector<Variable>> VariableReader::slot_values(const PythonFrame& frame,
                                                            Want want) const {
  if (layout_.frame.localsplus == kAbsent)
    return make_error(ErrorKind::kUnsupported, "this layout has no frame slots");
  ObjectReader objects(memory_, layout_);
  auto names = slot_names(objects, frame.code_address, shown_);
  if (!names) return std::unexpected(names.error());
  std::vector<Variable> variables;
  uint64_t slots = frame.address + static_cast<uint64_t>(layout_.frame.localsplus);
  for (size_t i = 0; i < names->size(); ++i) {
    auto value = read_pointer(memory_, slots + 8 * i);
    if (!value) return std::unexpected(value.error());
    uint64_t object = *value & ~layout_.frame.stack_ref_tag_mask;
    // Cells and free variables hold a cell object: show what it refers to.
    if (object != 0) {
      if (auto type = objects.type_name(object); type && *type == "cell") {
        auto referent = read_pointer(memory_, object + layout_.variables.cell_reference);
        object = referent.value_or(0);
      }
    }
    if (object == 0) continue;  // unbound
    variables.push_back({(*names)[i],
                         want == Want::kRepr ? bounded_repr(memory_, layout_, object, repeated_) : "",
                         object});
  }
  return variables;
}

Expected<std::optional<FoundVariable>> VariableReader::lookup(const PythonFrame& frame,
                                                              std::string_view name,
                                                              Want want) const {
  auto fast = slot_values(frame, Want::kObjectOnly);
  if (!fast) return std::unexpected(fast.error());
  for (Variable& variable : *fast) {
    if (variable.name != name) continue;
    if (want == Want::kRepr) variable.repr = bounded_repr(memory_, layout_, variable.object, repeated_);
    return FoundVariable{Scope::kLocal, std::move(variable)};
  }
  ObjectReader objects(memory_, layout_);
  ContainerReader containers(objects);
  const VariablesLayout& v = layout_.variables;
  for (auto [scope, offset] : {std::pair{Scope::kGlobal, v.frame_globals},
                               std::pair{Scope::kBuiltin, v.frame_builtins}}) {
    if (offset == kAbsent) continue;
    auto dict = read_pointer(memory_, frame.address + static_cast<uint64_t>(offset));
    if (!dict) return std::unexpected(dict.error());
    if (*dict == 0) continue;
    // The builtins of a frame can be the builtins module rather than its dict.
    uint64_t mapping = *dict;
    if (auto type = objects.type_name(mapping); type && *type == "module") {
      auto module_dict = read_pointer(memory_, mapping + v.module_dict);
      if (!module_dict) return std::unexpected(module_dict.error());
      mapping = *module_dict;
    }
    auto value = containers.dict_get(mapping, name);
    if (!value) return std::unexpected(value.error());
    if (*value != 0) {
      std::string repr = want == Want::kRepr ? bounded_repr(memory_, layout_, *value, repeated_) : "";
      return FoundVariable{scope, {std::string(name), std::move(repr), *value}};
    }
  }
  return std::optional<FoundVariable>{};
}

std::string VariableReader::repr(uint64_t object, size_t max_length) const {
  BudgetedMemory budget(memory_, kMaxBytesReadPerValue);
  ObjectReader objects(budget, layout_);
  return ObjectRepr(objects, repeated_).repr(object, max_length);
}

}  // namespace hangpy::cpython
