// Record metadata checks and key remapping (module_record_metadata.hpp).
#include "module_record_metadata.hpp"

#include <charconv>
#include <memory>

#include <fmt/format.h>
#include <re2/re2.h>

#include "module_record_detail.hpp"

namespace burn::record::detail {

namespace {

std::string adapter_hint(Adapter a) {
  return a == Adapter::PyTorch ? "LoadOptions{}.with_adapter(Adapter::PyTorch)" : "LoadOptions{} (Adapter::Burn)";
}

// A key_remap replacement in RE2's rewrite syntax: "$1".."$9" become "\1".."\9",
// "$&" the whole match "\0", "$$" a literal "$", and a backslash is escaped
// (RE2 would read "\x" as a rewrite command). Any other "$" is literal, as in
// ECMAScript replacement strings. `max_group` is the highest group used.
std::string to_rewrite(const std::string& replacement, int& max_group) {
  std::string out;
  max_group = 0;
  for (std::size_t i = 0; i < replacement.size(); ++i) {
    const char c = replacement[i];
    const char next = i + 1 < replacement.size() ? replacement[i + 1] : '\0';
    if (c == '\\') {
      out += "\\\\";
    } else if (c == '$' && next >= '0' && next <= '9') {
      out += '\\';
      out += next;
      max_group = std::max(max_group, next - '0');
      ++i;
    } else if (c == '$' && next == '&') {
      out += "\\0";
      ++i;
    } else if (c == '$' && next == '$') {
      out += '$';
      ++i;
    } else {
      out += c;
    }
  }
  return out;
}

struct Rule {
  std::unique_ptr<re2::RE2> re;
  std::string rewrite;
};

std::vector<Rule> compile(const std::vector<std::pair<std::string, std::string>>& rules) {
  std::vector<Rule> out;
  for (const auto& [pattern, replacement] : rules) {
    re2::RE2::Options options;
    options.set_log_errors(false);  // the error goes into the exception, not to stderr
    auto re = std::make_unique<re2::RE2>(pattern, options);
    if (!re->ok())
      throw Error(kLoadOp, fmt::format("key_remap pattern '{}' is not a valid regular expression (RE2 syntax): {}",
                                       pattern, re->error()));
    int max_group = 0;
    std::string rewrite = to_rewrite(replacement, max_group);
    if (max_group > re->NumberOfCapturingGroups())
      throw Error(kLoadOp,
                  fmt::format("key_remap replacement '{}' refers to group ${} but pattern '{}' has {} capturing "
                              "group(s)",
                              replacement, max_group, pattern, re->NumberOfCapturingGroups()));
    out.push_back({std::move(re), std::move(rewrite)});
  }
  return out;
}

}  // namespace

std::string_view layout_name(Adapter adapter) noexcept { return adapter == Adapter::PyTorch ? "pytorch" : "burn"; }

// A file saved with one adapter loaded with the other would transpose square
// weights silently, so the layout the file declares must match.
void check_layout(const std::map<std::string, std::string>& metadata, Adapter adapter, const std::string& where) {
  if (auto v = metadata.find(std::string(kVersionKey)); v != metadata.end() && v->second != kRecordVersion)
    throw Error(kLoadOp, fmt::format("{}the file has record version '{}', this build reads version {}; save it again "
                                     "with this build",
                                     where, v->second, kRecordVersion));
  if (auto l = metadata.find(std::string(kLayoutKey)); l != metadata.end()) {
    std::optional<Adapter> declared;
    if (l->second == layout_name(Adapter::Burn)) declared = Adapter::Burn;
    if (l->second == layout_name(Adapter::PyTorch)) declared = Adapter::PyTorch;
    if (!declared)
      throw Error(kLoadOp, fmt::format("{}corrupt metadata: \"{}\" is '{}', expected \"burn\" or \"pytorch\"", where,
                                       kLayoutKey, l->second));
    if (*declared != adapter)
      throw Error(kLoadOp, fmt::format("{}the file was saved in the {} layout (\"{}\": \"{}\"); load it with {}", where,
                                       l->second, kLayoutKey, l->second, adapter_hint(*declared)));
    return;
  }
  if (auto f = metadata.find(std::string(kFormatKey));
      f != metadata.end() && f->second == kTorchFormat && adapter == Adapter::Burn)
    throw Error(kLoadOp,
                fmt::format("{}the file is a PyTorch checkpoint (metadata \"format\": \"pt\"); load it with {}", where,
                            adapter_hint(Adapter::PyTorch)));
}

std::optional<std::uint64_t> stored_id(const std::map<std::string, std::string>& metadata, const std::string& file_key,
                                       const std::string& where) {
  const auto it = metadata.find(std::string(kIdPrefix) + file_key);
  if (it == metadata.end()) return std::nullopt;
  // module::ParamId::to_string's form, read as ParamId::parse does.
  const std::string& text = it->second;
  std::uint64_t value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value, 16);
  if (text.size() != 16 || ec != std::errc() || end != text.data() + text.size())
    throw Error(kLoadOp, fmt::format("{}corrupt metadata: \"{}{}\" is '{}', not a parameter id (16 hex digits)", where,
                                     kIdPrefix, file_key, text));
  return value;
}

std::map<std::string, std::string> remap_keys(const std::vector<std::string>& file_keys,
                                              const std::vector<std::pair<std::string, std::string>>& rules,
                                              const std::string& where) {
  const std::vector<Rule> compiled = compile(rules);
  std::map<std::string, std::string> keys;
  for (const std::string& key : file_keys) {
    std::string name = key;
    // RE2 matches in time linear in the key's length and without recursion.
    for (const Rule& rule : compiled) re2::RE2::GlobalReplace(&name, *rule.re, rule.rewrite);
    const auto [it, inserted] = keys.emplace(name, key);
    if (!inserted)
      throw Error(kLoadOp, fmt::format("{}file keys '{}' and '{}' both become '{}' after key_remap; make the rules "
                                       "keep keys distinct",
                                       where, it->second, key, name));
  }
  return keys;
}

}  // namespace burn::record::detail
