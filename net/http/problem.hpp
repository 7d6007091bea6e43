#pragma once

#include <string>
#include <string_view>

#include "core/base/status.hpp"
#include "net/http/http_message.hpp"

namespace sreh::net {

/// The HTTP status of an error code (invalid_argument 400, not_found 404, ...).
[[nodiscard]] int http_status(errc c);

/// The stable problem type URI of an error code ("https://sreh.dev/problems/not-found").
[[nodiscard]] std::string problem_type(errc c);

/// The reason phrase used as a problem title ("Not Found").
[[nodiscard]] std::string_view reason_phrase(int status);

/// An `application/problem+json` reply (RFC 9457). `slug` becomes
/// `https://sreh.dev/problems/<slug>`; an empty slug gives "about:blank".
[[nodiscard]] reply make_problem(int status, std::string_view slug, std::string_view title,
                                 std::string_view detail, std::string_view instance,
                                 std::string_view request_id);

/// A problem reply for `e`, about request `req`.
[[nodiscard]] reply problem(const sreh::error& e, const request& req);

/// A problem reply with an explicit status and slug, about request `req`.
[[nodiscard]] reply problem(int status, std::string_view slug, std::string_view detail,
                            const request& req);

} // namespace sreh::net
