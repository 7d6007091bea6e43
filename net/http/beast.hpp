#pragma once
// The Beast/Asio headers used by the server and client TUs (separately compiled: see
// beast_src.cpp). Route handlers do not include this.

#include <boost/asio/dispatch.hpp>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>
#include <boost/asio/thread_pool.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>

#include <string_view>
#include <utility> // before Asio (coroutine support in 1.74)

namespace sreh::net {
namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = boost::beast::http;
using tcp = boost::asio::ip::tcp;

/// Beast 1.74 uses boost::string_view.
inline std::string_view to_sv(beast::string_view s) {
  return {s.data(), s.size()};
}
} // namespace sreh::net
