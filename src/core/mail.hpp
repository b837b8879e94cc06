#pragma once
// --mail-to: the addresses a task's notifications are mailed to, and the
// mail itself as `sendmail -t` reads it (cron's MAILTO): its headers, a
// blank line, its body.
#include <string>
#include <string_view>
#include <vector>

#include "core/notify.hpp"

namespace taskd::core {

// "ADDR[,ADDR...]": each address printable ASCII with an '@' between a
// local part and a domain, without spaces or any of <>()[]\,;:" (nothing
// that would let it be more than one address in a To: header), not starting
// with '-'. Bad input names the address.
Result<std::vector<std::string>> parse_mail_to(std::string_view text);

// The bytes of the output's tail a mail carries.
inline constexpr std::size_t mail_output_tail = 4096;

// The mail telling `recipients` of `facts`, sent from `host`, with the tail
// of `output`. Nothing reaches a header but the recipients (checked) and the
// task's name, the event and the host, each on one line whatever they hold.
std::string notify_mail(const NotifyFacts& facts, const std::vector<std::string>& recipients, std::string_view host,
                        std::string_view output);

}  // namespace taskd::core
