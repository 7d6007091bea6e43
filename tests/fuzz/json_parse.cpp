// core/base/json: parse with the depth limit; what parses writes out as JSON that parses back
// to the same value (numbers within a few ulp: RapidJSON 1.1's fast number path may read a
// long number one ulp off; see parse()).
#include <cmath>
#include <limits>
#include <string>

#include "core/base/json.hpp"
#include "tests/fuzz/fuzz.hpp"

namespace {

bool close(double a, double b) {
  if (a == b)
    return true;
  return std::fabs(a - b) <=
         4 * std::numeric_limits<double>::epsilon() * std::fmax(std::fabs(a), std::fabs(b));
}

bool same(const rapidjson::Value& a, const rapidjson::Value& b) {
  if (a.IsNumber() && b.IsNumber())
    return (a.IsInt64() && b.IsInt64()) ? a.GetInt64() == b.GetInt64()
                                        : close(a.GetDouble(), b.GetDouble());
  if (a.GetType() != b.GetType())
    return false;
  if (a.IsString())
    return a.GetStringLength() == b.GetStringLength() &&
           std::string_view{a.GetString(), a.GetStringLength()} ==
             std::string_view{b.GetString(), b.GetStringLength()};
  if (a.IsArray()) {
    if (a.Size() != b.Size())
      return false;
    for (rapidjson::SizeType i = 0; i < a.Size(); ++i)
      if (!same(a[i], b[i]))
        return false;
    return true;
  }
  if (a.IsObject()) {
    if (a.MemberCount() != b.MemberCount())
      return false;
    for (auto i = a.MemberBegin(), j = b.MemberBegin(); i != a.MemberEnd(); ++i, ++j)
      if (!same(i->name, j->name) || !same(i->value, j->value))
        return false;
    return true;
  }
  return true; // null, true, false: the type says it all
}

} // namespace

void fuzz_one(std::string_view input) {
  auto doc = sreh::json::parse(input, 32);
  if (!doc) {
    SREH_FUZZ_CHECK(!doc.error().message.empty());
    return;
  }
  auto text = sreh::json::stringify(*doc);
  auto again = sreh::json::parse(text, 32);
  SREH_FUZZ_CHECK(again.has_value());
  SREH_FUZZ_CHECK(same(*doc, *again));
}
