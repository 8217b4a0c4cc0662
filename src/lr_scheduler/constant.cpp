#include <burn/lr_scheduler/constant.hpp>

#include "state_text.hpp"

namespace burn::lr_scheduler {

std::map<std::string, std::string> ConstantLr::state() const { return {{"scheduler", "constant"}}; }

void ConstantLr::load_state(const std::map<std::string, std::string>& state) {
  detail::check_keys(state, "constant", {}, "ConstantLr");
}

}  // namespace burn::lr_scheduler
