// `sreh tools`: the tools a node offers, their risk class and whether they mutate.
#include <cstdio>
#include <string>

#include "app/cli/commands.hpp"

namespace sreh::app::cli {

namespace {

/// The argument names of a tool's schema, required ones first and marked with `*`.
std::string arguments_of(const rapidjson::Value& schema) {
  std::string out;
  const auto& props = member(schema, "properties");
  if (!props.IsObject())
    return out;
  const auto& required = member(schema, "required");
  auto is_required = [&required](const std::string& name) {
    if (!required.IsArray())
      return false;
    for (const auto& r : required.GetArray())
      if (r.IsString() && name == r.GetString())
        return true;
    return false;
  };
  for (bool want : {true, false})
    for (const auto& p : props.GetObject()) {
      std::string name = p.name.GetString();
      if (is_required(name) != want)
        continue;
      out += (out.empty() ? "" : " ") + name + (want ? "*" : "");
    }
  return out;
}

} // namespace

int tools(int argc, char** argv) {
  int code = exit_ok;
  auto doc = get_listing(argc, argv, "tools", "/v1/tools", code);
  if (!doc)
    return code;
  auto st = make_style();
  const auto& list = member(*doc, "tools");
  if (!list.IsArray() || list.GetArray().Empty()) {
    std::printf("%s\n", st.dim("this node offers no tools").c_str());
    return exit_ok;
  }
  std::printf("%s\n", st.bold(pad("TOOL", 26) + "  " + pad("RISK", 9) + "  " + pad("MUTATES", 7) +
                              "  " + pad("UNDO", 4) + "  ARGUMENTS (* required)")
                        .c_str());
  for (const auto& t : list.GetArray()) {
    bool mutates = t.HasMember("mutating") && t["mutating"].IsBool() && t["mutating"].GetBool();
    bool undo =
      t.HasMember("compensable") && t["compensable"].IsBool() && t["compensable"].GetBool();
    std::printf("%s  %s  %s  %s  %s\n", pad(str(t, "name"), 26).c_str(),
                pad(str(t, "risk"), 9).c_str(), pad(mutates ? "yes" : "no", 7).c_str(),
                pad(undo ? "yes" : "no", 4).c_str(), arguments_of(member(t, "schema")).c_str());
    if (auto d = str(t, "description"); !d.empty())
      std::printf("  %s\n", st.dim(d).c_str());
  }
  return exit_ok;
}

} // namespace sreh::app::cli
