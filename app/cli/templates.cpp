// `sreh templates`: the Work templates a node loaded, their kind, fields and policies.
#include <cstdio>
#include <string>

#include "app/cli/commands.hpp"

namespace sreh::app::cli {

namespace {

/// "service* alert summary* severity(sev1|sev2|sev3|sev4)": required ones marked with `*`.
std::string fields_of(const rapidjson::Value& fields) {
  std::string out;
  if (!fields.IsArray())
    return out;
  for (const auto& f : fields.GetArray()) {
    out += (out.empty() ? "" : " ") + str(f, "name");
    if (f.HasMember("required") && f["required"].IsBool() && f["required"].GetBool())
      out += "*";
    if (const auto& v = member(f, "values"); v.IsArray()) {
      std::string values;
      for (const auto& x : v.GetArray())
        if (x.IsString())
          values += (values.empty() ? "" : "|") + std::string{x.GetString()};
      out += "(" + values + ")";
    }
  }
  return out;
}

} // namespace

int templates(int argc, char** argv) {
  int code = exit_ok;
  auto doc = get_listing(argc, argv, "templates", "/v1/templates", code);
  if (!doc)
    return code;
  auto st = make_style();
  const auto& list = member(*doc, "templates");
  if (!list.IsArray() || list.GetArray().Empty()) {
    std::printf("%s\n", st.dim("this node has no Work templates (works.templates)").c_str());
    return exit_ok;
  }
  std::printf("%s\n", st.bold(pad("TEMPLATE", 20) + "  " + pad("KIND", 13) + "  " +
                              pad("ON TRIGGER", 10) + "  FIELDS (* required)")
                        .c_str());
  for (const auto& t : list.GetArray()) {
    std::printf("%s  %s  %s  %s\n", pad(str(t, "name"), 20).c_str(),
                pad(str(t, "kind"), 13).c_str(), pad(str(t, "double_texting"), 10).c_str(),
                fields_of(member(t, "fields")).c_str());
    if (auto d = str(t, "description"); !d.empty())
      std::printf("  %s\n", st.dim(d).c_str());
  }
  return exit_ok;
}

} // namespace sreh::app::cli
