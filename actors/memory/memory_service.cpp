#include "actors/memory/memory_service.hpp"

#include <fmt/format.h>

#include <future>

#include "core/base/blocking.hpp"
#include "core/base/json_object.hpp"
#include "core/base/logger.hpp"

namespace sreh::actors {

namespace {

/// The event kind of a change.
const char* event_kind(memory::change c) {
  switch (c) {
  case memory::change::create:
    return "memory.created";
  case memory::change::edit:
    return "memory.edited";
  case memory::change::rollback:
    return "memory.rolled_back";
  case memory::change::remove:
    return "memory.deleted";
  }
  return "memory.edited";
}

sreh::error no_such(std::string_view id) {
  return {errc::not_found, fmt::format("no memory '{}'", id)};
}

} // namespace

memory_service::memory_service(persistence::memory_store& reads, persistence::commit_queue& writes,
                               const sreh::clock& clock, id_generator& ids)
  : reads_(reads), writes_(writes), clock_(clock), ids_(ids) {}

expected<std::vector<memory::hit>> memory_service::search(const memory::query& q) {
  if (auto err = memory::validate(q))
    return err;
  auto found = reads_.search_memories(q);
  if (!found)
    return found.error();
  return memory::rank(std::move(*found), q, clock_.now_us());
}

expected<memory::entry> memory_service::get(std::string_view id) {
  auto e = reads_.get_memory(id);
  if (!e)
    return e.error();
  if (!e->has_value())
    return no_such(id);
  return std::move(**e);
}

expected<std::vector<memory::entry>> memory_service::versions(std::string_view id) {
  auto vs = reads_.memory_versions(id);
  if (!vs)
    return vs.error();
  if (vs->empty())
    return no_such(id);
  return vs;
}

expected<memory::entry> memory_service::add(memory::draft d, std::string_view author) {
  auto e = memory::create(std::move(d), ids_.next("mem"), author, clock_.now_us());
  if (!e)
    return e.error();
  return commit(std::move(*e));
}

expected<memory::entry> memory_service::edit(std::string_view id, const memory::patch& p,
                                             std::string_view author) {
  auto current = get(id);
  if (!current)
    return current.error();
  auto next = memory::edit(*current, p, author, clock_.now_us());
  if (!next)
    return next.error();
  return commit(std::move(*next));
}

expected<memory::entry> memory_service::rollback(std::string_view id, std::int64_t version,
                                                 std::string_view author) {
  auto current = get(id);
  if (!current)
    return current.error();
  auto old = reads_.memory_version(id, version);
  if (!old)
    return old.error();
  if (!old->has_value())
    return sreh::error{
      errc::not_found,
      fmt::format("memory '{}' has no version {} (versions 1..{})", id, version, current->version)};
  auto next = memory::rollback(*current, **old, author, clock_.now_us());
  if (!next)
    return next.error();
  return commit(std::move(*next));
}

expected<memory::entry> memory_service::remove(std::string_view id, std::string_view author) {
  auto current = get(id);
  if (!current)
    return current.error();
  auto next = memory::remove(*current, author, clock_.now_us());
  if (!next)
    return next.error();
  return commit(std::move(*next));
}

expected<memory::entry> memory_service::commit(memory::entry e) {
  check_may_block("memory", "commit");
  persistence::write_batch b;
  event ev;
  ev.id = ids_.next("evt");
  ev.run_id = e.id;
  ev.run_seq = e.version;
  ev.kind = event_kind(e.made_by);
  ev.at = e.updated_at;
  ev.data = json::object("memory", e.id, "kind", memory::to_string(e.kind), "version", e.version,
                         "author", e.author, "restored_from", e.restored_from);
  b.events.push_back(std::move(ev));
  b.memories.push_back(e);
  std::promise<sreh::error> done;
  auto result = done.get_future();
  writes_.submit(std::move(b),
                 [&done](persistence::commit_result r) { done.set_value(std::move(r.err)); });
  if (auto err = result.get()) {
    if (err.code != errc::conflict)
      logger("memory")->warn("memory {} version {}: {}", e.id, e.version, err.message);
    return err;
  }
  logger("memory")->info("memory {} version {} ({}) by {}", e.id, e.version,
                         memory::to_string(e.made_by), e.author);
  return e;
}

} // namespace sreh::actors
