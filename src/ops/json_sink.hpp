#pragma once
// Where the --json shapes are written, described once for both: a document
// (JsonBuilder) or text (JsonTextWriter), which lists a million tasks
// without building a document for each.
#include <fmt/format.h>

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <ranges>
#include <string>
#include <string_view>
#include <type_traits>
#include <variant>
#include <vector>

namespace taskd::ops {

using Json = nlohmann::ordered_json;

class JsonSink {
 public:
  virtual ~JsonSink() = default;
  virtual void begin_object() = 0;
  virtual void begin_array() = 0;
  // Ends the innermost object or array begun.
  virtual void end() = 0;
  // The key of the next value, in an object.
  virtual void key(std::string_view name) = 0;
  virtual void null() = 0;
  virtual void boolean(bool value) = 0;
  virtual void integer(std::int64_t value) = 0;
  virtual void number(double value) = 0;
  virtual void string(std::string_view value) = 0;
  virtual void document(const Json& value) = 0;

  // A value of any type the shapes hold: an empty optional (and a
  // variant's std::monostate) is null.
  template <class T>
  void put(const T& value) {
    if constexpr (std::is_same_v<T, bool>) {
      boolean(value);
    } else if constexpr (std::is_integral_v<T>) {
      integer(static_cast<std::int64_t>(value));
    } else if constexpr (std::is_floating_point_v<T>) {
      number(value);
    } else if constexpr (std::is_convertible_v<const T&, std::string_view>) {
      string(value);
    } else if constexpr (std::is_same_v<T, std::nullptr_t> || std::is_same_v<T, std::monostate>) {
      null();
    } else if constexpr (std::is_same_v<T, Json>) {
      document(value);
    } else if constexpr (is_optional<T>::value) {
      value ? put(*value) : null();
    } else if constexpr (std::ranges::range<T>) {
      begin_array();
      for (const auto& item : value) put(item);
      end();
    } else {
      std::visit([this](const auto& held) { put(held); }, value);
    }
  }
  template <class T>
  void field(std::string_view name, const T& value) {
    key(name);
    put(value);
  }

 private:
  template <class T>
  struct is_optional : std::false_type {};
  template <class T>
  struct is_optional<std::optional<T>> : std::true_type {};
};

class JsonBuilder final : public JsonSink {
 public:
  Json take() { return std::move(root_); }

  void begin_object() override { open_.push_back(&place(Json::object())); }
  void begin_array() override { open_.push_back(&place(Json::array())); }
  void end() override { open_.pop_back(); }
  void key(std::string_view name) override { key_ = name; }
  void null() override { place(nullptr); }
  void boolean(bool value) override { place(value); }
  void integer(std::int64_t value) override { place(value); }
  void number(double value) override { place(value); }
  void string(std::string_view value) override { place(std::string(value)); }
  void document(const Json& value) override { place(value); }

 private:
  Json& place(Json value);

  Json root_;
  std::vector<Json*> open_;
  std::string key_;
};

// How JSON text is laid out: indented by two, as a document's dump(2)
// prints it (for a person at a terminal); or compact, as dump() prints it
// but for a newline before each element of an outermost array and before
// its closing bracket (a listing of a million tasks is a line per task).
enum class JsonLayout { indented, compact };

// Appends to `out`; whoever owns it writes it out as it grows.
class JsonTextWriter final : public JsonSink {
 public:
  explicit JsonTextWriter(fmt::memory_buffer& out, JsonLayout layout = JsonLayout::indented)
      : out_(out), layout_(layout) {}

  void begin_object() override { open('{', '}'); }
  void begin_array() override { open('[', ']'); }
  void end() override;
  void key(std::string_view name) override;
  void null() override;
  void boolean(bool value) override;
  void integer(std::int64_t value) override;
  void number(double value) override;
  void string(std::string_view value) override;
  void document(const Json& value) override;

 private:
  struct Open {
    char closing;
    bool broken_into_lines;  // each element on a line of its own
    bool has_items = false;
  };
  void open(char opening, char closing);
  // Before a value: the separator and line break of an array's element.
  void start_value();
  void next_line();
  // In a compact object: a key that needs no escape.
  void compact_key(std::string_view name);
  // The string in quotes, then what `closing` adds after its closing quote
  // (a key's colon: a key and its colon are written at once).
  void quoted(std::string_view value, std::string_view closing = "\"");
  void text(std::string_view text) { out_.append(text.data(), text.data() + text.size()); }

  fmt::memory_buffer& out_;
  JsonLayout layout_;
  std::vector<Open> open_;
  bool after_key_ = false;
};

}  // namespace taskd::ops
