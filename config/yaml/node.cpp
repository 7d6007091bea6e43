#include "config/yaml/node.hpp"

#include <yaml-cpp/yaml.h>

namespace sreh::config::yaml {

/// One yaml-cpp node; it shares the document's memory, so a handle keeps the tree alive.
struct node::impl {
  YAML::Node n;
};

namespace {

const std::string empty_text;

node::kind kind_of(const YAML::Node& n) {
  switch (n.Type()) {
  case YAML::NodeType::Scalar:
    return node::kind::scalar;
  case YAML::NodeType::Sequence:
    return node::kind::sequence;
  case YAML::NodeType::Map:
    return node::kind::mapping;
  case YAML::NodeType::Null:
  case YAML::NodeType::Undefined:
    return node::kind::null;
  }
  return node::kind::null;
}

} // namespace

node::node() : p_(std::make_shared<const impl>()) {}

node::kind node::type() const {
  return kind_of(p_->n);
}

const char* node::kind_name() const {
  switch (type()) {
  case kind::scalar:
    return "a scalar";
  case kind::sequence:
    return "a sequence";
  case kind::mapping:
    return "a mapping";
  case kind::null:
    return "nothing";
  }
  return "nothing";
}

const std::string& node::scalar() const {
  return is_scalar() ? p_->n.Scalar() : empty_text;
}

bool node::quoted() const {
  return is_scalar() && p_->n.Tag() == "!"; // yaml-cpp's non-specific tag of quoted scalars
}

yaml::mark node::mark() const {
  if (!p_->n.IsDefined())
    return {};
  auto m = p_->n.Mark();
  return {m.line, m.column};
}

std::size_t node::size() const {
  return is_sequence() || is_mapping() ? p_->n.size() : 0;
}

std::vector<node> node::items() const {
  std::vector<node> out;
  if (!is_sequence())
    return out;
  out.reserve(p_->n.size());
  for (const auto& item : p_->n)
    out.push_back(node{std::make_shared<const impl>(impl{item})});
  return out;
}

std::vector<std::pair<node, node>> node::pairs() const {
  std::vector<std::pair<node, node>> out;
  if (!is_mapping())
    return out;
  out.reserve(p_->n.size());
  for (const auto& kv : p_->n)
    out.emplace_back(node{std::make_shared<const impl>(impl{kv.first})},
                     node{std::make_shared<const impl>(impl{kv.second})});
  return out;
}

std::optional<node> node::find(std::string_view key) const {
  if (!is_mapping())
    return std::nullopt;
  for (const auto& kv : p_->n)
    if (kv.first.IsScalar() && kv.first.Scalar() == key)
      return node{std::make_shared<const impl>(impl{kv.second})};
  return std::nullopt;
}

node parse(std::string_view text) {
  try {
    return node{std::make_shared<const node::impl>(node::impl{YAML::Load(std::string{text})})};
  } catch (const YAML::Exception& e) {
    throw syntax_error{{e.mark.line, e.mark.column}, e.msg};
  }
}

} // namespace sreh::config::yaml
