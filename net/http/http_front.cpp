#include "net/http/http_front.hpp"

namespace sreh::net {

sreh::error http_front::start(actors::failure_handler failed) {
  if (server_)
    return {errc::conflict, "http front already started"};
  auto server = std::make_unique<http_server>(ctx_);
  if (auto err = server->start(host_, port_.load(), std::move(failed)))
    return err;
  port_ = server->port();
  server_ = std::move(server);
  return {};
}

void http_front::stop() {
  if (!server_)
    return;
  server_->stop();
  server_.reset();
}

} // namespace sreh::net
