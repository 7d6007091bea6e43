#pragma once
// The Works control plane as seen from the HTTP front and the CLI: thread-safe and
// non-blocking, like kernel_api; each callback runs once, on an actor thread, and must not block.

#include <functional>
#include <string>

#include "core/base/expected.hpp"
#include "core/works/lifecycle.hpp"
#include "core/works/work.hpp"

namespace sreh::actors {

/// `POST /v1/works`: a Work from a template.
struct new_work {
  std::string template_name;
  std::string fields = "{}"; // JSON object
  std::string idempotency_key;
  std::string creator;       // the caller's identity
  std::string labels = "{}"; // JSON object of string labels added to the template's
};

struct work_reply {
  sreh::error err;
  works::work w;
  bool created = false; // create: false when the idempotency key named an existing Work
};

class works_api {
 public:
  virtual ~works_api() = default;
  /// Makes a Work (durably, before answering) and starts its first run. Errors:
  /// `invalid_argument` (unknown template, fields of the wrong type or missing: the message
  /// names the field), `unavailable` (the store).
  virtual void create(new_work req, std::function<void(work_reply)> done) = 0;
  /// A person's command on Work `id` (lifecycle.hpp). Errors: `not_found`, `conflict` (an
  /// illegal transition, a trigger the double-texting policy refuses), `unavailable`.
  virtual void command(std::string id, works::work_command c, std::string by, std::string text,
                       std::function<void(work_reply)> done) = 0;
};

} // namespace sreh::actors
