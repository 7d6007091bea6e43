#include "eval/follow.hpp"

#include <unistd.h>

#include <cstdlib>
#include <filesystem>

#include "core/base/json.hpp"

namespace sreh::eval {

void run_follower::on_events(const std::vector<event>& evs) {
  std::lock_guard<std::mutex> lock{mtx_};
  for (const auto& e : evs) {
    if (e.kind == "run.succeeded" || e.kind == "run.failed" || e.kind == "run.cancelled") {
      ended_.insert(e.run_id);
    } else if (e.kind == "approval.requested") {
      auto doc = json::parse_object(e.data);
      if (!doc || !doc->HasMember("approval") || !(*doc)["approval"].IsString())
        continue;
      requested_approval a{(*doc)["approval"].GetString(), 0};
      if (doc->HasMember("step") && (*doc)["step"].IsInt64())
        a.step = (*doc)["step"].GetInt64();
      approvals_.push_back(std::move(a));
    }
  }
  cv_.notify_all();
}

bool run_follower::wait(const std::string& run_id, std::chrono::steady_clock::time_point deadline,
                        std::vector<requested_approval>& approvals) {
  std::unique_lock<std::mutex> lock{mtx_};
  cv_.wait_until(lock, deadline, [&] { return ended_.count(run_id) || !approvals_.empty(); });
  approvals.assign(approvals_.begin(), approvals_.end());
  approvals_.clear();
  return ended_.count(run_id) > 0;
}

void run_follower::note(std::string problem) {
  std::lock_guard<std::mutex> lock{mtx_};
  problems_.push_back(std::move(problem));
}

std::vector<std::string> run_follower::problems() {
  std::lock_guard<std::mutex> lock{mtx_};
  return problems_;
}

temp_dir::temp_dir() {
  const char* base = std::getenv("TMPDIR");
  std::string tmpl = std::string{base && *base ? base : "/tmp"} + "/sreh-eval-XXXXXX";
  if (::mkdtemp(tmpl.data()))
    path = tmpl;
}

temp_dir::~temp_dir() {
  std::error_code ec;
  if (!path.empty())
    std::filesystem::remove_all(path, ec);
}

} // namespace sreh::eval
